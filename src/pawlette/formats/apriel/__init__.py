"""ServiceNow Apriel 1.5: ``<|system|>``/``<|user|>``/``<|assistant|>``/``<|tool_result|>``
turns ended by ``<|end|>``, the tools as Python literals in ``<available_tools>``, the calls
as one JSON list in ``<tool_calls>...</tool_calls>``.

The wire format (the turn markers, ``<s>`` and ``</s>`` are special tokens; the rest is
text)::

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
  :class:`~pawlette.declare.AfterStop` (never trainable; a completion that goes on past the
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

Remaining differences from the template: a call name is written as a JSON string (the
template writes it between quotes unescaped); a string's ``repr`` in the tools keeps
private-use, unassigned and astral characters Python would escape; the template's
``content`` role, its ``chosen`` field and its ``[IMG]`` placeholder for images are not
declared (no OpenAI request carries them; an image part is refused).
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is)

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pawlette.declare import (
    AfterStop,
    Frame,
    Ignored,
    Layout,
    Marker,
    Results,
    declare,
    fence,
)

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
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        markers_in_text=True,  # <tool_calls> is text, no special token
    )


FORMAT = declare(layout(AprielOptions()))
