"""The ChatML family (:mod:`pawlette.formats.chatml`): Qwen2.5, Qwen3 and MiMo-VL.

QwQ (``chatml:qwq``) renders as its template does, but has no case here: its prompt opens a
``<think>`` block no past turn holds, so no training render extends a prompt render and the
shared own-turns test cannot apply (its reading is tested in ``test_chatml``)."""

from __future__ import annotations

from typing import Any

from ...support.template_compare import without_reasoning
from . import FamilyCase


def qwen3_trimmed(message: dict[str, Any]) -> dict[str, Any]:
    """What Qwen3's template keeps of a turn it writes with a reasoning block: the reasoning
    without newlines at its ends and the content without newlines at its start."""
    result = dict(message)
    reasoning = result.pop("reasoning_content", None)
    if isinstance(reasoning, str) and reasoning.strip("\n"):
        result["reasoning_content"] = reasoning.strip("\n")
    content = result.get("content")
    if isinstance(content, str):
        if content.lstrip("\n"):
            result["content"] = content.lstrip("\n")
        else:
            del result["content"]
    return result


CASES = [
    FamilyCase(
        template="Qwen-Qwen2.5-7B-Instruct",
        format="chatml:qwen2.5",
        empty_content=True,
        normalise=without_reasoning,
    ),
    FamilyCase(
        template="Qwen-Qwen3-0.6B",
        format="chatml",
        empty_content=True,
        normalise=qwen3_trimmed,
    ),
    FamilyCase(
        template="MiMo-VL",
        format="chatml:mimo-vl",
        empty_content=True,
        normalise=without_reasoning,
    ),
]
