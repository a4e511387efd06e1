"""Conversations without a user message, against the real templates of the families whose
reasoning is kept after the last user message (``Reasoning(no_query=...)``): Qwen3's,
StepFun 3.5's and MiniCPM's templates take the last message as the last query, so no turn
writes a block; Qwen3.5's refuses the conversation."""

from __future__ import annotations

from typing import Any

import pytest

import pawlette
from pawlette.errors import RequestError

from ..support.template_compare import corpus_reference

SYSTEM = {"role": "system", "content": "Be brief."}
ANSWER = {"role": "assistant", "content": "One.", "reasoning_content": "first"}
PLAIN = {"role": "assistant", "content": "Two."}
QUESTION = {"role": "user", "content": "Hi"}

CONVERSATIONS = {
    "system, answer": [SYSTEM, ANSWER],
    "answer": [ANSWER],
    "answer, answer": [ANSWER, dict(ANSWER, content="Two.", reasoning_content="second")],
    "system, answer without reasoning": [SYSTEM, PLAIN],
    "answer, question, answer": [ANSWER, QUESTION, dict(ANSWER, reasoning_content="second")],
}

DROPPED = {
    "chatml": "Qwen-Qwen3-0.6B",
    "chatml:stepfun3.5": "StepFun3.5-Flash",
    "minicpm": "openbmb-MiniCPM5-1B",
}


def _render(name: str, messages: list[dict[str, Any]]) -> tuple[str, tuple[str, ...]]:
    rendering = pawlette.get_format(name).render(messages)
    return rendering.text, rendering.losses


@pytest.mark.parametrize("label", CONVERSATIONS)
@pytest.mark.parametrize("name", DROPPED)
def test_renders_as_the_template_without_a_user_message(name: str, label: str) -> None:
    messages = CONVERSATIONS[label]
    expected = corpus_reference(DROPPED[name]).render(messages, add_generation_prompt=False)
    assert expected.text is not None, expected.refusal
    text, losses = _render(name, messages)
    assert text == expected.text
    if any(message["role"] == "user" for message in messages):
        return
    assert losses == tuple(
        f"messages[{index}].reasoning_content: dropped (no user message before it)"
        for index, message in enumerate(messages)
        if message.get("reasoning_content")
    )


@pytest.mark.parametrize("name", DROPPED)
def test_an_answer_without_a_user_message_reads_back_without_reasoning(name: str) -> None:
    fmt = pawlette.get_format(name)
    text = fmt.render([SYSTEM, ANSWER]).text
    read = fmt.parse_conversation(text, strict=True).to_request()["messages"]
    assert read == [SYSTEM, {"role": "assistant", "content": "One."}]


@pytest.mark.parametrize("prompt", [False, True])
def test_qwen35_refuses_a_conversation_without_a_user_message(prompt: bool) -> None:
    reference = corpus_reference("Qwen3.5-4B")
    for messages in ([SYSTEM, ANSWER], [SYSTEM]):
        if not prompt and messages[-1] is SYSTEM:
            continue
        refused = reference.render(messages, add_generation_prompt=prompt)
        assert refused.text is None and "No user query" in (refused.refusal or "")
        with pytest.raises(RequestError) as error:
            pawlette.get_format("chatml:qwen3.5").render(messages, add_generation_prompt=prompt)
        assert error.value.path == "messages" and "no user message" in str(error.value)
    asked = [SYSTEM, QUESTION]
    expected = reference.render(asked, add_generation_prompt=True).text
    assert expected is not None
    assert (
        pawlette.get_format("chatml:qwen3.5").render(asked, add_generation_prompt=True).text
        == expected
    )
