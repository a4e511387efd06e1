"""``Reasoning.no_query`` on a tiny layout: with ``keep="after_last_query"``, what a
conversation without a user message does to the reasoning, in the render (its losses), the
exported template and the reading of the render."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from pawlette.declare import Frame, Layout, Marker, Reasoning, declare, fence
from pawlette.errors import FormatError, RequestError
from pawlette.export import export_jinja

THINK, THINK_END = "<think>", "</think>"


def _layout(**reasoning: Any) -> Layout:
    return Layout(
        name="tiny-no-query",
        summary="reasoning kept after the last user message",
        frames={
            "system": Frame(open=fence(Marker("<s>")), end=fence(Marker("<end>"))),
            "user": Frame(open=fence(Marker("<u>")), end=fence(Marker("<end>"))),
            "assistant": Frame(open=fence(Marker("<a>")), end=fence(Marker("<end>"))),
        },
        concepts=(
            Reasoning(
                open=fence(THINK), close=fence(THINK_END), keep="after_last_query", **reasoning
            ),
        ),
        markers_in_text=True,
    )


SYSTEM = {"role": "system", "content": "Be brief."}
ANSWER = {"role": "assistant", "content": "One.", "reasoning_content": "first"}
QUESTION = {"role": "user", "content": "Hi"}


def _exported(fmt: Any, messages: list[dict[str, Any]], prompt: bool) -> str:
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, _ = render_jinja_template(
        [messages], chat_template=export_jinja(fmt), add_generation_prompt=prompt
    )
    return str(rendered[0])


@pytest.mark.parametrize("empty", [{}, {"empty_on_last": True}, {"empty_after_last_query": True}])
def test_dropped_writes_no_block_without_a_user_message(empty: dict[str, bool]) -> None:
    fmt = declare(_layout(no_query="dropped", **empty))
    for messages in ([SYSTEM, ANSWER], [ANSWER, dict(ANSWER, content="Two.")]):
        rendering = fmt.render(messages)
        assert THINK not in rendering.text
        assert rendering.losses == tuple(
            f"messages[{index}].reasoning_content: dropped (no user message before it)"
            for index, message in enumerate(messages)
            if message["role"] == "assistant"
        )
        assert _exported(fmt, messages, False) == rendering.text
        read = fmt.parse_conversation(rendering.text, strict=True).to_request()["messages"]
        assert read == [
            {"role": message["role"], "content": message["content"]} for message in messages
        ]


def test_dropped_keeps_the_reasoning_after_a_user_message() -> None:
    fmt = declare(_layout(no_query="dropped"))
    messages = [ANSWER, QUESTION, dict(ANSWER, content="Two.", reasoning_content="second")]
    rendering = fmt.render(messages)
    assert rendering.text == "<a>One.<end><u>Hi<end><a><think>second</think>Two.<end>"
    assert rendering.losses == (
        "messages[0].reasoning_content: dropped (before the last user message)",
    )
    assert _exported(fmt, messages, False) == rendering.text


def test_kept_writes_every_block_without_a_user_message() -> None:
    fmt = declare(_layout())
    rendering = fmt.render([SYSTEM, ANSWER])
    assert rendering.text == "<s>Be brief.<end><a><think>first</think>One.<end>"
    assert rendering.losses == ()
    assert _exported(fmt, [SYSTEM, ANSWER], False) == rendering.text


def test_refused_refuses_a_conversation_without_a_user_message() -> None:
    import jinja2

    fmt = declare(_layout(no_query="refused"))
    for messages, prompt in (([SYSTEM, ANSWER], False), ([SYSTEM], True)):
        with pytest.raises(RequestError) as refused:
            fmt.render(messages, add_generation_prompt=prompt)
        assert refused.value.path == "messages"
        assert "no user message" in str(refused.value)
        with pytest.raises(jinja2.TemplateError, match="no user message"):
            _exported(fmt, messages, prompt)
    rendering = fmt.render([QUESTION, ANSWER])
    assert rendering.text == "<u>Hi<end><a><think>first</think>One.<end>"
    assert _exported(fmt, [QUESTION, ANSWER], False) == rendering.text


def test_no_query_other_than_kept_needs_keep_after_last_query() -> None:
    reasoning = Reasoning(open=fence(THINK), close=fence(THINK_END), no_query="dropped")
    with pytest.raises(FormatError, match="no_query='dropped'"):
        declare(replace(_layout(), concepts=(reasoning,)))
