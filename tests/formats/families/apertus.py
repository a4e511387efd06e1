"""Apertus (:mod:`pawlette.formats.apertus`) against Swiss AI's template.  Conversations
have no system message or one, first: the template refuses any other, and so does the
format (``bench.models`` compares every kind).  Reasoning, which the template never writes,
is a documented loss; the template's own assistant turns parse back to the message as it
keeps it.  After results, the generation prompt writes ``<|assistant_start|>`` where the
template's own turn has no opener (``prompt_tail``).  A calls-only turn is given
``"content": ""``: given none after results, the template never closes their ``[`` (a
difference the format's page lists)."""

from __future__ import annotations

from ...support.template_compare import without_reasoning
from . import FamilyCase

CASES = [
    FamilyCase(
        "Apertus-8B-Instruct",
        "apertus",
        switches={"system_positions": ("none", "first")},
        normalise=without_reasoning,
        empty_content=True,
        prompt_tail="<|assistant_start|>",
        count=24,
    )
]
