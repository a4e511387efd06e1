"""chatml's conversations: drawn from its declaration (see :mod:`tests.declare.conversations`)."""

from __future__ import annotations

from typing import Any

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("chatml")

CALL_IDS_ROUND_TRIP = False  # the format writes no call ids: results are matched by position


def prompt_prefix_indices(request: dict[str, Any]) -> list[int]:
    """The assistant turns whose prompt render is a prefix of the training render: those
    after the last user message (Qwen3 drops the reasoning of earlier ones)."""
    messages = request["messages"]
    last_query = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=-1)
    return [i for i, m in enumerate(messages) if m["role"] == "assistant" and i > last_query]


def writing_starts(rendering: Any) -> list[int]:
    """Where the model starts writing each assistant turn of a whole render: after the turn's
    header (the generation prompt), whatever the earlier turns' reasoning was."""
    starts = []
    position = 0
    for segment in rendering.segments:
        position += len(segment.text)
        if segment.role == "assistant" and segment.kind == "header":
            starts.append(position)
    return starts
