"""deepseek_dsml's conversations: drawn from its declaration (tests.declare.conversations)."""

from __future__ import annotations

from typing import Any

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("deepseek_dsml")

CALL_IDS_ROUND_TRIP = False  # the format writes no call ids: results are matched by position


def prompt_prefix_indices(request: dict[str, Any]) -> list[int]:
    """The assistant turns whose prompt render is a prefix of the training render: none.
    With thinking off the generation prompt writes ``<think></think>`` after the opener and
    every past turn holds ``</think>`` alone there, as the template does."""
    return []


def writing_starts(rendering: Any) -> list[int]:
    """Where the model starts writing each assistant turn of a whole render: after the
    turn's opener and its ``</think>`` (which stands for the prompt's empty block, and is
    not learned), where the turn's learned text begins."""
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
