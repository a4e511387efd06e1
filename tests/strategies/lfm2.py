"""lfm2's conversations: drawn from its declaration (see :mod:`tests.declare.conversations`)."""

from __future__ import annotations

from typing import Any

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("lfm2")

CALL_IDS_ROUND_TRIP = False  # the format writes no call ids: results answer calls by position


def writing_starts(rendering: Any) -> list[int]:
    """Where the model starts writing each assistant turn of a whole render: after the turn's
    header (the generation prompt), whatever the earlier turns' reasoning was (LFM2.5 keeps
    it only after the last user message, so a shorter conversation writes more of it)."""
    starts = []
    position = 0
    for segment in rendering.segments:
        position += len(segment.text)
        if segment.role == "assistant" and segment.kind == "header":
            starts.append(position)
    return starts
