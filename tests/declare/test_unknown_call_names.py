"""A call to a name none of the request's tools has is no call: its text, as written, is the
turn's content, with a warning that names it and the tools offered (strict mode: a
ParseError).  So read are the calls in JSON (``JsonCalls``, ``JsonCallList`` and the formats'
own kinds of them), in Python call syntax (``PythonCalls``, ChatGLM3's fenced call) and
omni's inline calls, as a ``NamedCalls`` or ``XmlCalls`` call is.  A request without tools
offers no list to check against: any name is a call.  Whole, streamed in any cut (with and
without ``stream_arguments``) and from token ids, the reading is the same, and streaming
never begins a call it then takes back."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import pytest

import pawlette
from pawlette.declare import JsonCallList, JsonCalls, PythonCalls
from pawlette.engine.fold import fold, merge_assistant
from pawlette.errors import ParseError
from pawlette.format import Format
from pawlette.openai import message_to_openai
from pawlette.tokenization.ids import IdParser
from pawlette.types import ToolCallDelta, ToolCallStart

from ..helpers import completion_text, model_prompt, random_sizes, sequential_ids
from .tokens import feed_pieces, tokenizer

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": "A tool.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
    for name in ("get_weather", "search")
]
CALLED = "get_weather"
CALL_ID = "a1b2c3d4e"  # (nine letters and digits: Mistral Nemo's template takes no other id)


CALL_CONCEPTS = (JsonCalls, JsonCallList, PythonCalls)
OWN_CALL_READERS = ("chatglm3", "omni")
"""Formats whose calls (in Python call syntax, inline) are read by their own readers."""


def _names() -> list[str]:
    """Every registered format and variant whose calls are JSON call objects or lists, or
    Python call lists, and :data:`OWN_CALL_READERS`."""
    found = list(OWN_CALL_READERS)
    for family in pawlette.formats():
        layout = pawlette.get_format(family).declaration
        variants = getattr(layout, "variants", None) or {}
        for name in [family, *(f"{family}:{variant}" for variant in variants)]:
            declaration = pawlette.get_format(name).declaration
            concepts = getattr(declaration, "concepts", ())
            if any(isinstance(concept, CALL_CONCEPTS) for concept in concepts):
                found.append(name)
    return list(dict.fromkeys(found))


NAMES = _names()


def test_the_json_call_formats_are_all_found() -> None:
    expected = {"hermes", "chatml", "llama3", "pcml", "granite", "gigachat", "bielik", "reka"}
    expected |= {"firefunction", "cohere", "mistral:nemo", "minimax", "apriel", "apertus"}
    expected |= {"nemotron_v2", "breeze", "lfm2", "lfm2:lfm2-8b-a1b", "lfm2:lfm2.5-instruct"}
    assert expected <= set(NAMES)


@cache
def written(name: str) -> tuple[str, str]:
    """The completion a model writes for a call to ``get_weather`` in format ``name`` (with
    the request's tools), and the prompt it follows."""
    fmt = pawlette.get_format(name)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": CALL_ID,
                    "type": "function",
                    "function": {"name": CALLED, "arguments": '{"city": "Paris"}'},
                }
            ],
        },
    ]
    text = completion_text(fmt, {"messages": messages, "tools": TOOLS}, 1)
    prompt = model_prompt(fmt, messages[:1], TOOLS, fmt.render(messages, TOOLS).text)
    if CALLED not in text and ":" in name:  # a variant whose template drops a past turn's
        text = written(name.partition(":")[0])[0]  # calls: the call its family writes
    assert text.count(CALLED) == 1, text
    return text, prompt


def calling(name: str, called: str) -> tuple[Format, str, str]:
    """The format, the completion calling ``called`` instead, and the prompt."""
    text, prompt = written(name)
    return pawlette.get_format(name), text.replace(CALLED, called), prompt


def whole(fmt: Format, text: str, prompt: str | None, tools: Any) -> tuple[Any, list[str]]:
    parsed = fmt.parse(text, tools=tools, prompt=prompt, id_factory=sequential_ids())
    return parsed.message, [warning.message for warning in parsed.warnings]


def folded(fmt: Format, events: list[Any]) -> tuple[Any, list[str]]:
    result = fold(events, fmt.grammar.fields)
    message = message_to_openai(merge_assistant(result.messages))
    return message, [warning.message for warning in result.warnings]


def streamed(
    fmt: Format, pieces: list[str], prompt: str | None, tools: Any, stream_arguments: bool
) -> tuple[Any, list[str]]:
    parser = fmt.parser(
        tools=tools,
        prompt=prompt,
        id_factory=sequential_ids(),
        stream_arguments=stream_arguments,
    )
    events = []
    for piece in pieces:
        events += parser.feed(piece)
    return folded(fmt, events + parser.finish())


def cut(text: str, sizes: list[int]) -> list[str]:
    pieces, position, turn = [], 0, 0
    while position < len(text):
        size = sizes[turn % len(sizes)]
        pieces.append(text[position : position + size])
        position, turn = position + size, turn + 1
    return pieces


def from_ids(
    fmt: Format, name: str, text: str, prompt: str | None, tools: Any
) -> tuple[Any, list[str]]:
    """The completion fed as token ids: markers by id, text one token per character."""
    tok = tokenizer(name)
    markers = sorted(fmt.special_markers, key=len, reverse=True)
    pieces: list[tuple[bool, str]] = []
    position = 0
    if markers:
        for match in re.finditer("|".join(map(re.escape, markers)), text):
            if match.start() > position:
                pieces.append((False, text[position : match.start()]))
            pieces.append((True, match.group()))
            position = match.end()
    if position < len(text):
        pieces.append((False, text[position:]))
    parser = IdParser(fmt, tok, tools=tools, prompt=prompt, id_factory=sequential_ids())
    return folded(fmt, feed_pieces(parser, tok, pieces))


def every_reading(fmt: Format, name: str, text: str, prompt: str | None, tools: Any) -> Any:
    """What the whole reading gives, checked to be what every other reading gives."""
    expected = whole(fmt, text, prompt, tools)
    for stream_arguments in (False, True):
        for seed in range(3):
            pieces = cut(text, random_sizes(seed))
            got = streamed(fmt, pieces, prompt, tools, stream_arguments)
            assert got == expected, (name, seed, stream_arguments)
    assert from_ids(fmt, name, text, prompt, tools) == expected, name
    return expected


def assert_given_back(message: Any, warnings: list[str], called: str, text: str) -> None:
    """The call is no call: its text (of the completion ``text``) is the content, with one
    warning naming it."""
    assert not message.get("tool_calls"), message
    content = message.get("content") or ""
    assert re.search(rf"\b{called}\b", content), message
    assert content.strip() in text, (content, text)
    assert len(warnings) == 1, warnings
    assert f"no tool named {called!r}" in warnings[0], warnings
    assert "'get_weather', 'search'" in warnings[0], warnings  # what was expected


@pytest.mark.parametrize("name", NAMES)
def test_a_call_to_a_tool_not_offered_is_text_with_a_warning(name: str) -> None:
    fmt, text, prompt = calling(name, "lookup")
    message, warnings = every_reading(fmt, name, text, prompt, TOOLS)
    assert_given_back(message, warnings, "lookup", text)
    assert fmt.parse(text, tools=TOOLS, prompt=prompt).finish_reason == "stop"


@pytest.mark.parametrize("name", NAMES)
def test_a_prefix_of_a_tools_name_is_not_that_tool(name: str) -> None:
    fmt, text, prompt = calling(name, "get_weath")
    message, warnings = every_reading(fmt, name, text, prompt, TOOLS)
    assert_given_back(message, warnings, "get_weath", text)


@pytest.mark.parametrize("name", NAMES)
def test_a_name_that_extends_a_tools_name_is_not_that_tool(name: str) -> None:
    fmt, text, prompt = calling(name, "get_weather_now")
    message, warnings = every_reading(fmt, name, text, prompt, TOOLS)
    assert_given_back(message, warnings, "get_weather_now", text)


@pytest.mark.parametrize("name", NAMES)
def test_streaming_never_begins_a_call_to_a_tool_not_offered(name: str) -> None:
    """Not even for a moment: a client shown the call's start could not take it back."""
    fmt, text, prompt = calling(name, "lookup")
    for stream_arguments in (False, True):
        parser = fmt.parser(tools=TOOLS, prompt=prompt, stream_arguments=stream_arguments)
        events = [event for character in text for event in parser.feed(character)]
        events += parser.finish()
        begun = [event for event in events if isinstance(event, (ToolCallStart, ToolCallDelta))]
        assert begun == [], (stream_arguments, begun)


@pytest.mark.parametrize("name", NAMES)
def test_strict_mode_refuses_a_call_to_a_tool_not_offered(name: str) -> None:
    fmt, text, prompt = calling(name, "lookup")
    with pytest.raises(ParseError, match="no tool named 'lookup'"):
        fmt.parse(text, tools=TOOLS, prompt=prompt, strict=True)
    parser = fmt.parser(tools=TOOLS, prompt=prompt, strict=True, stream_arguments=True)
    with pytest.raises(ParseError, match="no tool named 'lookup'"):
        for character in text:
            parser.feed(character)
        parser.finish()


@pytest.mark.parametrize("name", NAMES)
def test_without_tools_any_name_is_a_call(name: str) -> None:
    fmt, text, prompt = calling(name, "lookup")
    message, warnings = every_reading(fmt, name, text, prompt, None)
    assert warnings == []
    calls = message["tool_calls"]
    assert [call["function"]["name"] for call in calls] == ["lookup"]
    assert calls[0]["function"]["arguments"].replace(" ", "") == '{"city":"Paris"}'


@pytest.mark.parametrize("name", NAMES)
def test_a_call_to_an_offered_tool_stays_a_call(name: str) -> None:
    fmt, text, prompt = calling(name, CALLED)
    message, warnings = every_reading(fmt, name, text, prompt, TOOLS)
    assert warnings == []
    assert [call["function"]["name"] for call in message["tool_calls"]] == [CALLED]


@pytest.mark.parametrize("stream_arguments", [False, True])
@pytest.mark.parametrize(
    "name", ["hermes", "llama3", "firefunction", "breeze", "lfm2", "chatglm3", "omni"]
)
def test_every_cut_in_two_reads_as_the_whole(name: str, stream_arguments: bool) -> None:
    for called, tools in (("lookup", TOOLS), ("get_weath", TOOLS), ("lookup", None)):
        fmt, text, prompt = calling(name, called)
        expected = whole(fmt, text, prompt, tools)
        for offset in range(len(text.encode()) + 1):
            pieces = [text[:offset], text[offset:]]
            got = streamed(fmt, pieces, prompt, tools, stream_arguments)
            assert got == expected, (called, offset)


def test_beside_a_call_to_an_offered_tool_only_the_other_is_text() -> None:
    fmt = pawlette.get_format("hermes")
    known = '<tool_call>\n{"name": "search", "arguments": {"q": "x"}}\n</tool_call>'
    unknown = '<tool_call>\n{"name": "lookup", "arguments": {"q": "y"}}\n</tool_call>'
    text = f"{known}\n{unknown}\n{known}"
    message, warnings = every_reading(fmt, "hermes", text, None, TOOLS)
    assert [call["function"]["name"] for call in message["tool_calls"]] == ["search", "search"]
    assert [call["id"] for call in message["tool_calls"]] == ["call_0", "call_1"]
    assert message["content"] == "\n" + unknown  # (with the newline its opener is written with)
    assert len(warnings) == 1 and "no tool named 'lookup'" in warnings[0]


@pytest.mark.parametrize(
    "joined",
    [
        '{"name": "search", "parameters": {}}; {"name": "lookup", "parameters": {}}',
        '{"name": "lookup", "parameters": {}}; {"name": "search", "parameters": {}}',
    ],
)
def test_calls_joined_with_one_not_offered_are_all_text(joined: str) -> None:
    """Llama 3's calls joined by ``;`` are read as one text: one call not offered makes it
    no calls (as a call list holding such a call is), never some of them dropped."""
    fmt = pawlette.get_format("llama3")
    message, warnings = every_reading(fmt, "llama3", joined, None, TOOLS)
    assert not message.get("tool_calls")
    assert message["content"] == joined
    assert len(warnings) == 1 and "no tool named 'lookup'" in warnings[0]
    tools_absent = whole(fmt, joined, None, None)[0]
    assert [call["function"]["name"] for call in tools_absent["tool_calls"]] == [
        *re.findall(r'"name": "(\w+)"', joined)
    ]


@pytest.mark.parametrize(
    ("listed", "names", "content"),
    [
        ("[search(q='x'), lookup(q='y')]", ["search"], ", lookup(q='y')]"),
        ("[lookup(q='y'), search(q='x')]", [], "[lookup(q='y'), search(q='x')]"),
    ],
)
def test_in_a_python_call_list_the_text_from_a_call_not_offered_on_is_text(
    listed: str, names: list[str], content: str
) -> None:
    """A Python call list is read call by call, as it streams (a malformed call is read so
    too): the calls before one not offered stand, it and the rest of the list are text."""
    fmt = pawlette.get_format("lfm2")
    text = f"<|tool_call_start|>{listed}<|tool_call_end|><|im_end|>\n"
    message, warnings = every_reading(fmt, "lfm2", text, None, TOOLS)
    assert [call["function"]["name"] for call in message.get("tool_calls", [])] == names
    assert message["content"] == content
    assert len(warnings) == 1 and "no tool named 'lookup'" in warnings[0]


OMNI_CALL = '<|FUNCTION_START|>{}<|FUNCTION_ARGS|>{{"city": "Paris"}}<|FUNCTION_RETURN|>'
OMNI_ACTION = '<|ACTION_START|>{}<|ACTION_ARGS|>{{"title": "x"}}<|ACTION_END|>'
ACTION_TOOL = {"type": "action", "action": {"name": "sing", "description": "Sing."}}


def test_beside_an_offered_omni_call_only_the_other_is_text() -> None:
    fmt = pawlette.get_format("omni")
    unknown = OMNI_ACTION.format("dance")
    text = f"{OMNI_ACTION.format('sing')}\n{unknown}\n{OMNI_CALL.format('search')}"
    message, warnings = every_reading(fmt, "omni", text, None, [*TOOLS, ACTION_TOOL])
    assert [call["function"]["name"] for call in message["tool_calls"]] == ["search"]
    assert message["content"][0]["action"]["name"] == "sing"
    assert message["content"][1] == {"type": "text", "text": unknown}
    assert len(warnings) == 1 and "no action named 'dance'" in warnings[0]
    assert "one of the request's tools ('sing')" in warnings[0]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (OMNI_CALL.format("sing"), "no tool named 'sing'"),  # an action is no function
        (OMNI_ACTION.format("search"), "no action named 'search'"),  # nor a function an action
    ],
)
def test_an_omni_call_of_the_other_kind_is_text(text: str, found: str) -> None:
    fmt = pawlette.get_format("omni")
    message, warnings = every_reading(fmt, "omni", text, None, [*TOOLS, ACTION_TOOL])
    assert not message.get("tool_calls") and message["content"] == text
    assert len(warnings) == 1 and found in warnings[0]
    with pytest.raises(ParseError, match=found):
        fmt.parse(text, tools=[*TOOLS, ACTION_TOOL], strict=True)
    kept = whole(fmt, text, None, None)  # without tools any name is a call
    assert kept[1] == [] and kept[0]["content"] != text


def test_an_omni_call_given_back_keeps_the_newlines_at_its_edges() -> None:
    """The newline before a block's opener, and after an action's close, are the block's:
    when it is no call they are its text, as written."""
    fmt = pawlette.get_format("omni")
    text = f"x\n{OMNI_ACTION.format('dance')}\ny\n{OMNI_CALL.format('lookup')}"
    message, warnings = every_reading(fmt, "omni", text, None, TOOLS)
    assert message["content"] == text
    assert [warning.split(";")[0] for warning in warnings] == [
        "no action named 'dance'",
        "no tool named 'lookup'",
    ]
