"""MiniMax M1: ``<beginning_of_sentence>ROLE name=...`` turns, the tools in a system turn
of their own, calls as JSON lines inside ``<tool_calls>...</tool_calls>``.

The wire format (``<begin_of_document>``, ``<beginning_of_sentence>`` and
``<end_of_sentence>`` are special tokens; the rest is text)::

    <begin_of_document><beginning_of_sentence>system ai_setting=assistant
    You are terse.<end_of_sentence>
    <beginning_of_sentence>system tool_setting=tools
    You are provided with these tools:
    <tools>
    {"type": "function", "function": {"name": "get_weather", ...}}
    </tools>

    If you need to call tools, please respond with <tool_calls></tool_calls> XML tags, ...
    </tool_calls><end_of_sentence>
    <beginning_of_sentence>user name=user
    Weather in Paris?<end_of_sentence>
    <beginning_of_sentence>ai name=assistant
    <tool_calls>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_calls><end_of_sentence>
    <beginning_of_sentence>tool name=tools
    tool result: 18°C

    <end_of_sentence>
    <beginning_of_sentence>ai name=assistant

Decisions (reference: ``MiniMax-M1.jinja`` in llama.cpp's ``models/templates``):

- **The system turn** holds the first system message's text, trimmed, or ``You are a
  helpful assistant created by Minimax based on MiniMax-M1 model.`` without one; a first
  system message whose text is blank is written as no turn at all, as the template does
  (a recorded loss); later system messages are dropped, as the template skips them (a
  recorded loss).  The tools follow it in a system turn of their own
  (``tool_setting=tools``), one OpenAI tool object a line, with the template's
  instructions.
- **Text** is trimmed in system, user and assistant turns (a recorded loss when its ends
  held whitespace); names and ``reasoning_content`` are not written (recorded losses).
- **Calls**: a turn with calls is ``<tool_calls>\\n`` + one ``{"name": NAME, "arguments":
  ARGS}`` a line + ``</tool_calls>``; the template drops the turn's text (a recorded loss).
  No ids: results answer calls by position.
- **Results**: each tool message a turn, ``tool result: `` + its text + a blank line.
- **Reading** follows vLLM's ``minimax`` tool parser and its cases: text before
  ``<tool_calls>`` is content (a space before the fence is the fence's); the calls are JSON
  objects one after another; a list the turn ends in without ``</tool_calls>`` is read too.
  A ``<think>...</think>`` block at the start is the reasoning (the model's, which the
  template never writes back), and calls written inside it are reasoning text, as vLLM's
  parser ignores them.  Where pawlette reads otherwise: a list holding a line that is not a
  call (invalid JSON, no name) stays content with a warning, where vLLM keeps the valid
  lines and drops the rest silently; an object written over several lines is read, where
  vLLM's reader finds no call.

Remaining differences from the template: a call name is written as a JSON string (the
template writes it between quotes unescaped); a conversation that is one system message and
no other, with tools, gets no tools turn (the template writes it).
"""

from __future__ import annotations

from dataclasses import dataclass

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    Reasoning,
    Results,
    ToolsBlock,
    Trimmed,
    declare,
    fence,
)

from .calls import JsonLineCalls
from .system import BlankSystemDropped

DOCUMENT = Marker("<begin_of_document>")
SENTENCE = Marker("<beginning_of_sentence>")
END = Marker("<end_of_sentence>")

DEFAULT_SYSTEM = "You are a helpful assistant created by Minimax based on MiniMax-M1 model."
TOOLS_OPEN = "system tool_setting=tools\nYou are provided with these tools:\n<tools>\n"
TOOLS_CLOSE = (
    "</tools>\n\nIf you need to call tools, please respond with <tool_calls></tool_calls> XML "
    "tags, and provide tool-name and json-object of arguments, following the format below:\n"
    '<tool_calls>\n{"name": <tool-name>, "arguments": <args-json-object>}\n...\n</tool_calls>'
)


@dataclass(frozen=True)
class MinimaxOptions:
    """MiniMax M1 has no options: its template reads no variable."""


def turn(head: str, before_end: str = "") -> Frame:
    """A turn: ``<beginning_of_sentence>`` + its head, its text, ``<end_of_sentence>``."""
    end = fence(before_end, END) if before_end else fence(END)
    return Frame(open=fence(SENTENCE, head), end=end, after=fence("\n"))


def layout(options: MinimaxOptions) -> Layout:
    return Layout(
        name="minimax",
        summary="MiniMax M1: <beginning_of_sentence> turns, JSON lines in <tool_calls>",
        begin=fence(DOCUMENT),
        frames={
            "system": turn("system ai_setting=assistant\n"),
            "user": turn("user name=user\n"),
            "assistant": turn("ai name=assistant\n"),
            "tool": turn("tool name=tools\ntool result: ", "\n\n"),
        },
        concepts=(
            BlankSystemDropped(default=DEFAULT_SYSTEM, placement="first_kept"),
            ToolsBlock(
                place="after_system",
                open=fence(SENTENCE, TOOLS_OPEN),
                close=fence(TOOLS_CLOSE, END, "\n"),
                item_close=fence("\n"),
            ),
            Reasoning(open=fence("<think>"), close=fence("</think>"), keep="none"),
            JsonLineCalls(
                open=fence("<tool_calls>\n"),
                close=fence("\n</tool_calls>"),
                text_separator=fence(" "),  # read only: the template drops the text
                content="dropped",
            ),
            Results(),
            Trimmed(roles=("system", "user", "assistant")),
            Ignored(("name", "reasoning")),
        ),
        options=options,
        from_options=layout,
        markers_in_text=True,
    )


FORMAT = declare(layout(MinimaxOptions()))
