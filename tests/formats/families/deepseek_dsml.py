"""DeepSeek V3.2's template (:mod:`pawlette.formats.deepseek_dsml`)."""

from __future__ import annotations

from ...support.template_compare import without_reasoning
from ..families import FamilyCase

# The default (non-thinking) mode writes no reasoning_content.  (Thinking is a variable of
# the same template: the thinking variant is compared in tests/formats/test_deepseek_dsml.py.)
EMPTY_THINKING = "<think></think>"
"""What the non-thinking generation prompt writes after its opener: past turns hold only
``</think>`` there (the template's own stand-in), which the model's turn then begins with."""

CASES = [
    FamilyCase(
        template="deepseek-ai-DeepSeek-V3.2",
        format="deepseek_dsml",
        normalise=without_reasoning,
        prompt_tail=EMPTY_THINKING,
        stand_in="</think>",
    ),
    FamilyCase(
        template="deepseek-ai-DeepSeek-V4",
        format="deepseek_dsml:v4",
        normalise=without_reasoning,
    ),
    # The same layout: the Flash template differs only in its reasoning_effort texts, written
    # only with thinking on and a reasoning_effort the caller passes.
    FamilyCase(
        template="deepseek-ai-DeepSeek-V4-Flash-0731",
        format="deepseek_dsml:v4",
        normalise=without_reasoning,
    ),
]
