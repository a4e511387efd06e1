"""Gemma 2 (and the Gemma 1/3 text shape): user and model turns between turn markers.

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
"""

from __future__ import annotations

from pawlette.declare import (
    Alternation,
    Frame,
    Ignored,
    Layout,
    Marker,
    Trimmed,
    declare,
    fence,
)

BOS = Marker("<bos>")
START, END = Marker("<start_of_turn>"), Marker("<end_of_turn>")


def turn(word: str) -> Frame:
    return Frame(open=fence(START, f"{word}\n"), end=fence(END), after=fence("\n"))


LAYOUT = Layout(
    name="gemma",
    summary="Gemma 2: <start_of_turn>user/model turns, no system, tools or calls",
    begin=fence(BOS),
    frames={"user": turn("user"), "assistant": turn("model")},
    concepts=(
        Alternation(calls_count=True, system_counts=True),
        Trimmed(roles=("user", "assistant")),
        Ignored(("tools", "calls", "name", "reasoning")),
    ),
    extra_special=("<eos>",),
)

FORMAT = declare(LAYOUT)
