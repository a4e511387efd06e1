"""DeepSeek's templates (:mod:`pawlette.formats.deepseek`)."""

from __future__ import annotations

from ...support.template_compare import without_reasoning
from ..families import FamilyCase

# The template writes no reasoning_content and no tools; every system message goes to the
# start, so only a leading system message renders where the conversation has it.
SWITCHES = {"system_positions": ("none", "first", "several")}
# (Thinking is a variable of the same template, not another template: the thinking variant's
# renders and own turns are compared in tests/formats/test_deepseek.py.)

CASES = [
    FamilyCase(
        template="deepseek-ai-DeepSeek-V3.1",
        format="deepseek",
        switches=SWITCHES,
        normalise=without_reasoning,
    ),
]
