"""mistral's conversations: drawn from its declaration (see :mod:`tests.declare.conversations`)."""

from __future__ import annotations

from typing import Any

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("mistral")

CALL_IDS_ROUND_TRIP = True  # Small 3.2 writes each call's id ([CALL_ID]) and each result's


def prompt_prefix_indices(request: dict[str, Any]) -> list[int]:
    """The assistant turns whose prompt render is a prefix of the training render: those after
    the last user message (Mistral writes the tools before the last user turn, wherever it is)."""
    messages = request["messages"]
    last_query = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=-1)
    return [i for i, m in enumerate(messages) if m["role"] == "assistant" and i > last_query]
