"""ServiceNow Apriel 1.5 and 1.6: the tools as Python literals in ``<available_tools>``, the
calls as one JSON list in ``<tool_calls>...</tool_calls>``; Apriel 1.5's turns
``<|system|>``/``<|user|>``/``<|assistant|>``/``<|tool_result|>`` ended by ``<|end|>``,
Apriel 1.6's (``apriel:1.6``) opened by ``<|begin_ROLE|>`` with no end but the assistant's,
its reasoning written before ``[BEGIN FINAL RESPONSE]``.

Variants (reference: llama.cpp's ``models/templates``): ``apriel`` (the default,
``unsloth-Apriel-1.5.jinja``) and ``apriel:1.6`` (``Apriel-1.6-15b-Thinker-fixed.jinja``).
Both write the same call list (the template's ``{"name": ...`` loop, ids but in the
conversation's last message), the tools through ``tool|string`` and each result as a turn of
its own, and the ``apriel`` tool parser for vLLM reads both: one family, whose variant has a
layout of its own for its turns (:mod:`.thinker`).

The wire format of Apriel 1.5 (the turn markers, ``<s>`` and ``</s>`` are special tokens; the
rest is text)::

    <s><|system|>
    You are a thoughtful and systematic AI assistant built by ServiceNow ... [END FINAL RESPONSE].You are terse.
    You are provided with function signatures within <available_tools></available_tools> XML tags. ...
    <available_tools>
    {'type': 'function', 'function': {'name': 'get_weather', ...}}
    </available_tools>
    <|end|>
    <|user|>
    Weather in Paris?
    <|end|>
    <|assistant|>
    Let me check.
    <tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1"}]</tool_calls>
    <|end|>
    </s><|tool_result|>
    18°C
    <|end|>
    <|assistant|>

Decisions (reference: ``unsloth-Apriel-1.5.jinja`` in llama.cpp's ``models/templates``):

- **The system turn** always begins with the template's reasoning instructions (``You are a
  thoughtful and systematic AI assistant ...``); a system message's text follows them with
  nothing between, as the template writes it.  Every system message is a turn of its own
  where it stands.  The turn holding the instructions alone is written when the conversation
  has no system message anywhere (the template looks through all of them, not only the
  first); see :mod:`.system`.
- **Tools**: each tool object as the template's ``tool|string`` writes it, Python's ``repr``
  of the OpenAI tool object, one a line inside ``<available_tools>``, after the system text
  and a newline, in every system turn.  When the conversation does not begin with a system
  message, the template writes them first in a system turn of their own with its call
  instructions, then (with no system message at all) its default system turn: pawlette writes
  that pair of turns as one block (see :mod:`.tools`).
- **Calls**: after the turn's text, ``\\n<tool_calls>[`` + ``{"name": ..., "arguments":
  ..., "id": ...}`` objects joined by ``", "`` + ``]</tool_calls>``, every turn with its
  newline even when it has no text.  The ids are left out of the conversation's last
  message, as the template leaves them out (see :mod:`.calls`).
- **Turn ends**: every turn ends ``\\n<|end|>``, then a newline, or ``\\n</s>`` after the
  assistant's.  The model stops at ``<|end|>`` (llama.cpp ends generation at
  it): the assistant's end up to it is what the model writes (trainable, the stop, the end
  of the turn grammars), and the template's ``\\n</s>`` after it is written and read as
  :class:`~pawlette.formats.apriel.after_stop.AfterStop` (never trainable; a completion that goes on past the
  stop reads the same).  A model's turn also ends at ``<|end|>`` right after its text or at
  ``</s>`` alone.  Results: each tool message a ``<|tool_result|>`` turn with its text.
- **Reasoning**: the template never writes ``reasoning_content`` (its ``<thinking>`` block
  needs the ``add_thoughts`` variable no caller passes by default): a recorded loss, as are
  message names.
- **Reading** follows vLLM's ``apriel`` tool parser: text before ``<tool_calls>`` is
  content, the fence holds one JSON list of ``{"name", "arguments"}`` objects (an ``"id"``
  the model writes is read too).  Where pawlette reads otherwise: a list with an item that
  is not a call (no name, arguments not an object) stays content with a warning, where vLLM
  skips that item silently.  The text the model writes around ``[BEGIN FINAL RESPONSE]`` is
  content, markers included: the template never writes reasoning back, so no reasoning
  block is declared.

Apriel 1.6 (``apriel:1.6``; the ``<|begin_ROLE|>`` markers, ``<|end|>`` and ``<s>`` are
special tokens)::

    <s><|begin_system|>
    You are a thoughtful, systematic AI assistant from ServiceNow ... [BEGIN FINAL RESPONSE].
    You are terse.
    You are provided with function signatures within <available_tools></available_tools> XML tags. ...
            <available_tools>
    {'type': 'function', 'function': {'name': 'get_weather', ...}}{'type': 'function', ...}
            </available_tools>. ...
    <|begin_user|>
    Weather in Paris?
    <|begin_assistant|>
    Let me check.
    <tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1"}]</tool_calls>
    <|end|>
    <|begin_tool_result|>
    18°C


    <|begin_assistant|>
    Here are my reasoning steps:

Decisions of Apriel 1.6:

- **System turns**: ``<s><|begin_system|>``, a newline and the template's reasoning
  instructions (indented as it writes them) open every system turn; a system message's text
  follows them after a newline, then a newline.  Every system message is a turn of its own
  where it stands, each with the tools when the request has any.  When the conversation does
  not begin with a system message, the turn holds the instructions alone (and the tools),
  even when a system message comes later, as the template writes it (see
  :mod:`.led_system`).
- **Tools**: the template's instructions around the tools, each tool as Python's ``repr`` of
  the OpenAI tool object with nothing between them (the template's loop writes no
  separator), read back as that run of literals.
- **Turns**: ``<|begin_user|>\\n`` + text, with nothing after it; a tool message
  ``<|begin_tool_result|>\\n`` + text + ``\\n`` and two blank lines; the assistant's
  ``\\n<|begin_assistant|>\\n`` + text + calls, ended by ``\\n<|end|>`` (the model's end,
  trainable, and the stop) and a newline, except the conversation's last message, which the
  template ends with nothing (so a render for training has no end to learn on its last turn).
  A system or tool turn's trailing whitespace is read as layout only before the next turn's
  opener or at the end of the conversation (see :mod:`.final_response`).
- **Reasoning** is written only in the conversation's last message, right after the opener,
  then ``\\n[BEGIN FINAL RESPONSE]\\n`` and the answer; past turns drop it (a recorded
  loss), and a past turn's text holding ``[BEGIN FINAL RESPONSE]`` is cut to what follows it,
  trimmed, as the template cuts it (a recorded loss).  The generation prompt writes
  ``Here are my reasoning steps:\\n`` after the opener: the model goes on with its
  reasoning, the marker, its answer, its calls, then ``<|end|>``.
- **Reading** follows the ``apriel`` reasoning parser for vLLM: after the generation prompt,
  all text before ``[BEGIN FINAL RESPONSE]`` is reasoning, the text after it the answer; the
  marker is read with or without its newlines.  Where pawlette reads otherwise: output
  without the marker is all reasoning (the output was cut while thinking), as that parser
  streams it, where read whole it gives it as the answer; and the texts are kept as written
  (that parser strips them, and the prompt's words from the reasoning).  A turn read after the opener alone (a conversation's turns, the template's own
  last turn) is reasoning up to the marker when the turn holds it, and content otherwise.
  Calls are read as in Apriel 1.5 (vLLM's ``apriel`` tool parser).  An empty system message
  is read back (its turn holds the newline before the text); the tools, written in every
  system turn, are read back once.
- **Grammars**: a turn's grammar lets the model end its turn before the marker (then all of
  it is reasoning): the marker is text, which a grammar cannot make a model write.  A forced
  call (``tool_choice`` ``required`` or a named function) is prefixed with the marker and
  the list's open, so such a turn has no reasoning.

Remaining differences from the templates (both): a call name is written as a JSON string (the
template writes it between quotes unescaped); a string's ``repr`` in the tools keeps
private-use, unassigned and astral characters Python would escape; the template's
``content`` role, its ``chosen`` field and its ``[IMG]`` placeholder for images are not
declared (no OpenAI request carries them; an image part is refused).  Apriel 1.6: the
template writes a call's id only when the call has one (every call pawlette writes has one);
its ``training_prompt`` variable (an end on the last turn too) is not declared.  Neither
template writes a generation prompt after an answer, asked for or not, nor does pawlette.
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is)

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    NoPromptAfter,
    Results,
    declare,
    fence,
)

from .after_stop import AfterStop
from .calls import IdsBeforeLast
from .system import SystemAnywhere
from .tools import ReprLineTools

BEGIN = Marker("<s>")
END_OF_SEQUENCE = Marker("</s>")
END = Marker("<|end|>")
SYSTEM = Marker("<|system|>")

REASONING_PROMPT = (
    "You are a thoughtful and systematic AI assistant built by ServiceNow Language Models "
    "(SLAM) lab. Before providing an answer, analyze the problem carefully and present your "
    "reasoning step by step. After explaining your thought process, provide the final "
    "solution in the following format: [BEGIN FINAL RESPONSE] ... [END FINAL RESPONSE]."
)
TOOLS_OPEN = (
    "You are provided with function signatures within <available_tools></available_tools> "
    "XML tags. You may call one or more functions to assist with the user query. Don't make "
    "assumptions about the arguments. You should infer the argument values from previous "
    "user responses and the system message. Here are the available tools:\n<available_tools>\n"
)
CALL_INSTRUCTIONS = (
    "Return all function calls as a list of json objects within <tool_call></tool_call> XML "
    "tags. Each json object should contain a function name and arguments as follows:\n"
    '<tool_calls>[{"name": <function-name-1>, "arguments": <args-dict-1>}, {"name": '
    '<function-name-2>, "arguments": <args-dict-2>},...]</tool_calls>'
)


@dataclass(frozen=True)
class AprielOptions:
    """``version``: which template's layout: ``"1.5"`` (the default, ``<|system|>`` turns
    ended by ``<|end|>``) or ``"1.6"`` (``<|begin_ROLE|>`` openers, reasoning before
    ``[BEGIN FINAL RESPONSE]``: :mod:`.thinker`)."""

    version: Literal["1.5", "1.6"] = "1.5"


VARIANTS = {"1.6": AprielOptions(version="1.6")}


def turn(name: str) -> Frame:
    """A turn: ``<|NAME|>`` and a newline, its text, a newline and ``<|end|>``."""
    return Frame(open=fence(Marker(f"<|{name}|>"), "\n"), end=fence("\n", END), after=fence("\n"))


def layout(options: AprielOptions) -> Layout:
    if options.version == "1.6":
        from .thinker import layout as thinker_layout

        return thinker_layout(options, VARIANTS)
    return Layout(
        name="apriel",
        summary="ServiceNow Apriel 1.5/1.6: JSON call lists in <tool_calls>, repr'd tools",
        begin=fence(BEGIN),
        frames={
            "system": Frame(
                open=fence(SYSTEM, "\n" + REASONING_PROMPT), end=fence("\n", END), after=fence("\n")
            ),
            "user": turn("user"),
            "assistant": Frame(
                open=fence(Marker("<|assistant|>"), "\n"),
                # The model stops at <|end|> (its end-of-generation token); the template goes
                # on with "\n</s>" (AfterStop below).  A model may also end at <|end|> right
                # after its text, or at its end-of-sequence token alone.
                end=fence("\n", END),
                also_end=(fence(END), fence(END_OF_SEQUENCE)),
            ),
            "tool": turn("tool_result"),
        },
        concepts=(
            SystemAnywhere(always=True),
            ReprLineTools(
                place="system",
                separator=fence("\n"),
                open=fence(TOOLS_OPEN),
                item_close=fence("\n"),
                close=fence("</available_tools>"),
                close_alone=fence("</available_tools>\n" + CALL_INSTRUCTIONS),
                default_turn=fence("\n", END, "\n", SYSTEM, "\n" + REASONING_PROMPT),
            ),
            AfterStop(fence("\n", END_OF_SEQUENCE)),
            IdsBeforeLast(
                open=fence("\n<tool_calls>"),
                close=fence("</tool_calls>"),
                keys=(("name", "name"), ("arguments", "arguments"), ("id", "id")),
            ),
            Results(),
            Ignored(("name", "reasoning")),
            # The template writes no generation prompt after an answer, asked for or not.
            NoPromptAfter(),
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        markers_in_text=True,  # <tool_calls> is text, no special token
    )


FORMAT = declare(layout(AprielOptions()))
