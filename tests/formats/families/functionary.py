"""Functionary v3.1 (``pawlette.formats.functionary``) against MeetKai's template.

Every kind of conversation is generated: the template drops reasoning and names (documented
losses); its own assistant turns parse back to the message as it keeps it.
"""

from __future__ import annotations

from tests.support.template_compare import without_reasoning

from . import FamilyCase

CASES = [
    FamilyCase(
        "meetkai-functionary-medium-v3.1", "functionary", normalise=without_reasoning, count=12
    ),
]
