"""The generation prompt after an answer and after the system message alone, as each family's
real template writes it (or writes none), byte for byte: the family's render, and the chat
template pawlette exports for it."""

from __future__ import annotations

from typing import Any

import pytest

import pawlette
from pawlette.declare import layout_of
from pawlette.declare.jinja import chat_template

from ..support.template_compare import Reference, corpus_reference

ANSWERED = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "It is 18°C."},
]
ANSWERED_TWICE = [*ANSWERED, {"role": "assistant", "content": "And sunny."}]
SYSTEM_ALONE = [{"role": "system", "content": "You are terse."}]

# (template, family, the conversations rendered with the generation prompt)
CASES = [
    ("unsloth-Apriel-1.5", "apriel", (ANSWERED, ANSWERED_TWICE, SYSTEM_ALONE)),
    ("Apriel-1.6-15b-Thinker-fixed", "apriel:1.6", (ANSWERED, ANSWERED_TWICE, SYSTEM_ALONE)),
    ("tencent-Hy3", "hy3", (ANSWERED, ANSWERED_TWICE, SYSTEM_ALONE)),
    ("GigaChat3-10B-A1.8B", "gigachat", (ANSWERED, ANSWERED_TWICE, SYSTEM_ALONE)),
    ("GigaChat3.1-10B-A1.8B", "gigachat:3.1", (ANSWERED, ANSWERED_TWICE, SYSTEM_ALONE)),
    ("Reka-Edge", "reka", (ANSWERED, ANSWERED_TWICE, SYSTEM_ALONE)),
    ("llama-cpp-deepseek-r1", "deepseek:r1-llamacpp", (ANSWERED, ANSWERED_TWICE, SYSTEM_ALONE)),
    ("google-translategemma-4b-it", "gemma:translate", (ANSWERED,)),
    ("ibm-granite-granite-3.3-2B-Instruct", "granite:3.3", (ANSWERED, SYSTEM_ALONE)),
]


def _render(reference: Reference, messages: list[dict[str, Any]]) -> str:
    rendered = reference.render(messages, add_generation_prompt=True)
    assert rendered.text is not None, rendered.refusal
    return rendered.text


@pytest.mark.parametrize(
    ("template", "family", "conversations"), CASES, ids=[case[1] for case in CASES]
)
def test_the_prompt_after_an_answer_or_the_system_message_alone_is_the_templates(
    template: str, family: str, conversations: tuple[list[dict[str, Any]], ...]
) -> None:
    fmt = pawlette.get_format(family)
    reference = corpus_reference(template)
    layout = layout_of(fmt)
    assert layout is not None
    exported = Reference(
        chat_template(layout), bos_token=reference.bos_token, eos_token=reference.eos_token
    )
    for messages in conversations:
        expected = _render(reference, messages)
        assert fmt.render(messages, add_generation_prompt=True).text == expected, messages
        assert _render(exported, messages) == expected, messages


@pytest.mark.parametrize(
    ("family", "turn"),
    [
        ("gigachat", "assistant<|role_sep|>\nHello.<|message_sep|>"),
        ("gigachat:3.1", "assistant<|role_sep|>\nHello.<|message_sep|>"),
        ("granite:3.3", "<|start_of_role|>assistant<|end_of_role|>Hello.<|end_of_text|>"),
    ],
)
def test_prompted_with_no_opener_the_model_writes_it_and_it_is_layout(
    family: str, turn: str
) -> None:
    # After the system message alone the template writes no prompt: the model writes its
    # turn's opener, and reading knows it is no text.
    fmt = pawlette.get_format(family)
    prompt = fmt.render(SYSTEM_ALONE, add_generation_prompt=True).text
    assert prompt == fmt.render(SYSTEM_ALONE).text
    assert fmt.parse(turn, prompt=prompt).message["content"] == "Hello."
    assert fmt.parse("Hello.", prompt=prompt).message["content"] == "Hello."
