"""DeepSeek V3.2's format (:mod:`pawlette.formats.deepseek_dsml`): what the models write, read
as the peers read it (SGLang's DSML detector, carried over as data in
``families/data/deepseek_dsml.json``), what the declaration decided, the thinking variant
against the template, and token ids with a tokenizer holding DeepSeek's special tokens."""

from __future__ import annotations

from typing import Any

import pytest

import pawlette
from pawlette.declare import layout_of

from ..support.conversations import generate_conversations
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import compare_renders, corpus_reference, own_turns
from .peers import case_id, cases, read_as_the_peer

CASES = cases("deepseek_dsml")
READ = [case for case in CASES if case["pawlette"] == "read"]
DECIDED = [case for case in CASES if case["pawlette"] != "read"]


@pytest.mark.parametrize("case", READ, ids=case_id)
def test_what_the_models_write_reads_as_the_peers_read_it(case: dict[str, Any]) -> None:
    assert not read_as_the_peer(case).warnings


@pytest.mark.parametrize("case", READ, ids=case_id)
def test_the_peers_dsml_in_v4s_section_reads_the_same(case: dict[str, Any]) -> None:
    """The same calls in V4's ``<｜DSML｜tool_calls>`` block (no V4 parser test of the peers
    was found; their V3.2 cases, with V4's section name)."""
    output = case["output"].replace("｜DSML｜function_calls>", "｜DSML｜tool_calls>")
    assert not read_as_the_peer({**case, "format": "deepseek_dsml:v4", "output": output}).warnings


@pytest.mark.parametrize("case", DECIDED, ids=case_id)
def test_shapes_the_template_never_writes_stay_text_with_a_warning(case: dict[str, Any]) -> None:
    """Decided: SGLang also reads a JSON object inside ``invoke`` and the tags without
    ``｜DSML｜``; the template writes neither, so pawlette keeps them as text and warns."""
    assert case["pawlette"] in ("json-in-invoke", "tags-without-dsml")
    parsed = pawlette.get_format(case["format"]).parse(case["output"])
    assert not parsed.message.get("tool_calls")
    if case["pawlette"] == "json-in-invoke":  # a malformed call: its text, and a warning
        assert '{"city": "Lima"}' in parsed.message["content"]
        assert parsed.warnings
    else:  # no DSML tag at all: text
        assert parsed.message["content"] == case["output"]
        assert not parsed.warnings


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]
CALL = {
    "id": "a",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Zürich", "days": 2}'},
}
REQUEST: dict[str, Any] = {
    "messages": [
        {"role": "user", "content": "Weather in Zürich? <｜User｜> is text here."},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "a", "content": '{"temp_c": 3}'},
        {"role": "assistant", "content": "3 °C."},
    ],
    "tools": TOOLS,
}


def test_a_string_typed_parameter_keeps_text_that_reads_as_json() -> None:
    fmt = pawlette.get_format("deepseek_dsml")
    written = (
        '\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="city" string="true">3</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls><｜end▁of▁sentence｜>"
    )
    (call,) = fmt.parse(written, tools=TOOLS).message["tool_calls"]
    assert call["function"]["arguments"] == '{"city": "3", "days": 3}'


def test_the_thinking_prompt_reads_reasoning_then_the_answer() -> None:
    fmt = pawlette.get_format("deepseek_dsml:v3.2-thinking")
    prompt = fmt.render(REQUEST["messages"][:1], TOOLS, add_generation_prompt=True).text
    assert prompt.endswith("<｜Assistant｜><think>")
    parsed = fmt.parse("warm</think>3 °C.<｜end▁of▁sentence｜>", prompt=prompt)
    assert parsed.message["reasoning_content"] == "warm"
    assert parsed.message["content"] == "3 °C."
    after_results = fmt.render(REQUEST["messages"][:3], TOOLS, add_generation_prompt=True).text
    assert after_results.endswith("</function_results>\n\n<think>")


def test_the_thinking_variant_renders_and_reads_as_its_template() -> None:
    fmt = pawlette.get_format("deepseek_dsml:v3.2-thinking")
    layout = layout_of(fmt)
    assert layout is not None
    reference = corpus_reference(
        "deepseek-ai-DeepSeek-V3.2", variables=layout.reference_variables()
    )
    # (Reasoning holding "</think>" reads back cut there: the template writes it as text.)
    avoid = (*fmt.special_markers, "<think>", "</think>")
    conversations = generate_conversations(8, seed=1, avoid=avoid)
    report = compare_renders(fmt, reference, conversations)
    assert report.agrees, report.describe()
    turns = own_turns(fmt, reference, conversations)
    assert turns.agrees, turns.describe()


def test_ids_keep_user_text_out_of_the_special_tokens() -> None:
    fmt = pawlette.get_format("deepseek_dsml")
    tokenizer = small_tokenizer(fmt.special_markers)
    result = pawlette.tokenize(fmt, tokenizer, REQUEST)
    ids = list(result.input_ids)
    assert ids.count(tokenizer.token_to_id("<｜User｜>")) == 1  # the one in the text is text
    written = fmt.render(REQUEST["messages"], TOOLS).text
    assert tokenizer.decode(ids, skip_special_tokens=False) == written
    # The model's own part: the call and the answer, each with its end of sentence.
    trained = [label for label in result.labels if label != -100]
    text = tokenizer.decode(trained, skip_special_tokens=False)
    assert text.startswith("\n\n<｜DSML｜function_calls>")
    assert text.endswith("3 °C.<｜end▁of▁sentence｜>")
    assert "</think>" not in text  # the prompt's block stands for it: not learned


@pytest.mark.parametrize(
    "template", ["deepseek-ai-DeepSeek-V4", "deepseek-ai-DeepSeek-V4-Flash-0731"]
)
def test_the_v4_thinking_variant_renders_and_reads_as_its_template(template: str) -> None:
    fmt = pawlette.get_format("deepseek_dsml:v4-thinking")
    layout = layout_of(fmt)
    assert layout is not None
    reference = corpus_reference(template, variables=layout.reference_variables())
    conversations = generate_conversations(8, seed=1, avoid=fmt.special_markers)
    report = compare_renders(fmt, reference, conversations)
    assert report.agrees, report.describe()
    turns = own_turns(fmt, reference, conversations)
    assert turns.agrees, turns.describe()


def test_v4_results_join_the_users_turn_and_the_prompt_closes_the_block() -> None:
    fmt = pawlette.get_format("deepseek_dsml:v4")
    messages = [*REQUEST["messages"][:3], {"role": "user", "content": "And tomorrow?"}]
    prompt = fmt.render(messages, TOOLS, add_generation_prompt=True).text
    assert prompt.endswith(
        '<｜User｜><tool_result>{"temp_c": 3}</tool_result>\n\nAnd tomorrow?<｜Assistant｜></think>'
    )
    parsed = fmt.parse("2 °C.<｜end▁of▁sentence｜>", prompt=prompt)
    assert parsed.message["content"] == "2 °C."
    assert "reasoning_content" not in parsed.message or not parsed.message["reasoning_content"]


def test_a_v4_call_without_arguments_writes_and_reads_its_blank_line() -> None:
    fmt = pawlette.get_format("deepseek_dsml:v4")
    call = {"id": "a", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "Time?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]
    written = fmt.render(messages).text
    assert '<｜DSML｜invoke name="get_time">\n\n</｜DSML｜invoke>\n' in written
    turn = written[len(fmt.render(messages[:1], add_generation_prompt=True).text) :]
    (read,) = fmt.parse(turn).message["tool_calls"]
    assert read["function"] == {"name": "get_time", "arguments": "{}"}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _answer(text: str | None, **fields: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **fields}


RESULT = {"role": "tool", "tool_call_id": "a", "content": '{"temp_c": 3}'}
CONSECUTIVE = [
    [_user("Hi"), _answer("One."), _answer("Two.")],
    [_user("Hi"), _answer("One."), _answer("Two."), _answer("Three."), _user("And?")],
    [_user("Hi"), _answer(None, tool_calls=[CALL]), RESULT, _answer("3 °C."), _answer("Cold.")],
    [_user("Hi"), _answer("Let me look."), _answer(None, tool_calls=[CALL]), RESULT],
    [_user("Hi"), _answer("One.", reasoning_content="first"), _answer("  Two.")],
]
"""Conversations with an answer right after another answer (text, calls, after results,
before a user message)."""

V3_2_AND_V4 = [
    ("deepseek_dsml", "deepseek-ai-DeepSeek-V3.2"),
    ("deepseek_dsml:v3.2-thinking", "deepseek-ai-DeepSeek-V3.2"),
    ("deepseek_dsml:v4", "deepseek-ai-DeepSeek-V4"),
    ("deepseek_dsml:v4-thinking", "deepseek-ai-DeepSeek-V4"),
    ("deepseek_dsml:v4", "deepseek-ai-DeepSeek-V4-Flash-0731"),
]


@pytest.mark.parametrize(("variant", "template"), V3_2_AND_V4)
def test_an_answer_after_an_answer_is_written_exported_and_read_as_the_template_writes_it(
    variant: str, template: str
) -> None:
    """V3.2's template writes an answer right after another answer's end with no opener and
    no reasoning block (nor its ``</think>`` stand-in), and no generation prompt after an
    answer; V4's opens every answer.  The render, the exported template and the strict parse
    of the template's own text agree with it."""
    from pawlette.export import export_jinja

    from ..support.template_compare import Reference

    fmt = pawlette.get_format(variant)
    layout = layout_of(fmt)
    assert layout is not None
    variables = layout.reference_variables()
    reference = corpus_reference(template, variables=variables)
    exported = Reference(
        export_jinja(fmt), bos_token=reference.bos_token, eos_token=reference.eos_token
    )
    for messages in CONSECUTIVE:
        tools = TOOLS if any("tool_calls" in message for message in messages) else None
        for prompt in (False, True):
            expected = reference.render(messages, tools, add_generation_prompt=prompt).text
            assert expected is not None
            assert fmt.render(messages, tools, add_generation_prompt=prompt).text == expected
            assert exported.render(messages, tools, add_generation_prompt=prompt).text == expected
        written = reference.render(messages, tools, add_generation_prompt=False).text
        assert written is not None
        read = fmt.parse_conversation(written, strict=True).to_request()["messages"]
        assert [(message["role"], message.get("content")) for message in read] == [
            (message["role"], message.get("content") or None) for message in messages
        ]


def test_reasoning_of_an_answer_after_an_answer_is_a_recorded_loss() -> None:
    """V3.2 with thinking: the template writes no block in an answer right after another
    answer, so its reasoning is dropped, and the rendering says so."""
    fmt = pawlette.get_format("deepseek_dsml:v3.2-thinking")
    messages = [
        _user("Hi"),
        _answer("One.", reasoning_content="first"),
        _answer("Two.", reasoning_content="second"),
    ]
    reference = corpus_reference("deepseek-ai-DeepSeek-V3.2", variables={"thinking": True})
    rendering = fmt.render(messages)
    assert rendering.text == reference.render(messages, add_generation_prompt=False).text
    assert rendering.losses == (
        "messages[2].reasoning_content: dropped (written only after a user message or results)",
    )
    read = fmt.parse_conversation(rendering.text, strict=True).to_request()["messages"]
    assert [message.get("reasoning_content") for message in read] == [None, "first", None]
