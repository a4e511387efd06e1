"""An assistant message with no text, written otherwise than a turn with its text taken out.

:func:`~pawlette.infer.fields.derive_empty_texts` renders ``[user, assistant, user]`` with an
answer's text and without it; where the two differ otherwise than by the text, this module
says how:

- a text of its own written in place of the empty text (llama.cpp's R1 template writes an
  empty calls block, ``<｜tool▁calls▁begin｜><｜tool▁calls▁end｜>``): derived, as
  :class:`~pawlette.formats.deepseek.EmptyAnswer`;
- the turn written with no end, its opener cut short (Seed-OSS writes the bare
  ``<seed:bos>assistant``, where a turn with text opens with ``<seed:bos>assistant\\n`` and
  ends with ``<seed:eos>``): derived, as :class:`~pawlette.formats.seed_oss.concepts.UnendedAnswer`
  (the layout's last concept: :func:`unended_concepts`).  A reasoning block on such a turn
  may end otherwise (Seed-OSS leaves out the newline after ``</seed:think>``, which leads the
  text): the turn is probed with reasoning, and once the reasoning is derived its close there
  is declared (:class:`~pawlette.formats.seed_oss.concepts.UnendedReasoning`), or, where no
  close says it, the turn is left to verification;
- text before the answer written only when there is text, other than whitespace (Functionary
  v3.2 writes ``>>>all\\n`` + text, and nothing for an empty text): not derived, said
  precisely (only whitespace before a trimmed text is derived, as ``Trimmed``'s lead).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..declare import Reasoning
from ..declare.pieces import text_of
from ..formats.deepseek import EmptyAnswer
from ..formats.seed_oss.concepts import UnendedAnswer, UnendedReasoning
from .atoms import excerpt
from .probe import Probe, message

if TYPE_CHECKING:
    from ..declare.concept import Concept
    from .draft import Draft

__all__ = [
    "derive_empty_answer",
    "derive_unended_answer",
    "empty_answer_shape",
    "unended_concepts",
]

CAPABILITY = "empty assistant text"


def derive_empty_answer(probe: Probe, draft: Draft, base: str, written: str, sentinel: str) -> bool:
    """Declare :class:`~pawlette.formats.deepseek.EmptyAnswer` where ``written`` (the render
    with an empty answer) is ``base`` (with the answer's text ``sentinel``) with something
    other than whitespace in place of the text; True when declared."""
    inserted = _in_place(base, written, sentinel)
    if inserted is None or not inserted.strip() or CAPABILITY in draft.blocked:
        return False
    # First: its content hook writes the stand-in before any other writes the empty text.
    draft.concepts.insert(0, EmptyAnswer(draft.fence(inserted)))
    draft.capability(
        "empty assistant text",
        "derived",
        f"written as {excerpt(probe.tokens, inserted, 60)} in place of the text",
    )
    return True


def _in_place(base: str, written: str, sentinel: str) -> str | None:
    """What ``written`` holds in place of ``sentinel`` in ``base``, all else alike."""
    if base.count(sentinel) != 1:
        return None
    at = base.find(sentinel)
    head, tail = base[:at], base[at + len(sentinel) :]
    if len(written) <= len(head) + len(tail):
        return None
    if not (written.startswith(head) and written.endswith(tail)):
        return None
    return written[len(head) : len(written) - len(tail)]


def _unended_opener(draft: Draft, base: str, written: str, sentinel: str) -> str | None:
    """The opener an answer with no text is written with, where ``written`` is ``base``
    with that answer's turn written as it alone (the frame's opener, maybe cut short at its
    end) and no end; None: otherwise."""
    if base.count(sentinel) != 1:
        return None
    frame = draft.frames["assistant"]
    at = base.find(sentinel)
    head, tail = base[:at], base[at + len(sentinel) :]
    ending = frame.end + frame.after
    if not (frame.open and head.endswith(frame.open) and ending and tail.startswith(ending)):
        return None
    rest = tail[len(ending) :]
    start = len(head) - len(frame.open)
    for kept in range(len(frame.open), 0, -1):
        if written == head[: start + kept] + rest:
            return frame.open[:kept]
    return None


def derive_unended_answer(
    probe: Probe, draft: Draft, base: str, written: str, sentinel: str
) -> bool:
    """Declare an answer with no text written with no end (see the module) where
    ``written`` (the render of ``[user, assistant, user]`` with an empty answer) shows one;
    the same turn with reasoning is kept for :func:`unended_concepts`.  True when declared."""
    opener = _unended_opener(draft, base, written, sentinel)
    if opener is None or CAPABILITY in draft.blocked:
        return False
    frame = draft.frames["assistant"]
    u1, u2, r1 = probe.sentinel("u", 1), probe.sentinel("u", 2), probe.sentinel("r", 1)
    reasoned = probe.render(
        [
            message("user", u1),
            message("assistant", "", reasoning_content=r1),
            message("user", u2),
        ]
    )
    at = base.find(sentinel)
    head = base[: at - len(frame.open)]
    rest = base[at + len(sentinel) + len(frame.end + frame.after) :]
    turn = None
    if reasoned is not None and reasoned.startswith(head) and reasoned.endswith(rest):
        turn = reasoned[len(head) : len(reasoned) - len(rest)]
    from .draft import Unended

    draft.unended = Unended(opener, turn, r1)
    cut = frame.open[len(opener) :]
    draft.capability(
        CAPABILITY,
        "derived",
        f"written as its opener {excerpt(probe.tokens, opener, 40)}"
        + (f" (without {excerpt(probe.tokens, cut, 40)})" if cut else "")
        + " and no end: the next turn's opener ends it",
    )
    return True


def unended_concepts(draft: Draft, concepts: list[Concept]) -> None:
    """Where an answer with no text is written with no end (``draft.unended``): append
    :class:`~pawlette.formats.seed_oss.concepts.UnendedAnswer` to ``concepts`` (its rows
    end the turn at every opener the table holds by then), and declare the derived
    reasoning's close in such a turn where the probe shows one
    (:class:`~pawlette.formats.seed_oss.concepts.UnendedReasoning`)."""
    unended = draft.unended
    if unended is None:
        return
    concepts.append(UnendedAnswer(draft.fence(unended.opener)))
    found = [
        (number, concept)
        for number, concept in enumerate(concepts)
        if isinstance(concept, Reasoning)
    ]
    if len(found) != 1 or type(found[0][1]) is not Reasoning or unended.turn is None:
        return
    number, reasoning = found[0]
    options, name = None, "inferred"
    opened = draft.frames["assistant"].open + text_of(reasoning.open, options, name)
    opened += unended.reasoning
    close = text_of(reasoning.close, options, name)
    if not unended.turn.startswith(opened) or reasoning.prompt or reasoning.absent:
        return  # (the block written otherwise: verification says how)
    written = unended.turn[len(opened) :]
    if written == close or not close.startswith(written) or not written:
        return
    fields = {item.name: getattr(reasoning, item.name) for item in dataclasses.fields(reasoning)}
    concepts[number] = UnendedReasoning(**fields, unended_close=draft.fence(written))


def empty_answer_shape(probe: Probe, draft: Draft, base: str, written: str, sentinel: str) -> str:
    """How the template writes an answer with no text, where no concept is derived for it:
    a lead of text other than whitespace written only with text (``""``: no shape this
    module knows; the caller says where the renders part)."""
    frame = draft.frames["assistant"]
    if base.count(sentinel) != 1 or not frame.open:
        return ""
    at = base.find(sentinel)
    head, tail = base[:at], base[at + len(sentinel) :]
    if not head.endswith(frame.open):
        return ""
    for size in range(1, len(frame.open) + 1):
        lead = frame.open[-size:]
        if lead.strip() and written == head[: len(head) - size] + tail:
            return (
                f": it writes {excerpt(probe.tokens, lead, 40)} before an answer's text only "
                "when there is text (needs concept: a lead of text written only with text; "
                "only whitespace before a trimmed text is derived, as Trimmed's lead)"
            )
    return ""
