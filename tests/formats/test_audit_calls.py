"""What a served model's calls must hold on the next turn, found by an outside audit of
``pawlette serve`` in front of a real llama.cpp (each test names the family it was seen in).

A call the parser returns, or a forced grammar lets the model write, is sent back by the
client on its next turn; the same format must render it, under the ids the client got."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pawlette

from ..export.test_grammar import SYNTAXES, M, accepts, export_grammar, turn_ids

USER = {"role": "user", "content": "Weather in Paris?"}


def _next_turn(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation a client sends after getting ``message``: it, and a result per call."""
    answer = {key: value for key, value in message.items() if value is not None}
    results = [
        {"role": "tool", "tool_call_id": call["id"], "content": "sunny"}
        for call in message["tool_calls"]
    ]
    return [USER, answer, *results]


@pytest.mark.parametrize(
    ("name", "completion"),
    [
        ("mistral", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'),
        ("mistral:nemo", '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]'),
    ],
)
def test_a_minted_call_id_is_one_the_format_renders(name: str, completion: str) -> None:
    fmt = pawlette.get_format(name)
    message = fmt.parse(completion, strict=True).message
    assert message["tool_calls"][0]["function"]["name"] == "get_weather"
    fmt.render({"messages": _next_turn(message)}, add_generation_prompt=True)


WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_mistral_forced_call_ids_match_the_id_pattern(syntax: str) -> None:
    grammar = export_grammar("mistral", WEATHER, tool_choice="required", syntax=syntax)

    def call(call_id: str) -> list[str]:
        return [M("[TOOL_CALLS]"), "get_weather", M("[CALL_ID]"), call_id, M("[ARGS]"), "{}"]

    # The id the format writes passes (the test can fail only on the refused one).
    assert accepts("mistral", grammar, syntax, turn_ids("mistral", call("abcDEF123")))
    assert not accepts("mistral", grammar, syntax, turn_ids("mistral", call('"x"')))


NO_PARAMETERS = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
"""A function without arguments, as OpenAI's guide writes one (``parameters: {}``)."""

STRING_ARGUMENTS = {
    "deepseek": [
        M("<｜tool▁calls▁begin｜>"),
        M("<｜tool▁call▁begin｜>"),
        "f",
        M("<｜tool▁sep｜>"),
        '"x"',
        M("<｜tool▁call▁end｜>"),
        M("<｜tool▁calls▁end｜>"),
    ],
    "kimi": [
        M("<|tool_calls_section_begin|>"),
        M("<|tool_call_begin|>"),
        "functions.f:0",
        M("<|tool_call_argument_begin|>"),
        '"x"',
        M("<|tool_call_end|>"),
        M("<|tool_calls_section_end|>"),
    ],
    "harmony": [" to=functions.f", M("<|channel|>"), "commentary json", M("<|message|>"), '"x"'],
    "mistral": [M("[TOOL_CALLS]"), "f", M("[CALL_ID]"), "abcDEF123", M("[ARGS]"), '"x"'],
}


@pytest.mark.parametrize("syntax", SYNTAXES)
@pytest.mark.parametrize("name", sorted(STRING_ARGUMENTS))
def test_arguments_of_a_tool_without_parameters_are_an_object(name: str, syntax: str) -> None:
    grammar = export_grammar(name, NO_PARAMETERS, tool_choice="required", syntax=syntax)
    string_call = STRING_ARGUMENTS[name]
    object_call = [piece if piece != '"x"' else "{}" for piece in string_call]
    assert accepts(name, grammar, syntax, turn_ids(name, object_call))
    assert not accepts(name, grammar, syntax, turn_ids(name, string_call))


def _kimi_call(index: int) -> list[str]:
    return [
        M("<|tool_call_begin|>"),
        f"functions.get_weather:{index}",
        M("<|tool_call_argument_begin|>"),
        "{}",
        M("<|tool_call_end|>"),
    ]


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_kimi_forced_calls_of_one_answer_are_served_under_distinct_ids(syntax: str) -> None:
    """A grammar cannot count a turn's calls, so a forced answer may repeat a label (a real
    llama.cpp wrote 'functions.get_time:0' twice); the parser serves the second under the
    next free label, with a warning, so the client can answer both."""
    grammar = export_grammar("kimi", WEATHER, tool_choice="required", syntax=syntax)
    section = [M("<|tool_calls_section_begin|>"), M("<|tool_calls_section_end|>")]
    repeated = [section[0], *_kimi_call(0), *_kimi_call(0), section[1]]
    assert accepts("kimi", grammar, syntax, turn_ids("kimi", repeated))
    completion = pawlette.get_format("kimi").parse("".join(repeated))  # (markers as text)
    ids = [call["id"] for call in completion.message["tool_calls"]]
    assert ids == ["functions.get_weather:0", "functions.get_weather:1"]
    assert [warning.message for warning in completion.warnings if "held by" in warning.message]


def test_harmony_renders_only_names_it_reads_back() -> None:
    fmt = pawlette.get_format("harmony")
    call = {"id": "c1", "type": "function", "function": {"name": "get weather", "arguments": "{}"}}
    request = {
        "messages": [USER, {"role": "assistant", "content": None, "tool_calls": [call]}],
        "tools": [{"type": "function", "function": {"name": "get weather", "parameters": {}}}],
    }
    try:
        text = fmt.render(request).text
    except pawlette.RequestError:
        return  # refused with its path: the documented alternative
    back = fmt.parse_conversation(text).to_request()["messages"][-1]
    assert json.dumps(back.get("tool_calls")) != "null"
    assert back["tool_calls"][0]["function"]["name"] == "get weather"
