"""SmolLM3 (:mod:`pawlette.formats.smollm3`) against Unsloth's template, in both reasoning
modes.  Every kind of conversation is generated: what the template drops or changes
(reasoning, names, tools, calls, later system messages, newlines at an answer's start, a
tool result's role) is a documented loss."""

from __future__ import annotations

from typing import Any

from ...support.template_compare import compose, without_reasoning
from . import FamilyCase


def as_written(message: dict[str, Any]) -> dict[str, Any]:
    """What the template keeps of an assistant turn: its text without the newlines at its
    start, no calls."""
    kept = {key: value for key, value in message.items() if key != "tool_calls"}
    content = kept.get("content")
    if isinstance(content, str) and content.lstrip("\n"):
        kept["content"] = content.lstrip("\n")
    else:
        kept.pop("content", None)
    return kept


KEPT = compose(without_reasoning, as_written)

# The /no_think mode is the same template with enable_thinking=false, which detection
# cannot tell (it names the family): its renders are compared in test_smollm3.
CASES = [FamilyCase("HuggingFaceTB-SmolLM3-3B", "smollm3", normalise=KEPT)]
