"""GigaChat 3 and 3.1 (``pawlette.formats.gigachat``, ``gigachat:3.1``) against their
templates: every kind of conversation; the templates write only a turn's first call and drop
reasoning and names (documented losses), and their own assistant turns parse back to the
message as they keep it."""

from __future__ import annotations

from ...support.template_compare import compose, without_reasoning
from . import FamilyCase


def first_call(message: dict[str, object]) -> dict[str, object]:
    """What the template keeps of a turn's calls: the first."""
    calls = message.get("tool_calls")
    if isinstance(calls, list) and len(calls) > 1:
        return {**message, "tool_calls": calls[:1]}
    return message


CASES = [
    FamilyCase("GigaChat3-10B-A1.8B", "gigachat", normalise=compose(without_reasoning, first_call)),
    FamilyCase(
        "GigaChat3.1-10B-A1.8B", "gigachat:3.1", normalise=compose(without_reasoning, first_call)
    ),
]
