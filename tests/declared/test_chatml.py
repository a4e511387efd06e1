"""chatml against Qwen's own templates (Qwen3 and Qwen2.5), byte for byte, under transformers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.declare import declare
from pawlette.errors import ParseError
from pawlette.formats import chatml

from ..declare.conversations import TOOLS, conversations
from .model_output import calls_of, check_every_way, content_of
from .reference import hugging_face_messages, render_reference

QWEN3 = pawlette.get_format("chatml")
QWEN25 = declare(chatml.layout(chatml.QWEN25))


def without_reasoning(request: dict[str, Any]) -> dict[str, Any]:
    messages = [
        {key: value for key, value in message.items() if key != "reasoning_content"}
        for message in request["messages"]
    ]
    return {**request, "messages": messages}


@settings(max_examples=60)
@given(request=conversations(QWEN3, strip=True), prompt=st.booleans())
def test_qwen3_template(request: dict[str, Any], prompt: bool) -> None:
    messages = hugging_face_messages(request["messages"], empty_content=True)
    expected = render_reference("Qwen-Qwen3-0.6B.jinja", messages, request.get("tools"), prompt)
    assert QWEN3.render(request, add_generation_prompt=prompt).text == expected


@settings(max_examples=60)
@given(request=conversations(QWEN25, strip=True), prompt=st.booleans())
def test_qwen25_template(request: dict[str, Any], prompt: bool) -> None:
    request = without_reasoning(request)
    messages = hugging_face_messages(request["messages"])
    expected = render_reference(
        "Qwen-Qwen2.5-7B-Instruct.jinja", messages, request.get("tools"), prompt
    )
    assert QWEN25.render(request, add_generation_prompt=prompt).text == expected


def test_qwen25_is_an_option_of_chatml() -> None:
    variant = QWEN3.with_options(default_system=chatml.QWEN25_SYSTEM, reasoning=False)
    request = {"messages": [{"role": "user", "content": "Hi"}], "tools": TOOLS}
    assert variant.render(request).text == QWEN25.render(request).text
    assert variant.parse_conversation(variant.render(request).text).messages == request["messages"]


@settings(max_examples=40)
@given(request=conversations(QWEN3))
def test_prompts_are_prefixes_of_the_training_render_within_a_query(
    request: dict[str, Any],
) -> None:
    """Qwen3 drops the reasoning of turns before the last user message, so the prefix
    property holds for the assistant turns after it (see the format's docstring)."""
    messages = request["messages"]
    tools = request.get("tools")
    full = QWEN3.render(messages, tools).text
    last_query = max(i for i, m in enumerate(messages) if m["role"] == "user")
    for index in range(last_query + 1, len(messages)):
        if messages[index]["role"] == "assistant":
            prompt = QWEN3.render(messages[:index], tools, add_generation_prompt=True).text
            assert full.startswith(prompt)


# ------------------------------------------------------------------ where Qwen3's template is lossy


def qwen3(messages: list[dict[str, Any]]) -> str:
    return render_reference(
        "Qwen-Qwen3-0.6B.jinja", hugging_face_messages(messages, empty_content=True), None, False
    )


@pytest.mark.parametrize(
    ("assistant", "loss"),
    [
        (
            {"content": "ok", "reasoning_content": "\nthought\n"},
            "messages[1].reasoning_content: trimmed at its ends",
        ),
        (
            {"content": "\nok", "reasoning_content": "r"},
            "messages[1].content: trimmed at its start",
        ),
        # No reasoning anywhere: the last turn's block is written empty, the text after it
        # trimmed all the same.
        ({"content": "\nok"}, "messages[1].content: trimmed at its start"),
    ],
)
def test_where_the_qwen3_template_trims_pawlette_trims_and_says_so(
    assistant: dict[str, Any], loss: str
) -> None:
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", **assistant}]
    rendering = QWEN3.render(messages)
    assert rendering.text == qwen3(messages)
    assert loss in rendering.losses


def test_content_holding_the_think_close_is_split_as_qwen3_splits_it() -> None:
    # The real template takes the text before </think> for reasoning (Reasoning.in_content).
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a</think>b"}]
    rendered = QWEN3.render(messages).text
    assert rendered == qwen3(messages)
    parsed = QWEN3.parse_conversation(rendered).messages[1]
    assert parsed["content"] == "b"
    assert parsed.get("reasoning_content") == "a"


def test_past_reasoning_is_dropped_like_qwen3_does() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b", "reasoning_content": "r1"},
        {"role": "user", "content": "c"},
        {"role": "assistant", "content": "d", "reasoning_content": "r2"},
    ]
    rendered = QWEN3.render(messages).text
    assert rendered == qwen3(messages)
    assert "r1" not in rendered and "<think>\nr2\n</think>\n\nd" in rendered


@settings(max_examples=30)
@given(request=conversations(QWEN3, strip=True), prompt=st.booleans())
def test_token_ids_equal_qwen_tokenizer(request: dict[str, Any], prompt: bool) -> None:
    """pawlette's ids are Qwen's tokenizer's own encoding of the rendered text (its added
    tokens matched), since no generated text spells a marker or starts with whitespace."""
    from ..support.qwen import qwen_tokenizer

    tokenizer = qwen_tokenizer()
    rendered = QWEN3.render(request, add_generation_prompt=prompt).text
    expected = tokenizer.encode(rendered, add_special_tokens=False).ids
    result = pawlette.tokenize(QWEN3, tokenizer, request, add_generation_prompt=prompt)
    assert list(result.input_ids) == expected


# --------------------------------------------------------------------------- model output
# What Qwen2.5/Qwen3 and Hermes models write, beyond the template's own spelling.  The real
# templates (llama.cpp's models/templates: Qwen-Qwen2.5-7B-Instruct, Qwen-Qwen3-0.6B,
# NousResearch-Hermes-2-Pro / Hermes-3) write '<tool_call>\n{...}\n</tool_call>'; vLLM's
# hermes parser reads the JSON between '<tool_call>' and '</tool_call>' whatever whitespace
# surrounds it, several blocks per turn, and an unclosed block at the end.

SPACES = ["", " ", "\n", "\n\n", "\r\n", "\t", " \n"]
WORDS = st.text(alphabet="abc xyz北京晴,.!?:", min_size=1, max_size=12)
NAMES = st.sampled_from(["get_weather", "search", "f", "天气"])
ARGUMENTS = st.dictionaries(
    st.sampled_from(["city", "q", "n", "地点"]),
    st.one_of(WORDS, st.integers(-5, 500), st.booleans(), st.lists(st.integers(0, 9))),
    max_size=3,
)


def call_json(name: str, arguments: dict[str, Any], compact: bool, name_first: bool) -> str:
    separators = (",", ":") if compact else (", ", ": ")
    body = json.dumps(arguments, ensure_ascii=False, separators=separators)
    members = {"name": name, "arguments": "@"} if name_first else {"arguments": "@", "name": name}
    return json.dumps(members, ensure_ascii=False, separators=separators).replace('"@"', body)


@st.composite
def qwen_turns(draw: st.DrawFn) -> tuple[str, str, list[tuple[str, str]]]:
    """A turn as a Qwen/Hermes model may write it: optional reasoning and text, then one to
    three calls, each fence with the whitespace the model chose (the template's or not)."""
    text = ""
    if draw(st.booleans()):
        text = "<think>\n" + draw(WORDS) + "\n</think>\n\n"
    prefix = draw(st.one_of(st.just(""), WORDS.map(str.strip).filter(bool)))
    calls = []
    pieces = [text + prefix]
    for index in range(draw(st.integers(1, 3))):
        name, arguments = draw(NAMES), draw(ARGUMENTS)
        body = call_json(name, arguments, draw(st.booleans()), draw(st.booleans()))
        before = draw(st.sampled_from(SPACES)) if index or prefix else ""
        opened, closed = draw(st.sampled_from(SPACES)), draw(st.sampled_from(SPACES))
        pieces.append(f"{before}<tool_call>{opened}{body}{closed}</tool_call>")
        calls.append((name, json.dumps(arguments, ensure_ascii=False)))
    return "".join(pieces), prefix, calls


@settings(max_examples=40, deadline=None)
@given(turn=qwen_turns(), seed=st.integers(0, 1000))
def test_calls_are_read_with_any_whitespace_around_the_fences(
    turn: tuple[str, str, list[tuple[str, str]]], seed: int
) -> None:
    """The gap found: '<tool_call>{...}</tool_call>' (no newlines) read as plain content with
    no warning.  Every whitespace around the fences reads as the call, whole, as streamed
    text in any pieces and as Qwen's own token ids in any groups; strict mode accepts it."""
    from ..support.qwen import qwen_tokenizer

    text, prefix, calls = turn
    reading = check_every_way(QWEN3, qwen_tokenizer(), text, seed)
    assert reading[2] == [], reading
    assert [(name, json.loads(arguments)) for name, arguments in calls_of(reading)] == [
        (name, json.loads(arguments)) for name, arguments in calls
    ]
    content = content_of(reading)
    assert content.startswith(prefix) and not content[len(prefix) :].strip()
    assert reading[1] == "tool_calls"
    QWEN3.parse(text, strict=True)


def test_the_template_spelling_still_renders_and_reads_as_before() -> None:
    """Reading more spellings changes no rendering: the writer writes the template's."""
    messages = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "Hi",
            "tool_calls": [
                {"id": "call_0", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    ]
    rendered = QWEN3.render(messages).text
    assert 'Hi\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call><|im_end|>' in rendered
    assert QWEN3.parse_conversation(rendered).messages == messages


BLOCK = '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'
MISREAD = [
    # (what the model wrote, calls read, what the warning is about)
    (BLOCK.replace("}}", "}"), 0, "not valid JSON"),
    (BLOCK.replace('"arguments"', '"args"'), 0, "unknown keys"),
    ('<tool_call>{"name": "f", "arguments": "{}"}</tool_call>', 0, "is not an object"),
    (BLOCK[: -len("</tool_call>")], 0, "not closed"),  # cut by the length limit
    (BLOCK + "\nDone.", 1, "text in state"),  # text after the calls is kept, reported
    (BLOCK + "\nand\n" + BLOCK, 2, "text in state"),  # vLLM drops the text between
    ('{"name": "f", "arguments": {}}</tool_call>', 0, "marker '</tool_call>'"),
    ("<think>\n" + BLOCK + "\n</think>\n\n", 0, "marker '<tool_call>'"),
    ('<tool_call>{"type": "function", "name": "f", "arguments": {}}</tool_call>', 0, "unknown"),
]


@pytest.mark.parametrize(("text", "count", "problem"), MISREAD)
def test_what_is_not_read_as_a_call_is_reported_never_dropped(
    text: str, count: int, problem: str
) -> None:
    from ..support.qwen import qwen_tokenizer

    reading = check_every_way(QWEN3, qwen_tokenizer(), text)
    assert len(calls_of(reading)) == count
    result = QWEN3.parse(text)
    assert any(problem in warning.message for warning in result.warnings), result.warnings
    if not count:  # the call that was not read is kept as text
        kept = (result.core.text or "") + (result.core.reasoning or "")
        body = text[text.index("{") : text.rindex("}") + 1]
        assert body in kept, (kept, text)
    with pytest.raises(ParseError):
        QWEN3.parse(text, strict=True)


@settings(max_examples=60, deadline=None)
@given(turn=qwen_turns(), cut=st.integers(0, 10_000), junk=st.sampled_from(["}", "x", "<", ""]))
def test_a_damaged_call_is_read_or_reported(
    turn: tuple[str, str, list[tuple[str, str]]], cut: int, junk: str
) -> None:
    """Damage a well-formed turn (a character replaced or the end cut off): every
    '<tool_call>' block is either read as a call or there is a warning (strict: an error)."""
    text, _, _ = turn
    start = text.index("<tool_call>")
    position = start + cut % (len(text) - start)
    damaged = text[:position] + junk + text[position + 1 :]
    result = QWEN3.parse(damaged)
    blocks = damaged.count("<tool_call>")
    read_calls = len(result.message.get("tool_calls") or [])
    assert read_calls == blocks or result.warnings, (damaged, result)
    if result.warnings:
        with pytest.raises(ParseError):
            QWEN3.parse(damaged, strict=True)
    else:
        QWEN3.parse(damaged, strict=True)
