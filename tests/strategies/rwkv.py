"""rwkv's conversations: drawn from its declaration (see :mod:`tests.declare.conversations`)."""

from __future__ import annotations

from typing import Any

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("rwkv")

CALL_IDS_ROUND_TRIP = False  # the format writes no calls


def writing_ends(rendering: Any) -> list[int]:
    """Where the model stops writing each assistant turn of a whole render: after the turn's
    end, a blank line of plain text (its end-of-turn token), which the next turn's text
    follows with no marker between."""
    ends: dict[int, int] = {}  # message index -> the end of its last trainable segment
    position = 0
    for segment in rendering.segments:
        position += len(segment.text)
        if segment.role == "assistant" and segment.trainable:
            ends[segment.message_index] = position
    return list(ends.values())
