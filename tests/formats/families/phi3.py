"""Phi-3.5 mini (``pawlette.formats.phi3``) against Microsoft's template.

The template has no tools, calls or results: conversations are generated without tools
(tool messages and calls are recorded losses, checked in :mod:`tests.formats.test_phi3`).
Reasoning and names are generated: it drops them (documented losses), and its own turns parse
back without them.
"""

from __future__ import annotations

from tests.support.template_compare import without_reasoning

from . import FamilyCase

CASES = [
    FamilyCase(
        "microsoft-Phi-3.5-mini-instruct",
        "phi3",
        {"tools": False},
        normalise=without_reasoning,
    ),
]
