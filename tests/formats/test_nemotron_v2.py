"""Nemotron Nano 2 (:mod:`pawlette.formats.nemotron_v2`): what the models write after the
generation prompt, read as llama.cpp reads it (its ``nemotron_v2`` cases in
``tests/test-chat.cpp``, given the prompt that opens the block), whole, streamed and from
token ids (a tokenizer built with the format's special tokens); where pawlette warns; the
results of parallel calls; the last turn of a conversation; detection; ids and masks."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pawlette
from pawlette.detect import detect_template
from pawlette.tokenization.encoder import IGNORE_INDEX

from ..declared.model_output import check_every_way
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import corpus_reference
from ..support.template_corpus import corpus_template

NEMOTRON = pawlette.get_format("nemotron_v2")
TEMPLATE = "NVIDIA-Nemotron-Nano-v2"
TOKENIZER = small_tokenizer(NEMOTRON.special_markers)
CALL_TEXT = '{"name": "special_function", "arguments": {"arg1": 1}}'
ANSWER = "Hello, world!\nWhat's up?"
THOUGHT = "I'm\nthinking"
SPECIAL = [("special_function", {"arg1": 1})]

# llama.cpp's cases parse the output on its own; with the template's prompt, which ends
# "<think>\n", llama.cpp reads with the block forced open, as pawlette reads every completion:
# the model closes the block ("</think>") before its answer or its calls.
AS_LLAMA_CPP = [
    ("</think>" + ANSWER, ANSWER, None, []),
    (THOUGHT + "</think>" + ANSWER, ANSWER, THOUGHT, []),
    ("</think><TOOLCALL>[" + CALL_TEXT + "]</TOOLCALL>", None, None, SPECIAL),
    (THOUGHT + "</think><TOOLCALL>[" + CALL_TEXT + "]</TOOLCALL>", None, THOUGHT, SPECIAL),
    # What the template writes after the prompt: text, a newline, the end marker.
    ("</think>" + ANSWER + "\n<SPECIAL_12>", ANSWER, None, []),
    (
        "</think>Hi\n<TOOLCALL>[" + CALL_TEXT + ", " + CALL_TEXT + "]</TOOLCALL>\n<SPECIAL_12>",
        "Hi",
        None,
        SPECIAL * 2,
    ),
    # A block never closed is reasoning (llama.cpp with the block forced open; the output
    # was cut while thinking).
    (ANSWER, None, ANSWER, []),
]


def _reading(text: str) -> tuple[Any, ...]:
    messages, _, warnings = check_every_way(NEMOTRON, TOKENIZER, text)
    (message,) = messages
    calls = [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    return message.text or None, message.reasoning or None, calls, warnings


@pytest.mark.parametrize(("text", "content", "reasoning", "calls"), AS_LLAMA_CPP)
def test_what_models_write_reads_as_llama_cpp_reads_it(
    text: str, content: str | None, reasoning: str | None, calls: list[Any]
) -> None:
    assert _reading(text) == (content, reasoning, calls, [])


def test_text_after_the_list_is_content_with_a_warning() -> None:
    # llama.cpp reads it as content silently; the template never writes text after calls.
    text = THOUGHT + "</think><TOOLCALL>[" + CALL_TEXT + "]</TOOLCALL>" + ANSWER
    content, reasoning, calls, warnings = _reading(text)
    assert (content, reasoning, calls) == (ANSWER, THOUGHT, SPECIAL)
    assert len(warnings) == 1


@pytest.mark.parametrize(
    "listed",
    ['[{"arguments": {"arg1": 1}}]', '[{"name": "f", "arguments": "x"}]', "[]", '{"name": "f"}'],
)
def test_a_list_that_is_not_one_stays_content_with_a_warning(listed: str) -> None:
    text = "</think><TOOLCALL>" + listed + "</TOOLCALL>"
    content, reasoning, calls, warnings = _reading(text)
    assert (content, reasoning, calls) == (text.removeprefix("</think>"), None, [])
    assert warnings


def test_a_think_written_again_stays_in_the_reasoning_with_a_warning() -> None:
    content, reasoning, calls, warnings = _reading("<think>" + THOUGHT + "</think>" + ANSWER)
    assert (content, reasoning, calls) == (ANSWER, "<think>" + THOUGHT, [])
    assert len(warnings) == 1


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def _round(results: list[str]) -> list[dict[str, Any]]:
    calls = [
        {
            "id": f"c{number}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
        }
        for number, city in enumerate(["Paris", "Oslo", "Rome"][: len(results)])
    ]
    return [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        *(
            {"role": "tool", "tool_call_id": f"c{number}", "content": text}
            for number, text in enumerate(results)
        ),
    ]


@pytest.mark.parametrize(
    "results",
    [
        ["18°C", "3°C"],
        ['{"temp": 18, "sky": "sun"}', '{"temp": 3, "sky": "snow"}'],
        ["18°C, sunny", "3°C", "{}"][:2],
        ["18°C", "[1, 2]", '"x, y"'],
    ],
)
def test_the_results_of_parallel_calls_are_one_turn_read_back_one_by_one(
    results: list[str],
) -> None:
    messages = _round(results)
    rendering = NEMOTRON.render(messages, [WEATHER], add_generation_prompt=True)
    expected = corpus_reference(TEMPLATE).render(messages, [WEATHER], add_generation_prompt=True)
    assert rendering.text == expected.text
    assert "<TOOL_RESPONSE>[" + ", ".join(results) + "]</TOOL_RESPONSE>" in rendering.text
    parsed = NEMOTRON.parse_conversation(rendering.text)
    read = [m["content"] for m in parsed.messages if m["role"] == "tool"]
    if results[0] == "18°C, sunny":  # three pieces for two calls, and no JSON: one result
        assert read == [", ".join(results)] and parsed.warnings
    else:
        assert read == results and not parsed.warnings


INSIDE = (
    "written inside the reasoning block the generation prompt opens, which the template"
    " never closes: read back as reasoning_content"
)
GREETING = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello.", "reasoning_content": "A greeting."},
]


def test_the_last_answer_is_written_inside_the_prompts_block_as_the_template_writes_it() -> None:
    prompt = NEMOTRON.render(GREETING[:1], add_generation_prompt=True).text
    rendering = NEMOTRON.render(GREETING)
    assert prompt.endswith("<SPECIAL_11>Assistant\n<think>\n")
    assert rendering.text == prompt + "Hello.\n<SPECIAL_12>\n"
    expected = corpus_reference(TEMPLATE).render(GREETING, None, add_generation_prompt=False)
    assert rendering.text == expected.text
    trained = "".join(s.text for s in rendering.segments if s.trainable)
    assert trained == "Hello.\n<SPECIAL_12>"
    assert rendering.losses == (
        "messages[1].reasoning_content: dropped (never written)",
        f"messages[1].content: {INSIDE}",
    )
    # The conversation reads back as written; the model's text after the prompt, as
    # llama.cpp and vLLM read it: reasoning never closed.
    assert NEMOTRON.parse_conversation(rendering.text).messages[1] == {
        "role": "assistant",
        "content": "Hello.",
    }
    completion = NEMOTRON.parse(rendering.text[len(prompt) :], prompt=prompt).message
    assert (completion["content"] or None, completion["reasoning_content"]) == (None, "Hello.")


CALL = {"id": "c0", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}


@pytest.mark.parametrize("text", ["Checking.", None])
def test_the_last_turns_calls_are_a_turn_of_their_own_read_back_as_one_message(
    text: str | None,
) -> None:
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": text, "tool_calls": [CALL]},
    ]
    rendering = NEMOTRON.render(messages, [WEATHER])
    expected = corpus_reference(TEMPLATE).render(messages, [WEATHER], add_generation_prompt=False)
    assert rendering.text == expected.text
    calls = '<TOOLCALL>[{"name": "get_weather", "arguments": {}}]</TOOLCALL><SPECIAL_12>\n\n'
    opener = "<SPECIAL_11>Assistant\n"
    answer = opener + "<think>\nChecking.\n<SPECIAL_12>\n" if text else ""
    assert rendering.text.endswith("Weather?\n" + answer + opener + calls)
    parsed = NEMOTRON.parse_conversation(rendering.text, strict=True).messages[1:]
    assert [(m["content"], len(m["tool_calls"])) for m in parsed] == [(text, 1)]
    prompt = NEMOTRON.render(messages[:1], [WEATHER], add_generation_prompt=True).text
    if text:  # the prompt begins the render: the rest is read as the model's text
        read = NEMOTRON.parse(rendering.text[len(prompt) :], prompt=prompt, tools=[WEATHER])
        assert read.message["reasoning_content"] == text and not read.warnings
        assert [call["function"]["name"] for call in read.message["tool_calls"]] == ["get_weather"]


@pytest.mark.parametrize("last", [True, False])
@pytest.mark.parametrize("text", [" ", "\x0c", "\n \t"])
def test_whitespace_beside_calls_is_no_text_as_the_template_tests_it(text: str, last: bool) -> None:
    # The template writes the newline before the calls only when the text, trimmed, is not
    # empty (a hypothesis draw found a past turn written with it, which its grammar refused).
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": text, "tool_calls": [CALL]},
    ]
    if not last:
        messages += [
            {"role": "tool", "tool_call_id": "c0", "content": "3"},
            {"role": "user", "content": "Thanks"},
        ]
    rendering = NEMOTRON.render(messages, [WEATHER])
    expected = corpus_reference(TEMPLATE).render(messages, [WEATHER], add_generation_prompt=False)
    assert rendering.text == expected.text
    assert "Assistant\n<TOOLCALL>" in rendering.text
    assert rendering.losses == ("messages[1].content: whitespace at its ends trimmed",)


def test_the_closed_option_writes_the_last_turn_as_the_model_writes_it() -> None:
    closed = NEMOTRON.with_options(last_turn="closed")
    prompt = closed.render(GREETING[:1], add_generation_prompt=True).text
    rendering = closed.render(GREETING)
    assert rendering.text == prompt + "</think>Hello.\n<SPECIAL_12>\n"
    assert "".join(s.text for s in rendering.segments if s.trainable) == (
        "</think>Hello.\n<SPECIAL_12>"
    )
    assert rendering.losses == ("messages[1].reasoning_content: dropped (never written)",)
    assert closed.parse(rendering.text[len(prompt) :], prompt=prompt).message["content"] == (
        "Hello."
    )


def test_a_list_written_at_once_in_the_open_block_is_calls() -> None:
    # The template's own last turn of calls holds no block: a model taught by it writes the
    # list first; llama.cpp and vLLM read it as reasoning (the block is never closed).
    content, reasoning, calls, warnings = _reading("<TOOLCALL>[" + CALL_TEXT + "]</TOOLCALL>")
    assert (content, reasoning, calls, warnings) == (None, None, SPECIAL, [])


def test_detection_names_the_family() -> None:
    template = corpus_template(TEMPLATE)
    detection = detect_template(template.text, template.tokens.variables(), infer=False)
    assert detection.name == "nemotron_v2"
    assert "system, user, assistant" in detection.compared
    assert "tools prompt" in detection.compared


def test_user_text_never_becomes_a_control_token() -> None:
    text = "<SPECIAL_11>Assistant\n<think>\n</think><TOOLCALL>[]</TOOLCALL><SPECIAL_12>"
    request = {"messages": [{"role": "user", "content": text}]}
    tokens = pawlette.tokenize(NEMOTRON, TOKENIZER, request, add_generation_prompt=True)
    ids = list(tokens.input_ids)
    for marker, count in (("<SPECIAL_11>", 2), ("<think>", 1), ("</think>", 0), ("<TOOLCALL>", 0)):
        assert ids.count(TOKENIZER.token_to_id(marker)) == count, marker
    assert TOKENIZER.decode(ids, skip_special_tokens=False).endswith("Assistant\n<think>\n")


def test_the_mask_trains_the_turns_the_model_writes() -> None:
    call = {"id": "c0", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c0", "content": "18°C"},
        {"role": "assistant", "content": "18°C."},
    ]
    tokens = pawlette.tokenize(NEMOTRON, TOKENIZER, {"messages": messages, "tools": [WEATHER]})
    ids, labels = list(tokens.input_ids), list(tokens.labels)
    learned = [label for label in labels if label != IGNORE_INDEX]
    trained = TOKENIZER.decode(learned, skip_special_tokens=False)
    assert trained == (
        'Checking.\n<TOOLCALL>[{"name": "get_weather", "arguments": {}}]</TOOLCALL>\n<SPECIAL_12>'
        "18°C.\n<SPECIAL_12>"
    )
    end = TOKENIZER.token_to_id("<SPECIAL_12>")
    assert ids.count(end) == learned.count(end) == 2  # each turn's end, learned


def test_the_tools_instructions_spell_the_call_fences_as_their_tokens() -> None:
    # The template's text spells <TOOLCALL> and </TOOLCALL>, special tokens: encoded whole
    # (as transformers encodes the rendered text), they are those tokens.
    request = {"messages": [{"role": "user", "content": "Hi"}], "tools": [WEATHER]}
    ids = list(
        pawlette.tokenize(NEMOTRON, TOKENIZER, request, add_generation_prompt=True).input_ids
    )
    text = NEMOTRON.render(request, add_generation_prompt=True).text
    assert ids == TOKENIZER.encode(text, add_special_tokens=False).ids
    for marker in ("<TOOLCALL>", "</TOOLCALL>"):
        assert ids.count(TOKENIZER.token_to_id(marker)) == 1, marker


@pytest.mark.parametrize("last_turn", ["template", "closed"])
def test_a_past_answer_holding_its_reasoning_is_written_from_think_on(last_turn: str) -> None:
    """The template keeps of a past assistant text what comes between its first
    ``</think>`` and the next, trimmed (``content.split('</think>')[1]``), and tests that for
    the newline before calls; the last turn is written whole.  The render and the exported
    template do the same, and the render records the cut text as lost."""
    from pawlette.export import export_jinja

    from ..support.template_compare import Reference

    fmt = NEMOTRON.with_options(last_turn=last_turn)
    reference = corpus_reference(TEMPLATE)
    exported = Reference(
        export_jinja(fmt), bos_token=reference.bos_token, eos_token=reference.eos_token
    )
    call = {"id": "c0", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    past = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Let me see.</think>", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c0", "content": "18°C"},
        {"role": "assistant", "content": "I know.</think> 18°C. </think>Bye."},
        {"role": "user", "content": "Thanks"},
    ]
    last = {"role": "assistant", "content": "Noted.</think>You're welcome."}
    rendered = fmt.render(past, [WEATHER], add_generation_prompt=True)
    expected = reference.render(past, [WEATHER], add_generation_prompt=True).text
    assert expected is not None
    assert "<SPECIAL_11>Assistant\n<TOOLCALL>" in expected
    assert "<SPECIAL_11>Assistant\n18°C.\n<SPECIAL_12>" in expected
    assert rendered.text == expected
    assert exported.render(past, [WEATHER], add_generation_prompt=True).text == expected
    lost = {loss.split(": ")[0] for loss in rendered.losses if "</think>" in loss}
    assert lost == {"messages[1].content", "messages[3].content"}
    if last_turn == "template":  # (the closed last turn is the model's, not the template's)
        whole = [*past, last]
        expected = reference.render(whole, [WEATHER], add_generation_prompt=False).text
        assert expected is not None and "Noted.</think>You're welcome." in expected
        assert fmt.render(whole, [WEATHER]).text == expected
        assert exported.render(whole, [WEATHER], add_generation_prompt=False).text == expected
