"""Command R7B (``pawlette.formats.cohere``) against Cohere's template.

Every kind of conversation is generated: the template drops an answer's reasoning and the
text beside calls, and renumbers call ids by position (documented losses); its own assistant
turns parse back to the message as it keeps it.
"""

from __future__ import annotations

from tests.support.template_compare import compose, strip_text, without_reasoning

from . import FamilyCase

CASES = [
    FamilyCase(
        "CohereForAI-c4ai-command-r7b-12-2024-tool_use",
        "cohere",
        switches={"text_with_calls": False, "reasoning": False},
        normalise=without_reasoning,
        count=12,
    ),
]
# Command A MoE: the generation prompt opens the reasoning block, which a past turn without
# reasoning does not hold (so no prompt render begins it): every turn here has reasoning.
CASES.append(
    FamilyCase(
        "Cohere2MoE",
        "cohere:cohere2moe",
        switches={"text_with_calls": False, "reasoning_always": True},
    )
)
# Command R+'s tool-use template: without tools (its callers pass an empty list) it renders
# every conversation; with tools it fails on the generated tools (parameters without a
# description, objects without additionalProperties), which the format writes: those
# conversations, calls and results included, are compared with described tools in
# tests/formats/test_cohere_plus.py.  Its generation prompt writes the fixed instruction
# turn before the opener, so a turn is cut after its opener.
CASES.append(
    FamilyCase(
        "CohereForAI-c4ai-command-r-plus-tool_use",
        "cohere:command-r-plus",
        switches={"tools": False},
        normalise=compose(without_reasoning, strip_text),
        empty_content=True,
        opener="<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
    )
)
