"""ServiceNow Apriel 1.5 (``pawlette.formats.apriel``) against its template: every kind of
conversation, system messages anywhere; the template drops reasoning and names (documented
losses)."""

from __future__ import annotations

from ...support.template_compare import without_reasoning
from . import FamilyCase

CASES = [FamilyCase("unsloth-Apriel-1.5", "apriel", normalise=without_reasoning)]
