"""Mistral's templates (:mod:`pawlette.formats.mistral`)."""

from __future__ import annotations

from . import FamilyCase

CASES = [
    FamilyCase(
        template="Mistral-Small-3.2-24B-Instruct-2506",
        format="mistral",
        # The template refuses roles that do not alternate and drops text beside calls.
        switches={
            "alternating": True,
            "text_with_calls": False,
            "reasoning": False,
            "system_positions": ("none", "first"),
        },
    ),
    FamilyCase(
        template="unsloth-mistral-Devstral-Small-2507",
        format="mistral:devstral",
        switches={"reasoning": False},
        empty_content=True,
    ),
    FamilyCase(
        template="mistralai-Ministral-3-14B-Reasoning-2512",
        format="mistral:ministral-3-reasoning",
        # The template refuses an empty answer (so does the format: tests/formats/test_mistral.py).
        switches={
            "alternating": True,
            "texts": (
                "plain",
                "non-ascii",
                "markdown",
                "edge-whitespace",
                "quotes-backslashes",
                "foreign-markers",
            ),
            "reasoning": False,
            "system_positions": ("none", "first"),
        },
    ),
    FamilyCase(
        template="mistralai-Mistral-Nemo-Instruct-2407",
        format="mistral:nemo",
        # The template refuses roles that do not alternate and drops text beside calls.  Its
        # system text moves into whichever user message ends the conversation, so a prompt
        # never begins the conversation's later render: conversations with a system message
        # are compared in tests/formats/test_mistral.py (renders only).
        switches={
            "alternating": True,
            "text_with_calls": False,
            "reasoning": False,
            "system_positions": ("none",),
        },
        count=12,
    ),
]
