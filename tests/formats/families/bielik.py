"""Bielik 11B v3 (``pawlette.formats.bielik``) against SpeakLeash's template: every kind of
conversation but a first system message beside results (the template indexes the message
list off by one after a system message: a documented difference), which the second case
covers without tools; the template trims the reasoning and the start of the assistant's
text (documented losses), and its own assistant turns parse back to the message as it keeps
it."""

from __future__ import annotations

from typing import Any

from . import FamilyCase


def kept(message: dict[str, Any]) -> dict[str, Any]:
    """What the template keeps of a turn: reasoning trimmed, text without leading space."""
    result = dict(message)
    reasoning = result.pop("reasoning_content", None)
    if isinstance(reasoning, str) and reasoning.strip():
        result["reasoning_content"] = reasoning.strip()
    content = result.get("content")
    if isinstance(content, str):
        result["content"] = content.lstrip()
    return result


CASES = [
    FamilyCase(
        "Bielik-11B-v3.0-Instruct",
        "bielik",
        switches={"system_positions": ("none", "later")},
        normalise=kept,
    ),
    FamilyCase(
        "Bielik-11B-v3.0-Instruct",
        "bielik",
        switches={"tools": False, "system_positions": ("first", "several")},
        normalise=kept,
    ),
]
