"""The OpenAI edge: accepted shapes and errors that name the JSON path."""

from __future__ import annotations

from typing import Any

import pytest

from pawlette import RequestError
from pawlette.openai import conversation_from_openai, conversation_to_openai

from .helpers import canonical


def error_of(data: Any) -> str:
    with pytest.raises(RequestError) as caught:
        conversation_from_openai(data)
    return str(caught.value)


def test_arguments_must_be_a_json_string() -> None:
    message = {
        "role": "assistant",
        "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": {}}}],
    }
    assert error_of([{"role": "user", "content": "x"}, message]).startswith(
        "messages[1].tool_calls[0].function.arguments: found an object; expected a JSON object "
        "as text. OpenAI sends arguments as a string"
    )


def test_invalid_json_arguments_are_named() -> None:
    message = {
        "role": "assistant",
        "tool_calls": [{"id": "1", "function": {"name": "f", "arguments": "{nope"}}],
    }
    assert error_of([message]).startswith(
        "messages[0].tool_calls[0].function.arguments: not valid JSON"
    )


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"model": "x"}, "request: no 'messages' key"),
        ([{"role": "robot", "content": "x"}], "messages[0].role: found 'robot'"),
        ([{"role": "user", "content": [{"type": "audio"}]}], "messages[0].content[0].type"),
        ([{"role": "user", "content": "x", "colour": "red"}], "messages[0].colour: an unknown key"),
        ([{"role": "user", "content": "x", "tool_call_id": "1"}], "messages[0].tool_call_id"),
        ([{"role": "user", "content": "x", "weight": 2}], "messages[0].weight: found 2"),
        (
            {"messages": [], "tools": [{"type": "function", "function": {}}]},
            "tools[0].function.name",
        ),
    ],
)
def test_errors_name_the_path(data: Any, expected: str) -> None:
    assert error_of(data).startswith(expected)


def test_echoed_null_fields_are_accepted() -> None:
    message = {"role": "assistant", "content": "hi", "refusal": None, "audio": None}
    messages, _ = conversation_from_openai([message])
    assert messages[0].text == "hi"


def test_text_parts_merge_and_extensions_round_trip() -> None:
    request = {
        "messages": [
            {
                "role": "developer",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "u", "width": 4, "height": 3}},
                    {"type": "voice", "voice": {"text": "hi", "prosody": {"speed": 1.2}}},
                    {"type": "bbox", "bbox": {"boxes": [[0, 0, 500, 500]]}},
                ],
            },
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": " {} "}}
                ],
            },
        ]
    }
    result = canonical(request)
    assert result["messages"][0] == {"role": "system", "content": "ab"}
    assert result["messages"][1]["content"] == request["messages"][1]["content"]
    assert result["messages"][2]["content"] is None
    assert result["messages"][2]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert canonical(result) == result
    assert conversation_to_openai(*conversation_from_openai(result)) == result
