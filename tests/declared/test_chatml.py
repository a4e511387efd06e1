"""chatml against Qwen's own templates (Qwen3 and Qwen2.5), byte for byte, under transformers."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.declare import declare
from pawlette.declared import chatml

from ..declare.conversations import TOOLS, conversations
from .reference import hugging_face_messages, render_reference

QWEN3 = pawlette.get_format("chatml")
QWEN25 = declare(chatml.layout(chatml.QWEN25))


def without_reasoning(request: dict[str, Any]) -> dict[str, Any]:
    messages = [
        {key: value for key, value in message.items() if key != "reasoning_content"}
        for message in request["messages"]
    ]
    return {**request, "messages": messages}


@settings(max_examples=60)
@given(request=conversations(QWEN3, strip=True), prompt=st.booleans())
def test_qwen3_template(request: dict[str, Any], prompt: bool) -> None:
    messages = hugging_face_messages(request["messages"], empty_content=True)
    expected = render_reference("Qwen-Qwen3-0.6B.jinja", messages, request.get("tools"), prompt)
    assert QWEN3.render(request, add_generation_prompt=prompt).text == expected


@settings(max_examples=60)
@given(request=conversations(QWEN25, strip=True), prompt=st.booleans())
def test_qwen25_template(request: dict[str, Any], prompt: bool) -> None:
    request = without_reasoning(request)
    messages = hugging_face_messages(request["messages"])
    expected = render_reference(
        "Qwen-Qwen2.5-7B-Instruct.jinja", messages, request.get("tools"), prompt
    )
    assert QWEN25.render(request, add_generation_prompt=prompt).text == expected


def test_qwen25_is_an_option_of_chatml() -> None:
    variant = QWEN3.with_options(default_system=chatml.QWEN25_SYSTEM, reasoning=False)
    request = {"messages": [{"role": "user", "content": "Hi"}], "tools": TOOLS}
    assert variant.render(request).text == QWEN25.render(request).text
    assert variant.parse_conversation(variant.render(request).text).messages == request["messages"]


@settings(max_examples=40)
@given(request=conversations(QWEN3))
def test_prompts_are_prefixes_of_the_training_render_within_a_query(
    request: dict[str, Any],
) -> None:
    """Qwen3 drops the reasoning of turns before the last user message, so the prefix
    property holds for the assistant turns after it (see the format's docstring)."""
    messages = request["messages"]
    tools = request.get("tools")
    full = QWEN3.render(messages, tools).text
    last_query = max(i for i, m in enumerate(messages) if m["role"] == "user")
    for index in range(last_query + 1, len(messages)):
        if messages[index]["role"] == "assistant":
            prompt = QWEN3.render(messages[:index], tools, add_generation_prompt=True).text
            assert full.startswith(prompt)


# ------------------------------------------------------------------ where Qwen3's template is lossy


def qwen3(messages: list[dict[str, Any]]) -> str:
    return render_reference(
        "Qwen-Qwen3-0.6B.jinja", hugging_face_messages(messages, empty_content=True), None, False
    )


@pytest.mark.parametrize(
    ("assistant", "lost"),
    [
        ({"content": "ok", "reasoning_content": "\nthought\n"}, "newlines around reasoning"),
        ({"content": "\nok", "reasoning_content": "r"}, "a newline starting content after it"),
        ({"content": "a</think>b"}, "content holding </think> read as reasoning"),
    ],
)
def test_where_the_qwen3_template_is_lossy_pawlette_keeps_the_text(
    assistant: dict[str, Any], lost: str
) -> None:
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", **assistant}]
    rendered = QWEN3.render(messages).text
    assert rendered != qwen3(messages), lost
    parsed = QWEN3.parse_conversation(rendered).messages[1]
    assert parsed["content"] == assistant["content"]
    assert parsed.get("reasoning_content") == assistant.get("reasoning_content")


def test_past_reasoning_is_dropped_like_qwen3_does() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b", "reasoning_content": "r1"},
        {"role": "user", "content": "c"},
        {"role": "assistant", "content": "d", "reasoning_content": "r2"},
    ]
    rendered = QWEN3.render(messages).text
    assert rendered == qwen3(messages)
    assert "r1" not in rendered and "<think>\nr2\n</think>\n\nd" in rendered


@settings(max_examples=30)
@given(request=conversations(QWEN3, strip=True), prompt=st.booleans())
def test_token_ids_equal_qwen_tokenizer(request: dict[str, Any], prompt: bool) -> None:
    """pawlette's ids are Qwen's tokenizer's own encoding of the rendered text (its added
    tokens matched), since no generated text spells a marker or starts with whitespace."""
    from ..support.qwen import qwen_tokenizer

    tokenizer = qwen_tokenizer()
    rendered = QWEN3.render(request, add_generation_prompt=prompt).text
    expected = tokenizer.encode(rendered, add_special_tokens=False).ids
    result = pawlette.tokenize(QWEN3, tokenizer, request, add_generation_prompt=prompt)
    assert list(result.input_ids) == expected
