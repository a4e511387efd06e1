"""gemma4's conversations: drawn from its declaration (see :mod:`tests.declare.conversations`)."""

from __future__ import annotations

from typing import Any

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("gemma4")

CALL_IDS_ROUND_TRIP = False  # Gemma 4 writes no call ids: calls read back with new ones


def prompt_prefix_indices(request: dict[str, Any]) -> list[int]:
    """The assistant turns whose prompt render is a prefix of the training render: those
    right after results.  Elsewhere the generation prompt writes an empty thought block that
    past turns do not hold, as the template does.  And a turn with calls keeps its reasoning
    only after the last user message: before a later user message, a prompt that holds such
    a turn since its own last user message writes the reasoning the whole render drops."""
    messages = request["messages"]
    users = [index for index, message in enumerate(messages) if message["role"] == "user"]

    def written_alike(index: int) -> bool:
        since = max((user for user in users if user < index), default=-1)
        if not users or since == users[-1]:
            return True
        return not any(
            message.get("reasoning_content") and message.get("tool_calls")
            for message in messages[since + 1 : index]
            if message["role"] == "assistant"
        )

    return [
        index
        for index, message in enumerate(messages)
        if message["role"] == "assistant"
        and index
        and messages[index - 1]["role"] == "tool"
        and written_alike(index)
    ]


def writing_starts(rendering: Any) -> list[int]:
    """Where the model starts writing each assistant turn of a whole render: after the turn's
    opener (past turns hold no empty thought block, which the generation prompt writes)."""
    starts = []
    position = 0
    for segment in rendering.segments:
        position += len(segment.text)
        if segment.role == "assistant" and segment.kind == "header":
            starts.append(position)
    return starts
