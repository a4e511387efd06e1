"""Muse Glimmer: ``<|start|>ROLE<|message|>…<|eot|>`` turns, an assistant turn as messages
addressed to a recipient (`` to=self`` its reasoning, `` to=TOOL`` a call written in the ATEM
protocol, `` to=user`` its answer), the tools and the valid recipients in every system turn.

The wire format (``<|start|>``, ``<|message|>``, ``<|eot|>`` and ``<|eom|>`` are special tokens
of Muse Glimmer's tokenizer; the recipients and the ATEM tags are text; the tools block is
shortened here), shown on several lines (the format writes no newline between turns)::

    <|start|>system<|message|>You are terse.

    Reasoning strength: high.

    In this environment you have access to a set of tools ...
    // Tool metadata
    {"name": "get_weather", "description": ""}
    // Function schemas
    {"name": "get_weather", "description": "Weather for a city", "parameters": {...}}

    Here's an example of how to call a function in the tool set: ...

    # Valid recipients: "self", "get_weather.*", "user".<|eot|>
    <|start|>user<|message|>Weather in Zürich?<|eot|>
    <|start|>assistant to=self<|message|>The user wants the weather.<|eom|>
    <|start|>assistant to=get_weather<|message|><atem:function_calls>
    <atem:invoke name="get_weather">
    <atem:parameter name="city">Zürich</atem:parameter>
    <atem:parameter name="days">2</atem:parameter>
    </atem:invoke>
    </atem:function_calls><|eot|>
    <|start|>tool get_weather<|message|><tool_output name="get_weather">
    {"temp_c": 3}
    </tool_output><|eot|>
    <|start|>assistant to=user<|message|>3 °C.<|eot|>
    <|start|>assistant

Reference: ``muse-glimmer.jinja`` (llama.cpp's ``models/templates``).  Its ``bos_token`` and
``eos_token`` are unknown here (the model's ``tokenizer_config.json`` could not be read
offline): the template is rendered without them, and its first line writes ``bos_token``, so a
tokenizer that declares one (a third-party renderer of the model says its renders begin with
``<|begin_of_text|>``) makes renders that begin with it, which this format does not write.

Decisions, each the template's:

- **System turns**: every system message is a turn of its own, in place: its text (the
  template's four spellings of "reasoning effort" written "reasoning strength": a recorded
  loss where the text changes), ``\\n\\nReasoning strength: high.`` (the option
  ``reasoning_strength``, the template's variable; left out when the text already states a
  reasoning strength), then, with tools, the tools block, then ``\\n\\n# Valid recipients: ``
  and the recipients: ``"self"``, one ``"NS.*"`` per tool namespace (a name's part before its
  first dot), ``"user"``.  A conversation with no system message anywhere opens with the
  default turn, ``You are a helpful AI assistant.``, the knowledge cutoff (2026-01-04) and
  ``Current date:`` the ``today`` option (the template reads its clock), then the same tail;
  a conversation whose only system message comes later has no default turn.
- **The tools block** repeats in every system turn: the template's instructions, a
  metadata line per namespace (its description empty: the template's
  ``tool_namespace_descriptions`` is not written), then per tool one line
  ``{"name": …, "description": …, "parameters": …}`` (``tojson`` of each, non-ASCII kept),
  then the template's example call.  Reading gives the tools of the first block back.
- **Assistant turns**: reasoning is a message of its own, `` to=self<|message|>R<|eom|>``
  then ``<|start|>assistant`` again, on every turn that has some (empty reasoning is none).
  An answer is `` to=user<|message|>TEXT<|eot|>``.  A turn with calls writes no text (a
  recorded loss): each call is `` to=NAME<|message|>`` and its ATEM block, the next one after
  ``<|eom|><|start|>assistant``, the last ended ``<|eot|>``, or ``<|eom|>`` where another
  assistant message follows.  A string value is written as it is, any other as JSON.  No
  ids: results answer calls by position.
- **Results**: each tool message is a turn, ``<|start|>tool NAME<|message|><tool_output
  name="NAME">\\nTEXT\\n</tool_output><|eot|>``, named by the message's ``name``, else by the
  call whose id is its ``tool_call_id`` (the last one), else by that id.
- **Generation prompt**: ``<|start|>assistant``; the model writes `` to=self``, `` to=user``
  or `` to=TOOL`` next.  The stop is ``<|eot|>`` (``<|eom|>`` ends a message, not the turn).
- **Text parts** are joined with nothing; an image or video part is refused (the template
  writes its ``<|patch|>`` or ``<|video|>`` token, which no OpenAI part names).

Reading what models write, as vLLM's ``muse_glimmer`` tool parser and SGLang's
``MuseGlimmerDetector`` read it: the invoke tag names a call (the recipient must be there,
and is not compared with it); where the request has tools and none has the name, the
doubled form the model writes for a tool without a namespace (``get_weather.get_weather``:
its recipient is listed ``get_weather.*``) is that tool, and so is the one tool whose last
segment is the name's (``functions.get_weather``).  An invoke written inside the reasoning is
reasoning text.  A message with no recipient (``<|message|>`` alone) and a `` to=user``
message after the calls are the turn's content; the headers are also read without the space
before ``to=``.  ``to=`` inside an answer is text.  Where pawlette reads otherwise: a value
is typed by the tool's schema, so a string parameter keeps its text (``5`` stays ``"5"``;
the peers read every value as JSON where it is JSON), and a value of a non-string parameter
that is no JSON makes the call malformed; a call to a tool the request does not have, a
call cut before its close, a block holding several ``<atem:invoke>`` (the template
writes one per message; the peers read each), and tags written without the newlines the
template writes between them (the peers' regular expressions take them) stay content, with
a warning.

Remaining differences from the template:

- A tool without a ``description`` (or ``parameters``): the template refuses it (``tojson`` of
  an undefined value); pawlette writes ``null``.
- The template's variables ``knowledge_cutoff``, ``current_date`` and
  ``tool_namespace_descriptions``, and the assistant message fields ``recipient`` and
  ``end_turn``, which no OpenAI request carries, are not written (their defaults are).
- A system text that states the reasoning strength and ends with the template's own line
  renders as the same text without it does; reading gives the shorter text.
"""

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
    """``today``: the date the default system turn states (the template reads its clock);
    ``reasoning_strength``: every system turn's ``Reasoning strength`` line, the template's
    variable of that name (``high`` where it is not given)."""

    today: datetime.date = datetime.date(2026, 1, 4)
    reasoning_strength: str = "high"


def _variables(options: MuseOptions) -> Mapping[str, Any]:
    """The template's variables for these options (its own default is not passed)."""
    if options.reasoning_strength == "high":
        return {}
    return {"reasoning_strength": options.reasoning_strength}


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
                strength=fence("\n\nReasoning strength: ", Option("reasoning_strength"), "."),
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
