"""Reasoning inferred from real templates."""

from __future__ import annotations

from pawlette.declare import declare
from pawlette.infer import infer_template

from ..support.template_corpus import corpus_template


def test_reasoning_not_derived_leaves_the_prompt_as_the_template_writes_it() -> None:
    """Nemotron Nano v2 prompts ``<SPECIAL_11>Assistant\\n<think>\\n`` but writes a last turn
    no reasoning concept declares: reasoning is not derived, and the generation prompt stays
    the template's (so only that last turn differs)."""
    template = corpus_template("NVIDIA-Nemotron-Nano-v2")
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["reasoning"] == "not derived"
    layout = inference.layout
    assert layout is not None
    request = {"messages": [{"role": "user", "content": "Hi"}]}
    written = declare(layout).render(request, add_generation_prompt=True).text
    assert written.endswith("<SPECIAL_11>Assistant\n<think>\n")
