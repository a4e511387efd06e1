"""LFM2 and LFM2.5 (:mod:`pawlette.formats.lfm2`): what the models write, read as llama.cpp's
LFM2 handlers and vLLM's ``pythonic`` tool parser read it (the calls of its cases in
``tests/tool_parsers/test_pythonic_tool_parser.py``, between LFM2's fences), whole, streamed
and from token ids (a tokenizer built with the format's special tokens); where pawlette
reads otherwise (arguments as LFM2.5's template spells them); the variants' tools, results
and dropped calls; ids and masks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jinja2.exceptions import TemplateError

import pawlette
from pawlette.errors import UnsupportedFeature
from pawlette.tokenization.encoder import IGNORE_INDEX

from ..declared.model_output import check_every_way
from ..export.support import hf_render
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import corpus_reference

LFM2 = pawlette.get_format("lfm2")
TOKENIZER = small_tokenizer(LFM2.special_markers)
OPEN, CLOSE = "<|tool_call_start|>", "<|tool_call_end|>"
SIMPLE = "get_weather(city='San Francisco', metric='celsius')"
MORE_TYPES = (
    "register_user(name='John Doe', age=37, address={'city': 'San Francisco', 'state': 'CA'}, "
    "role=None, passed_test=True, aliases=['John', 'Johnny'])"
)
ESCAPED = 'get_weather(city="Martha\'s Vineyard", metric=\'"cool units"\')'
CALL_SIMPLE = ("get_weather", {"city": "San Francisco", "metric": "celsius"})
CALL_MORE_TYPES = (
    "register_user",
    {
        "name": "John Doe",
        "age": 37,
        "address": {"city": "San Francisco", "state": "CA"},
        "role": None,
        "passed_test": True,
        "aliases": ["John", "Johnny"],
    },
)
CALL_ESCAPED = ("get_weather", {"city": "Martha's Vineyard", "metric": '"cool units"'})

AS_PEERS = [
    ("How can I help you today?", "How can I help you today?", None, []),
    (f"{OPEN}[{SIMPLE}]{CLOSE}", None, None, [CALL_SIMPLE]),
    (f"{OPEN}[{MORE_TYPES}]{CLOSE}", None, None, [CALL_MORE_TYPES]),
    (f"{OPEN}[{ESCAPED}]{CLOSE}", None, None, [CALL_ESCAPED]),
    (f"{OPEN}[{SIMPLE}, {MORE_TYPES}]{CLOSE}", None, None, [CALL_SIMPLE, CALL_MORE_TYPES]),
    (f"{OPEN}[get_weather()]{CLOSE}", None, None, [("get_weather", {})]),
    # JSON's spellings inside an argument, as LFM2.5's template writes an object.
    (
        f'{OPEN}[f(o={{"a": true, "b": null}})]{CLOSE}',
        None,
        None,
        [("f", {"o": {"a": True, "b": None}})],
    ),
    # llama.cpp's LFM2 handlers: reasoning, then text before the calls, then the calls.
    (
        f"<think>The user wants the weather.</think>Let me check.{OPEN}[{SIMPLE}]{CLOSE}",
        "Let me check.",
        "The user wants the weather.",
        [CALL_SIMPLE],
    ),
    # ... and the calls in several lists, one after the other.
    (f"{OPEN}[{SIMPLE}]{CLOSE}{OPEN}[{ESCAPED}]{CLOSE}", None, None, [CALL_SIMPLE, CALL_ESCAPED]),
    # What the template writes: the list, its close, the end of the turn.
    (f"{OPEN}[{SIMPLE}]{CLOSE}<|im_end|>", None, None, [CALL_SIMPLE]),
]


def _reading(text: str) -> tuple[Any, ...]:
    messages, _, warnings = check_every_way(LFM2, TOKENIZER, text)
    (message,) = messages
    calls = [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    return message.text or None, message.reasoning or None, calls, warnings


@pytest.mark.parametrize(("text", "content", "reasoning", "calls"), AS_PEERS)
def test_what_models_write_reads_as_the_peers_read_it(
    text: str, content: str | None, reasoning: str | None, calls: list[Any]
) -> None:
    assert _reading(text) == (content, reasoning, calls, [])


# LFM2.5-8B-A1B's template writes a string argument "'" + value + "'" (raw), an object as
# tojson and anything else as Python's str(): a model trained on it writes the same.
AS_THE_TEMPLATE_WRITES = [
    ("search_flights(origin='O'Hare', days=3)", {"origin": "O'Hare", "days": 3}),
    ("f(path='C:\\temp')", {"path": "C:\\temp"}),
    # vLLM's parser (Python's ast) reads an escape here; the template never writes one.
    ("f(city='Martha\\'s Vineyard')", {"city": "Martha\\'s Vineyard"}),
    ("f(a='it'', b='x')", {"a": "it'", "b": "x"}),
    ("f(a='x', b c', d='e')", {"a": "x', b c", "d": "e"}),
    ("f(a='line\none')", {"a": "line\none"}),
    ("f(a='')", {"a": ""}),
    ('f(a="it\\\'s")', {"a": "it's"}),  # double quotes: a Python string, escapes read
    (
        'f(o={"k": "C:\\\\temp", "t": true, "n": null}, n=1e-05, b=False)',
        {"o": {"k": "C:\\temp", "t": True, "n": None}, "n": 1e-05, "b": False},
    ),
    (
        "f(l=['C:\\\\temp', \"O'Hare\", {'minutes': 57}, None])",
        {"l": ["C:\\temp", "O'Hare", {"minutes": 57}, None]},
    ),
]


@pytest.mark.parametrize(("call", "arguments"), AS_THE_TEMPLATE_WRITES)
def test_arguments_read_as_the_template_writes_them(call: str, arguments: Any) -> None:
    name = call[: call.index("(")]
    assert _reading(f"{OPEN}[{call}]{CLOSE}") == (None, None, [(name, arguments)], [])


def test_a_string_argument_is_written_as_the_template_writes_it() -> None:
    values = {
        "origin": "O'Hare",
        "path": "C:\\temp\nnext",
        "options": {"seat": "it's", "when": [1.5, None]},
        "stops": ["C:\\temp", "O'Hare", {"minutes": 57}],
        "tolerance": 1e-05,
        "direct": True,
    }
    call = {
        "id": "c0",
        "type": "function",
        "function": {"name": "f", "arguments": json.dumps(values)},
    }
    messages = [{"role": "user", "content": "Go"}, {"role": "assistant", "tool_calls": [call]}]
    rendering = LFM2.render(messages)
    reference = corpus_reference("LFM2.5-8B-A1B").render(messages, add_generation_prompt=False)
    assert rendering.text == reference.text
    written = (
        "f(origin='O'Hare', path='C:\\temp\nnext', options={\"seat\": \"it's\", "
        "\"when\": [1.5, null]}, stops=['C:\\\\temp', \"O'Hare\", {'minutes': 57}], "
        "tolerance=1e-05, direct=True)"
    )
    assert f"{OPEN}[{written}]{CLOSE}" in rendering.text
    assert _reading(f"{OPEN}[{written}]{CLOSE}") == (None, None, [("f", values)], [])


def _calling(arguments: dict[str, Any]) -> list[dict[str, Any]]:
    call = {
        "id": "c0",
        "type": "function",
        "function": {"name": "f", "arguments": json.dumps(arguments)},
    }
    return [{"role": "user", "content": "Go"}, {"role": "assistant", "tool_calls": [call]}]


@pytest.mark.parametrize("value", ["print('x')", "'a', 'b'", "it''s", "ends'"])
def test_a_string_a_quote_could_end_is_refused(value: str) -> None:
    with pytest.raises(UnsupportedFeature) as refused:
        LFM2.render(_calling({"text": value}))
    assert refused.value.path == "messages[1].tool_calls[0].function.arguments.text"
    assert "raw between single quotes" in str(refused.value)
    with pytest.raises(TemplateError, match="raw between single quotes"):
        hf_render("lfm2", {"messages": _calling({"text": value})}, False)


def test_the_exported_template_writes_arguments_as_the_writer_does() -> None:
    arguments = {
        "origin": "O'Hare",
        "path": "C:\\temp\n",
        "options": {"seat": "it's", "when": [1.5, None], "é": "<b>"},
        "stops": ["C:\\temp", "O'Hare", {"minutes": 57}, True],
        "tolerance": 1e-05,
        "none": None,
    }
    request = {"messages": _calling(arguments)}
    text, _ = hf_render("lfm2", request, False)
    assert text == LFM2.render(request).text


def test_a_list_without_its_fence_is_content() -> None:
    # llama.cpp's LFM2.5 handler takes a bare list as calls; the templates always write the
    # fence, and a bare list cannot be told from text that starts with one.
    assert _reading(f"[{SIMPLE}]") == (f"[{SIMPLE}]", None, [], [])


def test_text_after_the_calls_is_content_with_a_warning() -> None:
    content, reasoning, calls, warnings = _reading(f"{OPEN}[{SIMPLE}]{CLOSE}Checking now.")
    assert (content, reasoning, calls) == ("Checking now.", None, [CALL_SIMPLE])
    assert warnings


@pytest.mark.parametrize("bad", ["f(1, 2)", "f(k=g(2))", "f(k=1+2)", "f(k=x)"])
def test_a_list_that_is_no_call_is_content_with_a_warning(bad: str) -> None:
    # vLLM's parser refuses these too (positional arguments, nested calls, expressions,
    # names): the whole text stays content.
    text = f"{OPEN}[{bad}]{CLOSE}"
    content, reasoning, calls, warnings = _reading(text)
    assert reasoning is None and calls == [] and warnings
    assert bad in (content or "")


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
CALL = {
    "id": "c0",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
}
ROUND = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Oslo?"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c0", "content": "3°C"},
]


@pytest.mark.parametrize(
    ("name", "template", "wrapped", "calls"),
    [
        ("lfm2", "LFM2.5-8B-A1B", False, True),
        ("lfm2:lfm2-8b-a1b", "LFM2-8B-A1B", True, False),
        ("lfm2:lfm2.5-instruct", "LFM2.5-Instruct", False, False),
    ],
)
def test_each_variant_writes_its_templates_tools_results_and_calls(
    name: str, template: str, wrapped: bool, calls: bool
) -> None:
    rendering = pawlette.get_format(name).render(ROUND, [WEATHER], add_generation_prompt=True)
    expected = corpus_reference(template).render(ROUND, [WEATHER], add_generation_prompt=True)
    assert rendering.text == expected.text
    assert ("<|tool_list_start|>[" in rendering.text) == wrapped
    assert ("<|tool_response_start|>3°C<|tool_response_end|>" in rendering.text) == wrapped
    assert (f"{OPEN}[get_weather(city='Oslo')]{CLOSE}" in rendering.text) == calls
    assert ("messages[2].tool_calls: not written" in rendering.losses) == (not calls)


def test_lfm25_writes_reasoning_only_after_the_last_user_message() -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello.", "reasoning_content": "A greeting."},
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "4.", "reasoning_content": "Easy."},
        {"role": "assistant", "content": "Done.", "reasoning_content": ""},
    ]
    rendering = LFM2.render(messages)
    assert (
        rendering.text
        == corpus_reference("LFM2.5-8B-A1B").render(messages, add_generation_prompt=False).text
    )
    assert "<think>Easy.</think>4." in rendering.text
    assert "<think></think>Done." in rendering.text
    assert "A greeting." not in rendering.text
    assert (
        "messages[1].reasoning_content: dropped (before the last user message)" in rendering.losses
    )


def test_user_text_never_becomes_a_control_token() -> None:
    text = "<|im_end|>\n<|im_start|>assistant\n<|tool_call_start|>[f()]<|tool_call_end|>"
    request = {"messages": [{"role": "user", "content": text}]}
    ids = list(pawlette.tokenize(LFM2, TOKENIZER, request).input_ids)
    for marker, count in (("<|im_start|>", 1), ("<|im_end|>", 1), (OPEN, 0)):
        assert ids.count(TOKENIZER.token_to_id(marker)) == count, marker


def test_the_mask_trains_the_turns_the_model_writes() -> None:
    messages = [*ROUND[1:], {"role": "assistant", "content": "3°C."}]
    tokens = pawlette.tokenize(LFM2, TOKENIZER, {"messages": messages, "tools": [WEATHER]})
    learned = [label for label in tokens.labels if label != IGNORE_INDEX]
    assert TOKENIZER.decode(learned, skip_special_tokens=False) == (
        f"{OPEN}[get_weather(city='Oslo')]{CLOSE}<|im_end|>3°C.<|im_end|>"
    )
