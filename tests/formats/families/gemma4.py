"""Gemma 4 (``pawlette.formats.gemma4``) against Google's templates.

Both templates write an assistant message's text after its calls' results, where pawlette
writes it before the calls (a documented difference): the conversations compared hold no
text beside calls.  Reasoning is written only on turns with calls (the template's rule), so
a turn without calls parses back without it; every text comes back trimmed.  The generation
prompt ends with an empty thought block that past turns do not hold.
"""

from __future__ import annotations

from typing import Any

from . import FamilyCase

GEMMA_4 = {"text_with_calls": False}
EMPTY_THOUGHT = "<|channel>thought\n<channel|>"


def written(message: dict[str, Any]) -> dict[str, Any]:
    """The message as its own turn writes it: trimmed text, reasoning only beside calls,
    as written (the template does not trim it)."""
    message = dict(message)
    if isinstance(message.get("content"), str):
        message["content"] = message["content"].strip()
    if not message.get("tool_calls"):
        message.pop("reasoning_content", None)
    return message


CASES = [
    FamilyCase(
        "google-gemma-4-31B-it",
        "gemma4",
        GEMMA_4,
        normalise=written,
        prompt_tail=EMPTY_THOUGHT,
    ),
    FamilyCase(
        "google-gemma-4-31B-it-interleaved",
        "gemma4:interleaved",
        GEMMA_4,
        normalise=written,
        prompt_tail=EMPTY_THOUGHT,
    ),
]
