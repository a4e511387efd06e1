"""cohere's conversations: drawn from its declaration (tests.declare.conversations)."""

from __future__ import annotations

from typing import Any

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("cohere")

# The format numbers calls by their position in the conversation, not by the caller's ids:
# a completion's calls read back with those numbers.
CALL_IDS_ROUND_TRIP = False


def prompt_prefix_indices(request: dict[str, Any]) -> list[int]:
    """The assistant turns whose prompt render is a prefix of the training render: the call
    turns without reasoning (the prompt writes an empty reasoning block, which only call
    turns keep; an answer follows the opener)."""
    return [
        index
        for index, message in enumerate(request["messages"])
        if message["role"] == "assistant"
        and message.get("tool_calls")
        and not message.get("reasoning_content")
    ]
