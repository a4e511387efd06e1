"""Poolside Laguna: ``<role>`` ... ``</role>`` turns, calls as one tag pair per argument (GLM's
layout), reasoning kept on every turn, as Poolside's chat templates write them.

Laguna XS (``laguna``, Laguna-XS.2's template; the markers ``<system>``, ``</system>``,
``<user>``, ``</user>``, ``<assistant>``, ``</assistant>``, ``<think>``, ``</think>``,
``<tool_call>``, ``</tool_call>``, ``<arg_key>``, ``</arg_key>``, ``<arg_value>``,
``</arg_value>``, ``<tool_response>``, ``</tool_response>`` and ``〈|EOS|〉`` are written as
markers)::

    〈|EOS|〉<system>

    You are terse.

    ### Tools

    You may call functions to assist with the user query.
    All available function signatures are listed below:
    <available_tools>
    {"type": "function", "function": {"name": "get_weather", ...}}
    </available_tools>

    For each function call, return an unescaped XML-like object with function name and arguments within '<tool_call>' and '</tool_call>' tags, like here:
    <tool_call>function-name
    <arg_key>argument-key</arg_key>
    <arg_value>value-of-argument-key</arg_value>
    </tool_call>
    </system>
    <user>
    Weather in Zürich?
    </user>
    <assistant>
    </think>
    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Zürich</arg_value>
    </tool_call>
    </assistant>
    <tool_response>
    {"temp_c": 3}
    </tool_response>
    <assistant>
    </think>

Laguna S (``laguna:s-2.1``) writes the same turns with no newline inside them, no call
instructions, and an empty ``<think></think>`` block on every turn without reasoning; its
generation prompt opens ``<think>``::

    〈|EOS|〉<system>You are terse.

    ### Tools
    ...
    </available_tools></system>
    <user>Weather in Zürich?</user>
    <assistant><think></think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Zürich</arg_value></tool_call></assistant>
    <tool_response>{"temp_c": 3}</tool_response>
    <assistant><think>

Variants (reference: llama.cpp's ``models/templates``, ``poolside-Laguna-XS.2.jinja``,
``poolside-Laguna-XS-2.1.jinja`` and ``poolside-Laguna-S-2.1.jinja``):

- ``laguna`` (the default, Laguna-XS.2: Poolside's default system text, thinking off: the
  generation prompt is ``<assistant>\\n</think>``), ``laguna:xs.2-thinking`` (the template's
  ``enable_thinking=true``: the prompt is ``<assistant>\\n<think>`` and the call
  instructions ask for a reasoning block first).
- ``laguna:xs-2.1`` and ``laguna:xs-2.1-thinking``: Laguna-XS-2.1, the same without a
  default system text (no system turn unless the request has a system message or tools).
- ``laguna:s-2.1`` (Laguna-S-2.1, thinking on: the prompt is ``<assistant><think>``) and
  ``laguna:s-2.1-no-thinking`` (``enable_thinking=false``: the prompt is
  ``<assistant></think>``, and past turns write ``</think>`` with their reasoning dropped).

Decisions:

- **Turns** end with their close tag and a newline after it; the model ends its turn with
  ``</assistant>`` (Laguna XS: ``\\n</assistant>``), the format's stop (a prepared
  tokenizer's end-of-sequence token is ``</assistant>``).
- **The system turn** holds the first system message's text without the whitespace at its
  end (a recorded loss), or Poolside's default text when there is none (XS.2, S-2.1), then
  the tools block; Laguna XS writes a newline before that text.  A first system message
  with empty text stands in for the default: no turn, unless the request has tools or
  Laguna S thinks (then an empty one).  Later system messages are turns of their own, their
  text as it is.
- **Tools**: one ``tojson`` line per tool (the whole OpenAI tool object, ``", "``/``": "``,
  non-ASCII kept) inside ``<available_tools>``; Laguna XS adds the call instructions.
- **Calls**: ``<tool_call>NAME`` then per argument ``<arg_key>KEY</arg_key><arg_value>VALUE
  </arg_value>`` then ``</tool_call>`` (Laguna XS: a newline before each call, after the
  name and after each tag pair).  A string value is written as it is, any other as JSON
  (``tojson``, non-ASCII kept); reading types each value by the tool's schema and keeps a
  string value's whitespace, as vLLM's ``poolside_v1`` parser (GLM-4.7's) does, and reads
  both layouts in every variant.  A call without a name, or to a tool the request does not
  declare, stays the text the model wrote, with a warning (vLLM drops the first and returns
  the second).  No ids: results answer calls by position.
- **Results**: each tool message is a ``<tool_response>`` turn of its own.  A tool message's
  ``name`` is not written (a recorded loss).
- **Reasoning** is written on every turn that has some.  Laguna XS ``strip()``s the
  reasoning and the text (both recorded losses when they change) and writes a lone
  ``</think>`` where a turn has none; Laguna S writes both as given and an empty block.  A
  call opening inside an unclosed block ends the reasoning.
- **Reading follows the prompt**: after a prompt that opens ``<think>`` the completion starts
  inside the block (``\\nR\\n</think>\\nanswer``); after ``</think>`` it is content and
  calls, the newline Laguna XS writes before them read as layout.  The prompt's
  ``</think>`` is the stand-in of past turns without reasoning: not trainable there, and a
  forced call follows it directly.

Laguna XS: an assistant message whose content holds ``</think>`` is written as its
templates write it: its content is the text after the last ``</think>``, and where the message has no
reasoning of its own, the text before the first ``</think>`` (after its ``<think>``) is its
reasoning (``Reasoning(in_content="always")``; text the split drops is a recorded loss).

Remaining differences from the templates:

- A message whose content is a list of parts: the templates write it as empty text; pawlette
  writes its text parts.
- Laguna XS: the template's ``render_assistant_messages_raw`` (content dumped verbatim) is not offered.
- Laguna XS thinking on, and XS thinking off with a turn that has reasoning: the prompt
  (``<assistant>\\n<think>`` / ``<assistant>\\n</think>``) is the template's own; a past turn
  of the other kind does not extend it.
- Laguna XS thinking on: in a training mask, the newline after a past turn's ``<think>`` is
  not trainable (the block's open fence is ``<think>\\n``, which the prompt writes up to its
  newline).
- A first system message whose text is only whitespace: the templates write it as an empty
  one (no turn unless the request has tools, or Laguna S thinks; no default text); pawlette
  writes the turn (its text right-stripped: empty).
- Laguna S's ``preserve_thinking`` (reasoning kept with thinking off) is not offered.
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pawlette.declare import (
    FirstSystemText,
    Frame,
    Ignored,
    Layout,
    Marker,
    Reasoning,
    Results,
    Switch,
    SystemPrompt,
    ToolsBlock,
    Trimmed,
    XmlCalls,
    declare,
    fence,
)
from pawlette.declare.pieces import Fence

from .concepts import PromptedReasoning

EOS = Marker("〈|EOS|〉")
SYSTEM, SYSTEM_END = Marker("<system>"), Marker("</system>")
USER, USER_END = Marker("<user>"), Marker("</user>")
ASSISTANT, ASSISTANT_END = Marker("<assistant>"), Marker("</assistant>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
TOOL_CALL, TOOL_CALL_END = Marker("<tool_call>"), Marker("</tool_call>")
ARG_KEY, ARG_KEY_END = Marker("<arg_key>"), Marker("</arg_key>")
ARG_VALUE, ARG_VALUE_END = Marker("<arg_value>"), Marker("</arg_value>")
RESPONSE, RESPONSE_END = Marker("<tool_response>"), Marker("</tool_response>")
MARKERS = {
    marker.text: marker
    for marker in (
        *(THINK, THINK_END, TOOL_CALL, TOOL_CALL_END),
        *(ARG_KEY, ARG_KEY_END, ARG_VALUE, ARG_VALUE_END),
    )
}

WHITESPACE = "".join(chr(code) for code in range(0x3001) if chr(code).isspace())
"""What Python's ``str.strip()`` (the templates' ``.strip()``) removes."""

DEFAULT_SYSTEM = (
    "You are a helpful, conversationally-fluent assistant made by Poolside. You are here to "
    "be helpful to users through natural language conversations."
)
TOOLS_INTRO = (
    "### Tools\n\nYou may call functions to assist with the user query.\n"
    "All available function signatures are listed below:\n<available_tools>\n"
)
EXAMPLE = (
    "<tool_call>function-name\n<arg_key>argument-key</arg_key>\n"
    "<arg_value>value-of-argument-key</arg_value>\n</tool_call>"
)
INSTRUCTIONS = (
    "For each function call, return an unescaped XML-like object with function name and "
    "arguments within '<tool_call>' and '</tool_call>' tags, like here:\n"
)
THINKING_INSTRUCTIONS = (
    "Wrap your thinking in '<think>', '</think>' tags, followed by a function call. For each "
    "function call, return an unescaped XML-like object with function name and arguments "
    "within '<tool_call>' and '</tool_call>' tags, like here:\n"
    "<think> your thoughts here </think>\n"
)

Version = Literal["xs", "s"]


@dataclass(frozen=True)
class LagunaOptions:
    """``version``: which template's layout (``"xs"``: Laguna XS, newlines inside turns;
    ``"s"``: Laguna S, none); ``default_system``: Poolside's default system text when the
    conversation has no system message (False: Laguna-XS-2.1's template, none);
    ``thinking``: the template's ``enable_thinking``."""

    version: Version = "xs"
    default_system: bool = True
    thinking: bool = False


VARIANTS = {
    "xs.2": LagunaOptions(),
    "xs.2-thinking": LagunaOptions(thinking=True),
    "xs-2.1": LagunaOptions(default_system=False),
    "xs-2.1-thinking": LagunaOptions(default_system=False, thinking=True),
    "s-2.1": LagunaOptions(version="s", thinking=True),
    "s-2.1-no-thinking": LagunaOptions(version="s"),
}


def _variables(options: LagunaOptions) -> Mapping[str, Any]:
    return {"enable_thinking": options.thinking}


def _spelled(text: str) -> Fence:
    """``text`` with the markers it spells written as those markers (the tokenizer reads
    them so in the instructions too)."""
    pattern = "(" + "|".join(re.escape(spelling) for spelling in MARKERS) + ")"
    return fence(*(MARKERS.get(piece, piece) for piece in re.split(pattern, text) if piece != ""))


def _frame(open_: Marker, close: Marker, line: str) -> Frame:
    return Frame(
        open=fence(open_, line) if line else fence(open_),
        end=fence(line, close) if line else fence(close),
        after=fence("\n"),
    )


def layout(options: LagunaOptions) -> Layout:
    xs = options.version == "xs"
    line = "\n" if xs else ""
    opener = fence(ASSISTANT, line) if xs else fence(ASSISTANT)
    if xs:
        closing = INSTRUCTIONS if not options.thinking else THINKING_INSTRUCTIONS
        tools = ToolsBlock(
            place="system",
            open=fence("\n\n" + TOOLS_INTRO),
            item_close=fence("\n"),
            close=_spelled("</available_tools>\n\n" + closing + EXAMPLE),
        )
        block = Reasoning(
            open=fence(THINK, "\n"),
            close=fence("\n", THINK_END),
            keep="all",
            absent=fence(THINK_END),
            prompt="opened" if options.thinking else "closed",
            calls_end=True,
            trim=WHITESPACE,
            in_content="always",
        )
        prompt = fence(ASSISTANT, "\n", THINK if options.thinking else THINK_END)
        text: tuple[Any, ...] = (Trimmed(roles=("assistant",), lead=fence("\n")),)
        prompted: tuple[Any, ...] = (PromptedReasoning("\n"),) if options.thinking else ()
    else:
        tools = ToolsBlock(
            place="system",
            separator=fence("\n\n"),
            separator_when="text",
            open=fence(TOOLS_INTRO),
            item_close=fence("\n"),
            close=fence("</available_tools>"),
        )
        block = Reasoning(
            open=fence(THINK),
            close=fence(THINK_END),
            keep="all" if options.thinking else "none",
            absent=fence(THINK, THINK_END) if options.thinking else fence(THINK_END),
            prompt="open" if options.thinking else "closed",
            calls_end=True,
        )
        prompt = fence(ASSISTANT, THINK_END)
        text = prompted = ()
    roles = ("start", "system", "user", "assistant", "tool")
    opens = not xs and options.thinking  # Reasoning(prompt="open") writes the prompt's <think>
    assistant = Frame(
        open=opener,
        end=fence(line, ASSISTANT_END) if xs else fence(ASSISTANT_END),
        after=fence("\n"),
        prompt_after={} if opens else {role: prompt for role in roles},
    )
    default = DEFAULT_SYSTEM if options.default_system else None
    return Layout(
        name="laguna",
        summary="Poolside Laguna: <role> turns, <tool_call>NAME<arg_key>...",
        begin=fence(EOS),
        frames={
            "system": _frame(SYSTEM, SYSTEM_END, line),
            "user": _frame(USER, USER_END, line),
            "assistant": assistant,
            "tool": _frame(RESPONSE, RESPONSE_END, line),
        },
        concepts=(
            SystemPrompt(
                default=default,
                always=not xs and options.thinking,
                empty_first="kept" if not xs and options.thinking else "none",
            ),
            FirstSystemText(lead=fence("\n") if xs else (), rstrip=True),
            tools,
            Ignored(("name",)),  # the templates write no message's name
            *text,
            block,
            *prompted,
            XmlCalls(
                open=fence(line, TOOL_CALL) if xs else fence(TOOL_CALL),
                name_close=fence(line) if xs else fence(),
                key_open=fence(ARG_KEY),
                key_close=fence(ARG_KEY_END, line, ARG_VALUE)
                if xs
                else fence(ARG_KEY_END, ARG_VALUE),
                value_close=fence(ARG_VALUE_END, line) if xs else fence(ARG_VALUE_END),
                close=fence(TOOL_CALL_END),
            ),
            Results(),
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        template_variables=_variables,
        switches=(Switch("thinking", "enable_thinking"),),
    )


FORMAT = declare(layout(LagunaOptions()))
