"""Muse Glimmer: DOCSTRING TODO"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    Option,
    Reasoning,
    Results,
    declare,
    fence,
)

from .calls import RecipientCalls
from .system import DefaultWithoutSystem, SystemTail
from .turns import AnswerHeader, CallsBeforeAssistant, ResultHeader

START, MESSAGE = Marker("<|start|>"), Marker("<|message|>")
EOT, EOM = Marker("<|eot|>"), Marker("<|eom|>")

DEFAULT_SYSTEM = "You are a helpful AI assistant.\nKnowledge cutoff: 2026-01-04.\nCurrent date: "
TOOLS_OPEN = (
    "\n\nIn this environment you have access to a set of tools you can use to answer the "
    "user's question.\n\n"
    'You can invoke a function by writing a "<atem:function_calls>" block like the following:\n'
    '<atem:function_calls>\n<atem:invoke name="$FUNCTION_NAME">\n'
    '<atem:parameter name="$PARAMETER_NAME">$PARAMETER_VALUE</atem:parameter>\n...\n'
    "</atem:invoke>\n</atem:function_calls>\n\n"
    "String and scalar parameters should be specified as is, while lists and objects should use "
    "JSON format. Note that spaces for string values are not stripped. The output is not "
    "expected to be valid XML and is parsed with regular expressions.\n"
    "Here are the functions available in JSONSchema format:\n// Tool metadata\n"
)
SCHEMAS = "// Function schemas"
TOOLS_CLOSE = (
    "\n\nHere's an example of how to call a function in the tool set:\n"
    "(If the tool namespace is not specified, invoke the function directly as "
    "`example_function_name` rather than `example_tool_name.example_function_name`)\n\n"
    "to=example_tool_name.example_function_name\n\n"
    '<atem:function_calls>\n<atem:invoke name="example_tool_name.example_function_name">\n'
    '<atem:parameter name="example_parameter_1">value_1</atem:parameter>\n'
    '<atem:parameter name="example_parameter_2">This is the value for the second parameter\n'
    'that can span\n"multiple" lines\n</atem:parameter>\n'
    "</atem:invoke>\n</atem:function_calls>"
)


@dataclass(frozen=True)
class MuseOptions:
    """``today``: the date the default system turn states (the template reads its clock)."""

    today: datetime.date = datetime.date(2026, 1, 4)


def _variables(options: MuseOptions) -> Mapping[str, Any]:
    return {}


def layout(options: MuseOptions) -> Layout:
    return Layout(
        name="muse",
        summary="Muse Glimmer (ATEM): <|start|>ROLE<|message|> turns, calls addressed to=TOOL",
        frames={
            "system": Frame(open=fence(START, "system", MESSAGE), end=fence(EOT)),
            "user": Frame(open=fence(START, "user", MESSAGE), end=fence(EOT)),
            "assistant": Frame(open=fence(START, "assistant"), end=fence(EOT)),
            "tool": Frame(open=fence(START, "tool "), end=fence(EOT)),
        },
        concepts=(
            DefaultWithoutSystem(default=fence(DEFAULT_SYSTEM, Option("today", "%Y-%m-%d"), ".")),
            SystemTail(
                strength=fence("\n\nReasoning strength: high."),
                tools_open=fence(TOOLS_OPEN),
                schemas=fence(SCHEMAS),
                tools_close=fence(TOOLS_CLOSE),
                recipients_open=fence("\n\n# Valid recipients: "),
            ),
            Reasoning(
                open=fence(" to=self", MESSAGE),
                close=fence(EOM, START, "assistant"),
                empty_given=False,
            ),
            RecipientCalls(
                open=fence(" to="),
                recipient_close=fence(MESSAGE, '<atem:function_calls>\n<atem:invoke name="'),
                name_close=fence('">\n'),
                key_open=fence('<atem:parameter name="'),
                key_close=fence('">'),
                value_close=fence("</atem:parameter>\n"),
                close=fence("</atem:invoke>\n</atem:function_calls>"),
                separator=fence(EOM, START, "assistant"),
                loose=False,
            ),
            CallsBeforeAssistant(end=fence(EOM)),
            Results(item_close=fence("\n</tool_output>")),
            ResultHeader(middle=fence(MESSAGE, '<tool_output name="'), close=fence('">\n')),
            AnswerHeader(lead=fence(" to=user", MESSAGE), bare=fence(MESSAGE)),
            Ignored(("name",)),
        ),
        options=options,
        from_options=layout,
        template_variables=_variables,
        today="today",
        # A call's recipient ( to=NAME) and its ATEM tags are text between the special
        # tokens: the model's ids are read as the text they decode to, markers by their
        # spelling.
        markers_in_text=True,
    )


FORMAT = declare(layout(MuseOptions()))
