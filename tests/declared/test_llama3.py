"""llama3 against Meta's Llama 3.1, 3.2 and 3.3 templates, byte for byte, under transformers,
and pawlette's token ids against Meta's tokenizer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.errors import ParseError

from ..declare.conversations import TOOLS, conversations
from ..support.llama3 import llama3_tokenizer
from .model_output import calls_of, check_every_way
from .reference import hugging_face_messages, render_reference

LLAMA3 = pawlette.get_format("llama3")
TEMPLATES = [
    "meta-llama-Llama-3.1-8B-Instruct.jinja",
    "meta-llama-Llama-3.2-3B-Instruct.jinja",
    "meta-llama-Llama-3.3-70B-Instruct.jinja",
]
DATE = "26 Jul 2024"


def meta(file_name: str, request: dict[str, Any], prompt: bool, date: str = DATE) -> str:
    return render_reference(
        file_name,
        hugging_face_messages(request["messages"]),
        request.get("tools"),
        prompt,
        date_string=date,
        bos_token="<|begin_of_text|>",
    )


def results_quoted(request: dict[str, Any]) -> dict[str, Any]:
    """The request with each tool result as Meta's template writes it: ``tojson`` of the
    string (a string is iterable in Jinja), so ``18°C`` is written ``"18°C"``."""
    messages = [
        {**m, "content": json.dumps(m["content"], ensure_ascii=False)} if m["role"] == "tool" else m
        for m in request["messages"]
    ]
    return {**request, "messages": messages}


@pytest.mark.parametrize("file_name", TEMPLATES)
@settings(max_examples=40)
@given(request=conversations(LLAMA3, strip=True), prompt=st.booleans())
def test_meta_templates(file_name: str, request: dict[str, Any], prompt: bool) -> None:
    expected = meta(file_name, request, prompt)
    assert LLAMA3.render(results_quoted(request), add_generation_prompt=prompt).text == expected


def test_the_date_is_an_option() -> None:
    request = {"messages": [{"role": "user", "content": "Hi"}]}
    dated = LLAMA3.with_options(date_string="01 Jan 2025")
    for file_name in TEMPLATES:
        assert dated.render(request).text == meta(file_name, request, False, "01 Jan 2025")
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    rendered, _ = render_jinja_template(
        [request["messages"]], chat_template=export_jinja(LLAMA3), date_string="01 Jan 2025"
    )
    assert rendered[0] == dated.render(request).text


def test_where_meta_templates_are_lossy_pawlette_keeps_the_text() -> None:
    request = {
        "messages": [
            {"role": "user", "content": "  spaced  "},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "now", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "a", "content": "12:00"},
        ],
        "tools": TOOLS,
    }
    rendered = LLAMA3.render(request).text
    real = meta(TEMPLATES[0], request, False)
    assert "\n\n  spaced  <|eot_id|>" in rendered and "\n\nspaced<|eot_id|>" in real
    assert "\n\n12:00<|eot_id|>" in rendered and '\n\n"12:00"<|eot_id|>' in real
    parsed = LLAMA3.parse_conversation(rendered).messages
    assert parsed[0]["content"] == "  spaced  " and parsed[2]["content"] == "12:00"


def test_what_meta_templates_refuse_pawlette_refuses() -> None:
    two_calls = {
        "messages": [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": f"c{n}",
                        "type": "function",
                        "function": {"name": "now", "arguments": "{}"},
                    }
                    for n in range(2)
                ],
            },
        ],
        "tools": TOOLS,
    }
    with pytest.raises(pawlette.UnsupportedFeature, match="one call per turn"):
        LLAMA3.render(two_calls)
    with pytest.raises(Exception, match="single tool-calls"):
        meta(TEMPLATES[0], two_calls, False)


@settings(max_examples=30)
@given(request=conversations(LLAMA3, strip=True), prompt=st.booleans())
def test_token_ids_equal_meta_tokenizer(request: dict[str, Any], prompt: bool) -> None:
    """pawlette's ids are the tokenizer's own encoding of the rendered text (markers matched
    as special tokens), since no generated text spells a marker and none starts with
    whitespace (see the next test)."""
    tokenizer = llama3_tokenizer()
    rendered = LLAMA3.render(request, add_generation_prompt=prompt).text
    expected = tokenizer.encode(rendered, add_special_tokens=False).ids
    result = pawlette.tokenize(LLAMA3, tokenizer, request, add_generation_prompt=prompt)
    assert list(result.input_ids) == expected


def test_ids_are_cut_where_the_model_starts_writing() -> None:
    """An answer starting with a newline: the tokenizer merges it with the header's blank
    line (one token), pawlette keeps the prompt's ids whole, as the model saw them."""
    tokenizer = llama3_tokenizer()
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "\na"}]
    prompt = pawlette.tokenize(LLAMA3, tokenizer, messages[:1], add_generation_prompt=True)
    full = pawlette.tokenize(LLAMA3, tokenizer, messages)
    assert list(full.input_ids[: len(prompt.input_ids)]) == list(prompt.input_ids)
    whole = tokenizer.encode(LLAMA3.render(messages).text, add_special_tokens=False).ids
    assert whole[: len(prompt.input_ids)] != list(prompt.input_ids)


# --------------------------------------------------------------------------- model output
# Meta's templates write '{"name": ..., "parameters": {...}}'; Llama 3.x models write
# "arguments" as often, after '<|python_tag|>' or not, ending with <|eot_id|> or <|eom_id|>.
# vLLM's llama3_json parser reads both keys and refuses a call holding both.

WORDS = st.text(alphabet="abc xyz北京晴,.!?:", min_size=1, max_size=12)
ARGUMENTS = st.dictionaries(
    st.sampled_from(["city", "q", "n", "地点"]),
    st.one_of(WORDS, st.integers(-5, 500), st.booleans(), st.lists(st.integers(0, 9))),
    max_size=3,
)


@st.composite
def llama_turns(draw: st.DrawFn) -> tuple[str, str, dict[str, Any]]:
    name = draw(st.sampled_from(["get_weather", "search", "天气"]))
    arguments = draw(ARGUMENTS)
    key = draw(st.sampled_from(["parameters", "arguments"]))
    members: list[tuple[str, Any]] = [(key, arguments), ("name", name)]
    if draw(st.booleans()):
        members.reverse()
    if draw(st.booleans()):  # the OpenAI wrapper's key, which llama.cpp reads too
        members.insert(draw(st.integers(0, 2)), ("type", "function"))
    compact = draw(st.booleans())
    body = json.dumps(dict(members), ensure_ascii=False, separators=(",", ":") if compact else None)
    lead = draw(st.sampled_from(["", "<|python_tag|>", "\n", " "]))
    end = draw(st.sampled_from(["", "\n", "<|eot_id|>", "<|eom_id|>"]))
    return lead + body + end, name, arguments


@settings(max_examples=40, deadline=None)
@given(turn=llama_turns(), seed=st.integers(0, 1000))
def test_calls_are_read_under_parameters_or_arguments(
    turn: tuple[str, str, dict[str, Any]], seed: int
) -> None:
    """The gap found: a call under "arguments" read as content with a warning.  Either key
    reads as the call, whole, as streamed text in any pieces and as Meta's token ids in any
    groups; strict mode accepts it."""
    text, name, arguments = turn
    reading = check_every_way(LLAMA3, llama3_tokenizer(), text, seed)
    assert reading[2] == [], reading
    ((called, written),) = calls_of(reading)
    assert called == name and json.loads(written) == arguments
    assert reading[1] == "tool_calls"
    LLAMA3.parse(text, strict=True)


def test_render_writes_parameters() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_0", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    ]
    rendered = LLAMA3.render(messages).text
    assert rendered.endswith('{"name": "f", "parameters": {}}<|eot_id|>')
    assert LLAMA3.parse_conversation(rendered).messages == messages


LLAMA_MISREAD = [
    ('{"name": "f", "parameters": {"a": 1}, "arguments": {"a": 2}}', 'both "parameters" and'),
    ('{"name": "f", "arguments": {"a": 1}, "parameters": {"a": 1}}', 'both "parameters" and'),
    ('{"name": "f", "arguments": "{}"}', '"arguments" is not an object'),
    ('<|python_tag|>{"name": "f", "arguments": [1]}', '"arguments" is not an object'),
    # Calls joined by ';' are read only when every one of them is a call.
    ('{"name": "f", "parameters": {}}; garbage', "not valid JSON"),
    ('{"name": "f", "parameters": {}};; {"name": "g"}', "not valid JSON"),
    # A call after text is content (the peers disagree): reported, with the text as written.
    ('Here it is: {"name": "f", "parameters": {}}', "a call to 'f' after text"),
    # Meta's built-in tools (brave_search, wolfram_alpha): pawlette's llama3 declares none.
    ('<|python_tag|>brave_search.call(query="x")', "not valid JSON"),
    ('{"type": "tool", "name": "f", "parameters": {}}', '"type" is not "function"'),
    ('{"kind": "function", "name": "f", "parameters": {}}', "unknown keys ['kind']"),
    # A list of calls: vLLM reads the first; this format writes one call, as an object.
    ('[{"name": "f", "parameters": {"a": 1}}]', "a JSON list of 1 call(s)"),
    ('[{"name": "f", "arguments": {}}, {"name": "g", "parameters": {}}]', "a JSON list of 2"),
]


LLAMA_JOINED = [
    # vLLM's llama3_json and SGLang's llama3 detector read these (their tests' inputs).
    ('{"name": "f", "parameters": {"a": 1}}; {"name": "g", "parameters": {}}', ["f", "g"]),
    ('{"name": "f", "parameters": {}};{"name": "g", "parameters": {}}', ["f", "g"]),
    ('{"name": "f", "parameters": {}} ;\n{"name": "g", "arguments": {}}', ["f", "g"]),
    ('<|python_tag|>{"name": "f", "parameters": {}};{"name": "g", "parameters": {}}', ["f", "g"]),
    # SGLang reads a call without arguments as {} (vLLM leaves it as text).
    ('{"name": "get_time"}', ["get_time"]),
    ('<|python_tag|>{"name": "get_time"}', ["get_time"]),
]


@pytest.mark.parametrize(("text", "names"), LLAMA_JOINED)
def test_what_the_peers_read_as_several_calls_or_a_call_without_arguments(
    text: str, names: list[str]
) -> None:
    reading = check_every_way(LLAMA3, llama3_tokenizer(), text)
    assert [name for name, _ in calls_of(reading)] == names
    assert reading[2] == []  # no warning
    result = LLAMA3.parse(text, strict=True)
    assert result.finish_reason == "tool_calls"
    assert json.loads(result.message["tool_calls"][-1]["function"]["arguments"]) == {}


@pytest.mark.parametrize(("text", "problem"), LLAMA_MISREAD)
def test_a_call_not_read_is_reported_and_kept(text: str, problem: str) -> None:
    reading = check_every_way(LLAMA3, llama3_tokenizer(), text)
    assert calls_of(reading) == []
    result = LLAMA3.parse(text)
    assert any(problem in warning.message for warning in result.warnings), result.warnings
    assert text.removeprefix("<|python_tag|>") in result.core.text
    with pytest.raises(ParseError):
        LLAMA3.parse(text, strict=True)


@pytest.mark.parametrize(
    "text", ["[1, 2]", '[{"name": "f"}]', '["a", {"name": "f", "parameters": {}}]', "[", "[x"]
)
def test_a_json_list_that_holds_no_calls_is_plain_content(text: str) -> None:
    reading = check_every_way(LLAMA3, llama3_tokenizer(), text)
    assert reading[2] == [] and calls_of(reading) == []
    assert LLAMA3.parse(text, strict=True).message == {"role": "assistant", "content": text}
