"""A turn of calls that ends with a marker of its own, opened as an answer is.

Functionary v3.1 and Llama 3.1's ``ipython`` turns end a turn of calls with ``<|eom_id|>``
(the model expects results) and every other assistant turn with ``<|eot_id|>``.  The turn
of one call shows it: opened as an answer is, it ends with one special token that is not the
frame's end and that no other turn ends with.  That token is declared the end of a turn with
calls (:class:`~pawlette.declare.CallTurnEnd`) and read as an end of the assistant's turn;
verification then holds the declaration to the template.

(A turn of calls opened otherwise than an answer, with its own end, is
:mod:`.answers`'s: :class:`~pawlette.declare.AnswerFence`.)
"""

from __future__ import annotations

from typing import Any

from ..declare import CallTurnEnd
from .answers import AnswerShape
from .draft import Draft
from .probe import Probe
from .tools import PROBE_TOOLS

__all__ = ["derive_call_turn_end"]


def derive_call_turn_end(
    probe: Probe, draft: Draft, one: list[dict[str, Any]]
) -> AnswerShape | None:
    """Declare :class:`CallTurnEnd` when the turn of calls ``one`` is opened as an answer is
    and ends with a special token of its own in place of the frame's end; its shape (for the
    calls' stage to cut turns of calls with), else None."""
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
    if body.endswith(assistant.end + assistant.after) or not body.endswith(assistant.after):
        return None  # (framed as an answer is, or followed by something else)
    body = body[: len(body) - len(assistant.after)]
    atoms = probe.tokens.atoms(body)
    if len(atoms) < 2 or not probe.tokens.is_special(atoms[-1]):
        return None
    end = atoms[-1]
    if end == assistant.end or end in assistant.also_end or end in user.open:
        return None
    assistant.also_end.append(end)
    draft.concepts.append(CallTurnEnd(end=draft.fence(end)))
    draft.notes.append(
        f"A turn with calls ends with {end!r} in place of {assistant.end!r} (CallTurnEnd); "
        f"reading takes {end!r} as the end of an assistant's turn too."
    )
    return AnswerShape("", "", end)
