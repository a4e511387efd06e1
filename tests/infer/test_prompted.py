"""A generation prompt that stops short of the assistant's opener (Reka Edge: ``assistant:``
before the model's turn, ``assistant: `` before past turns)."""

from __future__ import annotations

import pytest

from pawlette.infer import PromptRest, infer_template

from .reka import reka


def test_the_rest_of_the_opener_is_layout_after_the_prompt() -> None:
    inference = reka()
    assert inference.accepted, inference.describe()
    verification = inference.verification
    assert verification is not None
    assert verification.parsed_back == verification.turns > 0
    layout = inference.layout
    assert layout is not None
    assert layout.concepts[-1] == PromptRest(prompt="assistant:", rest=" ")
    fmt = inference.format
    assert fmt is not None
    # The model's own turn after the prompt: the space is the opener's.
    assert fmt.parse(" It is sunny.\n\n<sep>").message["content"] == "It is sunny."
    assert (
        fmt.parse("  indented\n\n<sep>", prompt="human: Hi<sep>assistant:").message["content"]
        == " indented"
    )


def test_text_after_the_whole_opener_is_read_as_written() -> None:
    fmt = reka().format
    assert fmt is not None
    request = {
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "  two leading spaces"},
        ]
    }
    text = fmt.render(request).text
    assert text == "human: Hi<sep>assistant:   two leading spaces\n\n<sep>"
    messages = fmt.parse_conversation(text).messages
    assert messages[-1]["content"] == "  two leading spaces"


# Mistral's v1 and v7 templates (as llama.cpp's tests/test-chat-template.cpp holds them): no
# generation prompt at all, and a space before each past answer.
MISTRAL_V7 = (
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}"
    "{{ '[INST] ' + message['content'] + '[/INST]' }}{% elif message['role'] == 'system' %}"
    "{{ '[SYSTEM_PROMPT] ' + message['content'] + '[/SYSTEM_PROMPT]' }}"
    "{% elif message['role'] == 'assistant' %}{{ ' ' + message['content'] + eos_token }}"
    "{% else %}{{ raise_exception('Only user, system and assistant roles are supported!') }}"
    "{% endif %}{% endfor %}"
)
MISTRAL_V1 = (
    "{%- if messages[0]['role'] == 'system' %}{%- set system_message = messages[0]['content'] %}"
    "{%- set loop_messages = messages[1:] %}{%- else %}{%- set loop_messages = messages %}"
    "{%- endif %}{{- bos_token }}{%- for message in loop_messages %}"
    "{%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{- raise_exception('After the optional system message, conversation roles must "
    "alternate user/assistant/user/assistant/...') }}{%- endif %}"
    "{%- if message['role'] == 'user' %}{%- if loop.first and system_message is defined %}"
    "{{- ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}"
    "{%- else %}{{- ' [INST] ' + message['content'] + ' [/INST]' }}{%- endif %}"
    "{%- elif message['role'] == 'assistant' %}{{- ' ' + message['content'] + eos_token}}"
    "{%- else %}{{- raise_exception('Only user and assistant roles are supported, with the "
    "exception of an initial optional system message!') }}{%- endif %}{%- endfor %}"
)


@pytest.mark.parametrize("template", [MISTRAL_V7, MISTRAL_V1], ids=["v7", "v1"])
def test_a_template_without_a_generation_prompt_leaves_the_model_the_openers_rest(
    template: str,
) -> None:
    """The model writes the space before its answer: after the prompt (nothing), it is the
    rest of the opener, and a past turn's space is the opener's."""
    inference = infer_template(template, bos_token="<s>", eos_token="</s>")
    assert inference.accepted, inference.describe()
    assert inference.layout is not None
    assert inference.layout.concepts[-1] == PromptRest(prompt="", rest=" ")
    fmt = inference.format
    assert fmt is not None
    assert fmt.parse(" It is sunny.</s>").message["content"] == "It is sunny."
    request = {
        "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yes"}]
    }
    assert fmt.parse_conversation(fmt.render(request).text).messages[-1]["content"] == "Yes"
