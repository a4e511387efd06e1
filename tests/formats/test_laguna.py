"""Poolside Laguna's formats (:mod:`pawlette.formats.laguna`): what the models write, read as
the peers read it (vLLM's ``poolside_v1`` tool parser tests, carried over as data in
``families/data/laguna.json`` with the parameter types of the peers' test tools), what the
declaration decided, the variants against their templates, and token ids with a tokenizer
holding Laguna's markers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pawlette

from ..support.conversations import generate_conversations
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import compare_renders, corpus_reference, own_turns, strip_text

CASES = json.loads((Path(__file__).parent / "families" / "data" / "laguna.json").read_text())
EOS = "〈|EOS|〉"
PROMPTS = {  # each variant's generation prompt, what its completions follow
    "laguna": "<assistant>\n</think>",
    "laguna:xs.2-thinking": "<assistant>\n<think>",
    "laguna:s-2.1": "<assistant><think>",
    "laguna:s-2.1-no-thinking": "<assistant></think>",
}


def _tools(properties_by_name: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": name, "parameters": {"type": "object", "properties": props}},
        }
        for name, props in properties_by_name.items()
    ]


def _calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (call["function"]["name"], json.loads(call["function"]["arguments"]))
        for call in message.get("tool_calls") or []
    ]


def _parse(name: str, case: dict[str, Any]) -> Any:
    fmt = pawlette.get_format(name)
    return fmt.parse(case["output"], tools=_tools(case["tools"]), prompt=PROMPTS[name])


def _decided(decision: str) -> list[dict[str, Any]]:
    return [case for case in CASES if case["pawlette"] == decision]


def _case_id(case: dict[str, Any]) -> str:
    return case["source"].rpartition("#")[2][:60]


@pytest.mark.parametrize("name", ["laguna", "laguna:s-2.1-no-thinking"])
@pytest.mark.parametrize("case", _decided("read"), ids=_case_id)
def test_what_the_models_write_reads_as_vllm_reads_it(case: dict[str, Any], name: str) -> None:
    parsed = _parse(name, case)
    message, expected = parsed.message, case["expected"]
    assert (message.get("content") or None) == expected["content"]
    assert (message.get("reasoning_content") or None) == expected["reasoning_content"]
    assert _calls(message) == [(call["name"], call["arguments"]) for call in expected["tool_calls"]]
    assert not parsed.warnings


@pytest.mark.parametrize("case", _decided("no-name-stays-text"), ids=_case_id)
def test_a_call_without_a_name_stays_text_with_a_warning(case: dict[str, Any]) -> None:
    """vLLM returns no call for ``<tool_call>   </tool_call>`` (and drops nothing else);
    pawlette neither, keeping what the model wrote as content, with a warning."""
    parsed = _parse("laguna", case)
    assert not parsed.message.get("tool_calls")
    assert parsed.message["content"] == case["output"]
    assert parsed.warnings


@pytest.mark.parametrize("case", _decided("unknown-tool-stays-text"), ids=_case_id)
def test_a_call_to_an_undeclared_name_stays_text_with_a_warning(case: dict[str, Any]) -> None:
    """Decided: vLLM returns a call to ``get weather`` (trimmed), a tool the request does not
    declare; pawlette keeps it as the text the model wrote and warns (as for GLM)."""
    parsed = _parse("laguna", case)
    assert not parsed.message.get("tool_calls")
    assert parsed.message["content"] == case["output"]
    assert any("get weather" in str(warning) for warning in parsed.warnings)


def test_every_peer_case_is_read_or_decided() -> None:
    assert {case["pawlette"] for case in CASES} == {
        "read",
        "no-name-stays-text",
        "unknown-tool-stays-text",
    }


# ------------------------------------------------------------------ the wire format

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather forecast.",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["location"],
        },
    },
}
TOOL_LINE = json.dumps(WEATHER, ensure_ascii=False)
REQUEST: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "You are terse.  "},
        {"role": "user", "content": "Weather in Zürich? <user> is text here."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call0",
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": json.dumps({"location": "Zürich", "days": 2}),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call0", "content": '{"temp_c": 3}'},
        {"role": "assistant", "content": " 3 °C.\n", "reasoning_content": " It is cold."},
    ],
    "tools": [WEATHER],
}
TOOLS = (
    "### Tools\n\nYou may call functions to assist with the user query.\nAll available "
    f"function signatures are listed below:\n<available_tools>\n{TOOL_LINE}\n</available_tools>"
)
WRITTEN_XS = (
    f"{EOS}<system>\n\nYou are terse.\n\n{TOOLS}\n\nFor each function call, return an unescaped"
    " XML-like object with function name and arguments within '<tool_call>' and '</tool_call>'"
    " tags, like here:\n<tool_call>function-name\n<arg_key>argument-key</arg_key>\n"
    "<arg_value>value-of-argument-key</arg_value>\n</tool_call>\n</system>\n"
    "<user>\nWeather in Zürich? <user> is text here.\n</user>\n<assistant>\n</think>\n"
    "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Zürich</arg_value>\n"
    "<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>\n</assistant>\n"
    '<tool_response>\n{"temp_c": 3}\n</tool_response>\n'
    "<assistant>\n<think>\nIt is cold.\n</think>\n3 °C.\n</assistant>\n"
)
WRITTEN_S = (
    f"{EOS}<system>You are terse.\n\n{TOOLS}</system>\n"
    "<user>Weather in Zürich? <user> is text here.</user>\n<assistant><think></think>"
    "<tool_call>get_weather<arg_key>location</arg_key><arg_value>Zürich</arg_value>"
    "<arg_key>days</arg_key><arg_value>2</arg_value></tool_call></assistant>\n"
    '<tool_response>{"temp_c": 3}</tool_response>\n'
    "<assistant><think> It is cold.</think> 3 °C.\n</assistant>\n"
)


def test_the_wire_format_of_both_layouts_and_what_they_trim() -> None:
    xs = pawlette.get_format("laguna").render(REQUEST)
    assert xs.text == WRITTEN_XS
    assert {str(loss).partition(":")[0] for loss in xs.losses} >= {
        "messages[0].content",
        "messages[4].content",
        "messages[4].reasoning_content",
    }
    s = pawlette.get_format("laguna:s-2.1").render(REQUEST)
    assert s.text == WRITTEN_S
    assert "messages[4].content" not in {str(loss).partition(":")[0] for loss in s.losses}


def test_the_system_turn_follows_the_default_and_the_first_message() -> None:
    user = [{"role": "user", "content": "Hi"}]
    render = {
        name: pawlette.get_format(name).render(messages, add_generation_prompt=True).text
        for name, messages in (
            ("laguna", user),
            ("laguna:xs-2.1", user),
            ("laguna:s-2.1-no-thinking", [{"role": "system", "content": ""}, *user]),
            ("laguna:s-2.1", [{"role": "system", "content": ""}, *user]),
        )
    }
    assert render["laguna"].startswith(f"{EOS}<system>\n\nYou are a helpful, conversationally")
    assert render["laguna:xs-2.1"] == f"{EOS}<user>\nHi\n</user>\n<assistant>\n</think>"
    # An empty first system message stands in for the default: no turn, or an empty one.
    assert render["laguna:s-2.1-no-thinking"] == f"{EOS}<user>Hi</user>\n<assistant></think>"
    assert render["laguna:s-2.1"] == f"{EOS}<system></system>\n<user>Hi</user>\n<assistant><think>"


def test_the_model_ends_its_turn_with_the_assistant_close() -> None:
    for name, answer, stop in (
        ("laguna", "\n3 °C.", "\n</assistant>"),
        ("laguna:xs.2-thinking", "\nR\n</think>\n3 °C.", "\n</assistant>"),
        ("laguna:s-2.1", "R</think>3 °C.", "</assistant>"),
    ):
        fmt = pawlette.get_format(name)
        assert fmt.stop == (stop,)
        parsed = fmt.parse(answer + stop, prompt=PROMPTS[name])
        expected: dict[str, Any] = {"role": "assistant", "content": "3 °C."}
        if "R" in answer:
            expected["reasoning_content"] = "R"
        assert parsed.message == expected
        assert not parsed.warnings


def test_a_conversation_parses_back_whole() -> None:
    for name, written in (("laguna", WRITTEN_XS), ("laguna:s-2.1", WRITTEN_S)):
        # (From text, a marker spelled in a message is read as the marker: none here.)
        written = written.replace(" <user> is text here.", "")
        parsed = pawlette.get_format(name).parse_conversation(written, strict=True)
        messages = parsed.to_request()["messages"]
        assert [message["role"] for message in messages] == [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
        assert messages[0]["content"] == "You are terse."
        assert messages[4]["content"].strip() == "3 °C."
        assert messages[4]["reasoning_content"].strip() == "It is cold."
        assert _calls(messages[2]) == [("get_weather", {"location": "Zürich", "days": 2})]


def test_both_call_layouts_are_read_by_every_variant() -> None:
    newlines = (
        "\n<tool_call>get_weather\n<arg_key>location</arg_key>\n"
        "<arg_value>Oslo</arg_value>\n</tool_call>"
    )
    compact = (
        "<tool_call>get_weather<arg_key>location</arg_key><arg_value>Oslo</arg_value></tool_call>"
    )
    for name in ("laguna", "laguna:s-2.1-no-thinking"):
        for text in (newlines, compact):
            fmt = pawlette.get_format(name)
            parsed = fmt.parse(text, tools=[WEATHER], prompt=PROMPTS[name])
            assert _calls(parsed.message) == [("get_weather", {"location": "Oslo"})], (name, text)


# ------------------------------------------------------------------ the variants


@pytest.mark.parametrize(
    ("name", "template", "switches"),
    [
        ("laguna", "poolside-Laguna-XS.2", {}),  # turns with reasoning too
        ("laguna:xs.2-thinking", "poolside-Laguna-XS.2", {"reasoning_always": True}),
        ("laguna:xs-2.1-thinking", "poolside-Laguna-XS-2.1", {"reasoning_always": True}),
        ("laguna:s-2.1-no-thinking", "poolside-Laguna-S-2.1", {"reasoning": False}),
    ],
)
def test_the_variants_render_and_parse_back_as_their_templates(
    name: str, template: str, switches: dict[str, Any]
) -> None:
    """The variables of each template the shared family cases do not cover (thinking on for
    Laguna XS, off for Laguna S; Laguna XS's turns with reasoning)."""
    fmt = pawlette.get_format(name)
    reference = corpus_reference(template, variables=fmt.declaration.reference_variables())
    conversations = generate_conversations(10, seed=1, avoid=fmt.special_markers, **switches)
    report = compare_renders(fmt, reference, conversations)
    assert report.agrees, report.describe()
    if switches:
        turns = own_turns(fmt, reference, conversations, normalise=strip_text)
        assert turns.agrees, turns.describe()


# ------------------------------------------------------------------ token ids


def test_ids_keep_user_text_out_of_the_markers() -> None:
    fmt = pawlette.get_format("laguna")
    tokenizer = small_tokenizer(fmt.special_markers)
    result = pawlette.tokenize(fmt, tokenizer, REQUEST)
    ids = list(result.input_ids)
    assert ids.count(tokenizer.token_to_id("<user>")) == 1  # the opener, not the text
    assert tokenizer.decode(ids, skip_special_tokens=False) == WRITTEN_XS
    for marker in ("<tool_call>", "<arg_key>", "</arg_value>", "</think>", "</assistant>"):
        assert tokenizer.token_to_id(marker) in ids
