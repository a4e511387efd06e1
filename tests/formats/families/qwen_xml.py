"""The ChatML variants whose calls are Qwen3-Coder's XML (:mod:`pawlette.formats.chatml.xml`):
Qwen3-Coder, Qwen3.5, Nemotron 3 Nano and Step 3.5 Flash."""

from __future__ import annotations

from typing import Any

from ...support.template_compare import strip_text, without_reasoning
from . import FamilyCase


def coder_trimmed(message: dict[str, Any]) -> dict[str, Any]:
    """What Qwen3-Coder's template keeps of a turn: no reasoning, and the text before calls
    without whitespace at its ends."""
    result = without_reasoning(message)
    if result.get("tool_calls") and isinstance(result.get("content"), str):
        result["content"] = result["content"].strip()
    return result


def qwen35_trimmed(message: dict[str, Any]) -> dict[str, Any]:
    """What Qwen3.5's template keeps of a turn: its text and reasoning trimmed."""
    return strip_text(message)


CASES = [
    FamilyCase(
        template="Qwen3-Coder",
        format="chatml:qwen3-coder",
        empty_content=True,
        normalise=coder_trimmed,
    ),
    FamilyCase(
        template="Qwen3.5-4B",
        format="chatml:qwen3.5",
        # A system message is only first (the template refuses any other).
        switches={"system_positions": ("none", "first")},
        empty_content=True,
        normalise=qwen35_trimmed,
    ),
    FamilyCase(
        template="StepFun3.5-Flash",
        format="chatml:stepfun3.5",
        empty_content=True,
    ),
]
