"""IBM Granite 4.0 and 4.1 (:mod:`pawlette.formats.granite`) against IBM's templates.

Every kind of conversation is generated: what the templates drop (reasoning, names) is a
documented loss, and their own assistant turns parse back to the message as they keep it."""

from __future__ import annotations

from typing import Any

from ...support.template_compare import compose, without_reasoning
from . import FamilyCase


def without_calls(message: dict[str, Any]) -> dict[str, Any]:
    """Granite 3.3's template writes no calls (a turn of calls is its text alone)."""
    kept = {key: value for key, value in message.items() if key != "tool_calls"}
    if not kept.get("content"):
        kept.pop("content", None)
    return kept


CASES = [
    FamilyCase("ibm-granite-granite-4.0", "granite", normalise=without_reasoning),
    FamilyCase("ibm-granite-granite-4.1", "granite:4.1", normalise=without_reasoning, seed=1),
    FamilyCase(
        "ibm-granite-granite-3.3-2B-Instruct",
        "granite:3.3",
        empty_content=True,  # its template concatenates every message's content
        normalise=compose(without_reasoning, without_calls),
        seed=2,
    ),
]
