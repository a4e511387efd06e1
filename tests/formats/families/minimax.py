"""MiniMax M1 (``pawlette.formats.minimax``) against MiniMax's template: every kind of
conversation; the template drops reasoning, names, later system messages and the text beside
calls, and trims every text (documented losses), and its own assistant turns parse back to
the message as it keeps it."""

from __future__ import annotations

from ...support.template_compare import compose, strip_text, without_reasoning
from . import FamilyCase


def kept(message: dict[str, object]) -> dict[str, object]:
    """What the template keeps of a turn: no reasoning, text trimmed, none beside calls."""
    result = compose(without_reasoning, strip_text)(message)
    if result.get("tool_calls"):
        result.pop("content", None)
    return result


CASES = [FamilyCase("MiniMax-M1", "minimax", normalise=kept)]
