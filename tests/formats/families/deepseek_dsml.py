"""DeepSeek V3.2's template (:mod:`pawlette.formats.deepseek_dsml`)."""

from __future__ import annotations

from ...support.template_compare import without_reasoning
from ..families import FamilyCase

# The default (non-thinking) mode writes no reasoning_content.  (Thinking is a variable of
# the same template: the thinking variant is compared in tests/formats/test_deepseek_dsml.py.)
CASES = [
    FamilyCase(
        template="deepseek-ai-DeepSeek-V3.2",
        format="deepseek_dsml",
        normalise=without_reasoning,
    ),
]
