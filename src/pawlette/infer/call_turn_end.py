"""A turn of calls that ends with a marker of its own, opened as an answer is.

Functionary v3.1 ends a turn of calls with ``<|eom_id|>`` (the model expects results) and
every other assistant turn with ``<|eot_id|>``; Gemma 4 ends it with ``<|tool_response>``
and nothing after it, where every other turn ends with ``<turn|>`` and a newline.  The turn
of one call shows it: opened as an answer is, it ends with one marker that is not the
frame's end.  That marker is declared the end of a turn with calls
(:class:`~pawlette.declare.CallTurnEnd`; where nothing follows it,
:class:`~pawlette.formats.gemma4.concepts.CallsAwaitResults`, which writes the frame's
whitespace after the other turns) and read as an end of the assistant's turn; verification
then holds the declaration to the template.

(A turn of calls opened otherwise than an answer, with its own end, is
:mod:`.answers`'s: :class:`~pawlette.declare.AnswerFence`.)
"""

from __future__ import annotations

import re
from typing import Any

from ..declare import CallTurnEnd
from ..declare.pieces import text_of
from ..formats.gemma4.concepts import CallsAwaitResults
from .answers import AnswerShape
from .atoms import Tokens
from .draft import Draft
from .probe import Probe
from .tools import PROBE_TOOLS

__all__ = ["answer_after", "derive_call_turn_end"]

HALF_PIPED = re.compile(r"(?:<\|[a-z_]{1,40}>|<[a-z_]{1,40}\|>)\Z")
"""A marker shaped as Gemma 4's (``<|tool_response>``, ``<turn|>``), which the special
tokens' shapes leave out: taken for one only where it ends a turn of calls."""


def derive_call_turn_end(
    probe: Probe, draft: Draft, one: list[dict[str, Any]]
) -> AnswerShape | None:
    """Declare the end of a turn with calls when the turn of calls ``one`` is opened as an
    answer is and ends with a marker of its own in place of the frame's end; its shape (for
    the calls' stage to cut turns of calls with), else None."""
    user, assistant = draft.frames["user"], draft.frames["assistant"]
    u1 = probe.sentinel("u", 1)
    text = probe.render(one, list(PROBE_TOOLS))
    if text is None or text.count(u1) != 1 or not assistant.end:
        return None
    lead = u1 + user.end + user.after + assistant.open
    start = text.find(u1)
    if not text.startswith(lead, start):
        return None
    body = text[start + len(lead) :]
    if body.endswith(assistant.end + assistant.after):
        return None  # framed as an answer is
    after = assistant.after
    if after and body.endswith(after):
        body = body[: len(body) - len(after)]
    else:
        after = ""  # (nothing follows the turn of calls)
    end = _last_marker(probe.tokens, body)
    if not end or end == body or end == assistant.end or end in assistant.also_end:
        return None
    if end in user.open:
        return None
    assistant.also_end.append(end)
    if assistant.after and not after:
        # The frame's whitespace after a turn is written by the concept, after any turn
        # but one with calls.
        draft.concepts.append(
            CallsAwaitResults(end=draft.fence(end), newline=draft.fence(assistant.after))
        )
        assistant.after = ""
    else:
        draft.concepts.append(CallTurnEnd(end=draft.fence(end)))
    draft.notes.append(
        f"A turn with calls ends with {end!r} in place of {assistant.end!r}"
        + ("" if after or not draft.frames["assistant"].end else ", nothing after it")
        + f"; reading takes {end!r} as the end of an assistant's turn too."
    )
    return AnswerShape("", "", end)


def _last_marker(tokens: Tokens, text: str) -> str:
    """The special token ``text`` ends with, or the marker shaped as Gemma 4's it ends with
    (empty: neither)."""
    atoms = tokens.atoms(text)
    if atoms and tokens.is_special(atoms[-1]):
        return atoms[-1]
    found = HALF_PIPED.search(text)
    return found.group() if found else ""


def answer_after(draft: Draft) -> str:
    """What follows an assistant turn without calls beyond its frame (the frame's whitespace
    after it, where :class:`CallsAwaitResults` writes it)."""
    for concept in draft.concepts:
        if isinstance(concept, CallsAwaitResults):
            return text_of(concept.newline)
    return ""
