"""spark's conversations: drawn from its declaration (see :mod:`tests.declare.conversations`)."""

from __future__ import annotations

from typing import Any

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("spark")

CALL_IDS_ROUND_TRIP = False  # the format writes no call ids: results answer calls by position


def prompt_prefix_indices(request: dict[str, Any]) -> list[int]:
    """The assistant turns whose prompt render is a prefix of the training render: those with
    reasoning.  The generation prompt opens ``<think>``; a turn without reasoning writes a
    lone ``</think>`` there, as the template does."""
    return [
        index
        for index, message in enumerate(request["messages"])
        if message["role"] == "assistant" and message.get("reasoning_content")
    ]
