"""Apriel 1.6 (``apriel:1.6``, :mod:`pawlette.formats.apriel.thinker`): what the model writes
after its prompt, read as the ``apriel`` reasoning parser for vLLM streams it (all text
before ``[BEGIN FINAL RESPONSE]`` is reasoning, no open marker) and its calls as the
``apriel`` tool parser for vLLM reads them, whole, streamed and from token ids; the
template's own turns read after the opener alone; the layout's properties (round trip, each
turn as a completion, model output of every kind, every rendered turn accepted by its
grammars), which the shared property and grammar tests run for base formats only."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette

from ..declared.model_output import check_every_way
from ..export.test_grammar import (
    SYNTAXES,
    TURNS,
    accepts,
    encode_special,
    encode_text,
    export_grammar,
)
from ..helpers import canonical, completion_text
from ..strategies.completions import GENERATORS, Writer, problems
from ..strategies.declared import declared_strategies
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import corpus_reference

APRIEL = pawlette.get_format("apriel:1.6")
TEMPLATE = "Apriel-1.6-15b-Thinker-fixed"
TOKENIZER = small_tokenizer(APRIEL.special_markers)
SEARCH = '{"name": "web_search", "arguments": {"query": "Iran news 2025"}}'
CALL_SEARCH = ("web_search", {"query": "Iran news 2025"})
WEATHER = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
CALL_WEATHER = ("get_weather", {"city": "Paris"})
FINAL = "\n[BEGIN FINAL RESPONSE]\n"
END = "\n<|end|>"
WEATHER_TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {}}}

AFTER_THE_PROMPT = [
    (f"The user greets me.{FINAL}Hello!{END}", "The user greets me.", "Hello!", []),
    # The marker without its newlines, as the parser finds it.
    ("Greeting.[BEGIN FINAL RESPONSE]Hello!", "Greeting.", "Hello!", []),
    # Never closed: the output was cut while thinking.
    ("The user wants the weather, so I", "The user wants the weather, so I", None, []),
    (f"Search.{FINAL}\n<tool_calls>[{SEARCH}]</tool_calls>{END}", "Search.", None, [CALL_SEARCH]),
    (
        f"Both.{FINAL}Looking.\n<tool_calls>[{SEARCH}, {WEATHER}]</tool_calls>{END}",
        "Both.",
        "Looking.",
        [CALL_SEARCH, CALL_WEATHER],
    ),
    # An id the model writes is read (the template writes ids in past turns).
    (
        f'R.{FINAL}\n<tool_calls>[{WEATHER[:-1]}, "id": "abc123"}}]</tool_calls>',
        "R.",
        None,
        [CALL_WEATHER],
    ),
]


def _reading(text: str) -> tuple[Any, ...]:
    messages, _, warnings = check_every_way(APRIEL, TOKENIZER, text)
    (message,) = messages
    calls = [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    return message.reasoning, message.text or None, calls, warnings


@pytest.mark.parametrize(("text", "reasoning", "content", "calls"), AFTER_THE_PROMPT)
def test_what_the_model_writes_after_its_prompt(
    text: str, reasoning: str, content: str | None, calls: list[Any]
) -> None:
    assert _reading(text) == (reasoning, content, calls, [])


def test_the_prompt_opens_the_reasoning_and_the_opener_alone_holds_the_text() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    prompt = APRIEL.render(messages, add_generation_prompt=True).text
    assert prompt.endswith("\n<|begin_assistant|>\nHere are my reasoning steps:\n")
    reference = corpus_reference(TEMPLATE)
    assert reference.render(messages, add_generation_prompt=True).text == prompt
    opener = prompt[: -len("Here are my reasoning steps:\n")]
    # After the prompt, text without the marker is reasoning (cut while thinking); after
    # the opener alone (the template's own last turn), it is the turn's content.
    assert APRIEL.parse("Hello!", prompt=prompt).message["reasoning_content"] == "Hello!"
    alone = APRIEL.parse("Hello!", prompt=opener).message
    assert (alone["content"], alone.get("reasoning_content")) == ("Hello!", None)
    held = APRIEL.parse(f"Hm.{FINAL}Hello!", prompt=opener).message
    assert (held["content"], held["reasoning_content"]) == ("Hello!", "Hm.")


def test_reasoning_is_written_only_in_the_last_message() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello", "reasoning_content": "A greeting."},
        {"role": "user", "content": "Bye"},
        {"role": "assistant", "content": "Bye!", "reasoning_content": "A farewell."},
    ]
    rendering = APRIEL.render(messages)
    reference = corpus_reference(TEMPLATE)
    assert reference.render(messages, add_generation_prompt=False).text == rendering.text
    assert "A greeting." not in rendering.text
    assert rendering.text.endswith("<|begin_assistant|>\nA farewell.\n[BEGIN FINAL RESPONSE]\nBye!")
    assert [loss.split(":")[0] for loss in rendering.losses] == ["messages[1].reasoning_content"]
    parsed = APRIEL.parse_conversation(rendering.text, strict=True).to_request()["messages"]
    assert parsed[1] == {"role": "assistant", "content": "Hello"}
    assert parsed[3]["reasoning_content"] == "A farewell."


def test_a_past_turn_is_cut_after_its_final_response_marker() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Thinking.\n[BEGIN FINAL RESPONSE]\n  Hello  "},
        {"role": "user", "content": "Bye"},
    ]
    rendering = APRIEL.render(messages, add_generation_prompt=True)
    reference = corpus_reference(TEMPLATE)
    assert reference.render(messages, add_generation_prompt=True).text == rendering.text
    assert "<|begin_assistant|>\nHello\n<|end|>" in rendering.text
    assert [loss.split(":")[0] for loss in rendering.losses] == ["messages[1].content"]


def test_the_tools_are_read_back_from_every_system_turn() -> None:
    tools = [WEATHER_TOOL, {"type": "function", "function": {"name": "now", "parameters": {}}}]
    messages = [
        {"role": "system", "content": ""},
        {"role": "user", "content": "Weather?"},
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "Paris?"},
    ]
    text = APRIEL.render(messages, tools).text
    reference = corpus_reference(TEMPLATE)
    assert reference.render(messages, tools, add_generation_prompt=False).text == text
    assert text.count("}}{'type'") == 2  # the tools with nothing between them, in both turns
    parsed = APRIEL.parse_conversation(text, strict=True).to_request()
    assert parsed == canonical({"messages": messages, "tools": tools})


# ------------------------------------------------------------------ properties


FORMAT, conversations, normalise, normalise_completion = declared_strategies("apriel:1.6")


def _expected(request: dict[str, Any]) -> dict[str, Any]:
    """What parsing the render gives: the shared normal form, with the reasoning of every
    message but the last dropped (the layout writes it only there) and an empty first system
    message kept (its turn holds the newline before the text)."""
    expected = canonical(normalise(canonical(request)))
    first = canonical(request)["messages"][0]
    if first["role"] == "system" and expected["messages"][:1] != [first]:
        expected["messages"].insert(0, first)
    for message in expected["messages"][:-1]:
        message.pop("reasoning_content", None)
    return expected


@settings(max_examples=60)
@given(conversations())
def test_round_trip(request: dict[str, Any]) -> None:
    text = FORMAT.render(request).text
    parsed = FORMAT.parse_conversation(text, strict=True)
    assert parsed.to_request() == _expected(request), text


@settings(max_examples=60)
@given(conversations())
def test_each_assistant_turn_is_read_back_after_its_opener(request: dict[str, Any]) -> None:
    # The training render's turn follows the opener (the prompt's words are in no turn), so
    # it is read after the opener alone, as the template's own turns are.
    messages, tools = request["messages"], request.get("tools")
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        completion = completion_text(FORMAT, request, index)
        full = FORMAT.render(messages[: index + 1], tools).text
        result = FORMAT.parse(completion, strict=True, prompt=full[: len(full) - len(completion)])
        expected = normalise_completion(canonical({"messages": [message]})["messages"][0])
        actual = result.message
        for found in (expected, actual):
            for call in found.get("tool_calls", []):
                call["id"] = "*"
        assert actual == expected, completion


@settings(max_examples=60)
@given(st.randoms(use_true_random=False), st.sampled_from([None, "stop", "length"]))
def test_model_output_of_every_kind(rng: random.Random, reason: str | None) -> None:
    text = GENERATORS["apriel:1.6"](Writer(rng, FORMAT))
    assert problems(FORMAT, text, rng, reason=reason) == [], text


@pytest.mark.parametrize("syntax", SYNTAXES)
@settings(max_examples=30)
@given(data=st.data())
def test_every_rendered_turn_is_accepted(syntax: str, data: st.DataObject) -> None:
    name = "apriel:1.6"
    tools, turns, choices = TURNS[name]
    message = data.draw(turns(name))
    request = {"messages": [{"role": "user", "content": "hi"}, message], "tools": tools}
    rendering = FORMAT.render(request)
    # What the model writes after the prompt: its reasoning (the turn's, or none) and the
    # marker, then the turn as the template writes it.
    ids = [] if message.get("reasoning_content") else encode_text(name, FINAL)
    for segment in rendering.segments:
        if segment.message_index == 1 and segment.trainable:
            encode = encode_special if segment.special else encode_text
            ids += encode(name, segment.text)
    undeclared = any(
        "extra" in json.loads(call["function"]["arguments"])
        for call in message.get("tool_calls") or []
    )
    for choice, parallel in choices(message):
        grammar = export_grammar(name, tools, choice, parallel, syntax, strict=not undeclared)
        assert accepts(name, grammar, syntax, ids), (choice, parallel, rendering.text)


def test_no_prompt_is_written_after_an_assistant_message() -> None:
    # The template writes no prompt there, asked for or not (and no end on its last message).
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    prompt = APRIEL.render(messages, add_generation_prompt=True).text
    assert prompt == APRIEL.render(messages).text
    assert prompt.endswith("<|begin_assistant|>\nHello")
    # After a user message the prompt opens the reasoning, read so.
    prompt = APRIEL.render(messages[:1], add_generation_prompt=True).text
    assert prompt.endswith("<|begin_assistant|>\nHere are my reasoning steps:\n")
    assert APRIEL.parse("Hm.", prompt=prompt).message["reasoning_content"] == "Hm."
