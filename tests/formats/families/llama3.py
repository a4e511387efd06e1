"""Llama 3.1, 3.2 and 3.3 (``pawlette.formats.llama3``) against Meta's templates.

Every kind of conversation is generated: what the templates drop (reasoning, names, text
beside a call, whitespace at a text's ends) is a documented loss, and what they refuse
(several calls in one turn) pawlette refuses too.  Their own assistant turns parse back to
the message as the templates keep it.
"""

from __future__ import annotations

from typing import Any

from tests.support.template_compare import compose, strip_text, without_reasoning

from . import FamilyCase


def without_text_beside_calls(message: dict[str, Any]) -> dict[str, Any]:
    """Meta's templates write a turn's call alone, dropping its text."""
    if message.get("tool_calls"):
        return {key: value for key, value in message.items() if key != "content"}
    return message


KEPT = compose(without_reasoning, without_text_beside_calls, strip_text)
ONE_CALL = {"parallel_calls": False}  # the templates refuse several calls in a turn

CASES = [
    FamilyCase("meta-llama-Llama-3.1-8B-Instruct", "llama3", ONE_CALL, normalise=KEPT),
    FamilyCase("meta-llama-Llama-3.3-70B-Instruct", "llama3", ONE_CALL, normalise=KEPT, seed=1),
    FamilyCase("meta-llama-Llama-3.2-3B-Instruct", "llama3:3.2", ONE_CALL, normalise=KEPT, seed=2),
]
