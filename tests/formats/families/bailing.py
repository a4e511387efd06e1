"""inclusionAI's Ling 3.0 template (:mod:`pawlette.formats.bailing`)."""

from __future__ import annotations

from typing import Any

from . import FamilyCase


def ling_trimmed(message: dict[str, Any]) -> dict[str, Any]:
    """What the template keeps of a turn with reasoning: the reasoning without newlines at its
    ends, the content without newlines at its start (a turn without keeps its content)."""
    result = dict(message)
    reasoning = result.pop("reasoning_content", None)
    if isinstance(reasoning, str) and reasoning.strip("\n"):
        result["reasoning_content"] = reasoning.strip("\n")
    if reasoning and isinstance(result.get("content"), str):
        result["content"] = result["content"].lstrip("\n")
    return result


CASES = [
    FamilyCase(template="inclusionai-ling-3.0-flash", format="bailing", normalise=ling_trimmed),
]
