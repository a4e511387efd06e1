"""DeepSeek's templates (:mod:`pawlette.formats.deepseek`)."""

from __future__ import annotations

from ...support.template_compare import without_reasoning
from ..families import FamilyCase

# The template writes no reasoning_content and no tools; every system message goes to the
# start, so only a leading system message renders where the conversation has it.
SWITCHES = {"system_positions": ("none", "first", "several")}
# (Thinking is a variable of the same template, not another template: the thinking variant's
# renders and own turns are compared in tests/formats/test_deepseek.py.)

# llama.cpp's R1 template cannot render tools under Hugging Face's tojson (it maps the tools
# to a generator): it is compared without tools.  The distills' templates are compared on
# every kind (their calls and results as DistillTurns writes them).  Their prompt opens
# <think> and past turns drop reasoning, so only the turns after results can be cut out of a
# render (python -m bench.matrix reads those back; what the models write after the prompt is
# read in tests/formats/test_deepseek.py).
R1_LLAMACPP_SWITCHES = {"tools": False}

CASES = [
    FamilyCase(
        template="deepseek-ai-DeepSeek-V3.1",
        format="deepseek",
        switches=SWITCHES,
        normalise=without_reasoning,
    ),
    FamilyCase(
        template="deepseek-ai-DeepSeek-R1-Distill-Llama-8B",
        format="deepseek:r1-llama",
        # A call turn without text passed with "" (the template refuses a missing content).
        empty_content=True,
        count=8,
        # The turns after results are cut out, but their calls are dropped by the template
        # (a documented loss: the matrix counts them so).
        own_turns=False,
    ),
    FamilyCase(
        template="deepseek-ai-DeepSeek-R1-Distill-Qwen-32B",
        format="deepseek:r1-no-thinking",
        empty_content=True,
        count=8,
        own_turns=False,
    ),
    FamilyCase(
        template="llama-cpp-deepseek-r1",
        format="deepseek:r1-llamacpp",
        switches=R1_LLAMACPP_SWITCHES,
        count=8,
        own_turns=False,
    ),
]
