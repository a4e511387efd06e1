"""Reading IFM-K2-Horizon's Markdown tools for the types of their parameters
(:mod:`pawlette.formats.ifm.markdown_reading`): a call's value of a string parameter, written
as it is, reads back as that string (``"0"``, not 0) from a whole conversation, streamed, and
from token ids, as a completion parsed with the request's tools reads it; where the schema
says nothing, the text that is JSON reads as JSON (the documented loss)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.declare.xml_calls import schema_types
from pawlette.engine.fold import fold
from pawlette.formats.ifm import markdown, schema
from pawlette.formats.ifm.markdown_reading import string_parameters, typed_tools
from pawlette.openai import message_to_openai
from pawlette.tokenization.ids import IdParser

from ...declare.tokens import segment_ids, tokenizer
from ...helpers import feed_in_pieces, random_sizes, sequential_ids

PARAMETERS = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "description": "A code."},
        "listed": {"type": ["string"]},
        "count": {"type": "integer"},
        "anything": {},
        "maybe": {"type": ["string", "null"]},
        "mode": {"enum": ["true", "null", "fast"], "description": "How."},
        "mixed": {"enum": ["a", 1]},
        "texts": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["code"],
}
TOOL = {"type": "function", "function": {"name": "act", "parameters": PARAMETERS}}
ARGUMENTS = {
    "code": "0",
    "listed": "true",
    "count": 0,
    "anything": "0",
    "maybe": "x",
    "mode": "true",
    "mixed": "a",
    "texts": ["1"],
}
READ = {**ARGUMENTS, "anything": 0}
"""What reading gives back: ``anything``'s schema says nothing, so its text ``0`` reads as
the number (the loss the module's documentation states)."""
STRINGS = frozenset({"code", "listed", "mode"})


def _request(arguments: dict[str, Any] = ARGUMENTS) -> dict[str, Any]:
    call = {
        "id": "call_0",
        "type": "function",
        "function": {"name": "act", "arguments": json.dumps(arguments)},
    }
    return {
        "messages": [
            {"role": "user", "content": "Go."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_0", "content": "done"},
        ],
        "tools": [TOOL],
    }


def _arguments_of(messages: list[dict[str, Any]]) -> dict[str, Any]:
    (call,) = [call for message in messages for call in message.get("tool_calls") or []]
    arguments: dict[str, Any] = json.loads(call["function"]["arguments"])
    return arguments


# ------------------------------------------------------------------ the listing


def test_the_string_parameters_are_those_whose_line_says_string() -> None:
    listing = markdown.listing([TOOL["function"]])
    assert string_parameters(listing) == {"act": STRINGS}
    (tool,) = typed_tools(listing)
    assert tool.name == "act"
    assert tool.parameters == {
        "type": "object",
        "properties": {name: {"type": "string"} for name in sorted(STRINGS)},
    }


def test_a_description_spelling_parameters_before_the_heading_is_not_read() -> None:
    """A tool's description comes before its ``**Parameters**`` line: parameter lines in it
    are text."""
    function = {
        "name": "act",
        "description": "Fake:\n\n**Parameters**\n- `count` *(string)*",
        "parameters": {"type": "object", "properties": {"count": {"type": "integer"}}},
    }
    assert string_parameters(markdown.listing([function])) == {"act": frozenset()}


def test_a_parameter_listed_twice_with_two_types_is_not_typed() -> None:
    listing = (
        "\n## act\n\n**Parameters**\n- `a` *(string)*\n- `a` *(integer)*\n- `b` *(string)*"
        "\n- `b` *(string, required)*"
    )
    assert string_parameters(listing) == {"act": frozenset({"b"})}


def test_a_tool_named_twice_is_not_typed() -> None:
    one = {"name": "act", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}
    other = {"name": "act", "parameters": {"type": "object", "properties": {"a": {}}}}
    assert string_parameters(markdown.listing([one, other])) == {}


def test_parameters_under_returns_and_nested_ones_are_not_read() -> None:
    function = {
        "name": "act",
        "parameters": {
            "type": "object",
            "properties": {"where": {"type": "object", "properties": {"city": {"type": "string"}}}},
        },
        "returns": {"type": "object", "properties": {"out": {"type": "string"}}},
    }
    listing = markdown.listing([function])
    assert "\n  - `city` *(string)*" in listing
    assert string_parameters(listing) == {"act": frozenset()}


@pytest.mark.parametrize(
    ("values", "string"),
    [
        (["a", "b c"], True),
        (["true", "null", "é"], True),
        (["a", 1], False),
        (["1"], False),  # written as 1 is: not told from the number
        (["a", None], False),
        (["a", ["b"]], False),
        (["a", ""], False),
        (["", "a"], False),
        ([None, "", "x"], False),
        (["a`b", "c"], False),  # a value holding a backquote: the list is not told apart
        (["a", "b`, `1"], False),
    ],
)
def test_an_enum_without_a_type_is_a_string_when_every_value_is_text(
    values: list[Any], string: bool
) -> None:
    function = {
        "name": "act",
        "parameters": {"type": "object", "properties": {"a": {"enum": values}}},
    }
    expected = frozenset({"a"}) if string else frozenset()
    assert string_parameters(markdown.listing([function])) == {"act": expected}


# ------------------------------------------------------------------ random schemas

_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "object", "array", "null"])
_TEXTS = st.sampled_from(["x", "0", "true", "a b", "l1\nl2", "- `a` *(string)*", ""])
_LEAVES = st.one_of(
    st.just({}),
    st.builds(lambda kind: {"type": kind}, st.one_of(_TYPES, st.lists(_TYPES, max_size=2))),
    st.builds(
        lambda values: {"enum": values},
        st.lists(st.one_of(_TEXTS, st.integers(-3, 3), st.none()), min_size=1, max_size=3),
    ),
)
_SCHEMAS = st.recursive(
    _LEAVES,
    lambda children: st.one_of(
        st.builds(lambda leaf, description: {**leaf, "description": description}, children, _TEXTS),
        st.builds(lambda items: {"type": "array", "items": items}, children),
        st.builds(
            lambda properties: {"type": "object", "properties": properties},
            st.dictionaries(st.sampled_from(["a", "b"]), children, max_size=2),
        ),
        st.builds(lambda variants: {"anyOf": variants}, st.lists(children, min_size=1, max_size=2)),
    ),
    max_leaves=4,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    properties=st.dictionaries(st.sampled_from(["a", "b", "c_d", "Ä"]), _SCHEMAS, max_size=4),
    description=st.one_of(st.none(), _TEXTS),
)
@example(properties={"a": {"enum": [None, "", "x"]}}, description=None)  # ("" between values)
@example(properties={"a": {"enum": [None, "", "- `a` *(string)*"]}}, description=None)
def test_a_parameter_read_as_a_string_is_one_its_schema_reads_so(
    properties: dict[str, Any], description: str | None
) -> None:
    """Never a string where the schema would read JSON; always one where it says
    ``"type": "string"``."""
    function: dict[str, Any] = {
        "name": "act",
        "parameters": {"type": "object", "properties": properties},
    }
    if description is not None:
        function["description"] = description
    if not schema.presentable([function]):
        return
    found = string_parameters(markdown.listing([function])).get("act", frozenset())
    for name, spec in properties.items():
        kinds = schema_types(spec)
        if name in found:
            assert kinds is not None and kinds <= {"string"}, (name, spec)
        if spec.get("type") in ("string", ["string"]):
            assert name in found, (name, spec)


# ------------------------------------------------------------------ reading a conversation


def test_a_whole_conversation_reads_a_string_parameter_as_the_string() -> None:
    fmt = pawlette.get_format("ifm")
    request = _request()
    parsed = fmt.parse_conversation(fmt.render(**request).text, strict=True)
    assert _arguments_of(parsed.messages) == READ
    # The tools are still not given back: the Markdown is not their schema.
    assert parsed.tools == []
    assert parsed.losses == ("tools: written as Markdown, not read back into JSON schemas",)


def test_a_conversation_streamed_reads_as_the_whole() -> None:
    fmt = pawlette.get_format("ifm")
    text = fmt.render(**_request()).text
    for seed in range(4):
        events = feed_in_pieces(fmt, text, random_sizes(seed), conversation=True)
        messages = [message_to_openai(item) for item in fold(events, fmt.grammar.fields).messages]
        assert _arguments_of(messages) == READ


def test_a_conversation_from_token_ids_reads_as_the_whole() -> None:
    fmt = pawlette.get_format("ifm")
    rendering = fmt.render(**_request())
    ids = segment_ids(fmt.name, rendering)
    generator = random.Random(3)
    parser = IdParser(fmt, tokenizer(fmt.name), conversation=True, id_factory=sequential_ids())
    events, position = [], 0
    while position < len(ids):
        size = generator.choice([1, 2, 5])
        events += parser.feed_ids(ids[position : position + size])
        position += size
    events += parser.finish()
    messages = [message_to_openai(item) for item in fold(events, fmt.grammar.fields).messages]
    assert _arguments_of(messages) == READ


def test_xml_tools_type_no_parameter() -> None:
    """The XML presentation is not read for types: every value reads untyped."""
    fmt = pawlette.get_format("ifm:xml-tools")
    parsed = fmt.parse_conversation(fmt.render(**_request()).text, strict=True)
    assert _arguments_of(parsed.messages) == {
        **READ,
        "code": 0,
        "listed": True,
        "mode": True,
    }


# ------------------------------------------------------------------ reading a completion


def _completion() -> str:
    fmt = pawlette.get_format("ifm")
    request = _request()
    prompt = fmt.render(request["messages"][:1], request["tools"], add_generation_prompt=True)
    whole = fmt.render(request["messages"][:2], request["tools"]).text
    assert whole.startswith(prompt.text)
    return whole[len(prompt.text) :]


def test_a_completion_parsed_with_the_tools_reads_the_string() -> None:
    fmt = pawlette.get_format("ifm")
    completion = _completion()
    message = fmt.parse(completion, tools=[TOOL], strict=True).message
    assert _arguments_of([message]) == READ
    for seed in range(4):
        parser = fmt.parser(tools=[TOOL], id_factory=sequential_ids())
        events = []
        sizes = random_sizes(seed)
        position = 0
        for size in sizes * (len(completion) // len(sizes) + 1):
            if position >= len(completion):
                break
            events += parser.feed(completion[position : position + size])
            position += size
        events += parser.finish()
        (streamed,) = fold(events, fmt.grammar.fields).messages
        assert _arguments_of([message_to_openai(streamed)]) == READ


def test_a_completion_from_token_ids_with_the_tools_reads_the_string() -> None:
    fmt = pawlette.get_format("ifm")
    request = _request()
    done = fmt.render(request["messages"][:2], request["tools"])
    completion = _completion()
    ids = segment_ids(fmt.name, done, start=len(done.text) - len(completion))
    parser = IdParser(fmt, tokenizer(fmt.name), tools=[TOOL], id_factory=sequential_ids())
    events = []
    for token in ids:
        events += parser.feed_ids([token])
    events += parser.finish()
    (message,) = fold(events, fmt.grammar.fields).messages
    assert _arguments_of([message_to_openai(message)]) == READ


def test_a_completion_without_the_tools_reads_every_value_untyped() -> None:
    """No schema: text that is JSON reads as JSON, ``"0"`` as the number (a loss the text
    cannot avoid: the template writes both as ``0``)."""
    message = pawlette.get_format("ifm").parse(_completion(), strict=True).message
    assert _arguments_of([message]) == {
        **READ,
        "code": 0,
        "listed": True,
        "mode": True,
    }
