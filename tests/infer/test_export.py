"""An inferred format's exported chat template (with ``{% generation %}`` tags) renders what
the format renders, and refuses what it refuses."""

from __future__ import annotations

import pytest

from pawlette.errors import RequestError
from pawlette.export.jinja import export_jinja
from pawlette.infer import infer_template
from pawlette.infer.template import TemplateRunner

from ..support.conversations import generate_conversations
from ..support.template_corpus import corpus_template


@pytest.mark.parametrize(
    "name", ["GLM-4.6", "Qwen-Qwen3-0.6B", "meta-llama-Llama-3.1-8B-Instruct", "muse-glimmer"]
)
def test_the_exported_template_renders_as_the_inferred_format(name: str) -> None:
    template = corpus_template(name)
    fmt = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    ).format
    assert fmt is not None
    exported = export_jinja(fmt)
    assert "{% generation %}" in exported or "{%- generation -%}" in exported
    runner = TemplateRunner(exported)
    for conversation in generate_conversations(16, seed=2, avoid=fmt.special_markers):
        for prompt in (False,) if conversation.ends_with == "assistant" else (True, False):
            try:
                ours: str | None = fmt.render(
                    conversation.request, add_generation_prompt=prompt
                ).text
            except RequestError:
                ours = None
            theirs = runner.render(
                conversation.messages, conversation.tools, add_generation_prompt=prompt
            )
            assert theirs.text == ours, conversation.describe()
