"""Firefunction v2 (``pawlette.formats.firefunction``) against Fireworks' template, given the
``functions`` and ``datetime`` variables llama.cpp passes it.

Every kind of conversation is generated: the template drops reasoning and names and trims
every text (documented losses); its own assistant turns parse back to the message as it keeps
it.
"""

from __future__ import annotations

from tests.support.template_compare import compose, strip_text, without_reasoning

from . import FamilyCase

CASES = [
    FamilyCase(
        "fireworks-ai-llama-3-firefunction-v2",
        "firefunction",
        normalise=compose(without_reasoning, strip_text),
        count=12,
    ),
]
