"""DeepSeek's formats (:mod:`pawlette.formats.deepseek`): what the models write, read as the
peers read it (llama.cpp's parser tests, carried over as data in
``families/data/deepseek.json``, each with its source), what the declaration decided, and
token ids with a tokenizer holding DeepSeek's special tokens."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pawlette

from ..support.small_bpe import small_tokenizer

CASES = json.loads((Path(__file__).parent / "families" / "data" / "deepseek.json").read_text())
READ = [case for case in CASES if case["pawlette"] == "read"]


def _tools(case: dict[str, Any]) -> list[dict[str, Any]] | None:
    names = sorted({call["name"] for call in case["expected"]["tool_calls"]})
    return [
        {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
        for name in names
    ] or None


def _calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (call["function"]["name"], json.loads(call["function"]["arguments"]))
        for call in message.get("tool_calls") or []
    ]


def _case_id(case: dict[str, Any]) -> str:
    return f"{case['format']}:{case['output'][:32]}"


@pytest.mark.parametrize("case", READ, ids=_case_id)
def test_what_the_models_write_reads_as_the_peers_read_it(case: dict[str, Any]) -> None:
    parsed = pawlette.get_format(case["format"]).parse(case["output"], tools=_tools(case))
    message, expected = parsed.message, case["expected"]
    assert (message.get("content") or None) == (expected["content"] or None)
    assert (message.get("reasoning_content") or None) == (expected["reasoning_content"] or None)
    assert _calls(message) == [(call["name"], call["arguments"]) for call in expected["tool_calls"]]
    # A marker the peers keep as text (a call marker inside the reasoning, a doubled
    # <think>, an unopened </think>) is text here too, with a warning naming it.
    kept = (expected["content"] or "") + (expected["reasoning_content"] or "")
    fmt = pawlette.get_format(case["format"])
    assert bool(parsed.warnings) == any(marker in kept for marker in fmt.special_markers)


def test_text_after_the_reasoning_is_kept_as_written() -> None:
    """Decided: llama.cpp's test compares trimmed text; pawlette keeps the newline the model
    wrote after ``</think>`` (nothing silently dropped)."""
    (case,) = [case for case in CASES if case["pawlette"] == "verbatim-text"]
    parsed = pawlette.get_format(case["format"]).parse(case["output"])
    assert parsed.message["reasoning_content"] == "REASONING"
    assert parsed.message["content"] == "\nCONTENT"


def test_every_peer_case_is_read_or_decided() -> None:
    # continue-final-message: llama.cpp's prefill continuation, not a completion of a prompt.
    assert {case["pawlette"] for case in CASES} <= {
        "read",
        "verbatim-text",
        "continue-final-message",
        # llama.cpp's reasoning_format=none leaves the block in content: pawlette always
        # separates reasoning (the option is llama.cpp's, not the format's).
        "reasoning-format-none",
    }
    assert len(READ) >= 15


REQUEST: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Zürich? <｜User｜> is text here."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": '{"temp_c": 3}'},
        {"role": "assistant", "content": "3 °C."},
        {"role": "user", "content": "Thanks"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {"name": "get_weather", "parameters": {"type": "object"}},
        }
    ],
}

WRITTEN = (
    "<｜begin▁of▁sentence｜>You are terse.<｜User｜>Weather in Zürich? <｜User｜> is text here."
    "<｜Assistant｜><think></think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather"
    '<｜tool▁sep｜>{"city": "Zürich"}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>'
    '<｜tool▁output▁begin｜>{"temp_c": 3}<｜tool▁output▁end｜>3 °C.<｜end▁of▁sentence｜>'
    "<｜User｜>Thanks<｜Assistant｜>"
)


def test_the_wire_format_and_the_thinking_prompt() -> None:
    fmt = pawlette.get_format("deepseek")
    rendering = fmt.render(REQUEST, add_generation_prompt=True)
    assert rendering.text == WRITTEN + "<think></think>"
    assert any("tools" in str(loss) for loss in rendering.losses)  # never written
    thinking = pawlette.get_format("deepseek:v3.1-thinking")
    assert thinking.render(REQUEST, add_generation_prompt=True).text == WRITTEN + "<think>"


def test_a_thinking_answer_after_results_is_content() -> None:
    """The prompt after tool results opens no block: the answer there is content."""
    fmt = pawlette.get_format("deepseek:v3.1-thinking")
    prompt = fmt.render(REQUEST["messages"][:4], REQUEST["tools"], add_generation_prompt=True)
    parsed = fmt.parse("3 °C.<｜end▁of▁sentence｜>", prompt=prompt.text)
    assert parsed.message["content"] == "3 °C."
    assert not parsed.message.get("reasoning_content")
    parsed = fmt.parse("warm</think>3 °C.<｜end▁of▁sentence｜>")  # after a user turn
    assert parsed.message["reasoning_content"] == "warm"


def test_ids_keep_user_text_out_of_the_special_tokens() -> None:
    fmt = pawlette.get_format("deepseek")
    tokenizer = small_tokenizer(fmt.special_markers)
    result = pawlette.tokenize(fmt, tokenizer, REQUEST)
    ids = list(result.input_ids)
    user_marker = tokenizer.token_to_id("<｜User｜>")
    assert ids.count(user_marker) == 2  # the one in the user's text stays text
    assert tokenizer.decode(ids, skip_special_tokens=False) == WRITTEN[: -len("<｜Assistant｜>")]


# The R1 templates' renders are compared by the shared family tests (families/deepseek.py);
# here, the Qwen distill under its enable_thinking (the r1 variant's prompt).
R1_TEMPLATES = [("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "deepseek:r1", ())]


@pytest.mark.parametrize(("template", "name", "without"), R1_TEMPLATES)
def test_r1_renders_as_its_templates(template: str, name: str, without: tuple[str, ...]) -> None:
    from pawlette.declare import layout_of

    from ..support.conversations import TEXT_STYLES, generate_conversations
    from ..support.template_compare import compare_renders, corpus_reference

    fmt = pawlette.get_format(name)
    layout = layout_of(fmt)
    assert layout is not None
    reference = corpus_reference(template, variables=layout.reference_variables())
    conversations = generate_conversations(
        12,
        avoid=fmt.special_markers,
        tools=False,
        reasoning=False,
        system_positions=("none", "first"),
        texts=tuple(style for style in TEXT_STYLES if style not in without),
    )
    report = compare_renders(fmt, reference, conversations)
    assert report.agrees, report.describe()


def test_v3_1_thinking_renders_and_reads_as_its_template() -> None:
    from pawlette.declare import layout_of

    from ..support.conversations import generate_conversations
    from ..support.template_compare import (
        compare_renders,
        corpus_reference,
        own_turns,
        without_reasoning,
    )

    fmt = pawlette.get_format("deepseek:v3.1-thinking")
    layout = layout_of(fmt)
    assert layout is not None
    reference = corpus_reference(
        "deepseek-ai-DeepSeek-V3.1", variables=layout.reference_variables()
    )
    conversations = generate_conversations(
        12, seed=1, avoid=fmt.special_markers, system_positions=("none", "first", "several")
    )
    report = compare_renders(fmt, reference, conversations)
    assert report.agrees, report.describe()
    turns = own_turns(fmt, reference, conversations, normalise=without_reasoning)
    assert turns.agrees, turns.describe()
