"""MiniCPM 5 (``pawlette.formats.minicpm``) against OpenBMB's template: every kind of
conversation but texts holding ``</think>`` (the template splits such a text in a turn
without reasoning: a documented difference) or ``<think>`` (a marker: text spelling it is
read as it); its own assistant turns parse back to the message as it keeps it."""

from __future__ import annotations

from typing import Any

from . import FamilyCase


def kept(message: dict[str, Any]) -> dict[str, Any]:
    """What the template keeps of a turn: a turn with reasoning writes it without the
    newlines at its ends (an empty block reads back as none) and the text after it without
    the newlines at its start."""
    result = dict(message)
    reasoning = result.pop("reasoning_content", None)
    if not (isinstance(reasoning, str) and reasoning):
        return result
    if reasoning.strip("\n"):
        result["reasoning_content"] = reasoning.strip("\n")
    content = result.get("content")
    if isinstance(content, str):
        if content.lstrip("\n"):
            result["content"] = content.lstrip("\n")
        else:
            del result["content"]
    return result


CASES = [
    FamilyCase(
        template="openbmb-MiniCPM5-1B",
        format="minicpm",
        switches={"avoid": ("<think>", "</think>")},
        normalise=kept,
    )
]
