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
  when that tells them apart (see :mod:`pawlette.declare.joined_results`); otherwise the group is one result, with
  a warning.
- **Reasoning** is never written in past turns (the template drops ``reasoning_content``:
  a recorded loss).  A past assistant text holding ``</think>`` (a model's
  ``reasoning</think>answer`` given back as content) is written as the template writes it
  (:mod:`.past_answer`): what lies between its first ``</think>`` and the next, trimmed (the
  template's ``content.split('</think>')[1]``), so the model sees its past turns as in
  training; what is cut is a recorded loss.  The generation prompt opens a block, ``<think>\\n``: the model writes
  ``reasoning</think>answer``, a newline, and ends its turn with ``<SPECIAL_12>``.
- **The turn a conversation ends on** (a render without the generation prompt, for
  training) is written as the template writes it (:mod:`.final_turn`): its text after the
  prompt's ``<think>\\n``, inside the block the template never closes, then ``\\n<SPECIAL_12>\\n``;
  its calls in a turn of their own, ``<SPECIAL_11>Assistant\\n<TOOLCALL>[...]</TOOLCALL>``
  + ``<SPECIAL_12>\\n\\n``.  The prompt's ``<think>\\n`` is not trainable, all that follows
  it is.  Read as a conversation, the turn gives the message back.  Read as what the model
  wrote after the prompt (llama.cpp and vLLM read it so), the text is reasoning never closed:
  a recorded loss, "read back as reasoning_content".  The option ``last_turn="closed"``
  writes that turn as the model writes its turn after the prompt instead, ``</think>``
  (trainable) + the turn as past turns are written, for training that teaches the model to
  close its block.
- **System and user turns** have no end marker: their text, then ``\\n\\n`` or ``\\n``, then
  the next opener; reading drops that whitespace (:mod:`.unended`).
- **Reading** follows llama.cpp (its ``nemotron_v2`` handler and its cases) and vLLM (the
  model's DeepSeek-R1-style reasoning parser and its ``<TOOLCALL>`` tool parser): after the
  prompt's open block, text up to ``</think>`` is reasoning (all of it when the model never
  closes the block: the output was cut while thinking, or it is the template's own last
  turn); text before ``<TOOLCALL>`` is content; the list is one JSON array of objects with
  ``name`` and ``arguments``, closed by ``</TOOLCALL>``.  Where pawlette reads more than
  they do: a list the model writes at once, in the open block, is read as calls (llama.cpp
  and vLLM read it as reasoning: the block is never closed), since the template's own last
  turn of calls holds no block and so teaches a model to write the list first; and the
  template's last turn of calls after the end of its text,
  ``\\n<SPECIAL_12>\\n<SPECIAL_11>Assistant\\n<TOOLCALL>``, continues the message.  Where pawlette is stricter, it warns: text after the list is content, as
  llama.cpp reads it, with a warning (the template never writes text after calls); a list
  that is not one (no name, arguments that are not an object, no array) stays content with
  a warning, where llama.cpp fails the parse; a ``<think>`` written again after the prompt's
  stays in the reasoning text with a warning (the prompt opened the block already).

Remaining differences from the template:

- **An empty last assistant turn** (no text, no calls, no generation prompt): the template
  writes its text only under ``{%- if ns.last_turn_assistant_content is defined and
  ns.last_turn_assistant_content != '' -%}`` and its calls only when there are some, so
  such a message leaves nothing; the format writes the turn, an empty answer after the
  prompt's block (a training render that drops the message it ends on would drop what the
  model is to learn).
- **The last turn's reasoning** is dropped as in past turns; the template writes a last
  text holding ``</think>`` as given (a caller's ``reasoning</think>answer``), and so does
  the format, which reads it back split there.
- ``/think`` and ``/no_think`` in a system or user message: the template deletes them from
  the text and writes ``<think></think>`` as the prompt after ``/no_think``; the format
  writes the text as given and always opens the block.
- **The generation prompt after an assistant message**: the template takes a last
  assistant message out of its loop (``{%- if messages[-1]['role'] == 'assistant' -%}`` ...
  ``{%- set messages = messages[:-1] -%}``) and, with ``add_generation_prompt``, writes
  its trimmed text after the prompt's ``<think>\\n`` (``{{- ns.last_turn_assistant_content
  -}}``), as text the model is to go on from, and drops its calls; the format writes that message as a past turn, then the prompt, so the model
  answers it (a client that wants a turn continued sends the text as its prompt's part).
- A call name is written as a JSON string (the template writes it between quotes
  unescaped).
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pawlette.declare import (
    Frame,
    Ignored,
    JoinedResults,
    Layout,
    Marker,
    Reasoning,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)

from .final_turn import FinalCalls, FinalTurn
from .past_answer import PastAnswerTrimmed
from .unended import UnendedTurns

SYSTEM = Marker("<SPECIAL_10>")
TURN = Marker("<SPECIAL_11>")
END = Marker("<SPECIAL_12>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
CALLS, CALLS_END = Marker("<TOOLCALL>"), Marker("</TOOLCALL>")

TOOLS_OPEN = "You can use the following tools to assist the user if required:\n<AVAILABLE_TOOLS>"
# The instructions spell the call fences, special tokens: the tokenizer reads the template's
# text so (transformers encodes the rendered text whole), and so does the format write them.
TOOLS_CLOSE = fence(
    "</AVAILABLE_TOOLS>\n\nIf you decide to call any tool(s), use the following format:\n",
    CALLS,
    '[{{"name": "tool_name1", "arguments": "tool_args1"}}, '
    '{{"name": "tool_name2", "arguments": "tool_args2"}}]',
    CALLS_END,
    "\n\nThe user will execute tool-calls and return responses from tool(s) in this format:\n"
    '<TOOL_RESPONSE>[{{"tool_response1"}}, {{"tool_response2"}}]</TOOL_RESPONSE>\n\n'
    "Based on the tool responses, you can call additional tools if needed, correct tool calls "
    "if any errors are found, or just respond to the user.",
)


@dataclass(frozen=True)
class NemotronOptions:
    """``last_turn``: how a render without the generation prompt writes the assistant
    message it ends on: ``"template"`` (as the template does: its text inside the block the
    prompt opens, its calls in a turn of their own) or ``"closed"`` (as the model writes its
    turn after the prompt: ``</think>``, then the turn as past turns are written)."""

    last_turn: Literal["template", "closed"] = "template"


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
                close=TOOLS_CLOSE,
                separator=fence("\n\n"),
                separator_when="text",
                wrap="function",
                array=True,
            ),
            Reasoning(open=fence(THINK, "\n"), close=fence(THINK_END), keep="none", prompt="open"),
            FinalCalls(
                open=fence(CALLS),
                close=fence(CALLS_END),
                text_separator=fence("\n"),
                text_end=fence("\n", END),
                calls_opener=fence("\n", TURN, "Assistant\n"),
                split=options.last_turn == "template",
            ),
            JoinedResults(),
            PastAnswerTrimmed(roles=("system", "user", "assistant")),
            FinalTurn(
                open=fence(THINK, "\n"),
                close=fence(THINK_END),
                end=fence(END),
                gap=fence("\n"),
                closed=options.last_turn == "closed",
            ),
            Ignored(("name", "reasoning")),
            UnendedTurns(),
        ),
        options=options,
        from_options=layout,
    )


FORMAT = declare(layout(NemotronOptions()))
