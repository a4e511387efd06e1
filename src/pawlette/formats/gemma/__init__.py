"""Gemma 2 and Gemma 3: user and model turns between turn markers.

The wire format (``<...>`` are special tokens)::

    <bos><start_of_turn>user
    Weather in Paris?<end_of_turn>
    <start_of_turn>model
    Sunny, 18°C.<end_of_turn>
    <start_of_turn>model

Decisions (reference: ``google-gemma-2-2b-it.jinja`` in llama.cpp's ``models/templates``):

- **Roles**: user and assistant only, alternating from a user message, as the template
  checks (it counts every message: a message of any role out of turn is refused, with the
  same reason).  The assistant's turn is ``model``.  A system message is refused (the
  template raises ``System role not supported``), and so is a tool message (it breaks the
  template's alternation wherever a conversation can hold one).
- **Text is trimmed**, as the template ``| trim`` s every message (a recorded loss).
- **Not written**, as the template ignores them (recorded losses): the request's tools, an
  assistant message's calls (its text is written), names and ``reasoning_content``.
- Gemma 2 has no tool-call or reasoning syntax: a model's turn is read as its text.  A
  forced ``tool_choice`` (``required`` or a named function) is refused naming
  ``tool_choice`` (the server answers 400); under ``auto`` and ``none`` the tools are dropped
  as above.

No difference from the template remains on what it renders.

The ``3`` variant (``gemma:3``; reference: Gemma 3's instruction-tuned template, as its
models' ``tokenizer_config.json`` gives it) is Gemma 2's shape with a system prompt:

- **A system message that comes first** has no turn: its text, as given (not trimmed), and a
  blank line lead the first user turn (:class:`~pawlette.declare.SystemInTurn`), as the
  template writes it; alone, with no message after it, it is not written (a recorded loss).
  A later system message is refused: the template refuses one where a user message belongs
  and writes one where an answer belongs as a ``system`` turn, which no Gemma model is
  trained on.
- Parsing a conversation reads the system text back as the start of the first user
  message (nothing marks where it ends).
- The template writes ``<start_of_image>`` for an image part; pawlette refuses images in
  this format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pawlette.declare import (
    Alternation,
    Concept,
    Frame,
    Ignored,
    Layout,
    Marker,
    SystemInTurn,
    Trimmed,
    declare,
    fence,
)

BOS = Marker("<bos>")
START, END = Marker("<start_of_turn>"), Marker("<end_of_turn>")


def turn(word: str) -> Frame:
    return Frame(open=fence(START, f"{word}\n"), end=fence(END), after=fence("\n"))


@dataclass(frozen=True)
class GemmaOptions:
    """``version``: ``"2"`` (no system prompt) or ``"3"`` (a leading system message's text
    opens the first user turn)."""

    version: Literal["2", "3"] = "2"


VARIANTS = {"3": GemmaOptions(version="3")}


def layout(options: GemmaOptions) -> Layout:
    concepts: list[Concept] = []
    if options.version == "3":
        concepts.append(SystemInTurn(host="next"))
    concepts += [
        Alternation(calls_count=True, system_counts=True),
        Trimmed(roles=("user", "assistant")),
        Ignored(("tools", "calls", "name", "reasoning")),
    ]
    return Layout(
        name="gemma",
        summary="Gemma 2/3: <start_of_turn>user/model turns, no tools or calls",
        begin=fence(BOS),
        frames={"user": turn("user"), "assistant": turn("model")},
        concepts=tuple(concepts),
        extra_special=("<eos>",),
        options=options,
        from_options=layout,
        variants=VARIANTS,
    )


LAYOUT = layout(GemmaOptions())
FORMAT = declare(LAYOUT)
