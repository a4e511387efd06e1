"""inclusionAI's Ling 3.0 ("Bailing V3"): ``<role>ROLE</role>`` turns ended by
``<|role_end|>``, a thinking line in the first system turn, GLM-style calls (one tag pair per
argument), reasoning kept on every turn, as the ``inclusionai-ling-3.0-flash`` template writes
them.

The wire format (``<role>``, ``</role>``, ``<|role_end|>``, ``<think>``, ``</think>``,
``<tool_call>``, ``</tool_call>``, ``<arg_key>``, ``</arg_key>``, ``<arg_value>``,
``</arg_value>``, ``<tool_response>``, ``</tool_response>`` are special tokens; the role words
are text)::

    <role>SYSTEM</role>You are terse.
    # Tools
    ...
    <tool_call>{function-name}
    <arg_key>{arg-key-1}</arg_key>
    ...
    </tool_call>
    detailed thinking on<|role_end|><role>HUMAN</role>Weather in Zürich?<|role_end|><role>ASSISTANT</role>
    <think>Look it up.</think><tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Zürich</arg_value><arg_key>days</arg_key>
    <arg_value>2</arg_value>
    </tool_call><|role_end|><role>OBSERVATION</role>
    <tool_response>
    {"temp_c": 3}
    </tool_response><|role_end|><role>ASSISTANT</role>
    <think>

Variants: ``bailing`` (the template's default, ``enable_thinking`` true: the prompt opens
``<think>``), ``bailing:no-thinking`` (``enable_thinking=false``: ``detailed thinking off``, and
the prompt closes an empty block).

Decisions:

- **The system turn is always there**: the system text, then (with tools) the tools block,
  then ``detailed thinking on|off`` (none when the system text already says
  ``detailed thinking on`` or ``off``).  Later system messages are turns of their own.  Reading
  takes the thinking line as layout: a system turn holding only it (or the tools and it)
  parses to no message.
- **Calls**: ``<tool_call>NAME\\n`` then per argument ``<arg_key>KEY</arg_key>\\n<arg_value>VALUE
  </arg_value>`` then ``\\n</tool_call>``, a newline before each call that follows text or
  another call.  Values: strings as they are, others as JSON, read back by the tool's schema.
  Both GLM layouts are read (with or without the newlines between tags).  No ids.
- **Results**: consecutive tool messages share one ``<role>OBSERVATION</role>`` turn, each
  ``\\n<tool_response>\\nTEXT\\n</tool_response>``.  Names are not written (a recorded loss).
- **Reasoning** is written on every assistant turn (``\\n<think>R</think>``, the template's
  ``preserved_thinking``), an empty block where a turn has none; the reasoning without newlines
  at its ends and the text after it without newlines at its start (a recorded loss).  An
  empty ``reasoning_content`` is no reasoning (the empty block, the text as given).  A call
  opening inside an unclosed block ends the reasoning (llama.cpp reads Ling so).

An assistant message with no or empty ``reasoning_content`` whose content holds
``</think>`` is written as the template writes it: the text before the first ``</think>``
(after its ``<think>``) as its reasoning, the text after the last one as its content
(``Reasoning(in_content="empty")``; text the split drops is a recorded loss).

Remaining differences from the template:

- The template's ``thinking_option`` variable (without ``enable_thinking``) is not an option.
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is)

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    Reasoning,
    Results,
    Switch,
    SystemPrompt,
    ToolsBlock,
    XmlCalls,
    declare,
    fence,
)

from .thinking import ThinkingLine

ROLE, ROLE_CLOSE, END = Marker("<role>"), Marker("</role>"), Marker("<|role_end|>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
TOOL_CALL, TOOL_CALL_END = Marker("<tool_call>"), Marker("</tool_call>")
ARG_KEY, ARG_KEY_END = Marker("<arg_key>"), Marker("</arg_key>")
ARG_VALUE, ARG_VALUE_END = Marker("<arg_value>"), Marker("</arg_value>")
RESPONSE, RESPONSE_END = Marker("<tool_response>"), Marker("</tool_response>")

TOOLS_INTRO = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_OUTRO = (
    "\n</tools>\n\nIf none of the functions can be used, point it out. If the given question "
    "lacks the parameters required by the function, also point it out.\nIf you need to use a "
    "function, for each function call, output the function name and arguments within the "
    "following XML format:\n"
)


@dataclass(frozen=True)
class BailingOptions:
    """``thinking``: the template's ``enable_thinking`` (the thinking line says ``on`` and
    the prompt opens ``<think>``; False: ``off``, and the prompt closes an empty block)."""

    thinking: bool = True


def _variables(options: BailingOptions) -> Mapping[str, Any]:
    return {"enable_thinking": options.thinking}


def frame(role: str) -> Frame:
    return Frame(open=fence(ROLE, role, ROLE_CLOSE), end=fence(END))


def layout(options: BailingOptions) -> Layout:
    line = "detailed thinking " + ("on" if options.thinking else "off")
    return Layout(
        name="bailing",
        summary="Ling 3.0 (Bailing V3): <role>ROLE</role> ... <|role_end|>, GLM-style tag calls",
        frames={
            "system": frame("SYSTEM"),
            "user": frame("HUMAN"),
            "assistant": frame("ASSISTANT"),
            "tool": frame("OBSERVATION"),
        },
        concepts=(
            SystemPrompt(default=line, default_when="without_tools"),
            Ignored(("name",)),
            ToolsBlock(
                place="system",
                open=fence(TOOLS_INTRO),
                item_open=fence("\n"),
                close=fence(
                    TOOLS_OUTRO,
                    TOOL_CALL,
                    "{function-name}\n",
                    ARG_KEY,
                    "{arg-key-1}",
                    ARG_KEY_END,
                    "\n",
                    ARG_VALUE,
                    "{arg-value-1}",
                    ARG_VALUE_END,
                    "\n",
                    ARG_KEY,
                    "{arg-key-2}",
                    ARG_KEY_END,
                    "\n",
                    ARG_VALUE,
                    "{arg-value-2}",
                    ARG_VALUE_END,
                    "\n...\n",
                    TOOL_CALL_END,
                    "\n",
                ),
                separator=fence("\n"),
            ),
            ThinkingLine(line),
            Reasoning(
                open=fence("\n", THINK),
                close=fence(THINK_END),
                keep="all",
                absent=fence("\n", THINK, THINK_END),
                prompt="open" if options.thinking else "empty",
                calls_end=True,
                trim="\n",
                in_content="empty",
            ),
            XmlCalls(
                open=fence(TOOL_CALL),
                name_close=fence("\n"),
                key_open=fence(ARG_KEY),
                key_close=fence(ARG_KEY_END, "\n", ARG_VALUE),
                value_close=fence(ARG_VALUE_END),
                close=fence("\n", TOOL_CALL_END),
                separator=fence("\n"),
                text_separator=fence("\n"),
            ),
            Results(
                grouped=True,
                item_open=fence("\n", RESPONSE, "\n"),
                item_close=fence("\n", RESPONSE_END),
            ),
        ),
        options=options,
        from_options=layout,
        variants={"no-thinking": BailingOptions(thinking=False)},
        template_variables=_variables,
        switches=(Switch("thinking", "enable_thinking"),),
    )


FORMAT = declare(layout(BailingOptions()))
