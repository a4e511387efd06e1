"""DeepSeek's templates (:mod:`pawlette.formats.deepseek`)."""

from __future__ import annotations

from ...support.template_compare import without_reasoning
from ..families import FamilyCase

# The template writes no reasoning_content and no tools; every system message goes to the
# start, so only a leading system message renders where the conversation has it.
SWITCHES = {"system_positions": ("none", "first", "several")}
# (Thinking is a variable of the same template, not another template: the thinking variant's
# renders and own turns are compared in tests/formats/test_deepseek.py.)

# R1's templates write calls and results with flags never reset (a second calling turn loses
# its opener, a single call of the Llama distill is never closed): they are compared without
# tools.  Content
# holding </think> is cut by the templates: the generator avoids the format's markers.  The
# prompt opens <think> and past turns drop reasoning, so no own turn can be cut out of a render
# (what the models write after the prompt is read in tests/formats/test_deepseek.py).
R1_SWITCHES = {"tools": False}

CASES = [
    FamilyCase(
        template="deepseek-ai-DeepSeek-V3.1",
        format="deepseek",
        switches=SWITCHES,
        normalise=without_reasoning,
    ),
    FamilyCase(
        template="deepseek-ai-DeepSeek-R1-Distill-Llama-8B",
        format="deepseek:r1",
        switches=R1_SWITCHES,
        count=8,
        own_turns=False,
    ),
    FamilyCase(
        template="deepseek-ai-DeepSeek-R1-Distill-Qwen-32B",
        format="deepseek:r1-no-thinking",
        switches=R1_SWITCHES,
        count=8,
        own_turns=False,
    ),
    FamilyCase(
        template="llama-cpp-deepseek-r1",
        format="deepseek:r1-llamacpp",
        switches=R1_SWITCHES,
        count=8,
        own_turns=False,
    ),
]
