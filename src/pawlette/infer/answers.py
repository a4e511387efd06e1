"""An answer fenced apart from a turn of calls (:class:`~pawlette.declare.AnswerFence`).

Some templates open every assistant turn alike and then tell an answer from a turn of calls
by what follows: Solar Open writes ``<|begin|>assistant<|content|>`` + text + ``<|end|>`` but
``<|begin|>assistant<|tool_calls|>`` + calls + ``<|calls|>``; Command A writes
``<|START_TEXT|>`` + text + ``<|END_TEXT|>`` but ``<|START_ACTION|>`` + calls +
``<|END_ACTION|>`` before the turn's end.  The frames, derived from answers, then hold the
answer's fences; a turn of one call shows where they stop:

- the opener is what the call turn shares with the answer's start; the rest of the answer's
  start (up to its text) is the answer's ``open``;
- the end is what the call turn shares with the answer's end; the rest of the answer's end
  (after its text) is the answer's ``close``.  When they share nothing, the call turn ends
  with its own marker (its last special token: :class:`~pawlette.declare.CallTurnEnd`).

A turn of calls opened as an answer is may instead end with the last part of the answer's
end, the rest written before its calls (Kimi K3's ``<|close|>response<|sep|>``, then its
tools, then ``<|close|>message<|sep|><|end_of_msg|>``): that last part is the turn's own end
(``CallTurnEnd``), and the calls, derived next, start with the rest.

Verification then holds the declaration to the template.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..declare import AnswerFence, CallTurnEnd, Reasoning
from ..declare.pieces import text_of
from .atoms import common_prefix, common_suffix
from .draft import Capability, Draft
from .probe import Probe, Underivable, message
from .tools import PROBE_TOOLS

__all__ = ["AnswerShape", "derive_answer_fence"]


@dataclass(frozen=True)
class AnswerShape:
    """What an answer writes that a turn of calls does not: ``open`` before the text,
    ``close`` after it; ``call_end``: the end of a turn of calls, where it has its own."""

    open: str
    close: str
    call_end: str = ""


def derive_answer_fence(
    probe: Probe, draft: Draft, one: list[dict[str, Any]]
) -> AnswerShape | None:
    """Declare the answer's fences when the turn of calls ``one`` is framed otherwise than
    an answer in just that way (the frames shrink to what both write); None: it is framed as
    an answer is (or otherwise than this concept can say)."""
    user, assistant = draft.frames["user"], draft.frames["assistant"]
    u1, a1 = probe.sentinel("u", 1), probe.sentinel("a", 1)
    calls_text = probe.render(one, list(PROBE_TOOLS))
    answer_text = probe.render([message("user", u1), message("assistant", a1)], list(PROBE_TOOLS))
    if calls_text is None or answer_text is None or calls_text.count(u1) != 1:
        return None
    lead = u1 + user.end + user.after
    tail = assistant.end + assistant.after
    start = calls_text.find(u1)
    if not calls_text.startswith(lead, start):
        return None
    turn = calls_text[start + len(lead) :]
    if turn.startswith(assistant.open) and turn.endswith(tail):
        return None  # framed as an answer is
    if turn.startswith(assistant.open):
        inside = _ends_inside(probe, draft, turn[len(assistant.open) :])
        if inside is not None:
            return inside
    try:
        before, after = probe.cut(answer_text[answer_text.find(u1) :], [u1, a1], "an answer")[1:]
    except Underivable:
        return None
    if not before.startswith(user.end + user.after) or not after.endswith(assistant.after):
        return None
    answer_start = before[len(user.end + user.after) :]
    answer_end = after[: len(after) - len(assistant.after)] if assistant.after else after
    tokens = probe.tokens
    opener = common_prefix(tokens, answer_start, turn)
    if not opener or not assistant.open.startswith(opener):
        return None
    body = turn[len(opener) :]
    if assistant.after:
        if not body.endswith(assistant.after):
            return None
        body = body[: -len(assistant.after)]
    end = common_suffix(tokens, answer_end, body)
    call_end = ""
    if not end:
        # The turn of calls ends with a marker of its own (Solar Open's ``<|calls|>``).
        atoms = tokens.atoms(body)
        if not atoms or not tokens.is_special(atoms[-1]):
            return None
        call_end, end = atoms[-1], answer_end
        if not answer_end.endswith(assistant.end) or not assistant.end:
            return None
    shape = AnswerShape(
        answer_start[len(opener) :], answer_end[: len(answer_end) - len(end)], call_end
    )
    if not shape.open or body.startswith(shape.open):
        return None  # (nothing tells an answer from calls where the text starts)
    _declare(draft, opener, end, shape)
    return shape


def _ends_inside(probe: Probe, draft: Draft, body: str) -> AnswerShape | None:
    """A turn of calls opened as an answer is that ends with the last part of the answer's
    end, the first part written before its calls (Kimi K3's ``<|close|>response<|sep|>``
    before its tools, ``<|close|>message<|sep|><|end_of_msg|>`` after them): the turn of
    calls ends with its own end (:class:`~pawlette.declare.CallTurnEnd`), and the calls
    start with the rest.  The shortest such end is taken."""
    assistant = draft.frames["assistant"]
    if assistant.after:
        if not body.endswith(assistant.after):
            return None
        body = body[: -len(assistant.after)]
    for concept in draft.concepts:
        # (a turn without reasoning writes the block's stand-in first: Kimi K3's empty think)
        if isinstance(concept, Reasoning) and body.startswith(text_of(concept.absent)):
            body = body[len(text_of(concept.absent)) :]
    atoms = probe.tokens.atoms(assistant.end)
    for cut in range(len(atoms) - 1, 0, -1):
        rest, end = "".join(atoms[:cut]), "".join(atoms[cut:])
        if probe.tokens.is_special(atoms[cut]) and body.endswith(end) and body.startswith(rest):
            shape = AnswerShape("", "", end)
            assistant.also_end.append(end)
            draft.concepts.append(CallTurnEnd(end=draft.fence(end)))
            return shape
    return None


def _declare(draft: Draft, opener: str, end: str, shape: AnswerShape) -> None:
    assistant = draft.frames["assistant"]
    assistant.open = opener
    assistant.end = end
    if shape.call_end:
        assistant.also_end.append(shape.call_end)
    if shape.close:
        # The answer's close and the turn's end, where another role's turn ends with both
        # (Command A's ``<|END_TEXT|><|END_OF_TURN_TOKEN|>``), are read as one marker.
        assistant.also_end.append(shape.close + end)
    # A reasoning block derived before calls holds what an answer writes after it (Command
    # A's ``<|END_THINKING|><|START_TEXT|>``, and ``<|START_TEXT|>`` for a turn without
    # reasoning): the answer's open writes it from here on.
    for index, concept in enumerate(draft.concepts):
        if isinstance(concept, Reasoning):
            draft.concepts[index] = changed = _without_open(draft, concept, shape.open)
            said = next((item for item in draft.capabilities if item.name == "reasoning"), None)
            if said is not None and changed.close != concept.close:
                detail = said.detail.replace(
                    " ... " + text_of(concept.close), " ... " + text_of(changed.close), 1
                )
                draft.capabilities = [  # (in its place: the order is the stages')
                    Capability("reasoning", said.status, detail) if item is said else item
                    for item in draft.capabilities
                ]
    draft.concepts.append(AnswerFence(open=draft.fence(shape.open), close=draft.fence(shape.close)))
    if shape.call_end:
        draft.concepts.append(CallTurnEnd(end=draft.fence(shape.call_end)))


def _without_open(draft: Draft, reasoning: Reasoning, answer_open: str) -> Reasoning:
    opened = draft.fence(answer_open)
    close, absent = reasoning.close, reasoning.absent
    if len(close) > len(opened) and close[-len(opened) :] == opened:
        close = close[: -len(opened)]
    if absent == opened:
        absent = ()
    return replace(reasoning, close=close, absent=absent)
