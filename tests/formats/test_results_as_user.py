"""Results a client sends as a user message (``<tool_response>...</tool_response>``): Qwen3's,
Qwen3.5's, StepFun 3.5's and MiniCPM5's templates take no such message as the last query when
they decide which assistant turns keep their reasoning (``Reasoning.not_query``).  Each case
is rendered by the real template, by the format and by the format's exported Jinja."""

from __future__ import annotations

from typing import Any

import pytest

import pawlette
from pawlette.declare import Reasoning, fence
from pawlette.errors import FormatError, RequestError
from pawlette.export import export_jinja

from ..declare.test_cross_artifacts import template_request
from ..support.template_compare import corpus_reference

# format, template, whether the template trims the text before its test (Qwen3.5)
FORMATS = [
    ("chatml", "Qwen-Qwen3-0.6B", False),
    ("chatml:qwen3.5", "Qwen3.5-4B", True),
    ("chatml:stepfun3.5", "StepFun3.5-Flash", False),
    ("minicpm", "openbmb-MiniCPM5-1B", False),
]

CALL = {
    "id": "call_0",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
RESULT = "<tool_response>\n3 C\n</tool_response>"


def _conversations(trimmed: bool) -> list[list[dict[str, Any]]]:
    answer = {"role": "assistant", "content": "Cold.", "reasoning_content": "It is cold."}
    called = {
        "role": "assistant",
        "content": "",
        "reasoning_content": "Look it up.",
        "tool_calls": [CALL],
    }
    conversations = [
        # The results come back as a user message: the call's turn keeps its reasoning.
        [{"role": "user", "content": "Weather?"}, called, {"role": "user", "content": RESULT}],
        [
            {"role": "user", "content": "Weather?"},
            called,
            {"role": "user", "content": RESULT},
            answer,
        ],
        # A later real question is the last query again.
        [
            {"role": "user", "content": "Weather?"},
            called,
            {"role": "user", "content": RESULT},
            answer,
            {"role": "user", "content": "Thanks. And tomorrow?"},
        ],
        # A text that only begins with the results' tag is a query.
        [
            {"role": "user", "content": "Weather?"},
            called,
            {"role": "user", "content": "<tool_response>\n3 C\n</tool_response> Thanks."},
            answer,
        ],
    ]
    if trimmed:  # Qwen3.5 trims the text before it tests it
        conversations.append(
            [
                {"role": "user", "content": "Weather?"},
                called,
                {"role": "user", "content": "  " + RESULT + "\n"},
                answer,
            ]
        )
    return conversations


def _renders(name: str, template: str, messages: list[dict[str, Any]], prompt: bool) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    fmt = pawlette.get_format(name)
    expected = corpus_reference(template).render(messages, [WEATHER], add_generation_prompt=prompt)
    assert expected.text is not None, expected.refusal
    request = {"messages": messages, "tools": [WEATHER]}
    found = fmt.render(request, add_generation_prompt=prompt).text
    assert found == expected.text
    exported, _ = render_jinja_template(
        [template_request(fmt, request)],
        tools=[WEATHER],
        chat_template=export_jinja(fmt),
        add_generation_prompt=prompt,
    )
    assert exported[0] == expected.text


@pytest.mark.parametrize(("name", "template", "trimmed"), FORMATS, ids=str)
def test_results_sent_as_a_user_message_are_not_the_last_query(
    name: str, template: str, trimmed: bool
) -> None:
    for messages in _conversations(trimmed):
        for prompt in (False, True) if messages[-1]["role"] == "user" else (False,):
            _renders(name, template, messages, prompt)


@pytest.mark.parametrize(("name", "template", "trimmed"), FORMATS, ids=str)
def test_the_call_turn_keeps_its_reasoning_before_results_sent_as_user(
    name: str, template: str, trimmed: bool
) -> None:
    messages = _conversations(trimmed)[1]
    rendering = pawlette.get_format(name).render({"messages": messages, "tools": [WEATHER]})
    assert "Look it up." in rendering.text
    assert not any("reasoning_content" in loss for loss in rendering.losses)


@pytest.mark.parametrize(("name", "template", "trimmed"), FORMATS, ids=str)
def test_only_results_as_user_messages_is_a_conversation_without_a_query(
    name: str, template: str, trimmed: bool
) -> None:
    messages = [
        {"role": "user", "content": RESULT},
        {"role": "assistant", "content": "Cold.", "reasoning_content": "It is cold."},
    ]
    expected = corpus_reference(template).render(messages, [WEATHER], add_generation_prompt=False)
    fmt = pawlette.get_format(name)
    request = {"messages": messages, "tools": [WEATHER]}
    if expected.text is None:  # Qwen3.5: "No user query found in messages."
        with pytest.raises(RequestError, match="no user message"):
            fmt.render(request)
        return
    rendering = fmt.render(request)
    assert rendering.text == expected.text
    assert "It is cold." not in rendering.text
    assert any("messages[1].reasoning_content" in loss for loss in rendering.losses)


@pytest.mark.parametrize(
    "fields",
    [
        {"not_query": ("<tool_response>", "")},
        {"not_query": ("<tool_response>",)},
        {"not_query": ("<tool_response>", "</tool_response>"), "keep": "all"},
        {"not_query_trimmed": True, "keep": "after_last_query"},
    ],
    ids=str,
)
def test_a_bad_not_query_is_refused(fields: dict[str, Any]) -> None:
    from pawlette.declare import Frame, Layout, Marker

    reasoning = Reasoning(open=fence(Marker("<think>")), close=fence(Marker("</think>")), **fields)
    frames = {
        role: Frame(open=fence(Marker(f"<{role}>")), end=fence(Marker("<end>")))
        for role in ("system", "user", "assistant", "tool")
    }
    with pytest.raises(FormatError, match="not_query"):
        Layout(name="probe", summary="a bad not_query", frames=frames, concepts=(reasoning,))
