"""IBM Granite 4.0 and 4.1 (:mod:`pawlette.formats.granite`) against IBM's templates.

Every kind of conversation is generated: what the templates drop (reasoning, names) is a
documented loss, and their own assistant turns parse back to the message as they keep it."""

from __future__ import annotations

from ...support.template_compare import without_reasoning
from . import FamilyCase

CASES = [
    FamilyCase("ibm-granite-granite-4.0", "granite", normalise=without_reasoning),
    FamilyCase("ibm-granite-granite-4.1", "granite:4.1", normalise=without_reasoning, seed=1),
]
