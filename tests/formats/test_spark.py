"""Spark2.5's format (:mod:`pawlette.formats.spark`): what the model writes, read as the peers
read it (llama.cpp's Spark2.5 parser tests, carried over as data in ``families/data/spark.json``
with the parameter types of the peers' test tools the case needs), what the declaration
decided, the no-thinking variant against the template, and token ids with a tokenizer holding
Spark's markers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pawlette

from ..support.conversations import generate_conversations
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import compare_renders, corpus_reference, own_turns

CASES = json.loads((Path(__file__).parent / "families" / "data" / "spark.json").read_text())
START, END = "<｜start▁of▁sentence｜>", "<｜end▁of▁sentence｜>"


def _tools(properties_by_name: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "parameters": {"type": "object", "properties": properties},
            },
        }
        for name, properties in properties_by_name.items()
    ]


def _calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (call["function"]["name"], json.loads(call["function"]["arguments"]))
        for call in message.get("tool_calls") or []
    ]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["output"][:40])
def test_what_the_model_writes_reads_as_llama_cpp_reads_it(case: dict[str, Any]) -> None:
    assert case["pawlette"] == "read"
    fmt = pawlette.get_format(case["format"])
    prompt = START + "<|Bot|>" + ("<think>" if case["prompt_opened_reasoning"] else "</think>")
    parsed = fmt.parse(case["output"], tools=_tools(case["tools"]), prompt=prompt)
    message, expected = parsed.message, case["expected"]
    assert (message.get("content") or None) == (expected["content"] or None)
    assert (message.get("reasoning_content") or None) == (expected["reasoning_content"] or None)
    assert _calls(message) == [(call["name"], call["arguments"]) for call in expected["tool_calls"]]
    assert not parsed.warnings


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


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "call0",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


REQUEST: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Zürich? <|User|> is text here."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("get_weather", {"location": "Zürich", "days": 2})],
        },
        {"role": "tool", "tool_call_id": "call0", "content": '{"temp_c": 3}'},
        {"role": "assistant", "content": " 3 °C.\n", "reasoning_content": " It is cold."},
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Thanks."},
    ],
    "tools": [WEATHER],
}
WRITTEN = (
    f"{START}<|System|>\nyou are a helpful assistant.## Tools\nYou have access to the following"
    f" functions:\n<tools>\n{json.dumps(WEATHER['function'], ensure_ascii=False)}\n</tools>"
    f"\n\nYou are terse.{END}{START}<|User|>Weather in Zürich? <|User|> is text here.{END}"
    f"{START}<|Bot|></think><tool_call>get_weather<arg_key>location</arg_key><arg_value>Zürich"
    f"</arg_value><arg_key>days</arg_key><arg_value>2</arg_value></tool_call>{END}"
    f'{START}<|Tool|><tool_response>{{"temp_c": 3}}</tool_response>{END}'
    f"{START}<|Bot|><think> It is cold.</think> 3 °C.\n{END}"
    f"{START}<|System|>\nBe brief.{END}{START}<|User|>Thanks.{END}"
)


def test_the_wire_format_keeps_every_text_as_given() -> None:
    rendering = pawlette.get_format("spark").render(REQUEST, add_generation_prompt=True)
    assert rendering.text == WRITTEN + f"{START}<|Bot|><think>"
    assert not [loss for loss in rendering.losses if "content" in str(loss)]


def test_without_a_system_message_the_default_turn_is_written() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    for name, prompt in (("spark", "<think>"), ("spark:no-thinking", "</think>")):
        written = pawlette.get_format(name).render(messages, add_generation_prompt=True).text
        assert written == (
            f"{START}<|System|>\nyou are a helpful assistant.{END}{START}<|User|>Hi{END}"
            f"{START}<|Bot|>{prompt}"
        )


def test_a_conversation_parses_back_whole() -> None:
    written = WRITTEN.replace(" <|User|> is text here.", "")
    parsed = pawlette.get_format("spark").parse_conversation(written, strict=True)
    messages = parsed.to_request()["messages"]
    assert [message["role"] for message in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "system",
        "user",
    ]
    assert messages[0]["content"] == "You are terse."
    assert messages[4]["content"] == " 3 °C.\n"
    assert messages[4]["reasoning_content"] == " It is cold."
    assert messages[5]["content"] == "Be brief."
    assert _calls(messages[2]) == [("get_weather", {"location": "Zürich", "days": 2})]


def test_the_model_ends_its_turn_with_the_end_of_sentence() -> None:
    fmt = pawlette.get_format("spark")
    assert fmt.stop == (END,)
    parsed = fmt.parse(f"R</think>3 °C.{END}", prompt=f"{START}<|Bot|><think>")
    assert parsed.message == {"role": "assistant", "content": "3 °C.", "reasoning_content": "R"}
    assert not parsed.warnings


def test_a_call_in_glm_46s_layout_is_read_too() -> None:
    text = (
        "\n<tool_call>get_weather\n<arg_key>location</arg_key>\n"
        "<arg_value>Oslo</arg_value>\n</tool_call>"
    )
    parsed = pawlette.get_format("spark:no-thinking").parse(
        text, tools=[WEATHER], prompt=f"{START}<|Bot|></think>"
    )
    assert _calls(parsed.message) == [("get_weather", {"location": "Oslo"})]


def test_a_call_inside_an_unclosed_block_ends_the_reasoning() -> None:
    text = (
        "Let me look.<tool_call>get_weather<arg_key>location</arg_key>"
        "<arg_value>Oslo</arg_value></tool_call>"
    )
    parsed = pawlette.get_format("spark").parse(
        text, tools=[WEATHER], prompt=f"{START}<|Bot|><think>"
    )
    assert parsed.message["reasoning_content"] == "Let me look."
    assert _calls(parsed.message) == [("get_weather", {"location": "Oslo"})]


def test_arguments_that_are_no_object_are_refused() -> None:
    call = {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": "[1]"}}
    request = {
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
        ],
        "tools": [WEATHER],
    }
    with pytest.raises(pawlette.RequestError, match=r"messages\[1\]\.tool_calls\[0\]"):
        pawlette.get_format("spark").render(request)


def test_the_no_thinking_variant_renders_and_parses_back_as_its_template() -> None:
    fmt = pawlette.get_format("spark:no-thinking")
    reference = corpus_reference("Spark2.5", variables=fmt.declaration.reference_variables())
    conversations = generate_conversations(10, seed=1, avoid=fmt.special_markers, reasoning=False)
    report = compare_renders(fmt, reference, conversations)
    assert report.agrees, report.describe()
    turns = own_turns(fmt, reference, conversations)
    assert turns.agrees, turns.describe()


def test_ids_keep_user_text_out_of_the_markers() -> None:
    fmt = pawlette.get_format("spark")
    tokenizer = small_tokenizer(fmt.special_markers)
    result = pawlette.tokenize(fmt, tokenizer, REQUEST)
    ids = list(result.input_ids)
    assert ids.count(tokenizer.token_to_id("<|User|>")) == 2  # the two openers, not the text
    assert tokenizer.decode(ids, skip_special_tokens=False) == WRITTEN
    for marker in ("<tool_call>", "<arg_key>", "</arg_value>", "</think>", END):
        assert tokenizer.token_to_id(marker) in ids
