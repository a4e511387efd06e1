"""An assistant message at either edge of a conversation: before any user message, and last
with the generation prompt after it.

- **Leading assistant messages** (a greeting the application writes before the user's first
  query, after its system messages): the template refuses them (so does the declaration,
  saying why) or writes them, which verification checks on generated conversations.
- **The generation prompt after an answer** (a server asked for the next turn after an
  assistant message): where the template refuses it, writes nothing where the declaration
  writes a prompt (Reka Edge, GigaChat 3, Apriel 1.5, Hy3), leaves the last answer open
  without the end a conversation's last turn gets, or writes the answer otherwise (Nemotron
  Nano 2 opens a reasoning block in it), the format refuses it, saying what the template
  writes, since no concept writes it so; a prompt written after the answer (or none, where
  the declaration writes none either: Apriel 1.6) is verified.
"""

from __future__ import annotations

from ..declare import Alternation
from .atoms import common_prefix, excerpt
from .draft import Draft
from .probe import Probe, message

__all__ = ["LEADING", "PROMPTED", "derive_answer_edges"]

LEADING = "leading assistant messages"
PROMPTED = "generation prompt after an answer"


def derive_answer_edges(probe: Probe, draft: Draft) -> None:
    if "assistant" not in draft.frames:
        return
    if not draft.skip(LEADING):
        _leading(probe, draft)
    if not draft.skip(PROMPTED):
        _prompted(probe, draft)


def _leading(probe: Probe, draft: Draft) -> None:
    greeting = [message("assistant", probe.sentinel("a", 1)), message("user", probe.sentinel("u"))]
    if probe.render(greeting) is not None:
        # What the declaration writes there is verified: generated conversations hold it.
        draft.capability(LEADING, "derived", "written as an assistant turn")
        return
    if any(isinstance(concept, Alternation) for concept in draft.concepts):
        reason = "user and assistant messages must alternate, from a user message"
    else:
        reason = (
            "the template refuses an assistant message before any user message "
            f"({probe.refusal(greeting)[:160]})"
        )
    draft.capability(LEADING, "refused", reason)


def _prompted(probe: Probe, draft: Draft) -> None:
    answered = [message("user", probe.sentinel("u")), message("assistant", probe.sentinel("a"))]
    plain = probe.render(answered)
    prompted = probe.render(answered, prompt=True)
    if plain is None:
        return  # (no answer is written at all: the frames say so)
    if prompted is None:
        draft.capability(
            PROMPTED,
            "refused",
            "the template refuses the generation prompt after an assistant message "
            f"({probe.refusal(answered, prompt=True)[:160]})",
        )
        return
    # What the declaration writes there, less what concepts add (verification checks all).
    assistant = draft.frames["assistant"]
    declared = assistant.prompt_after.get(
        "assistant", assistant.open_after.get("assistant", assistant.open)
    )
    if prompted == plain and probe.closing and declared:
        draft.capability(
            PROMPTED,
            "not derived",
            "with the generation prompt the template leaves the last answer open: it ends "
            f"{excerpt(probe.tokens, prompted, last=True)}, without the "
            f"{probe.closing!r} that ends a conversation (needs concept: a last answer left "
            "open for the model to go on with)",
        )
        return
    if prompted == plain + probe.closing and declared:
        draft.capability(
            PROMPTED,
            "not derived",
            "the template writes no generation prompt after an assistant message: "
            f"{excerpt(probe.tokens, prompted, last=True)} ends the conversation (needs "
            "concept: no generation prompt after an answer)",
        )
        return
    if not prompted.startswith(plain):
        shared = len(common_prefix(probe.tokens, plain, prompted))
        draft.capability(
            PROMPTED,
            "not derived",
            "with the generation prompt the template writes the last answer otherwise: after "
            f"{excerpt(probe.tokens, plain[:shared], last=True)} it writes "
            f"{excerpt(probe.tokens, prompted[shared:])} where without the prompt it writes "
            f"{excerpt(probe.tokens, plain[shared:])} (needs concept: a last answer the "
            "generation prompt rewrites)",
        )
        return
    # What the declaration writes there is verified: generated conversations hold it.
    written = prompted[len(plain) :]
    draft.capability(
        PROMPTED,
        "derived",
        f"the template writes {excerpt(probe.tokens, written)} after an answer"
        if written
        else "the template writes no generation prompt after an answer, nor does the declaration",
    )
