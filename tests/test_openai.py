"""The OpenAI edge: accepted shapes and errors that name the JSON path."""

from __future__ import annotations

import copy
import json
import marshal
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette import RequestError, openai
from pawlette.json_values import json_value_problem
from pawlette.openai import conversation_from_openai, conversation_to_openai
from pawlette.types import Message, TextPart

from .helpers import canonical


def error_of(data: Any) -> str:
    with pytest.raises(RequestError) as caught:
        conversation_from_openai(data)
    return str(caught.value)


def test_arguments_must_be_a_json_string() -> None:
    message = {
        "role": "assistant",
        "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": {}}}],
    }
    assert error_of([{"role": "user", "content": "x"}, message]).startswith(
        "messages[1].tool_calls[0].function.arguments: found an object; expected a JSON object "
        "as text. OpenAI sends arguments as a string"
    )


def test_invalid_json_arguments_are_named() -> None:
    message = {
        "role": "assistant",
        "tool_calls": [{"id": "1", "function": {"name": "f", "arguments": "{nope"}}],
    }
    assert error_of([message]).startswith(
        "messages[0].tool_calls[0].function.arguments: not valid JSON"
    )


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"model": "x"}, "request: no 'messages' key"),
        ([{"role": "robot", "content": "x"}], "messages[0].role: found 'robot'"),
        ([{"role": "user", "content": [{"type": "audio"}]}], "messages[0].content[0].type"),
        ([{"role": "user", "content": "x", "colour": "red"}], "messages[0].colour: an unknown key"),
        ([{"role": "user", "content": "x", "tool_call_id": "1"}], "messages[0].tool_call_id"),
        ([{"role": "user", "content": "x", "weight": 2}], "messages[0].weight: found 2"),
        (
            {"messages": [], "tools": [{"type": "function", "function": {}}]},
            "tools[0].function.name",
        ),
    ],
)
def test_errors_name_the_path(data: Any, expected: str) -> None:
    assert error_of(data).startswith(expected)


def test_echoed_null_fields_are_accepted() -> None:
    message = {"role": "assistant", "content": "hi", "refusal": None, "audio": None}
    messages, _ = conversation_from_openai([message])
    assert messages[0].text == "hi"


def test_text_parts_merge_and_extensions_round_trip() -> None:
    request = {
        "messages": [
            {
                "role": "developer",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "u", "width": 4, "height": 3}},
                    {"type": "voice", "voice": {"text": "hi", "prosody": {"speed": 1.2}}},
                    {"type": "bbox", "bbox": {"boxes": [[0, 0, 500, 500]]}},
                ],
            },
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": " {} "}}
                ],
            },
        ]
    }
    result = canonical(request)
    assert result["messages"][0] == {"role": "system", "content": "ab"}
    assert result["messages"][1]["content"] == request["messages"][1]["content"]
    assert result["messages"][2]["content"] is None
    assert result["messages"][2]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert canonical(result) == result
    assert conversation_to_openai(*conversation_from_openai(result)) == result


# --------------------------------------------------------------------------- plain readers
#
# Messages and tools of the common shape are read by plain readers (a fast path that never
# raises and returns None for anything it does not take); the general readers read the rest
# and word every error.  They must agree: same value whenever the plain reader answers, and
# the general reader's value or error for whatever it does not.

# Valid messages of every plain shape; the test changes up to two places in one (a value swapped
# for another from VALUES, a key dropped or added), so most examples are valid or wrong in one way.
BASES: list[dict[str, Any]] = [
    {"role": "user", "content": "hi"},
    {"role": "system", "content": ""},
    {"role": "developer", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": ""}]},
    {"role": "user", "name": "Alice", "content": [{"type": "text", "text": "hi"}]},
    {"role": "tool", "tool_call_id": "c1", "content": "25°C"},
    {"role": "assistant", "content": "ok", "reasoning_content": "think"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}},
            {"function": {"name": "g", "arguments": " {} "}},
        ],
    },
]
VALUES: list[Any] = [
    *(None, "", "x", 0, 1, 1.5, True, [], {}, ("t",)),
    *("system", "user", "assistant", "tool", "developer", "function", "text", "image_url"),
    *("{}", "[1]", '"s"', "{nope", ' {"b": 2} '),
    *("\ud800", "a\udfffb", '{"a": NaN}', '{"a": "\\ud800"}', '{"a": ' + "9" * 5000 + "}"),
    *(float("nan"), 10**5000, b"x", {"\ud800": 1}),
    [{"type": "text", "text": 1}],
    [{"type": "image_url", "image_url": "u"}],
    [{"id": "c", "function": {"name": "f", "arguments": "{}"}}],
    {"name": "f", "arguments": "{}"},
]
KEYS = [
    *("role", "content", "name", "tool_call_id", "reasoning_content", "tool_calls"),
    *("reasoning_steps", "metadata", "weight", "refusal", "colour"),
    *("id", "type", "function", "arguments", "text"),
]


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key and index path inside a message."""
    places = [path] if path else []
    if isinstance(value, dict):
        for key, item in value.items():
            places += _places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            places += _places(item, (*path, index))
    return places


@st.composite
def near_plain_messages(draw: st.DrawFn) -> dict[str, Any]:
    message = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(0, 2))):
        place = draw(st.sampled_from(_places(message)))
        parent: Any = message
        for step in place[:-1]:
            parent = parent[step]
        change = draw(st.sampled_from(["swap", "drop", "add"]))
        if change == "swap":
            parent[place[-1]] = copy.deepcopy(draw(st.sampled_from(VALUES)))
        elif change == "drop" and isinstance(parent, dict):
            del parent[place[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(KEYS))] = copy.deepcopy(draw(st.sampled_from(VALUES)))
    return message


tools = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["function", "function", "action", "x", None]),
            "function": st.one_of(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "name": st.sampled_from(["f", "f", "", None, 2]),
                        "description": st.sampled_from(["d", None]),
                        "parameters": st.sampled_from([{"type": "object"}, None, [], "x"]),
                        "returns": st.sampled_from([{"type": "string"}, None, 1, True, "x"]),
                    },
                ),
                st.sampled_from([None, "f"]),
            ),
            "action": st.fixed_dictionaries({"name": st.just("wave")}),
        },
    ),
    st.sampled_from([None, "f", []]),
)


def outcome(read: Callable[[], object]) -> object:
    try:
        return read()
    except Exception as error:  # the error is part of what must agree
        return (type(error), str(error))


@settings(max_examples=2000)
@given(near_plain_messages() | st.sampled_from([None, "user", [], ("role", "user")]))
def test_plain_message_reader_agrees_with_the_general_one(data: Any) -> None:
    general = outcome(lambda: openai._read_message(data, "messages[3]"))
    plain = openai._plain_message(data)
    if plain is not None:
        assert plain == general
    assert openai._plain_message(data) == plain  # again: now perhaps from the kept messages
    assert outcome(lambda: openai.message_from_openai(data, "messages[3]")) == general


@settings(max_examples=500)
@given(st.lists(near_plain_messages(), max_size=6))
def test_what_a_conversation_holds_is_found_as_it_is_read(data: list[Any]) -> None:
    # read_conversation walks only the messages that are not a role and a text alone (or a
    # result and its call's id): what it finds is what a walk of every message finds, when
    # the messages are read anew and when they come from the kept ones.
    general = outcome(lambda: conversation_from_openai(data))
    for _ in range(2):
        read = outcome(lambda: openai.read_conversation(data))
        if isinstance(general, tuple) and isinstance(general[0], type):
            assert read == general  # the same error
            continue
        assert isinstance(read, tuple)
        messages, tools, present = read
        assert (messages, tools) == general
        assert present == openai.present_in(messages)


class _Text(str):
    """A string that is not exactly ``str`` (the kept messages' lookup must not take it)."""


_CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


@pytest.mark.parametrize(
    "data",
    [
        {"role": "user", "text": "kept"},
        {"content": "kept", "name": "ann"},
        {"role": "user", "content": ["kept"]},
        {"role": _Text("user"), "content": "kept"},
        {"role": "user", "content": _Text("kept")},
        {"role": "tool", "content": "result", "name": "f"},
        {"role": "tool", "tool_call_id": "c1", "name": "f"},
        {"role": "tool", "content": _Text("result"), "tool_call_id": "c1"},
        {"role": "tool", "content": "result", "tool_call_id": 7},
        {"role": "assistant", "content": "", "tool_calls": [_CALL]},
        {"role": "assistant", "content": None, "tool_calls": [_CALL]},
        {"role": "assistant", "content": _Text(""), "tool_calls": [_CALL]},
        {"role": _Text("assistant"), "content": "", "tool_calls": [_CALL]},
        {"role": "assistant", "content": "", "tool_call": [_CALL]},
        {"role": "assistant", "tool_calls": [_CALL], "name": "ann"},
        {"role": "assistant", "content": "", "tool_calls": [{**_CALL, "id": _Text("c1")}]},
        {"role": "assistant", "content": "", "tool_calls": _CALL},
        {"role": "assistant", "content": [], "tool_calls": [_CALL]},
        {"role": "user", "content": "kept", "name": "ann"},
        {"role": "user", "content": "kept", "name": _Text("ann")},
        {"role": "user", "content": _Text("kept"), "name": "ann"},
        {"role": "user", "content": "kept", "name": 7},
        {"role": "user", "content": "kept", "name": "ann\ud800"},
        {"role": "user", "content": "kept", "names": "ann"},
        {"role": "tool", "content": "kept", "name": "ann"},
        {"role": "narrator", "content": "kept", "name": "ann"},
        {"role": "assistant", "content": "kept", "name": "ann"},
        {"role": "assistant", "content": "", "reasoning_content": "why", "tool_calls": [_CALL]},
        {"role": "assistant", "content": None, "reasoning_content": "why", "tool_calls": [_CALL]},
        {"role": "assistant", "content": "", "reasoning_content": "", "tool_calls": [_CALL]},
        {"role": "assistant", "content": "", "reasoning_content": None, "tool_calls": [_CALL]},
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": _Text("w"),
            "tool_calls": [_CALL],
        },
        {"role": "assistant", "content": "", "reasoning_content": "w\ud800", "tool_calls": [_CALL]},
        {"role": "assistant", "content": "", "reasoning_content": "why", "tool_calls": []},
        {"role": "user", "content": "", "reasoning_content": "why", "tool_calls": [_CALL]},
        {"role": "assistant", "content": "", "reasoning": "why", "tool_calls": [_CALL]},
    ],
    ids=repr,
)
def test_the_kept_messages_lookup_leaves_other_shapes_to_the_readers(data: Any) -> None:
    # read_conversation finds a role and a text (or a result and its call's id, or a turn of
    # calls alone) read before among the kept messages, by subscripts: a dict of another
    # shape, a missing key or a value that is not exactly a string is read by the readers,
    # errors worded as theirs.
    kept = [
        {"role": "user", "content": "kept"},
        {"role": "tool", "content": "result", "tool_call_id": "c1"},
        {"role": "assistant", "content": "", "tool_calls": [_CALL]},
        {"role": "user", "content": "kept", "name": "ann"},
        {"role": "assistant", "content": "", "reasoning_content": "why", "tool_calls": [_CALL]},
    ]
    openai.read_conversation(kept)  # (now kept)
    general = outcome(lambda: (*kept_messages(kept), openai._read_message(data, "messages[5]")))
    for _ in range(2):
        read = outcome(lambda: openai.read_conversation([*kept, data]))
        if isinstance(read, tuple) and not isinstance(read[0], type):  # (else an error)
            assert read[2] == openai.present_in(read[0])
            read = read[0]
        assert read == general
        assert _exact_types(read) == _exact_types(general)  # (a str subclass is equal)


def test_named_texts_and_turns_of_reasoning_and_calls_are_found_by_their_strings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A text with a name and a turn of reasoning and calls, read again, are found by their
    strings (no copy of their content made to look them up); one that differs in any string is
    read anew."""
    named = {"role": "user", "name": "strings ann", "content": "strings question"}
    call = {"id": "s1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    reasoned = {
        "role": "assistant",
        "content": "",
        "reasoning_content": "why",
        "tool_calls": [call],
    }
    first, _, present = openai.read_conversation([named, reasoned])
    assert present == {"name", "reasoning", "calls"}

    def unused(value: object) -> bytes:
        raise AssertionError("a message found by its strings is not looked up by its content")

    monkeypatch.setattr(openai, "shared_key", unused)
    again = openai.read_conversation(json.loads(json.dumps([named, reasoned])))
    assert again[0][0] is first[0] and again[0][1] is first[1]
    assert again[2] == present
    monkeypatch.undo()
    others: list[dict[str, Any]] = [
        {**named, "name": "strings bob"},
        {**named, "content": "strings question."},
        {**named, "role": "system"},
        {**reasoned, "reasoning_content": "why not"},
        {**reasoned, "content": None},
        {**reasoned, "content": "text"},
        {**reasoned, "tool_calls": [{**call, "id": "s2"}]},
        {**reasoned, "tool_calls": [call, call]},
    ]
    for data in others:
        for _ in range(2):
            read = openai.read_conversation([data])[0]
            assert read == (openai._read_message(data, "messages[0]"),)


def kept_messages(data: list[dict[str, Any]]) -> tuple[Any, ...]:
    return tuple(
        openai._read_message(item, f"messages[{index}]") for index, item in enumerate(data)
    )


def _exact_types(read: object) -> list[tuple[type, ...]]:
    """The exact types of each message's role, call id and text parts (equal values of other
    types compare equal)."""
    if not (isinstance(read, tuple) and all(isinstance(item, Message) for item in read)):
        return []
    return [
        (
            type(message.role),
            type(message.tool_call_id),
            *(type(part.text) for part in message.content or () if isinstance(part, TextPart)),
        )
        for message in read
    ]


@settings(max_examples=500)
@given(tools)
def test_plain_tool_reader_agrees_with_the_general_one(data: Any) -> None:
    general = outcome(lambda: openai._read_tool(data, "tools[1]"))
    plain = openai._plain_tool(data)
    if plain is not None:
        assert plain == general
    assert outcome(lambda: openai.tool_from_openai(data, "tools[1]")) == general


@pytest.mark.parametrize(
    "data",
    [
        {"role": "user", "content": "hi"},
        {
            "role": "developer",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        },
        {"role": "user", "name": "Alice", "content": ""},
        {"role": "tool", "tool_call_id": "c1", "content": "25°C"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "think",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    ],
)
def test_common_messages_take_the_plain_reader(data: dict[str, Any]) -> None:
    plain = openai._plain_message(data)
    assert plain is not None
    assert plain == openai._read_message(data, "messages[0]")


def test_the_common_tool_takes_the_plain_reader() -> None:
    data = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    assert openai._plain_tool(data) == openai._read_tool(data, "tools[0]")
    assert openai._plain_tool(data) is not None


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"role": "user", "content": 3}, "messages[0].content: found a number; expected an array"),
        ({"role": "user", "name": 3}, "messages[0].name: found a number; expected a string"),
        (
            {"role": "user", "reasoning_content": "r"},
            "messages[0].reasoning_content: on a user message; expected it on assistant",
        ),
        (
            {"role": "user", "tool_calls": []},
            "messages[0].tool_calls: tool calls on a user message; expected them on assistant "
            "messages",
        ),
        (
            {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "[]"}}]},
            "messages[0].tool_calls[0].function.arguments: JSON an array; expected a JSON object "
            "as text",
        ),
        (
            {
                "role": "assistant",
                "tool_calls": [{"id": 1, "function": {"name": "f", "arguments": "{}"}}],
            },
            "messages[0].tool_calls[0].id: found a number; expected a string",
        ),
        (
            {"role": "user", "content": [{"type": "text", "text": None}]},
            "messages[0].content[0].text: found null; expected a string",
        ),
    ],
)
def test_errors_are_the_general_readers(data: dict[str, Any], expected: str) -> None:
    assert openai._plain_message(data) is None
    assert error_of([data]) == expected


# ---------------------------------------------------------------------- hostile input (issue 14)


@pytest.mark.parametrize(
    ("request_data", "expected"),
    [
        (
            {"messages": [{"role": "user", "content": "hi"}], "tool": []},
            "tool: an unknown key; expected a key of a chat-completions request (messages, "
            "tools, ...). Did you mean 'tools'?",
        ),
        (
            {"messages": [], "temprature": 0.5},
            "temprature: an unknown key; expected a key of a chat-completions request (messages,"
            " tools, ...). Did you mean 'temperature'?",
        ),
        (
            {"messages": [], "\ud800": 1},
            '["\\ud800"]: an unknown key; expected a key of a chat-completions request',
        ),
        (
            {"messages": [], "add_generation_prompt": "yes"},
            "add_generation_prompt: found a string; expected true or false",
        ),
        (
            {"messages": [{"role": "user"}]},
            "messages[0].content: missing; expected the user message's text or content parts",
        ),
        (
            {"messages": [{"role": "tool", "content": None}]},
            "messages[0].content: null; expected the tool message's text",
        ),
        (
            {"messages": [{"role": "user", "content": "a\ud800"}]},
            "messages[0].content: text with a lone surrogate U+D800 at character 1; expected valid",
        ),
        (
            {"messages": [{"role": "user", "content": "hi", "name": "\udfff"}]},
            "messages[0].name: text with a lone surrogate U+DFFF at character 0",
        ),
        (
            {"messages": [{"role": "user", "content": "hi", "\ud800": 1}]},
            'messages[0]["\\ud800"]: an unknown key',
        ),
        (
            {"messages": [{"role": [[[[[[[[[[[]]]]]]]]]]], "content": "hi"}]},
            "messages[0].role: found [[[[...]]]]",
        ),
    ],
)
def test_requests_with_unknown_keys_or_bad_text_are_refused(
    request_data: dict[str, Any], expected: str
) -> None:
    for name in pawlette.formats():
        with pytest.raises(RequestError) as caught:
            pawlette.get_format(name).render(request_data)
        assert expected in str(caught.value)
        str(caught.value).encode("utf-8")  # a message that can be printed


def _deep(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def _cycle() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["a"] = value
    return value


@pytest.mark.parametrize(
    ("parameters", "path", "found"),
    [
        ({"a": b"x"}, ".a", "a bytes value"),
        ({"a": {1, 2}}, ".a", "a set value"),
        ({1: "x"}, "", "the key 1"),
        ({"a": 10**4400}, ".a", "an integer too long to print"),
        ({"a": float("nan")}, ".a", "the number nan"),
        ({"a": float("-inf")}, ".a", "the number -inf"),
        ({"a": _deep(100_000)}, ".a[0][0]", "a value nested too deeply"),
        ({"a": _cycle()}, ".a.a", "a value that contains itself"),
        ({"\ud800": 1}, "", "a key holding text with a lone surrogate"),
        ({"a b": ["\ud800"]}, '["a b"][0]', "a lone surrogate U+D800"),
    ],
)
def test_tool_definitions_json_cannot_hold_are_refused(
    parameters: dict[Any, Any], path: str, found: str
) -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": parameters}}
    for name in pawlette.formats():
        with pytest.raises(RequestError) as caught:
            pawlette.get_format(name).render([{"role": "user", "content": "x"}], [tool])
        assert caught.value.path.startswith("tools[0].function.parameters" + path), name
        assert found in caught.value.found, name


@pytest.mark.parametrize(
    ("arguments", "found"),
    [
        ('{"a": ' + "9" * 5000 + "}", "not valid JSON (an integer too long to read)"),
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "JSON nested too deeply"),
        ('{"a": ' + "[" * 101 + "]" * 101 + "}", "a value nested too deeply"),
        ('{"a": NaN}', "not valid JSON (NaN is not JSON)"),
        ('{"a": -Infinity}', "not valid JSON (-Infinity is not JSON)"),
        ('{"a": [1e400]}', "JSON holding the number inf at .a[0]"),  # what json reads
        ('{"a": "\\ud800"}', "a lone surrogate U+D800"),
    ],
)
def test_call_arguments_json_cannot_hold_are_refused(arguments: str, found: str) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    messages = [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [call]}]
    for name in pawlette.formats():
        with pytest.raises(RequestError) as caught:
            pawlette.get_format(name).render(messages)
        assert caught.value.path == "messages[1].tool_calls[0].function.arguments", name
        assert found in str(caught.value), name


def test_an_empty_call_or_tool_name_is_refused_in_every_format() -> None:
    # Parsing reads a call with an empty name as no call (README, Contracts, rule 2), so no
    # format writes one: render(c) then parse gives c back.  The plain one-pass render, the
    # general one and pawlette's own Message objects alike.
    call = {"id": "c1", "type": "function", "function": {"name": "", "arguments": "{}"}}
    messages = [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [call]}]
    typed = list(conversation_from_openai(messages)[0])
    tool = {"type": "function", "function": {"name": "", "parameters": {"type": "object"}}}
    for name in pawlette.formats():
        fmt = pawlette.get_format(name)
        for conversation in (messages, typed):
            with pytest.raises(RequestError) as caught:
                fmt.render(conversation)
            assert caught.value.path == "messages[1].tool_calls[0].function.name", name
            assert "''" in str(caught.value) or "empty name" in str(caught.value), name
        with pytest.raises(RequestError) as caught:
            fmt.render(messages[:1], tools=[tool])
        assert str(caught.value) == "tools[0].function.name: an empty name; expected a tool name"


def test_unknown_keys_in_tools_and_calls_are_refused() -> None:
    tool = {"type": "function", "function": {"name": "f"}, "strict": True}
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}", "x": 1}}
    for name in pawlette.formats():
        fmt = pawlette.get_format(name)
        with pytest.raises(RequestError, match=r"^tools\[0\]\.strict: an unknown key"):
            fmt.render([{"role": "user", "content": "x"}], [tool])
        with pytest.raises(RequestError, match=r"^messages\[0\]\.tool_calls\[0\]\.function\.x"):
            fmt.render([{"role": "assistant", "tool_calls": [call]}])


def test_a_content_less_chatglm3_user_message_is_refused_like_everywhere() -> None:
    for name in pawlette.formats():
        fmt = pawlette.get_format(name)
        for message in ({"role": "user"}, {"role": "user", "content": None}):
            with pytest.raises(RequestError, match=r"messages\[1\]\.content"):
                fmt.render([{"role": "system", "content": "s"}, message])
        fmt.render([{"role": "user", "content": ""}])  # empty on purpose is fine


def test_engine_sampling_keys_are_a_documented_list() -> None:
    assert openai.ENGINE_SAMPLING_KEYS == ("top_k", "min_p", "repetition_penalty")
    request = {"messages": [{"role": "user", "content": "hi"}], "top_k": 5, "model": "m"}
    assert pawlette.get_format("pcml").render(request).text == "[USR]hi[/USR]"


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '  \n{"a": [1, {"b": null}]}\t\r\n ',
        "{}",
        '{"a": 1} x',
        '{"a": 1}}',
        '{"a": 1',
        "[1]",
        '"{}"',
        " ",
        "",
        "\ufeff{}",
        '{"a": NaN}',
        "{\u00a0}",
        '{"a": 1}\u00a0',
        '{"a": 1e400}',
        '{"a": "\\ud800"}',
    ],
)
def test_plain_json_object_reads_what_json_loads_reads(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        expected = None
    found = openai._plain_json_object(text)
    if isinstance(expected, dict):
        assert found == expected or (found is not None and repr(found) == repr(expected))
    else:
        assert found is None


@pytest.mark.parametrize(
    "message",
    [{"role": "assistant"}, {"role": "assistant", "content": None, "tool_calls": []}],
)
def test_an_assistant_with_neither_content_nor_calls_is_refused(message: dict[str, Any]) -> None:
    # OpenAI refuses both; rendering them as an empty answer would train on one.
    with pytest.raises(RequestError, match=r"messages\[1\].content: (missing|null)"):
        conversation_from_openai([{"role": "user", "content": "hi"}, message])


PLAIN_ARGUMENTS = [
    "{}",
    ' {"a": 1} ',
    '{"a": "\\u00e9", "b": [1, 2.5, true, null]}',
    '{"a": NaN}',
    '{"a": -Infinity}',
    '{"a": 1e999}',
    '{"a": "\\ud800"}',
    '{"a": "\ud800"}',
    '{"\ud800": 1}',
    '{"a": ' + "9" * 4100 + "}",
    '{"a": ' + "9" * 3990 + "}",
    '{"a": ' + "[" * 120 + "]" * 120 + "}",
    '{"a": ' + "[" * 99 + "]" * 99 + "}",
    '{"a": ' + "[" * 100 + "]" * 100 + "}",
    "[1]",
    "{} x",
    "{",
    "",
]


@pytest.mark.parametrize("text", PLAIN_ARGUMENTS)
def test_plain_arguments_are_what_the_walk_accepts(text: str) -> None:
    """The shortcut (no walk for short, shallow text without \\u escapes) decides as reading
    the value and walking it does."""
    value = openai._plain_json_object(text)
    expected = value is not None and json_value_problem(value) is None
    assert openai.plain_arguments(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        *PLAIN_ARGUMENTS,
        '{"a": 1, "a": 2.0, "b": {"a": true}}',
        '{"a": 1.0, "b": -0, "c": 1E2, "d": 10000000000000000000000}',
        '\t{"\u00e9": "\\u00e9\u00e9", "x": "\\"}\n ',
    ],
)
def test_plain_arguments_hand_their_value_to_the_writer(text: str) -> None:
    """The value the reader hands to the writer is ``json.loads`` of the stripped text (same
    types, same key order), and the writer writes the same from it as from the text."""
    from pawlette.declare import calls
    from pawlette.engine.json_text import PARSED_ARGUMENTS

    value = openai.plain_arguments_value(text)
    assert (value is not None) == openai.plain_arguments(text)
    if value is None:
        return
    stripped = text.strip()
    assert marshal.dumps(value) == marshal.dumps(json.loads(stripped))
    for ascii in (False, True):
        calls.WRITTEN_ARGUMENTS.kept.clear()
        calls._WRITTEN_ASCII.kept.clear()
        PARSED_ARGUMENTS.kept.pop(stripped, None)
        without = calls.arguments_json(text, 0, 0, ascii=ascii)
        calls.WRITTEN_ARGUMENTS.kept.clear()
        calls._WRITTEN_ASCII.kept.clear()
        PARSED_ARGUMENTS.keep(stripped, value)
        assert calls.arguments_json(text, 0, 0, ascii=ascii) == without
        assert stripped not in PARSED_ARGUMENTS.kept  # (taken out: written once)


@pytest.mark.parametrize(
    "name", ["chatml", "llama3", "mistral", "hermes", "apriel", "kimi:k3", "pcml"]
)
def test_new_tools_are_written_as_kept_ones(name: str) -> None:
    """A request's new tools (written without looking for kept texts) are written as the same
    tools met again and kept are."""
    fmt = pawlette.get_format(name)
    tools = [
        {
            "type": "function",
            "function": {
                "name": f"new_tools_{name}",
                "description": '\u00e9 "quoted" \\ \n',
                "parameters": {
                    "type": "object",
                    "properties": {"a": {"type": "integer", "enum": [1, 2.5, True, None]}},
                    "required": ["a"],
                },
            },
        }
    ]
    assert openai.new_tools(openai.tools_from_openai(copy.deepcopy(tools)))
    assert not openai.new_tools(openai.tools_from_openai(copy.deepcopy(tools)))  # kept now
    tools[0]["function"]["description"] += " (changed)"
    messages = [{"role": "user", "content": "hi"}]
    texts = [fmt.render({"messages": messages, "tools": copy.deepcopy(tools)}) for _ in range(3)]
    assert texts[0] == texts[1] == texts[2]  # new, met again, kept


class _Text(str):
    pass


ODD_DEFINITION_VALUES: list[Any] = [
    '\u00e9 "q" \\ \n \x00 \u2028 [SYS] <tools>',
    "\ud800",
    {"\udc00": 1},
    [1, -0.0, 2.5, 1e300, True, False, None, {}, []],
    float("nan"),
    float("inf"),
    10**3999,
    10**4000,
    -(10**4000),
    {1: "x"},
    (1, 2),
    {"a": (1,)},
    _Text("subclass"),
    b"bytes",
    {"set"},
    [[[]]],
    {"a": {"b": {"c": {}}}},
    "",
]


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    "value",
    [*ODD_DEFINITION_VALUES, _nested(98), _nested(99), _nested(100)],
    ids=lambda value: repr(value)[:40],
)
def test_new_tools_are_written_as_json_dumps_writes_them(value: Any) -> None:
    """A request's new tools, checked by the reader, are written by json's C encoder made
    once (PCML's compact spelling): as the same tools met again and kept are, through
    ``json.dumps`` (or refused alike)."""
    fmt = pawlette.get_format("pcml")
    data = [
        {
            "type": "function",
            "function": {"name": "walked", "description": "d", "parameters": {"x": value}},
        },
        {"function": {"name": "second", "returns": value}},
    ]
    messages = [{"role": "user", "content": "hi"}]
    openai._PLAIN_TOOLS.kept.clear()
    written = [
        outcome(lambda: fmt.render({"messages": messages, "tools": copy.deepcopy(data)}).text)
        for _ in range(3)  # new, met again, kept
    ]
    assert written[0] == written[1] == written[2]
    if isinstance(written[0], str):
        definitions = [item["function"] for item in data]
        array = json.dumps(definitions, ensure_ascii=False, separators=(",", ":"))
        if "[SYS]" not in array:  # (a marker in text is written escaped)
            assert f"<tools>{array}</tools>" in written[0]


def test_a_tool_list_found_plain_is_kept_by_content_only() -> None:
    """The same list again is read without its checks; changed in place, or a list equal to
    it but of other types, it is checked again."""
    definition = {"name": "kept_f", "parameters": {"type": "object", "properties": {}}}
    tools: list[Any] = [{"type": "function", "function": definition}]
    first = openai.tools_from_openai(tools)
    assert openai.tools_from_openai(tools) == first
    assert openai.tools_from_openai(tools)[0].definition is not definition  # built anew
    definition["parameters"]["properties"]["x"] = float("nan")
    with pytest.raises(RequestError, match=r"NaN|nan"):
        openai.tools_from_openai(tools)
    definition["parameters"]["properties"] = {1: "x"}
    with pytest.raises(RequestError, match="the key 1"):
        openai.tools_from_openai(tools)
    definition["parameters"]["properties"] = {"x": {"type": "string"}}
    assert openai.tools_from_openai(tools) == openai.tools_from_openai(tools)
    for tools_again in ([*tools, {"type": "action", "action": {"name": "wave"}}], [tools[0]] * 2):
        expected = outcome(lambda t=tools_again: openai._read_tools(t, "tools")[0])  # type: ignore[misc]
        for _ in range(2):
            assert outcome(lambda t=tools_again: openai.tools_from_openai(t)) == expected  # type: ignore[misc]


def test_messages_read_plain_are_kept_by_their_values_only() -> None:
    """A text message and a result read again are the same immutable value; a message that
    differs in any string is read anew."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "kept question"},
        {"role": "developer", "content": "kept rules"},
        {"role": "tool", "tool_call_id": "c1", "content": "kept result"},
    ]
    for data in messages:
        first = openai._plain_message(data)
        assert first is not None and first == openai._read_message(data, "messages[0]")
        assert openai._plain_message(copy.deepcopy(data)) is first
    others: list[dict[str, Any]] = [
        {"role": "system", "content": "kept question"},
        {"role": "assistant", "content": "kept question"},
        {"role": "tool", "tool_call_id": "c2", "content": "kept result"},
        {"role": "tool", "tool_call_id": "c1", "content": "kept result."},
    ]
    for data in others:
        assert openai._plain_message(data) == openai._read_message(data, "messages[0]")
    assert openai._plain_message({"role": "user", "content": "kept \ud800"}) is None


def test_other_messages_read_plain_are_kept_by_their_content_only() -> None:
    """A turn of calls (or a text with a name) read again from the same JSON text is the
    same immutable value; one that differs in any value is read anew."""
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages: list[dict[str, Any]] = [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "assistant", "content": "kept text", "tool_calls": [call]},
        {"role": "user", "name": "kept name", "content": "kept question"},
    ]
    for data in messages:
        first = openai._plain_message(json.loads(json.dumps(data)))
        assert first is not None and first == openai._read_message(data, "messages[0]")
        assert openai._plain_message(json.loads(json.dumps(data))) is first
    others: list[dict[str, Any]] = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "assistant", "content": "", "tool_calls": [{**call, "id": "c2"}]},
        {"role": "user", "name": "kept name.", "content": "kept question"},
    ]
    for data in others:
        assert openai._plain_message(data) == openai._read_message(data, "messages[0]")
    assert openai._plain_message({"role": "user", "name": "kept \ud800", "content": ""}) is None


def test_call_arguments_found_plain_are_kept_by_their_text_only() -> None:
    """Arguments read plain once are read alike from the text again; a text that is not
    plain is never kept, so its error comes back each time."""

    def turn(arguments: str) -> dict[str, Any]:
        call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}
        return {"role": "assistant", "content": "", "tool_calls": [call]}

    text = '{"kept_argument": [1, 2.5, "x"]}'
    first = openai._plain_message(turn(text))
    assert first is not None and first == openai._read_message(turn(text), "messages[0]")
    assert openai._plain_message(turn(text)) == first
    for refused in ('{"kept_argument": NaN}', '{"kept_argument": 1e999}', "[1]"):
        for _ in range(2):
            assert openai._plain_message(turn(refused)) is None
            assert error_of([turn(refused)]).startswith(
                "messages[0].tool_calls[0].function.arguments: "
            )


def _odd_call(number: int, **changes: Any) -> dict[str, Any]:
    """A call of the exact shape a turn of calls alone is built from, with ``changes`` to its
    id, name or arguments (each test's text its own: read anew, not found kept)."""
    function = {"name": "f", "arguments": f'{{"odd_call": {number}}}'}
    call: dict[str, Any] = {"id": f"odd{number}", "type": "function", "function": function}
    for key, value in changes.items():
        (function if key in function else call)[key] = value
    return call


ODD_CALLS: list[list[dict[str, Any]]] = [
    [_odd_call(1, name="")],
    [_odd_call(2, name="f\ud800")],
    [_odd_call(3, name="fé")],
    [_odd_call(4, id="c\udfff")],
    [_odd_call(5, id="cé")],
    [_odd_call(6, id="")],
    [_odd_call(7, arguments='{"a": NaN}')],
    [_odd_call(8, arguments='{"a": 1e999}')],
    [_odd_call(9, arguments="[1]")],
    [_odd_call(10, arguments=' \n{"odd_call": 10}\t ')],
    [_odd_call(11, arguments="")],
    [_odd_call(12, arguments="{")],
    [_odd_call(13, arguments='{"a": "\\ud800"}')],
    [_odd_call(14, arguments='{"a": ' + "9" * 5000 + "}")],
    [_odd_call(15, arguments='{"a": ' + "[" * 101 + "]" * 101 + "}")],
    [_odd_call(16), _odd_call(17, arguments='{"a": NaN}')],
    [_odd_call(18), _odd_call(19, name="")],
    [_odd_call(20), _odd_call(21)],
    [_odd_call(22, type="Function")],
    # (three keys, two in the function, one of them not the shape's: a missing key)
    [{"ident": "odd23", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    [{"id": "odd24", "type": "function", "function": {"name": "f", "argument": "{}"}}],
]


@pytest.mark.parametrize("content", ["", None, "text", "t\ud800"])
@pytest.mark.parametrize("calls", ODD_CALLS, ids=repr)
def test_a_new_turn_of_calls_alone_is_read_as_the_general_reader_reads_it(
    calls: list[dict[str, Any]], content: str | None
) -> None:
    # A turn of calls alone not kept is built from the strings that found it missing (its
    # shape proven by them), checking the rest itself: it is the general reader's message,
    # or the general reader's error, new and then kept.
    turn = copy.deepcopy({"role": "assistant", "content": content, "tool_calls": calls})
    openai._CALL_TURNS.clear()
    general = outcome(lambda: openai._read_message(turn, "messages[0]"))
    for _ in range(2):
        read = outcome(lambda: openai.read_conversation([turn])[0])
        assert read == ((general,) if isinstance(general, Message) else general)
        assert outcome(lambda: openai.message_from_openai(turn, "messages[0]")) == general


@settings(max_examples=300)
@given(st.lists(tools, min_size=1, max_size=3))
def test_tool_lists_agree_with_the_general_reader_new_and_kept(data: list[Any]) -> None:
    def general() -> object:
        return tuple(openai._read_tool(item, f"tools[{n}]") for n, item in enumerate(data))

    expected = outcome(general)
    for _ in range(2):
        assert outcome(lambda: openai.tools_from_openai(data)) == expected


@pytest.mark.parametrize("name", ["chatml", "llama3", "bielik", "deepseek", "rwkv", "phi3"])
def test_a_render_of_what_was_read_is_the_render_of_the_messages(name: str) -> None:
    # Format.render hands what the reader found the messages hold to the writer; rendering
    # the same messages as core values (found by the writer's own walk) writes the same.
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    conversations: list[list[dict[str, Any]]] = [
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "hi", "name": "Alice"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "1"},
            {"role": "assistant", "content": "done", "reasoning_content": "r"},
            {"role": "user", "content": [{"type": "text", "text": "more"}]},
        ],
    ]
    fmt = pawlette.get_format(name)
    for data in conversations:
        core, _ = conversation_from_openai(data)
        for _ in range(2):  # (the second time from the kept messages)
            read = outcome(lambda data=data: fmt.render(data, add_generation_prompt=True))
            assert read == outcome(
                lambda core=core: fmt.render(list(core), add_generation_prompt=True)
            )


@pytest.mark.parametrize("name", ["glm", "minimax_m2", "seed_oss", "chatml", "mistral"])
def test_writers_take_the_value_the_reader_parsed(name: str) -> None:
    """A new arguments text is parsed by the reader and taken by the writer, whether it
    writes the arguments as JSON or each argument by its key (XML parameters): the store of
    handed-over values does not keep it after the render, and the render equals the render
    of the same text parsed by the writer itself."""
    from pawlette.engine.json_text import PARSED_ARGUMENTS

    fmt = pawlette.get_format(name)
    arguments = json.dumps({"city": f"Paris {name} {id(fmt)}", "days": 3})
    conversation = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "abc123XYZ",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "abc123XYZ", "content": "sunny"},
    ]
    taken = fmt.render(conversation).text
    assert arguments not in PARSED_ARGUMENTS.kept
    messages, tools = pawlette.format.coerce_conversation(conversation)
    assert fmt.render(messages, tools).text == taken


def test_a_turn_of_calls_read_before_is_found_with_what_it_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A turn of calls alone read before is found among the kept ones, as the plain reader
    # finds it, without its call; what the conversation holds still says calls, beside what
    # other messages hold.
    turn = {"role": "assistant", "content": "", "tool_calls": [_CALL]}
    named = {"role": "user", "content": "hi", "name": "ann"}
    first = openai.read_conversation([turn])
    plain = openai._plain_message
    read: list[object] = []

    def counted(data: object) -> Message | None:
        read.append(data)
        return plain(data)

    monkeypatch.setattr(openai, "_plain_message", counted)
    assert openai.read_conversation([turn])[0][0] is first[0][0]
    assert read == []
    for data in ([turn], [turn, named], [named, turn], [{"role": "user", "content": "x"}, turn]):
        messages, _, present = openai.read_conversation(data)
        assert messages == kept_messages(data)
        assert present == openai.present_in(messages)
    assert openai.read_conversation([turn])[0][0] is first[0][0]
    assert openai.read_conversation([turn])[2] == {"calls"}
