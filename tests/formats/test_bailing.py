"""Ling 3.0's format (:mod:`pawlette.formats.bailing`): what the model writes, read as llama.cpp
reads it (its parser tests, carried over as data in ``families/data/bailing.json``, each with its
source and the parameter types of the test tools the case needs), the wire format, and the
thinking line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pawlette

CASES = json.loads((Path(__file__).parent / "families" / "data" / "bailing.json").read_text())
READ = [case for case in CASES if case["pawlette"] == "read"]
PROMPTS = {
    True: "<role>ASSISTANT</role>\n<think>",
    False: "<role>ASSISTANT</role>\n<think></think>",
}


def _tools(case: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": name, "parameters": {"type": "object", "properties": schema}},
        }
        for name, schema in case["tools"].items()
    ]


def _calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (call["function"]["name"], json.loads(call["function"]["arguments"]))
        for call in message.get("tool_calls") or []
    ]


def _text(value: str | None) -> str | None:
    return (value or "").strip() or None


@pytest.mark.parametrize("case", READ, ids=lambda case: case["output"][:40])
def test_what_the_model_writes_reads_as_llama_cpp_reads_it(case: dict[str, Any]) -> None:
    """Compared without the whitespace at the texts' ends: pawlette reads the newline before
    ``<tool_call>`` as the call's fence (the format writes it so) and keeps the one a model
    writes after ``</think>`` (the template writes none there), where llama.cpp keeps the
    first and drops the second."""
    fmt = pawlette.get_format("bailing")
    prompt = PROMPTS[case["prompt_opened_reasoning"]]
    message = fmt.parse(case["output"], tools=_tools(case), prompt=prompt).message
    expected = case["expected"]
    assert _text(message.get("content")) == _text(expected["content"])
    assert _text(message.get("reasoning_content")) == _text(expected["reasoning_content"])
    assert _calls(message) == [(call["name"], call["arguments"]) for call in expected["tool_calls"]]


def test_every_peer_case_is_read_or_decided() -> None:
    # continue-final-message: llama.cpp's prefill continuation, not a completion of a prompt;
    # reasoning-format-none: llama.cpp's option to leave reasoning in content (pawlette always
    # separates it).
    assert {case["pawlette"] for case in CASES} <= {
        "read",
        "continue-final-message",
        "reasoning-format-none",
    }
    assert len(READ) >= 15


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        },
    },
}
CALL = {
    "id": "a",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Zürich", "days": 2}'},
}


def test_the_wire_format() -> None:
    request = {
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Weather in Zürich?"},
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": "\nLook it up.\n",
                "tool_calls": [CALL, {**CALL, "id": "b"}],
            },
            {"role": "tool", "tool_call_id": "a", "content": '{"temp_c": 3}'},
            {"role": "tool", "tool_call_id": "b", "content": '{"temp_c": 3}'},
            {"role": "assistant", "content": "3 °C."},
        ],
    }
    text = pawlette.get_format("bailing").render(request).text
    assert text == (
        "<role>SYSTEM</role>You are terse.\ndetailed thinking on<|role_end|>"
        "<role>HUMAN</role>Weather in Zürich?<|role_end|><role>ASSISTANT</role>\n"
        "<think>Look it up.</think><tool_call>get_weather\n<arg_key>city</arg_key>\n"
        "<arg_value>Zürich</arg_value><arg_key>days</arg_key>\n<arg_value>2</arg_value>\n"
        "</tool_call>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Zürich"
        "</arg_value><arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call><|role_end|>"
        '<role>OBSERVATION</role>\n<tool_response>\n{"temp_c": 3}\n</tool_response>\n'
        '<tool_response>\n{"temp_c": 3}\n</tool_response><|role_end|><role>ASSISTANT</role>\n'
        "<think></think>3 °C.<|role_end|>"
    )


def test_the_thinking_line_is_layout() -> None:
    for name, line in (("bailing", "on"), ("bailing:no-thinking", "off")):
        fmt = pawlette.get_format(name)
        for messages, tools, written in (
            ([{"role": "user", "content": "Hi"}], None, f"detailed thinking {line}"),
            (
                [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
                None,
                f"Be brief.\ndetailed thinking {line}",
            ),
            # A system text that says it already gets no line of the format's.
            (
                [
                    {"role": "system", "content": "Be brief; detailed thinking off"},
                    {"role": "user", "content": "Hi"},
                ],
                None,
                "Be brief; detailed thinking off",
            ),
        ):
            text = fmt.render(messages, tools, add_generation_prompt=True).text
            assert text.startswith(f"<role>SYSTEM</role>{written}<|role_end|>"), text
            parsed = fmt.parse_conversation(text, strict=True).to_request()["messages"]
            assert parsed[: len(messages)] == messages
        with_tools = fmt.render([{"role": "user", "content": "Hi"}], [WEATHER]).text
        assert f"</tool_call>\ndetailed thinking {line}<|role_end|>" in with_tools
        parsed = fmt.parse_conversation(with_tools, strict=True).to_request()["messages"]
        assert parsed == [{"role": "user", "content": "Hi"}]


def test_the_prompt_follows_the_thinking_switch() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    on = pawlette.get_format("bailing").render(messages, add_generation_prompt=True).text
    off = pawlette.get_format("bailing:no-thinking")
    assert on.endswith("<role>ASSISTANT</role>\n<think>")
    prompt = off.render(messages, add_generation_prompt=True).text
    assert prompt.endswith("<role>ASSISTANT</role>\n<think></think>")
    assert off.parse("Hello.<|role_end|>", prompt=prompt).message["content"] == "Hello."
