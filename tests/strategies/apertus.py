"""apertus' conversations: drawn from its declaration (see :mod:`tests.declare.conversations`)."""

from __future__ import annotations

from typing import Any

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("apertus")

CALL_IDS_ROUND_TRIP = False  # the format writes no call ids: results are matched by position


def prompt_prefix_indices(request: dict[str, Any]) -> list[int]:
    """The assistant turns whose prompt render is a prefix of the training render: those not
    after results (there the prompt writes ``<|assistant_start|>`` and the turn, which goes
    on in the turn of its calls, none)."""
    messages = request["messages"]
    return [
        i
        for i, m in enumerate(messages)
        if m["role"] == "assistant" and (i == 0 or messages[i - 1]["role"] != "tool")
    ]


def writing_starts(rendering: Any) -> list[int]:
    """Where the model starts writing each assistant turn of a whole render: where its
    learned text begins, after results too (the answer follows their ``]`` with no opener)."""
    starts = []
    position = 0
    learning = False
    for segment in rendering.segments:
        learned = segment.role == "assistant" and segment.trainable
        if learned and not learning:
            starts.append(position)
        learning = learned
        position += len(segment.text)
    return starts
