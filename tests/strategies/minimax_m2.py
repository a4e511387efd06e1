"""minimax_m2's conversations: drawn from its declaration (see
:mod:`tests.declare.conversations`)."""

from __future__ import annotations

from typing import Any

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("minimax_m2")

CALL_IDS_ROUND_TRIP = False  # the format writes no call ids: results answer calls by position


def prompt_prefix_indices(request: dict[str, Any]) -> list[int]:
    """The assistant turns whose prompt render is a prefix of the training render: those
    after the last user message that keep some reasoning.  The generation prompt opens
    ``<think>``, which a turn without kept reasoning does not hold, as the template does."""
    messages = request["messages"]
    users = [index for index, message in enumerate(messages) if message["role"] == "user"]
    last_user = users[-1] if users else -1
    return [
        index
        for index, message in enumerate(messages)
        if message["role"] == "assistant" and index > last_user and message.get("reasoning_content")
    ]


def writing_starts(rendering: Any) -> list[int]:
    """Where the model starts writing each assistant turn of a whole render: after the turn's
    opener (a past turn without kept reasoning holds no ``<think>``, which the generation
    prompt writes)."""
    starts = []
    position = 0
    for segment in rendering.segments:
        position += len(segment.text)
        if segment.role == "assistant" and segment.kind == "header":
            starts.append(position)
    return starts
