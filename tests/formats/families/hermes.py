"""Hermes 2 Pro and Hermes 3 (:mod:`pawlette.formats.hermes`) against their ``tool_use``
templates (byte-identical), written byte for byte by the ``exact`` variant.  The template
cannot render a request without tools (Hugging Face uses the model's default template then),
so the conversations all declare tools."""

from __future__ import annotations

from typing import Any

from ...support.template_compare import compose, without_reasoning
from . import FamilyCase


def without_text_beside_calls(message: dict[str, Any]) -> dict[str, Any]:
    """The template writes a turn's calls alone, dropping its text."""
    if message.get("tool_calls"):
        return {key: value for key, value in message.items() if key != "content"}
    return message


KEPT = compose(without_reasoning, without_text_beside_calls)
ALWAYS_TOOLS = {"tools_always": True}
# The prompt after results lacks the newline the training render writes after the last one.
OPENER = "<|im_start|>assistant\n"

CASES = [
    FamilyCase(
        "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use",
        "hermes:exact",
        ALWAYS_TOOLS,
        normalise=KEPT,
        opener=OPENER,
    ),
    FamilyCase(
        "NousResearch-Hermes-3-Llama-3.1-8B-tool_use",
        "hermes:exact",
        ALWAYS_TOOLS,
        normalise=KEPT,
        seed=1,
        opener=OPENER,
    ),
]
