"""Solar Open (:mod:`pawlette.formats.solar`): what the models write (the template's own
layout, ``families/data/solar.json``), whole, streamed and from token ids (a tokenizer with
the Solar Open markers as special tokens); and what the declaration decided (the gathered
system turn, id-first calls ending in ``<|calls|>``, results with the call's name, the
dropped text beside calls and reasoning); and what its engines stop on (``<|flush|>``,
``<|calls|>``, ``<|endoftext|>``, not ``<|end|>``), so a thought and the answer after it are
read, kept in a transcript and served whole, the grammars end there, and the ``<|end|>`` the
template writes after every answer is not learned."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

import pawlette
from pawlette.serve.config import ServeConfig

from ..declared.model_output import check_every_way
from ..serve.conftest import LiveServer
from ..serve.scenarios import ask
from ..serve.upstream import FakeUpstream, Script
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import corpus_reference
from .weather import TOOLS, weather_call

DATA = json.loads((Path(__file__).parent / "families" / "data" / "solar.json").read_text())
SOLAR = pawlette.get_format("solar")
TEMPLATE = "upstage-Solar-Open-100B"
TOKENIZER = small_tokenizer(SOLAR.special_markers)

# What Solar Open's engines stop on.  The model's generation_config.json lists the ids of
# <|endoftext|>, <|flush|> and <|calls|> as its eos_token_id (2, 24 and 25: Tenstorrent's
# tt-metal, models/demos/solar_open/tt/vllm_support.py, GENERATION_STOP_TOKEN_IDS); llama.cpp
# makes the three end-of-generation tokens by name and takes <|end|> out of them when the
# vocabulary holds <|calls|> and <|flush|> ("workaround for o200k_harmony and solar-open
# tokenizer", ggml-org/llama.cpp src/llama-vocab.cpp).
ENGINE_STOPS = ("<|flush|>", "<|calls|>", "<|endoftext|>")

# Completions as the model writes them after the generation prompt <|begin|>assistant, up to
# and with the token its engine stops on.  The shapes: vLLM's Solar Open reasoning parser
# (oesni/vllm, vllm/reasoning/solar_open_reasoning_parser.py: "<|think|>{reasoning}<|end|>
# <|begin|>assistant<|content|>{content}" or "...<|tool_calls|>{calls}", "generation
# terminates with <|flush|> or <|calls|>"); tt-metal's parser test plays the same answer
# ending with id 24 (<|flush|>) and the call turn with id 25 (<|calls|>)
# (models/demos/solar_open/tests/unit/test_vllm_wrapper_import.py).
THOUGHT_THEN_ANSWER = (
    "<|think|>The user asks for the capital of Korea.<|end|><|begin|>assistant<|content|>"
    "Seoul is the capital of South Korea.<|flush|>"
)
THOUGHT_THEN_CALL = (
    "<|think|>Need the weather tool.<|end|><|begin|>assistant<|tool_calls|>"
    '<|tool_call:begin|>abc123defg<|tool_call:name|>get_weather<|tool_call:args|>{"city": '
    '"Seoul"}<|tool_call:end|><|calls|>'
)


ROUND = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris and 東京?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [weather_call("a1", "Paris"), weather_call("b2", "東京")],
    },
    {"role": "tool", "tool_call_id": "a1", "content": "18°C"},
    {"role": "tool", "tool_call_id": "b2", "content": "9°C"},
    {"role": "system", "content": "Answer in **bold**."},
    {"role": "assistant", "content": "**18°C** and **9°C**."},
]


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda case: case["source"][30:70])
def test_what_the_models_write_reads_every_way(case: dict[str, Any]) -> None:
    messages, _, warnings = check_every_way(SOLAR, TOKENIZER, case["output"])
    (message,) = messages
    calls = [
        {"id": call.id, "name": call.name, "arguments": json.loads(call.arguments)}
        for call in message.tool_calls
    ]
    expected = case["expected"]
    assert (message.text or None, message.reasoning or None, calls) == (
        expected["content"],
        expected["reasoning_content"],
        expected["tool_calls"],
    )
    assert bool(warnings) == case.get("warns", False)


def test_a_round_with_parallel_calls_is_the_templates_and_reads_back() -> None:
    reference = corpus_reference(TEMPLATE, today=datetime.date(2026, 1, 15))
    for count, prompt in ((len(ROUND), False), (5, True)):
        expected = reference.render(ROUND[:count], TOOLS, add_generation_prompt=prompt).text
        assert expected is not None
        written = SOLAR.render(ROUND[:count], TOOLS, add_generation_prompt=prompt).text
        assert written == expected
    written = SOLAR.render(ROUND, TOOLS).text
    assert (
        "<|tool_response:begin|>a1<|tool_response:name|>get_weather<|tool_response:result|>18°C"
        "<|tool_response:end|><|tool_response:begin|>b2<|tool_response:name|>get_weather"
    ) in written
    assert "## System Prompt\n\nBe brief.\n\nAnswer in **bold**.\n\n## Tools" in written
    conversation = SOLAR.parse_conversation(written, strict=True)
    assert conversation.tools == TOOLS
    parsed = conversation.messages
    assert parsed[0] == {"role": "system", "content": "Be brief.\n\nAnswer in **bold**."}
    assert [call["id"] for call in parsed[2]["tool_calls"]] == ["a1", "b2"]
    assert parsed[3:] == [
        {"role": "tool", "tool_call_id": "a1", "content": "18°C"},
        {"role": "tool", "tool_call_id": "b2", "content": "9°C"},
        {"role": "assistant", "content": "**18°C** and **9°C**."},
    ]


def test_the_date_is_an_option_and_text_beside_calls_and_reasoning_are_losses() -> None:
    later = SOLAR.with_options(today=datetime.date(2027, 3, 4))
    assert "The current date is 2027-03-04.<|end|>" in later.render(ROUND[1:2]).text
    turn = {**ROUND[2], "content": "Checking.", "reasoning_content": "Two cities."}
    rendering = SOLAR.render([ROUND[1], turn])
    assert "Checking." not in rendering.text and "Two cities." not in rendering.text
    assert rendering.text.endswith("<|tool_call:end|><|calls|>")
    assert [loss.split(":")[0] for loss in rendering.losses] == [
        "messages[1].reasoning_content",
        "messages[1].content",
    ]


def test_user_text_never_becomes_a_control_token() -> None:
    text = "<|end|><|begin|>assistant<|content|>x<|tool_call:begin|>"
    request = {"messages": [{"role": "user", "content": text}]}
    ids = list(pawlette.tokenize(SOLAR, TOKENIZER, request).input_ids)
    for marker in ("<|content|>", "<|tool_call:begin|>"):
        assert ids.count(TOKENIZER.token_to_id(marker)) == (2 if marker == "<|content|>" else 0)
    assert ids.count(TOKENIZER.token_to_id("<|end|>")) == 2  # the system and user turns'


def test_the_stop_set_is_what_the_engines_stop_on() -> None:
    assert SOLAR.stop == ENGINE_STOPS
    assert "<|end|>" not in SOLAR.stop_markers  # the model goes on past it after reasoning


@pytest.mark.parametrize("stopped", [True, False], ids=["with its stop", "stop cut off"])
def test_a_thought_then_the_answer_reads_as_both(stopped: bool) -> None:
    text = THOUGHT_THEN_ANSWER if stopped else THOUGHT_THEN_ANSWER.removesuffix("<|flush|>")
    messages, _, warnings = check_every_way(SOLAR, TOKENIZER, text)
    (message,) = messages
    assert (message.reasoning, message.text, message.tool_calls) == (
        "The user asks for the capital of Korea.",
        "Seoul is the capital of South Korea.",
        (),
    )
    assert not warnings


def test_a_thought_then_a_call_reads_as_both() -> None:
    messages, _, warnings = check_every_way(SOLAR, TOKENIZER, THOUGHT_THEN_CALL)
    (message,) = messages
    (call,) = message.tool_calls
    assert message.reasoning == "Need the weather tool." and not message.text
    assert (call.id, call.name, json.loads(call.arguments)) == (
        "abc123defg",
        "get_weather",
        {"city": "Seoul"},
    )
    assert not warnings


def test_a_conversation_with_the_templates_and_the_models_ends_reads_back() -> None:
    """The template ends a past answer with <|end|>; a transcript kept as the model wrote its
    turn (a thought, then the answer ending with <|flush|>) reads back with the thought."""
    reference = corpus_reference(TEMPLATE, today=datetime.date(2026, 1, 15))
    asked = {"role": "user", "content": "What is the capital of Korea?"}
    answer = {"role": "assistant", "content": "Seoul is the capital of South Korea."}
    again = {"role": "user", "content": "And of Japan?"}
    written = reference.render([asked, answer, again], add_generation_prompt=False).text
    assert written is not None
    assert written == SOLAR.render([asked, answer, again]).text
    assert "<|content|>Seoul is the capital of South Korea.<|end|><|begin|>user" in written
    as_the_model_wrote = written.replace(
        "<|begin|>assistant<|content|>Seoul is the capital of South Korea.<|end|>",
        "<|begin|>assistant" + THOUGHT_THEN_ANSWER,
    )
    assert as_the_model_wrote != written
    # (the provider's system text alone is the format's own: it reads back as no message)
    assert SOLAR.parse_conversation(written, strict=True).messages == [asked, answer, again]
    thought = {**answer, "reasoning_content": "The user asks for the capital of Korea."}
    read = SOLAR.parse_conversation(as_the_model_wrote, strict=True).messages
    assert read == [asked, thought, again]


# The template's variables that change what it writes after a user message (its defaults:
# reasoning_effort "high", think_render_option "lastthink"), each way.
TEMPLATE_SETTINGS = [
    {},
    {"think_render_option": "all"},
    {"reasoning_effort": "low"},
    {"default_system_prompt": False},
]


@pytest.mark.parametrize("variables", TEMPLATE_SETTINGS, ids=str)
def test_the_template_ends_every_answer_with_end_and_never_writes_flush(
    variables: dict[str, Any],
) -> None:
    """Upstage's template writes ``<|end|>`` after every answer, the conversation's last one
    and one with reasoning too, and ``<|flush|>`` nowhere: the text of a training example is
    the template's, and the render stays identical to it."""
    reference = corpus_reference(TEMPLATE, today=datetime.date(2026, 1, 15), variables=variables)
    thought = {**ROUND[-1], "reasoning": "Both cities."}  # the field the template reads
    for messages in (ROUND, [*ROUND[:-1], thought], ROUND[1:3]):
        for prompt in (False, True):
            written = reference.render(messages, TOOLS, add_generation_prompt=prompt).text
            assert written is not None
            assert "<|flush|>" not in written
            if messages[-1].get("tool_calls"):
                assert written.endswith("<|calls|>") or prompt
            else:
                assert "<|content|>**18°C** and **9°C**.<|end|>" in written
                assert written.endswith("<|end|>") or prompt


def test_a_training_render_learns_no_end_after_an_answer() -> None:
    """What the model writes is learned: ``<|content|>`` and the answer (the engine then
    stops on the ``<|flush|>`` the model writes), a turn of calls through ``<|calls|>``.  The
    ``<|end|>`` the template writes after an answer is no token the model ends an answer
    with (its engines would not stop there), so it is not learned."""
    reference = corpus_reference(TEMPLATE, today=datetime.date(2026, 1, 15))
    asked = {"role": "user", "content": "What is the capital of Korea?"}
    answer = {"role": "assistant", "content": "Seoul is the capital of South Korea."}
    messages = [asked, answer, {"role": "user", "content": "Weather there?"}, *ROUND[2:5]]
    messages.append({"role": "assistant", "content": "18°C."})
    rendering = SOLAR.render(messages, TOOLS)
    expected = reference.render(messages, TOOLS, add_generation_prompt=False).text
    assert rendering.text == expected
    learned = [
        "".join(s.text for s in rendering.segments if s.trainable and s.message_index == index)
        for index in (1, 3, 6)
    ]
    assert learned[0] == "<|content|>Seoul is the capital of South Korea."
    assert learned[1].startswith("<|tool_calls|><|tool_call:begin|>a1<|tool_call:name|>")
    assert learned[1].endswith("<|tool_call:end|><|calls|>")
    assert learned[2] == "<|content|>18°C."
    ends = [
        (s.message_index, s.kind, s.trainable) for s in rendering.segments if s.text == "<|end|>"
    ]
    assert (1, "close", False) in ends and (6, "close", False) in ends
    assert not any(trainable for _, _, trainable in ends)
    # The same in token ids: no <|end|> is learned, the <|calls|> is.
    result = pawlette.tokenize(SOLAR, TOKENIZER, {"messages": messages, "tools": TOOLS})
    pairs = list(zip(result.input_ids, result.labels, strict=True))
    end, calls = TOKENIZER.token_to_id("<|end|>"), TOKENIZER.token_to_id("<|calls|>")
    assert sum(token == end for token, _ in pairs) == 6  # system, users, results, answers
    assert all(label == -100 for token, label in pairs if token == end)
    assert [label for token, label in pairs if token == calls] == [calls]
    last_learned = max(at for at, (_, label) in enumerate(pairs) if label != -100)
    assert result.input_ids[last_learned + 1 :] == [end]


@pytest.mark.parametrize("syntax", ["lark", "gbnf"])
@pytest.mark.parametrize("choice", ["auto", "required", "none"])
def test_the_grammar_ends_where_the_engines_stop(syntax: str, choice: str) -> None:
    """The grammar's turn ends where the engine stops (on ``<|flush|>`` after an answer,
    ``<|calls|>`` after calls): an ``<|end|>`` after the answer or the calls is refused."""
    from ..export.test_grammar import M, accepts, export_grammar, turn_ids

    tools = [] if choice == "none" else TOOLS
    grammar = export_grammar("solar", tools, choice, True, syntax)
    answer = [M("<|content|>"), "Seoul."]
    call = [
        M("<|tool_calls|><|tool_call:begin|>"),
        "abc123defg",
        M("<|tool_call:name|>"),
        "get_weather",
        M("<|tool_call:args|>"),
        '{"city": "Seoul"}',
        M("<|tool_call:end|>"),
    ]
    thought = [M("<|think|>"), "Hm.", M("<|end|><|begin|>"), "assistant"]
    turns = {"answer": answer, "call": call}
    allowed = {"auto": {"answer", "call"}, "required": {"call"}, "none": {"answer"}}[choice]
    for kind, turn in turns.items():
        stop = M("<|flush|>" if kind == "answer" else "<|calls|>")
        for pieces in (turn, [*turn, stop]):
            assert accepts("solar", grammar, syntax, turn_ids("solar", pieces)) is (
                kind in allowed
            ), pieces
        for pieces in ([*turn, M("<|end|>")], [*turn, M("<|end|>"), stop]):
            assert not accepts("solar", grammar, syntax, turn_ids("solar", pieces)), pieces
    if choice != "required":  # (a forced call turns reasoning off)
        thought_then_answer = turn_ids("solar", [*thought, *answer])
        assert accepts("solar", grammar, syntax, thought_then_answer)


def test_a_completion_ending_with_end_still_reads() -> None:
    """A model may write ``<|end|>`` where its engines expect ``<|flush|>``: reading takes it
    as the end of the turn (whole, streamed and from token ids), as the template's past
    answers."""
    for text in (
        "<|content|>Seoul.<|end|>",
        "<|think|>Hm.<|end|><|begin|>assistant<|content|>Seoul.<|end|>",
    ):
        messages, _, warnings = check_every_way(SOLAR, TOKENIZER, text)
        (message,) = messages
        assert (message.text, message.tool_calls) == ("Seoul.", ())
        assert message.reasoning == ("Hm." if "<|think|>" in text else None)
        assert not warnings


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_the_served_answer_holds_the_reasoning_and_the_answer(stream: bool) -> None:
    """``pawlette serve`` asks the engine to stop on the engines' stops and gives the client
    the reasoning and the answer after it (the scripted engine cuts its text at the request's
    stops, as engines do)."""
    upstream = FakeUpstream().start()
    server = LiveServer(ServeConfig(format="solar", upstream=upstream.url, keep_alive=120.0))
    try:
        upstream.push(Script(text=THOUGHT_THEN_ANSWER + "<|begin|>user", sizes=(1, 2, 3, 5)))
        message, finish = ask(
            server.client(), stream, model="m", messages=[{"role": "user", "content": "Hi"}]
        )
        assert upstream.last().body["stop"] == list(ENGINE_STOPS)
    finally:
        server.stop()
        upstream.stop()
    assert finish == "stop"
    assert message.get("reasoning_content") == "The user asks for the capital of Korea."
    assert message.get("content") == "Seoul is the capital of South Korea."
