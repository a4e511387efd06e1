"""minicpm's conversations: drawn from its declaration (see :mod:`tests.declare.conversations`)."""

from __future__ import annotations

from typing import Any

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("minicpm")

CALL_IDS_ROUND_TRIP = False  # the format writes no call ids: results are matched by position


def writing_starts(rendering: Any) -> list[int]:
    """Where the model starts writing each assistant turn of a whole render: after the turn's
    header (the generation prompt), whatever the earlier turns' reasoning was (a turn before
    the last user message drops it, as Qwen3's does)."""
    starts = []
    position = 0
    for segment in rendering.segments:
        position += len(segment.text)
        if segment.role == "assistant" and segment.kind == "header":
            starts.append(position)
    return starts
