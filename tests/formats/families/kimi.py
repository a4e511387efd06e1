"""Kimi K2's templates (:mod:`pawlette.formats.kimi`).

Hugging Face's immutable sandbox refuses Instruct's and Thinking's templates on any
conversation with a tool call (their queue of call ids uses ``list.append``), so their
shared cases hold no tools; their calls and results are compared in
tests/formats/test_kimi.py, the templates run in transformers' own environment with the
sandbox's list mutation allowed.
"""

from __future__ import annotations

from ...support.template_compare import without_reasoning
from ..families import FamilyCase

# Instruct and the original drop reasoning_content (a recorded loss); Thinking drops it up
# to the first plain answer, which a later turn moves: its own turns are checked in
# tests/formats/test_kimi.py.
CASES = [
    FamilyCase(
        template="Kimi-K2-Instruct",
        format="kimi",
        switches={"tools": False},
        normalise=without_reasoning,
        count=12,
    ),
    FamilyCase(
        template="Kimi-K2-Thinking",
        format="kimi:k2-thinking",
        switches={"tools": False, "reasoning": False},
        count=12,
    ),
    FamilyCase(
        template="moonshotai-Kimi-K2",
        format="kimi:k2-original",
        normalise=without_reasoning,
        count=12,
    ),
]
# K3 with thinking off (the same template, its variable ``thinking`` false) is compared in
# tests/formats/kimi/test_k3.py: a template is detected as one variant, its default.
CASES.append(FamilyCase(template="Kimi-K3", format="kimi:k3", count=16))
