"""Reasoning inferred from real templates."""

from __future__ import annotations

from pawlette.declare import Reasoning, declare
from pawlette.declare.pieces import text_of
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


OPENED_AND_CLOSED = (
    "{%- for m in messages -%}"
    "{%- if m.role == 'assistant' -%}<|assistant|><think></think>{{ m.content }}<|end|>"
    "{%- else -%}<|{{ m.role }}|>{{ m.content }}{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|assistant|><think>{%- endif -%}"
)
"""The prompt opens ``<think>``; a past turn closes it at once and drops its reasoning
(DeepSeek V3.1's template with ``thinking`` true)."""


def test_a_block_the_prompt_opens_and_past_turns_close_at_once_is_opened() -> None:
    inference = infer_template(OPENED_AND_CLOSED)
    assert inference.accepted, inference.refusal
    layout = inference.layout
    assert layout is not None
    (reasoning,) = [item for item in layout.concepts if isinstance(item, Reasoning)]
    assert (reasoning.keep, reasoning.prompt) == ("none", "opened")
    fmt = declare(layout)
    user = [{"role": "user", "content": "Hi"}]
    assert fmt.render(user, add_generation_prompt=True).text == "<|user|>Hi<|assistant|><think>"
    completion = fmt.parse("Weighing it.</think>Hello<|end|>").message
    assert (completion["reasoning_content"], completion["content"]) == ("Weighing it.", "Hello")
    assert fmt.parse("</think>Hello<|end|>").message["content"] == "Hello"


CLOSED_BEFORE_THE_LAST_QUERY = (
    "{%- set ns = namespace(last=-1) -%}"
    "{%- for m in messages -%}{%- if m.role == 'user' -%}{%- set ns.last = loop.index0 -%}"
    "{%- endif -%}{%- endfor -%}"
    "{%- for m in messages -%}"
    "{%- if m.role == 'assistant' -%}<|assistant|>"
    "{%- if loop.index0 > ns.last -%}<think>{{ m.reasoning_content or '' }}</think>"
    "{%- else -%}</think>{%- endif -%}{{ m.content }}<|end|>"
    "{%- else -%}<|{{ m.role }}|>{{ m.content }}{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|assistant|><think>{%- endif -%}"
)
"""Turns after the last user message write their reasoning in a block, empty without it;
earlier ones write the close alone (DeepSeek V3.2's template with ``thinking`` true)."""


def test_a_block_every_turn_after_the_last_query_writes_is_derived() -> None:
    inference = infer_template(CLOSED_BEFORE_THE_LAST_QUERY)
    assert inference.accepted, inference.refusal
    layout = inference.layout
    assert layout is not None
    (reasoning,) = [item for item in layout.concepts if isinstance(item, Reasoning)]
    assert (reasoning.keep, reasoning.empty_after_last_query) == ("after_last_query", True)
    assert text_of(reasoning.absent) == "</think>"
    fmt = declare(layout)
    conversation = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello", "reasoning_content": "Greet."},
        {"role": "user", "content": "Bye"},
        {"role": "assistant", "content": "Bye"},
    ]
    assert fmt.render(conversation).text == (
        "<|user|>Hi<|assistant|></think>Hello<|end|><|user|>Bye<|assistant|><think></think>Bye<|end|>"
    )
