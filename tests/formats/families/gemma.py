"""Gemma (``pawlette.formats.gemma``) against Google's templates.

Gemma 2's template has no system, tool or call syntax and refuses roles out of turn: its
conversations alternate user and assistant from a user message.  Reasoning and names are
generated: it drops them (documented losses), and its own turns parse back trimmed.
"""

from __future__ import annotations

from tests.support.template_compare import compose, strip_text, without_reasoning

from . import FamilyCase

GEMMA_2 = {"tools": False, "system_positions": ("none",), "alternating": True}

CASES = [
    FamilyCase(
        "google-gemma-2-2b-it",
        "gemma",
        GEMMA_2,
        normalise=compose(without_reasoning, strip_text),
    ),
]

# TranslateGemma: user and model turns only, alternating from a user message, no tools (the
# template refuses an answer without text, so no calls); its callers give each user text
# with the languages (tests.support.template_corpus.CALLER_MESSAGES), here the format's own.
TRANSLATE = {"tools": False, "system_positions": ("none",), "alternating": True}
CASES.append(
    FamilyCase(
        "google-translategemma-4b-it",
        "gemma:translate",
        TRANSLATE,
        variables={"source_lang_code": "en", "target_lang_code": "de"},
        # The template refuses a user message of text alone: detection gives it each user
        # text as the content part its callers pass (Layout.template_messages) and names it.
        normalise=compose(without_reasoning, strip_text),
    )
)
