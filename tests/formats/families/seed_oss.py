"""Seed-OSS (``pawlette.formats.seed_oss``) against ByteDance's template: every kind of
conversation but empty texts (the template writes a blank assistant turn with neither a
newline nor ``<seed:eos>``, a difference its declaration records); the template trims the
assistant's text and reasoning and drops blank reasoning (documented losses), and its own
assistant turns parse back to the message as it keeps it."""

from __future__ import annotations

from typing import Any

from tests.support.conversations import TEXT_STYLES
from tests.support.template_compare import strip_text

from . import FamilyCase


def kept(message: dict[str, Any]) -> dict[str, Any]:
    """What the template keeps of a turn: text and reasoning trimmed, blank reasoning none."""
    result = strip_text(message)
    if not result.get("reasoning_content"):
        result.pop("reasoning_content", None)
    return result


CASES = [
    FamilyCase(
        "ByteDance-Seed-OSS",
        "seed_oss",
        switches={"texts": tuple(style for style in TEXT_STYLES if style != "empty-text")},
        normalise=kept,
    ),
]
