"""AnswerFence (:mod:`pawlette.declare.answer_fence`) on a tiny layout shaped as Command A's
and Solar Open's: an answer fenced, a turn of calls fenced otherwise and ended by its own
marker.  The writer, reading back (text and completions), the exported template under
transformers, and a declaration that cannot work.  The cross-artifact checks
(:mod:`.test_cross_artifacts`, the ``user-answered`` layout) hold the grammar and the rest."""

from __future__ import annotations

from typing import Any

import pytest

from pawlette.declare import (
    AnswerFence,
    CallTurnEnd,
    Frame,
    JsonCallList,
    Layout,
    Marker,
    declare,
    fence,
)
from pawlette.errors import FormatError
from pawlette.export import export_jinja

from .user_concepts import ANSWERED

CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}

CONVERSATION: list[dict[str, Any]] = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello."},
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "Sunny."},
    {"role": "assistant", "content": "It is sunny."},
]


def test_an_answer_is_fenced_and_a_turn_of_calls_is_not() -> None:
    fmt = declare(ANSWERED)
    assert fmt.render(CONVERSATION).text == (
        "<user>Hi<end>\n"
        "<assistant><text>Hello.</text><end>\n"
        "<user>Weather?<end>\n"
        '<assistant><action>[{"name": "f", "arguments": {"a": 1}}]</action><called>\n'
        "<tool>Sunny.<end>\n"
        "<assistant><text>It is sunny.</text><end>\n"
    )


def test_the_prompt_stops_at_the_opener_and_the_model_writes_the_fence() -> None:
    fmt = declare(ANSWERED)
    prompt = fmt.render(CONVERSATION[:1], add_generation_prompt=True).text
    assert prompt.endswith("<user>Hi<end>\n<assistant>")
    answer = fmt.parse("<text>Hello.</text><end>")
    assert answer.message == {"role": "assistant", "content": "Hello."}
    assert answer.finish_reason == "stop"
    called = fmt.parse('<action>[{"name": "f", "arguments": {"a": 1}}]</action><called>')
    assert called.finish_reason == "tool_calls"
    assert [item["function"]["name"] for item in called.message["tool_calls"]] == ["f"]


def test_the_conversation_reads_back_without_the_fences() -> None:
    fmt = declare(ANSWERED)
    parsed = fmt.parse_conversation(fmt.render(CONVERSATION).text)
    texts = [
        message.get("content") for message in parsed.messages if message["role"] == "assistant"
    ]
    assert not parsed.warnings
    assert texts == ["Hello.", None, "It is sunny."]


def test_the_exported_template_renders_alike_under_transformers() -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    fmt = declare(ANSWERED)
    template = export_jinja(fmt)
    messages = [
        {**message, "tool_calls": [{**CALL, "function": {"name": "f", "arguments": {"a": 1}}}]}
        if "tool_calls" in message
        else message
        for message in CONVERSATION
    ]
    rendered, _ = render_jinja_template([messages], chat_template=template)
    assert rendered[0] == fmt.render(CONVERSATION).text


def test_an_answer_fence_without_an_open_is_refused() -> None:
    frames = {
        role: Frame(open=fence(Marker(f"<{role}>")), end=fence(Marker("<end>")))
        for role in ("system", "user", "assistant", "tool")
    }
    with pytest.raises(FormatError, match=r"AnswerFence\.open: empty"):
        Layout(
            name="tiny-unfenced",
            summary="an answer fence with nothing to open it",
            frames=frames,
            concepts=(
                AnswerFence(open=(), close=fence(Marker("</text>"))),
                JsonCallList(open=fence(Marker("<action>")), close=fence(Marker("</action>"))),
                CallTurnEnd(end=()),
            ),
        )
