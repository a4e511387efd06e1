"""Reka Edge (:mod:`pawlette.formats.reka`): what the model writes after its ``assistant:``
prompt, read as vLLM's ``hermes`` tool parser reads ``<tool_call>`` JSON (its cases in
``tests/tool_parsers/test_hermes_tool_parser.py``), whole, streamed and from token ids (a
tokenizer built with the format's special tokens); the template's layouts the declaration
decided on; ids and masks."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pawlette
from pawlette.tokenization.encoder import IGNORE_INDEX

from ..declared.model_output import check_every_way
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import corpus_reference

REKA = pawlette.get_format("reka")
TEMPLATE = "Reka-Edge"
TOKENIZER = small_tokenizer(REKA.special_markers)
ANSWER = '{"name": "final_answer", "arguments": {"trigger": true}}'
DALLAS = '{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX"}}'
CALL_ANSWER = ("final_answer", {"trigger": True})
CALL_DALLAS = ("get_current_weather", {"city": "Dallas", "state": "TX"})

AS_THE_PEERS = [
    (" This is some prior text.", "This is some prior text.", []),
    # vLLM's hermes cases: a call with its newlines, without them, two in a row, after text.
    (" <tool_call>\n" + ANSWER + "\n</tool_call>", None, [CALL_ANSWER]),
    ("<tool_call>" + ANSWER + "</tool_call>", None, [CALL_ANSWER]),
    (
        " <tool_call>" + ANSWER + "</tool_call>\n<tool_call>" + DALLAS + "</tool_call>",
        None,
        [CALL_ANSWER, CALL_DALLAS],
    ),
    (" Checking.\n<tool_call>\n" + DALLAS + "\n</tool_call>", "Checking.", [CALL_DALLAS]),
    # vLLM: a whole call whose close the engine cut as a stop string is a call.
    (" <tool_call>\n" + DALLAS, None, [CALL_DALLAS]),
    # A <sep> right after the text or the calls ends the turn too (it ends every other turn).
    (" Done.\n<sep>", "Done.\n", []),
    (" <tool_call>\n" + ANSWER + "\n</tool_call><sep>", None, [CALL_ANSWER]),
    # What the template writes: calls run on, then the turn's end.
    (
        " <tool_call>\n" + DALLAS + "\n</tool_call><tool_call>\n" + ANSWER + "\n</tool_call>"
        "\n\n<sep>",
        None,
        [CALL_DALLAS, CALL_ANSWER],
    ),
]


@pytest.mark.parametrize(("text", "content", "calls"), AS_THE_PEERS)
def test_what_the_model_writes_reads_as_the_peers_read_it(
    text: str, content: str | None, calls: list[Any]
) -> None:
    messages, _, warnings = check_every_way(REKA, TOKENIZER, text)
    (message,) = messages
    found = [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    assert (message.text or None, found, warnings) == (content, calls, [])


def test_a_call_that_is_no_json_object_is_content_with_a_warning() -> None:
    # vLLM's hermes parser then returns the whole output as content, with no call.
    text = "<tool_call>\n{invalid json here}\n</tool_call>"
    messages, _, warnings = check_every_way(REKA, TOKENIZER, text)
    assert (messages[0].text, list(messages[0].tool_calls)) == (text, [])
    assert warnings


def test_the_space_after_the_prompt_is_the_openers() -> None:
    prompt = REKA.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True).text
    assert prompt == "human: Hi<sep>assistant:"
    assert REKA.parse(" It is sunny.\n\n<sep>").message["content"] == "It is sunny."


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Pogoda w mieście",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def _calls(*cities: str) -> list[dict[str, Any]]:
    return [
        {
            "id": f"c{number}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
        }
        for number, city in enumerate(cities)
    ]


@pytest.mark.parametrize("text", ["", "Checking.", "Checking.\n", "\n"])
def test_calls_run_on_after_the_text_and_one_newline(text: str) -> None:
    messages = [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": text, "tool_calls": _calls("Zürich", "Paris")},
        {"role": "tool", "tool_call_id": "c0", "content": "18°C"},
        {"role": "tool", "tool_call_id": "c1", "content": "12°C"},
    ]
    rendering = REKA.render(messages, [WEATHER], add_generation_prompt=True)
    reference = corpus_reference(TEMPLATE)
    expected = reference.render(messages, [WEATHER], add_generation_prompt=True).text
    assert rendering.text == expected
    assert "Pogoda w mie\\u015bcie" in rendering.text  # tojson(ensure_ascii=True)
    assert '{"city": "Z\\u00fcrich"}}\n</tool_call><tool_call>\n' in rendering.text
    assert "</tool_response><tool_response>\n12°C\n</tool_response><sep>assistant:" in (
        rendering.text
    )
    parsed = REKA.parse_conversation(rendering.text)
    assistant = next(m for m in parsed.messages if m["role"] == "assistant")
    assert (assistant.get("content") or "") == text.rstrip("\n")
    assert any("content" in loss for loss in rendering.losses) == text.endswith("\n")


@pytest.mark.parametrize("system", ["", "Be terse."])
def test_later_system_messages_are_dropped_and_an_empty_first_one_is_none(system: str) -> None:
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": "Hi"},
        {"role": "system", "content": "Later."},
        {"role": "user", "content": "Hey"},
    ]
    rendering = REKA.render(messages, add_generation_prompt=True)
    expected = corpus_reference(TEMPLATE).render(messages, add_generation_prompt=True)
    assert rendering.text == expected.text
    assert rendering.text.startswith("system: ") == bool(system)
    assert "Later." not in rendering.text
    assert any(loss.startswith("messages[2]") for loss in rendering.losses)


def test_the_mask_trains_the_turns_the_model_writes() -> None:
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": _calls("Oslo")},
        {"role": "tool", "tool_call_id": "c0", "content": "3°C"},
        {"role": "assistant", "content": "3°C."},
    ]
    tokens = pawlette.tokenize(REKA, TOKENIZER, {"messages": messages, "tools": [WEATHER]})
    learned = [label for label in tokens.labels if label != IGNORE_INDEX]
    # Each turn starts with the space the model writes after the prompt's "assistant:".
    assert TOKENIZER.decode(learned, skip_special_tokens=False) == (
        ' <tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
        "\n\n<sep> 3°C.\n\n<sep>"
    )


@pytest.mark.parametrize(
    ("content", "reasoning"),
    [("Plan.</think>\n\nDone.", None), ("</think>", None), ("Plan.</think>Done.", "")],
)
def test_a_text_holding_the_think_close_is_written_as_the_template_writes_it(
    content: str, reasoning: str | None
) -> None:
    answer: dict[str, Any] = {"role": "assistant", "content": content, "tool_calls": _calls("Oslo")}
    if reasoning is not None:
        answer["reasoning_content"] = reasoning
    messages = [
        {"role": "user", "content": "Weather?"},
        answer,
        {"role": "tool", "tool_call_id": "c0", "content": "3°C"},
    ]
    rendering = REKA.render(messages, tools=[WEATHER])
    expected = corpus_reference(TEMPLATE).render(
        messages, tools=[WEATHER], add_generation_prompt=False
    )
    assert rendering.text == expected.text
    split = reasoning is None  # a message with reasoning keeps its text whole
    assert any(loss.startswith("messages[1].content") for loss in rendering.losses) == split
