"""Nemotron Nano 2 (``pawlette.formats.nemotron_v2``) against NVIDIA's template.

Every turn the template's own text is cut from is the last of its render, which the template
writes after the generation prompt's open ``<think>\\n`` (a last turn of calls alone after the
opener: ``prompt_tail``), its text inside the block it never closes: read back, as the
declaration documents, as ``reasoning_content`` (``normalise``).  Empty texts are left out:
the template writes nothing for an empty last assistant turn, the format the turn (its
docstring says why); the matrix compares them.
"""

from __future__ import annotations

from typing import Any

from ...support.conversations import TEXT_STYLES
from ...support.template_compare import compose, strip_text, without_reasoning
from . import FamilyCase


def inside_the_block(message: dict[str, Any]) -> dict[str, Any]:
    """The last turn's text, read back as the reasoning the prompt's open block holds."""
    result = dict(message)
    text = result.pop("content", None)
    if isinstance(text, str) and text:
        result["reasoning_content"] = text
    return result


CASES = [
    FamilyCase(
        "NVIDIA-Nemotron-Nano-v2",
        "nemotron_v2",
        switches={"texts": tuple(style for style in TEXT_STYLES if style != "empty-text")},
        normalise=compose(strip_text, without_reasoning, inside_the_block),
        prompt_tail="<think>\n",
    ),
]
