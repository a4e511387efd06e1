"""Two assistant messages in a row: what a template writes between them.

A template may open an assistant turn after another as after a user message (two assistant
turns), otherwise (DeepSeek V3.1 writes the second text straight after the first turn's end,
without the opener): the assistant frame's opener after an assistant turn (``open_after``),
with the generation prompt after one where it differs.  Where the second turn is written in
no such shape, or the template refuses it, the capability is refused at use, saying why.
"""

from __future__ import annotations

from ..declare import Alternation, AnswerFence
from ..declare.pieces import text_of
from .answer_edges import bare_opener, frame_prompt
from .atoms import excerpt
from .draft import Draft
from .probe import Probe, message

__all__ = ["NAME", "derive_consecutive_answers"]

NAME = "consecutive assistant messages"


def derive_consecutive_answers(probe: Probe, draft: Draft) -> None:
    if draft.skip(NAME) or "assistant" not in draft.frames:
        return
    u1, u2 = probe.sentinel("u", 1), probe.sentinel("u", 2)
    a1, a2 = probe.sentinel("a", 1), probe.sentinel("a", 2)
    # A user message after them: the last turn may be written otherwise than earlier ones.
    base = probe.render([message("user", u1), message("assistant", a1), message("user", u2)])
    written = probe.render(
        [
            message("user", u1),
            message("assistant", a1),
            message("assistant", a2),
            message("user", u2),
        ]
    )
    if written is None:
        alternates = any(isinstance(concept, Alternation) for concept in draft.concepts)
        draft.capability(
            NAME,
            "refused",
            "user and assistant messages must alternate"
            if alternates
            else "the template refuses an assistant message after an assistant message",
        )
        return
    opener = None if base is None else _opener(draft, base, written, a1, a2)
    if opener is None:
        found = written[written.find(a1) :] if a1 in written else written
        draft.capability(
            NAME,
            "not derived",
            f"two assistant messages in a row are written {excerpt(probe.tokens, found)}, in "
            "no shape of two assistant turns (needs concept: consecutive assistant messages "
            "joined into one turn)",
        )
        return
    assistant = draft.frames["assistant"]
    if opener == assistant.open_after.get("assistant", assistant.open):
        draft.capability(NAME, "derived", "written as two assistant turns")
        return
    closes = [
        (role, frame.end + frame.after)
        for role, frame in draft.frames.items()
        if role != "assistant" and frame.end + frame.after
    ]
    for role, close in closes:
        if opener.startswith(close):
            # Read back, the opener would hold where that turn ends (OLMo 2's newline).
            draft.capability(
                NAME,
                "not derived",
                f"an assistant turn after another opens with {opener!r}, which begins as a "
                f"{role} turn ends ({close!r}): reading could not tell them apart (needs "
                "concept: a close written only between turns)",
            )
            return
    assistant.open_after["assistant"] = opener
    _prompt_after_answer(probe, draft, u1, a1)
    draft.capability(NAME, "derived", f"an assistant turn after another opens with {opener!r}")


def _opener(draft: Draft, base: str, written: str, a1: str, a2: str) -> str | None:
    """What opens the second of two assistant turns in ``written`` (``base`` without it),
    less what the concepts write there (a reasoning stand-in, an answer's open fence, the
    lead before its text); None:
    the second turn is not written as a turn of its own after the first."""
    if base.count(a1) != 1 or written.count(a1) != 1 or written.count(a2) != 1:
        return None
    start = base.find(a1) + len(a1)
    rest = base[start:]
    if written[:start] != base[:start] or not written.endswith(a2 + rest):
        return None
    between = written[start : len(written) - len(a2 + rest)]
    assistant = draft.frames["assistant"]
    answer_close = next(
        (text_of(concept.close) for concept in draft.concepts if isinstance(concept, AnswerFence)),
        "",
    )
    close = answer_close + assistant.end + assistant.after
    if not between.startswith(close):
        return None
    return bare_opener(draft, between[len(close) :], "assistant")


def _prompt_after_answer(probe: Probe, draft: Draft, u1: str, a1: str) -> None:
    """The generation prompt after an assistant turn, where it is not the opener there."""
    answered = [message("user", u1), message("assistant", a1)]
    plain = probe.render(answered)
    prompted = probe.render(answered, prompt=True)
    if plain is None or prompted is None or not prompted.startswith(plain):
        return
    prompt = frame_prompt(draft, prompted[len(plain) :])
    if prompt is None:
        return
    assistant = draft.frames["assistant"]
    if prompt != assistant.open_after["assistant"]:
        assistant.prompt_after["assistant"] = prompt
