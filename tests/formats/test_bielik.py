"""Bielik 11B v3 (:mod:`pawlette.formats.bielik`): what the model writes, read as vLLM's
``hermes`` tool parser reads ``<tool_call>`` JSON (its cases in
``tests/tool_parsers/test_hermes_tool_parser.py``) and as vLLM's ``deepseek_r1``-style
``<think>`` reasoning parsers read a block, whole, streamed and from token ids (a tokenizer
built with the format's special tokens); the template's layouts the declaration decided on;
ids and masks."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pawlette
from pawlette.tokenization.encoder import IGNORE_INDEX

from ..declared.model_output import check_every_way
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import corpus_reference

BIELIK = pawlette.get_format("bielik")
TEMPLATE = "Bielik-11B-v3.0-Instruct"
TOKENIZER = small_tokenizer(BIELIK.special_markers)
ANSWER = '{"name": "final_answer", "arguments": {"trigger": true}}'
DALLAS = '{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX"}}'
CALL_ANSWER = ("final_answer", {"trigger": True})
CALL_DALLAS = ("get_current_weather", {"city": "Dallas", "state": "TX"})

AS_THE_PEERS = [
    ("This is some prior text that has nothing to do with tool calling.", None, []),
    # vLLM's hermes cases: a call with its newlines, without them, two in a row, after text.
    ("<tool_call>\n" + ANSWER + "\n</tool_call>", None, [CALL_ANSWER]),
    ("<tool_call>" + ANSWER + "</tool_call>", None, [CALL_ANSWER]),
    (
        "<tool_call>" + ANSWER + "</tool_call><tool_call>" + DALLAS + "</tool_call>",
        None,
        [CALL_ANSWER, CALL_DALLAS],
    ),
    # vLLM: a whole call whose close the engine cut as a stop string is a call.
    ("<tool_call>\n" + DALLAS, None, [CALL_DALLAS]),
    # What the template writes: a newline before each call, then the end of the turn.
    (
        "\n<tool_call>\n" + DALLAS + "\n</tool_call>\n<tool_call>\n" + ANSWER + "\n</tool_call>"
        "<|im_end|>",
        None,
        [CALL_DALLAS, CALL_ANSWER],
    ),
    # The reasoning parsers read a block with or without the template's newlines.
    (
        "<think>\nLet me see.\n</think>\n" + "\n<tool_call>\n" + DALLAS + "\n</tool_call>",
        "Let me see.",
        [CALL_DALLAS],
    ),
    ("<think>Let me see.</think>", "Let me see.", []),
]


def _reading(text: str) -> tuple[Any, ...]:
    messages, _, warnings = check_every_way(BIELIK, TOKENIZER, text)
    (message,) = messages
    calls = [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    return message.reasoning or None, calls, warnings


@pytest.mark.parametrize(("text", "reasoning", "calls"), AS_THE_PEERS)
def test_what_the_model_writes_reads_as_the_peers_read_it(
    text: str, reasoning: str | None, calls: list[Any]
) -> None:
    assert _reading(text) == (reasoning, calls, [])


def test_text_before_the_calls_is_content() -> None:
    messages, _, warnings = check_every_way(
        BIELIK, TOKENIZER, "Sprawdzam.\n<tool_call>\n" + DALLAS + "\n</tool_call>"
    )
    assert (messages[0].text, warnings) == ("Sprawdzam.", [])


def test_a_call_that_is_no_json_object_is_content_with_a_warning() -> None:
    # vLLM's hermes parser then returns the whole output as content, with no call.
    text = "<tool_call>\n{invalid json here}\n</tool_call>"
    messages, _, warnings = check_every_way(BIELIK, TOKENIZER, text)
    assert (messages[0].text, list(messages[0].tool_calls)) == (text, [])
    assert warnings


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
TIME = {"type": "function", "function": {"name": "now", "description": "Czas teraz."}}


def _round(system: bool) -> list[dict[str, Any]]:
    calls = [
        {
            "id": f"c{n}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
        }
        for n, city in enumerate(("Kraków", "Gdańsk"))
    ]
    return [
        *([{"role": "system", "content": "Jesteś pomocny."}] if system else []),
        {"role": "user", "content": "Pogoda?"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c0", "content": "18°C"},
        {"role": "tool", "tool_call_id": "c1", "content": "12°C"},
        {"role": "assistant", "content": "Ciepło."},
    ]


def test_results_are_one_user_turn_and_read_back() -> None:
    messages = _round(system=False)
    rendering = BIELIK.render(messages, [WEATHER, TIME])
    assert (
        rendering.text
        == corpus_reference(TEMPLATE)
        .render(messages, [WEATHER, TIME], add_generation_prompt=False)
        .text
    )
    assert "<|im_start|>user\n<|function_output|>18°C<|function_output|>12°C<|im_end|>\n" in (
        rendering.text
    )
    parsed = BIELIK.parse_conversation(rendering.text)
    assert [message["content"] for message in parsed.messages if message["role"] == "tool"] == [
        "18°C",
        "12°C",
    ]
    assert [tool["function"]["name"] for tool in parsed.tools] == ["get_weather", "now"]


def test_with_a_system_message_the_template_leaves_results_unclosed() -> None:
    # The documented difference: the template's loop runs over the messages after the
    # system message but looks its neighbours up in the whole list, one place off.
    messages = _round(system=True)
    template = (
        corpus_reference(TEMPLATE).render(messages, [WEATHER], add_generation_prompt=False).text
    )
    assert "<|function_output|>18°C<|im_start|>user\n<|function_output|>12°C<|im_start|>" in (
        template
    )
    rendering = BIELIK.render(messages, [WEATHER]).text
    assert "<|function_output|>18°C<|function_output|>12°C<|im_end|>\n" in rendering


@pytest.mark.parametrize("system", ["", "Bądź zwięzły."])
def test_later_system_messages_are_dropped_and_an_empty_first_one_is_none(system: str) -> None:
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": "Cześć"},
        {"role": "system", "content": "Później."},
        {"role": "user", "content": "Hej"},
    ]
    rendering = BIELIK.render(messages, add_generation_prompt=True)
    expected = corpus_reference(TEMPLATE).render(messages, add_generation_prompt=True)
    assert rendering.text == expected.text
    assert ("<|im_start|>system" in rendering.text) == bool(system)
    assert "Później." not in rendering.text
    assert any(loss.startswith("messages[2]") for loss in rendering.losses)


def test_reasoning_is_kept_on_every_turn_and_trimmed() -> None:
    messages = [
        {"role": "user", "content": "A?"},
        {"role": "assistant", "content": "  Tak.", "reasoning_content": "  myślę \n"},
        {"role": "user", "content": "B?"},
        {"role": "assistant", "content": "Nie.", "reasoning_content": ""},
    ]
    rendering = BIELIK.render(messages)
    assert (
        rendering.text
        == corpus_reference(TEMPLATE).render(messages, add_generation_prompt=False).text
    )
    assert "<think>\nmyślę\n</think>\nTak.<|im_end|>" in rendering.text
    assert "<|im_start|>assistant\nNie.<|im_end|>" in rendering.text
    assert rendering.losses


def test_the_mask_trains_the_turns_the_model_writes() -> None:
    call = {"id": "c0", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "Pogoda?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c0", "content": "18°C"},
        {"role": "assistant", "content": "18°C."},
    ]
    tokens = pawlette.tokenize(BIELIK, TOKENIZER, {"messages": messages, "tools": [WEATHER]})
    learned = [label for label in tokens.labels if label != IGNORE_INDEX]
    assert TOKENIZER.decode(learned, skip_special_tokens=False) == (
        '\n<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call><|im_end|>'
        "18°C.<|im_end|>"
    )


def test_with_a_system_message_a_result_opens_a_turn_unless_the_one_two_before_is_a_result() -> (
    None
):
    # The rule the page states: with a first system message, the result at messages[i]
    # opens a user turn unless messages[i - 2] is a result, and closes none unless it is
    # the last message; pawlette writes one closed user turn per run of results.
    def call(identifier: str) -> dict[str, Any]:
        return {
            "id": identifier,
            "type": "function",
            "function": {"name": "now", "arguments": "{}"},
        }

    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "", "tool_calls": [call("a"), call("b"), call("c")]},
        *({"role": "tool", "tool_call_id": i, "content": i.upper()} for i in "abc"),
        {"role": "assistant", "content": "", "tool_calls": [call("d")]},
        {"role": "tool", "tool_call_id": "d", "content": "D"},
        {"role": "user", "content": "v"},
    ]
    template = corpus_reference(TEMPLATE).render(messages, [TIME], add_generation_prompt=True)
    assert template.text is not None
    call_end = "</tool_call><|im_end|>\n"
    assert (
        call_end + "<|im_start|>user\n<|function_output|>A<|im_start|>user\n"
        "<|function_output|>B<|function_output|>C<|im_start|>assistant\n"
    ) in template.text
    assert call_end + "<|function_output|>D<|im_start|>user\nv<|im_end|>\n" in template.text
    # The same loop without the system message, and pawlette with it.
    rendering = BIELIK.render(messages, [TIME], add_generation_prompt=True).text
    for text in (
        corpus_reference(TEMPLATE).render(messages[1:], [TIME], add_generation_prompt=True).text,
        rendering,
    ):
        assert text is not None
        assert (
            "<|im_start|>user\n<|function_output|>A<|function_output|>B<|function_output|>C"
            "<|im_end|>\n" in text
        )
        assert "<|im_start|>user\n<|function_output|>D<|im_end|>\n<|im_start|>user\nv" in text
