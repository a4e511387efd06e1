"""DeepSeek's templates (:mod:`pawlette.formats.deepseek`)."""

from __future__ import annotations

from ...support.template_compare import without_reasoning
from ..families import FamilyCase

# The template writes no reasoning_content and no tools; every system message goes to the
# start, so only a leading system message renders where the conversation has it.
SWITCHES = {"system_positions": ("none", "first", "several")}

CASES = [
    FamilyCase(
        template="deepseek-ai-DeepSeek-V3.1",
        format="deepseek",
        switches=SWITCHES,
        normalise=without_reasoning,
    ),
    FamilyCase(
        template="deepseek-ai-DeepSeek-V3.1",
        format="deepseek:v3.1-thinking",
        switches=SWITCHES,
        normalise=without_reasoning,
        seed=1,
    ),
]
