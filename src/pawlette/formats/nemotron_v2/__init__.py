"""NVIDIA Nemotron Nano 2 (9B/12B v2): ``<SPECIAL_11>`` turns, tools in
``<AVAILABLE_TOOLS>``, calls as one JSON list in ``<TOOLCALL>[...]</TOOLCALL>``.

The wire format (``<SPECIAL_1x>``, ``<think>``, ``</think>``, ``<TOOLCALL>`` and
``</TOOLCALL>`` are special tokens; ``<AVAILABLE_TOOLS>`` and ``<TOOL_RESPONSE>`` are text)::

    <SPECIAL_10>System
    You are terse.

    You can use the following tools to assist the user if required:
    <AVAILABLE_TOOLS>[{"name": "get_weather", "description": ..., "parameters": {...}}]</AVAILABLE_TOOLS>

    If you decide to call any tool(s), use the following format:
    ...

    <SPECIAL_11>User
    Weather in Paris?
    <SPECIAL_11>Assistant
    <TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>
    <SPECIAL_12>
    <SPECIAL_11>User
    <TOOL_RESPONSE>[18°C]</TOOL_RESPONSE><SPECIAL_11>Assistant
    <think>

Decisions (reference: ``NVIDIA-Nemotron-Nano-v2.jinja`` in llama.cpp's ``models/templates``):

- **The system turn** is always written, the first system message's text trimmed (empty
  without one); the tools block follows it, after a blank line when the text is not empty,
  with the template's instructions.  Later system messages are dropped, as the template
  skips them (a recorded loss).  Each tool is written as its ``function`` object.
- **User turns** end with a newline and no marker; text is trimmed in system, user and
  assistant turns (a recorded loss when the ends held whitespace).  Names are not written.
- **Calls**: after the turn's text (and a newline when there is text), ``<TOOLCALL>`` + the
  calls as ``{"name": NAME, "arguments": ARGS}`` joined by ``, `` in ``[...]`` +
  ``</TOOLCALL>``.  No ids: results answer calls by position.
- **Results**: the tool messages after a turn of calls share one user turn,
  ``<TOOL_RESPONSE>[`` + their texts joined by ``, `` + ``]</TOOL_RESPONSE>``, with no
  newline after it.  Reading splits a group into one result per call it answers at ``, ``
  when that tells them apart (see :mod:`.results`); otherwise the group is one result, with
  a warning.
- **Reasoning** is never written in past turns (the template drops ``reasoning_content``:
  a recorded loss).  The generation prompt opens a block, ``<think>\n``: the model writes
  ``reasoning</think>answer``, a newline, and ends its turn with ``<SPECIAL_12>``.
- **The turn a conversation ends on** (a render without the generation prompt, for
  training) is written after the prompt's ``<think>\n`` with the block closed at once,
  ``</think>answer``, so the prompt's text begins the training render and the model learns
  what it writes after that prompt (:mod:`.final_turn`).
- **System and user turns** have no end marker: their text, then ``\n\n`` or ``\n``, then
  the next opener; reading drops that whitespace (:mod:`.unended`).
- **Reading** follows llama.cpp (its ``nemotron_v2`` handler and its cases) and vLLM (the
  model's DeepSeek-R1-style reasoning parser and its ``<TOOLCALL>`` tool parser): after the
  prompt's open block, text up to ``</think>`` is reasoning (all of it when the model never
  closes the block: the output was cut while thinking); text before ``<TOOLCALL>`` is
  content; the list is one JSON array of objects with ``name`` and ``arguments``, closed by
  ``</TOOLCALL>``.  Where pawlette is stricter, it warns: text after the list is content, as
  llama.cpp reads it, with a warning (the template never writes text after calls); a list
  that is not one (no name, arguments that are not an object, no array) stays content with
  a warning, where llama.cpp fails the parse; a ``<think>`` written again after the prompt's
  stays in the reasoning text with a warning (the prompt opened the block already).

Remaining differences from the template:

- **A conversation that ends on an assistant message** (no generation prompt): the
  template writes that turn as a continuation of its generation prompt, ``<think>\n`` +
  the answer inside the block it never closes, and the turn's calls in a turn of their own
  (``<SPECIAL_11>Assistant\n<TOOLCALL>[...]</TOOLCALL><SPECIAL_12>\n\n``); an empty one not
  at all.  The format closes the block before the answer and writes the calls in the turn,
  as the model writes them after the prompt (the template's layout would teach an answer
  inside the reasoning block, which its readers, llama.cpp's and vLLM's, read back as
  reasoning, and calls after an end marker).  ``Layout.template_untested`` says so:
  detection compares without such requests.
- ``/think`` and ``/no_think`` in a system or user message: the template deletes them from
  the text and writes ``<think></think>`` as the prompt after ``/no_think``; the format
  writes the text as given and always opens the block.
- A past assistant text holding ``</think>``: the template keeps only what follows it; the
  format writes the text as given.
- A call name is written as a JSON string (the template writes it between quotes
  unescaped).
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

from dataclasses import dataclass

from pawlette.declare import (
    Frame,
    Ignored,
    JsonCallList,
    Layout,
    Marker,
    Reasoning,
    SystemPrompt,
    ToolsBlock,
    Trimmed,
    declare,
    fence,
)

from .final_turn import FinalTurnBlock
from .results import JoinedResults
from .unended import UnendedTurns

SYSTEM = Marker("<SPECIAL_10>")
TURN = Marker("<SPECIAL_11>")
END = Marker("<SPECIAL_12>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
CALLS, CALLS_END = Marker("<TOOLCALL>"), Marker("</TOOLCALL>")

TOOLS_OPEN = "You can use the following tools to assist the user if required:\n<AVAILABLE_TOOLS>"
TOOLS_CLOSE = (
    "</AVAILABLE_TOOLS>\n\nIf you decide to call any tool(s), use the following format:\n"
    '<TOOLCALL>[{{"name": "tool_name1", "arguments": "tool_args1"}}, '
    '{{"name": "tool_name2", "arguments": "tool_args2"}}]</TOOLCALL>\n\n'
    "The user will execute tool-calls and return responses from tool(s) in this format:\n"
    '<TOOL_RESPONSE>[{{"tool_response1"}}, {{"tool_response2"}}]</TOOL_RESPONSE>\n\n'
    "Based on the tool responses, you can call additional tools if needed, correct tool calls "
    "if any errors are found, or just respond to the user."
)


@dataclass(frozen=True)
class NemotronOptions:
    """Nemotron Nano 2 has no options: its template reads no variable."""


def layout(options: NemotronOptions) -> Layout:
    return Layout(
        name="nemotron_v2",
        summary="NVIDIA Nemotron Nano 2: <SPECIAL_11> turns, <TOOLCALL>[...] JSON call lists",
        frames={
            # No end marker: whitespace, then the next turn's opener.
            "system": Frame(open=fence(SYSTEM, "System\n"), after=fence("\n\n")),
            "user": Frame(open=fence(TURN, "User\n"), after=fence("\n")),
            "assistant": Frame(
                open=fence(TURN, "Assistant\n"),
                end=fence("\n", END),
                after=fence("\n"),
                also_end=(fence(END),),
            ),
            "tool": Frame(
                open=fence(TURN, "User\n<TOOL_RESPONSE>["), end=fence("]</TOOL_RESPONSE>")
            ),
        },
        concepts=(
            SystemPrompt(always=True, placement="first_kept"),
            ToolsBlock(
                place="system",
                open=fence(TOOLS_OPEN),
                close=fence(TOOLS_CLOSE),
                separator=fence("\n\n"),
                separator_when="text",
                wrap="function",
                array=True,
            ),
            Reasoning(open=fence(THINK, "\n"), close=fence(THINK_END), keep="none", prompt="open"),
            FinalTurnBlock(open=fence(THINK, "\n"), close=fence(THINK_END)),
            JsonCallList(open=fence(CALLS), close=fence(CALLS_END), text_separator=fence("\n")),
            JoinedResults(),
            Trimmed(roles=("system", "user", "assistant")),
            Ignored(("name", "reasoning")),
            UnendedTurns(),
        ),
        options=options,
        from_options=layout,
        template_untested=("final_assistant",),
    )


FORMAT = declare(layout(NemotronOptions()))
