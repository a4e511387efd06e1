"""Sequence lengths: a maximum length, and what happens to a conversation longer than it.

``overflow="drop"`` (default) leaves a conversation longer than ``max_length`` out, counted
with its reason.  ``overflow="truncate"`` keeps its first ``max_length`` tokens, cut where
the model loses least:

1. at the end of the last *learned span* (an answer with its end marker, a tool call) that
   fits: whole turns are kept, and nothing after the last learned token is (prompt text
   there trains nothing);
2. when not even the first learned span fits, at ``max_length`` itself, inside that answer
   (counted apart: the model learns the start of an answer without its end);
3. when no learned token fits at all, the conversation is dropped (it would teach nothing).

Truncation only ever removes the end: a learned token always keeps every token before it,
its prompt and the turns before, exactly as the model saw them.
"""

from __future__ import annotations

from typing import Literal

from ..errors import PawletteError, RequestError
from .encoder import IGNORE_INDEX, Tokenized

__all__ = ["OVERFLOW_POLICIES", "Fitted", "TooLong", "check_length_options", "fit_length"]


class TooLong(PawletteError):
    """A conversation left out for its length (the message says how long, and the limit)."""


OVERFLOW_POLICIES = ("drop", "truncate")
Overflow = Literal["drop", "truncate"]

Fitted = tuple["Tokenized | None", str]
"""The conversation as written (None: dropped) and what happened: ``fits``, ``truncated``,
``truncated inside an answer``, or the reason it was dropped."""


def check_length_options(max_length: int | None, overflow: str) -> None:
    if max_length is not None and (type(max_length) is not int or max_length < 1):
        raise RequestError("max_length", f"found {max_length!r}", "a positive number of tokens")
    if overflow not in OVERFLOW_POLICIES:
        raise RequestError("overflow", f"found {overflow!r}", "'drop' or 'truncate'")


def fit_length(tokenized: Tokenized, max_length: int | None, overflow: str) -> Fitted:
    """``tokenized`` within ``max_length`` tokens under the ``overflow`` policy."""
    length = len(tokenized)
    if max_length is None or length <= max_length:
        return tokenized, "fits"
    if overflow == "drop":
        return None, f"too long: {length} tokens; expected at most {max_length} (--max-length)"
    labels = tokenized.labels
    cut = 0
    for position in range(max_length, 0, -1):
        if labels[position - 1] != IGNORE_INDEX and labels[position] == IGNORE_INDEX:
            cut = position
            break
    outcome = "truncated"
    if not cut:
        if all(label == IGNORE_INDEX for label in labels[:max_length]):
            first = next((n for n, label in enumerate(labels) if label != IGNORE_INDEX), None)
            where = "none at all" if first is None else f"the first is token {first + 1}"
            return None, (
                f"too long: {length} tokens and no learned token in the first {max_length}"
                f" ({where}); expected a learned token within --max-length"
            )
        cut = max_length
        outcome = "truncated inside an answer"
    return (
        Tokenized(
            tokenized.input_ids[:cut],
            labels[:cut],
            tokenized.message_indices[:cut],
            tokenized.kinds[:cut],
            tokenized.losses,
        ),
        outcome,
    )
