"""The plain render of containers layouts (PCML) against the general path.

``Format.render`` first tries the plain render (OpenAI dicts checked and written in one pass)
and takes the general path (read into core values, then written) when it declines.  For every
input the result must be the general path's: the same text and segments (text, special, role,
message index, kind, trainability), or the same error, word for word.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.engine.writer import Writer
from pawlette.format import coerce_conversation
from tests.strategies import pcml as pcml_strategies
from tests.test_openai import near_plain_messages, outcome
from tests.test_openai import tools as near_plain_tools

from . import user_containers

PCML = pawlette.get_format("pcml")
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get current weather",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}},
            "required": ["location"],
        },
    },
}
CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "name": "Alice", "content": "What's the weather in Beijing?"},
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": "I should call the tool.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location": "Beijing"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "25°C, Sunny"},
    {"role": "assistant", "content": "It is 25°C and sunny."},
    {"role": "user", "content": "Thanks! And tomorrow?"},
]


def general(fmt: pawlette.Format, messages: object, tools: object, prompt: bool) -> object:
    """The general path alone: read into core values, then write."""
    core_messages, core_tools = coerce_conversation(messages, tools)
    writer = Writer(fmt.escape_pattern)
    fmt.write(writer, core_messages, core_tools, prompt)
    return writer.rendering()


def assert_agrees(fmt: pawlette.Format, messages: object, tools: object, prompt: bool) -> object:
    expected = outcome(lambda: general(fmt, messages, tools, prompt))
    found = outcome(lambda: fmt.render(messages, tools, add_generation_prompt=prompt))
    assert found == expected
    plain = fmt.write.plain_render(messages, tools, prompt)  # type: ignore[attr-defined]
    if plain is not None:
        assert plain == expected
    return plain


def test_common_requests_take_the_plain_render() -> None:
    for messages in (CONVERSATION, CONVERSATION[1:], []):
        for tools in (None, [], [WEATHER_TOOL], [WEATHER_TOOL, WEATHER_TOOL]):
            for prompt in (False, True):
                assert assert_agrees(PCML, messages, tools, prompt) is not None
    request = {"model": "m", "messages": CONVERSATION, "tools": [WEATHER_TOOL], "stream": True}
    assert assert_agrees(PCML, request, None, True) is not None


@pytest.mark.parametrize(
    "text",
    ["[USR]inside", "ends with a backslash\\", "two\\\\", "<think>", "a\n<call>b", "x[SEP", "é"],
)
def test_texts_to_escape_agree(text: str) -> None:
    call = {"id": text, "function": {"name": text, "arguments": '{"a": "' + text + '"}'}}
    if "\\" in text:
        call["function"]["arguments"] = "{}"
    messages = [
        {"role": "system", "content": text},
        {"role": "user", "name": text, "content": text},
        {"role": "assistant", "content": text, "reasoning_content": text, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": text, "content": text},
    ]
    tool = copy.deepcopy(WEATHER_TOOL)
    tool["function"]["description"] = text
    assert_agrees(PCML, messages, [tool], True)


BAD_ARGUMENTS = [
    '{"a": NaN}',
    '{"a": -Infinity}',
    '{"a": 1e999}',
    '{"a": "\\ud800"}',
    '{"a": "\\u00e9"}',
    '{"a": ' + "9" * 4100 + "}",
    '{"a": ' + "[" * 120 + "]" * 120 + "}",
    '{"a": ' + "[" * 99 + "]" * 99 + "}",
    '{"a": ' + "[" * 100 + "]" * 100 + "}",
    "[1]",
    " {} ",
    "{} x",
    "",
]


@pytest.mark.parametrize("arguments", BAD_ARGUMENTS)
def test_call_arguments_agree(arguments: str) -> None:
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": arguments}}
    assert_agrees(PCML, [{"role": "assistant", "content": None, "tool_calls": [call]}], None, False)


class LyingDict(dict):  # type: ignore[type-arg]
    """Equal to everything: a store of checked tools must not trust a value's own methods."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = dict.__hash__  # type: ignore[assignment]


@pytest.mark.parametrize(
    "parameters",
    [
        {1: {"type": "string"}},
        {True: 1},
        {"a": float("nan")},
        {"a": 10**4100},
        {"a": "\ud800"},
        {"\ud800": 1},
        {"a": (1, 2)},
        {"a": b"x"},
        {"a": True},
        {"a": 1.0},
        {"a": -0.0},
        LyingDict({1: "x"}),
        {"a": LyingDict({1: "x"})},
        {"a": {"b": [1, 2.5, None, True]}},
    ],
)
def test_tools_agree_after_a_similar_listing(parameters: dict[Any, Any]) -> None:
    """Checked tools are kept: tools like them that dump the same (an integer key dumps as a
    string, a tuple as a list), or are equal (``1 == 1.0 == True``), must still be checked
    and written as the general path does."""
    keys = {
        str(key) if not isinstance(key, str) else key: value for key, value in parameters.items()
    }
    similar = [
        keys,
        {key: list(value) if isinstance(value, tuple) else value for key, value in keys.items()},
        {key: 1 for key in keys},
        {key: 0.0 for key in keys},
    ]
    for value in [*similar, parameters, *similar, parameters]:
        tool = {"type": "function", "function": {"name": "f", "parameters": value}}
        assert_agrees(PCML, [{"role": "user", "content": "hi"}], [tool], False)


def test_a_deep_or_circular_tool_is_the_general_path_s() -> None:
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(120):
        inner["a"] = {}
        inner = inner["a"]
    circular: dict[str, Any] = {"type": "object"}
    circular["self"] = circular
    in_a_list: dict[str, Any] = {"type": "object", "items": []}
    in_a_list["items"].append([in_a_list])
    chatml = pawlette.get_format("chatml")  # (the general path's kept tool lists)
    messages = [{"role": "user", "content": "hi"}]
    for parameters in (deep, circular, in_a_list):
        tools = [{"type": "function", "function": {"name": "f", "parameters": parameters}}]
        for _ in range(2):  # (new, then kept: a circular value has a shared_key)
            assert_agrees(PCML, messages, tools, False)
            expected = outcome(lambda tools=tools: general(chatml, messages, tools, False))
            assert outcome(lambda tools=tools: chatml.render(messages, tools)) == expected


FORMATS = [PCML, pawlette.legacy.declare(user_containers.LAYOUT)]


@settings(max_examples=300)
@given(
    st.sampled_from(FORMATS),
    st.lists(near_plain_messages(), max_size=4),
    st.none() | st.lists(near_plain_tools, max_size=2),
    st.booleans(),
    st.booleans(),
)
def test_near_plain_requests_agree(
    fmt: pawlette.Format,
    messages: list[Any],
    tools: list[Any] | None,
    prompt: bool,
    as_request: bool,
) -> None:
    if as_request:
        request: dict[str, Any] = {"messages": messages}
        if tools is not None:
            request["tools"] = tools
        assert_agrees(fmt, request, None, prompt)
    else:
        assert_agrees(fmt, messages, tools, prompt)


@settings(max_examples=200)
@given(st.sampled_from(FORMATS), pcml_strategies.conversations(), st.booleans())
def test_conversations_agree(fmt: pawlette.Format, request: dict[str, Any], prompt: bool) -> None:
    assert_agrees(fmt, request, None, prompt)
    plain_only = {
        "messages": [
            {key: value for key, value in message.items() if key != "metadata"}
            for message in request["messages"]
        ],
        "tools": request.get("tools", []),
    }
    assert_agrees(fmt, plain_only, None, prompt)


def test_values_checked_but_not_written_agree() -> None:
    """A layout may leave a result's id out of its header: the id is still checked."""
    layout = dataclasses.replace(
        user_containers.LAYOUT,
        containers=dataclasses.replace(
            user_containers.LAYOUT.containers,  # type: ignore[arg-type]
            headers=dataclasses.replace(
                user_containers.LAYOUT.containers.headers,  # type: ignore[union-attr]
                fields={"user": {"who": "name"}},
            ),
        ),
    )
    fmt = pawlette.legacy.declare(layout)
    for call_id in ("c1", "c\ud800", "ends\\", "[USR]"):
        messages = [{"role": "tool", "tool_call_id": call_id, "content": "x"}]
        assert_agrees(fmt, messages, None, False)


# An outsider's requests (audit): text pieces that meet at markers, backslashes and NULs (the
# plain render joins the caller texts with a NUL to check them once), lone surrogates, values
# of subclasses and of the wrong types, and tools changed in place between two renders (the
# kept tools block is keyed by the tools' content, never by the list's identity).

_PIECES = [
    *("hi", "[SYS]", "[USR]", "[/AST]", "[SEP]", "<end>", "<think>", "</think>", "<call>"),
    *("\n<call>", "</think>\n", "<|me|>", "<|;|>", "<act>", "<muse>", "[", "]", "<", ">"),
    *("\\", "\\\\", "\x00", "\\\x00", "\n", '"', "\ud800", "é", "😀", "\u2028", "\\u0000"),
]
_text = st.lists(st.sampled_from(_PIECES), max_size=5).map("".join)


class _Text(str):
    pass


class _Dict(dict):  # type: ignore[type-arg]
    pass


_odd = st.sampled_from([None, 0, 1, True, 1.5, -0.0, [], {}, ("t",), b"x", _Text("x")])
_value = st.one_of(*[_text] * 8, _odd)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(_text, inner, max_size=2),
    max_leaves=5,
)


@st.composite
def _odd_call(draw: st.DrawFn) -> Any:
    arguments = draw(
        st.one_of(
            st.dictionaries(_text, _json, max_size=2).map(json.dumps),
            st.dictionaries(_text, _json, max_size=2).map(lambda v: f" {json.dumps(v)}\n"),
            _value,
        )
    )
    call: Any = {"id": draw(_value), "function": {"name": draw(_value), "arguments": arguments}}
    return _Dict(call) if draw(st.integers(0, 15)) == 0 else call


@st.composite
def _odd_message(draw: st.DrawFn) -> Any:
    role = draw(st.sampled_from(["system", "user", "assistant", "tool", "developer", None]))
    message: Any = {"role": role, "content": draw(_value)}
    for key in ("name", "tool_call_id", "reasoning_content"):
        if draw(st.integers(0, 3)) == 0:
            message[key] = draw(_value)
    if role == "assistant" and draw(st.booleans()):
        message["tool_calls"] = draw(st.lists(_odd_call(), max_size=2))
    return _Dict(message) if draw(st.integers(0, 15)) == 0 else message


_parameters = st.dictionaries(
    st.one_of(_text, st.integers(0, 2), st.booleans()), st.one_of(_json, _odd), max_size=3
)
# Values a kept store could mistake for each other: equal (0.0 == -0.0, 1 == True), or dumped
# alike by a lenient writer (a tuple as a list, an integer key as a string).
_TWINS = [(0.0, -0.0), (1, True), (1, 1.0), ([0], (0,)), ({"1": 0}, {1: 0}), ("a", _Text("a"))]
_odd_tool = st.builds(
    lambda name, parameters: {
        "type": "function",
        "function": {"name": name, "parameters": parameters},
    },
    st.one_of(st.just("get_weather"), _value),
    _parameters,
)


@settings(max_examples=150)
@given(
    st.sampled_from(FORMATS),
    st.lists(_odd_message(), max_size=3),
    st.none() | st.lists(_odd_tool, max_size=2),
    st.booleans(),
    st.sampled_from(_TWINS),
)
def test_odd_requests_agree_and_tools_changed_in_place_are_rendered_anew(
    fmt: pawlette.Format,
    messages: list[Any],
    tools: list[Any] | None,
    prompt: bool,
    twins: tuple[Any, Any],
) -> None:
    assert_agrees(fmt, messages, tools, prompt)
    assert_agrees(fmt, {"messages": messages, "tools": tools}, None, prompt)
    if tools:  # the same list changed in place to values that dump alike or compare equal
        for value in (*twins, *twins):
            tools[0]["function"]["parameters"]["k"] = value
            assert_agrees(fmt, messages, tools, prompt)


# Tools checked by the walk for exact types (tools with a marshal key, the common case) and
# kept with whether the render must still check their JSON as a caller text.

CLEAN_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "x", "[USR]", "<think>", "é", "a\\", "\x00", "[SEP]x", "\n\n"]),
)
CLEAN_VALUES = st.recursive(
    CLEAN_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "type", "é", "[USR]"]), inner, max_size=3)
    ),
    max_leaves=8,
)
HOSTILE_VALUES = [float("nan"), float("-inf"), 10**4100, (1, 2), b"x", frozenset({1}), 1j, ...]
HOSTILE_VALUES += ["\ud800", LyingDict(a=1), [LyingDict({1: "x"})]]
HOSTILE_KEYS = [1, True, None, 1.5, "\ud800", (1,)]


@st.composite
def json_values(draw: st.DrawFn) -> Any:
    """A JSON value every format prints, or one with a single hostile value or key put into
    one of its containers (the general path refuses or accepts it; the plain render must do
    the same)."""
    value = draw(CLEAN_VALUES)
    containers = [value] if isinstance(value, (dict, list)) else []
    for container in containers:
        children = container.values() if isinstance(container, dict) else container
        containers += [child for child in children if isinstance(child, (dict, list))]
    if not containers or draw(st.booleans()):
        return value
    target = draw(st.sampled_from(containers))
    if isinstance(target, list):
        target.append(draw(st.sampled_from(HOSTILE_VALUES)))
    elif draw(st.booleans()):
        target[draw(st.sampled_from(HOSTILE_KEYS))] = draw(CLEAN_LEAVES)
    else:
        target["h"] = draw(st.sampled_from(HOSTILE_VALUES))
    return value


JSON_VALUES = json_values()


@settings(max_examples=300)
@given(
    st.fixed_dictionaries(
        {"name": st.sampled_from(["f", "get_weather", "", 3, "[USR]"])},
        optional={
            "description": JSON_VALUES,
            "parameters": st.dictionaries(st.just("properties"), JSON_VALUES),
            "returns": st.sampled_from([None, {"type": "string"}]),
            "strict": JSON_VALUES,
        },
    ),
    st.sampled_from([{}, {"type": "function"}, {"type": "action"}, {"extra": 1}]),
    st.booleans(),
)
def test_hostile_tools_agree_new_and_kept(
    definition: dict[str, Any], envelope: dict[str, Any], prompt: bool
) -> None:
    """Each tool list twice (new, then kept) and a copy (new again): the same as the general
    path each time, whatever the definition holds."""
    tool = {**envelope, "function": definition}
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]
    for tools in ([tool], [tool], [copy.copy(tool), tool]):
        assert_agrees(PCML, messages, tools, prompt)
        assert_agrees(PCML, messages[1:], tools, prompt)


def test_shared_parts_of_a_tool_agree() -> None:
    """The walk for exact types has no set of containers seen: a definition sharing a part
    (a DAG, not a cycle: ``marshal`` refuses those) is walked once per place it appears."""
    shared = {"type": "string", "enum": ["a", "b"]}
    parameters = {"type": "object", "properties": {"x": shared, "y": shared, "z": [shared]}}
    tool = {"type": "function", "function": {"name": "f", "parameters": parameters}}
    for _ in range(2):
        assert assert_agrees(PCML, [{"role": "user", "content": "hi"}], [tool], False) is not None


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "name": "x"},
        {"role": "user", "content": None},
        {"content": "x", "name": "y"},
        {"role": "user", "extra": "x"},
        {"role": "assistant", "content": "x"},
        {"role": "tool", "content": "x"},
        {"role": "developer", "content": "x"},
        {"role": "user", "content": ["x"]},
        {"role": "user", "content": [{"type": "text", "text": "x"}]},
        {"role": "User", "content": "x"},
    ],
)
def test_two_key_messages_agree(message: dict[str, Any]) -> None:
    """A message of two keys with a string content takes the short path: any other two
    keys, or a content not a string, must still be read as the general path reads them."""
    for messages in ([message], [{"role": "system", "content": "s"}, message]):
        assert_agrees(PCML, messages, [WEATHER_TOOL], True)


@given(st.text(min_size=1))
def test_only_one_byte_texts_skip_the_surrogate_check(text: str) -> None:
    """The caller texts are encoded (a lone surrogate refused) unless their size says every
    character is below U+0100: never a text with a wider character.  (A string whose UTF-8
    form Python keeps, as it may for one it made itself, is a size larger: it is encoded.)"""
    from sys import getsizeof

    from pawlette.legacy.plain_containers import _ONE_BYTE_SIZE

    def one_byte(sample: str) -> bool:
        return not sample.isascii() and max(sample) < "\u0100"

    assert getsizeof(text) - len(text) != _ONE_BYTE_SIZE or one_byte(text)
    for parts in ([text, "é"], ["é", text], [text, "\ud800"], ["\U0001f600", text]):
        joined = "\x00".join(parts)  # (new, as the render joins the caller texts)
        assert (getsizeof(joined) - len(joined) == _ONE_BYTE_SIZE) == one_byte(joined)
