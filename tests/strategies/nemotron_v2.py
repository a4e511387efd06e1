"""nemotron_v2's conversations: drawn from its declaration (:mod:`tests.declare.conversations`)."""

from __future__ import annotations

from typing import Any

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("nemotron_v2")

CALL_IDS_ROUND_TRIP = False  # the format writes no call ids: results answer calls by position


def prompt_prefix_indices(request: dict[str, Any]) -> list[int]:
    """The assistant turns whose prompt render is a prefix of the training render: only the
    last message, when it is an assistant's with text (the prompt opens ``<think>\\n``, which
    the template writes before that text alone: past turns and a last turn of calls alone
    hold no block)."""
    messages = request["messages"]
    last = messages[-1] if messages else {}
    text = last.get("content")
    if last.get("role") == "assistant" and isinstance(text, str) and text.strip():
        return [len(messages) - 1]
    return []


def writing_starts(rendering: Any) -> list[int]:
    """Where the model starts writing each assistant turn of a whole render: after the turn's
    opener (past turns hold no block, which the generation prompt opens)."""
    starts = []
    position = 0
    for segment in rendering.segments:
        position += len(segment.text)
        if segment.role == "assistant" and segment.kind == "header":
            starts.append(position)
    return starts
