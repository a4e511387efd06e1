"""Seed-OSS's tools block read back (``pawlette.formats.seed_oss.stub_reading``): a
conversation's function stubs give back the tools as far as a stub says them (names, Python
types, required, descriptions, returned values), writing those tools gives the same stubs,
calls are typed by them; text that is no stub is reported where it is."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pawlette
from pawlette.formats.seed_oss.stub_reading import read_listing
from tests.declare.conversations import TOOLS

from .stub_checks import check_reported_where, stub_request

SEED = pawlette.get_format("seed_oss")
# What a stub says of a schema type (``number`` is written ``int``; others ``Any``: no type).
SAID = {"string": "string", "integer": "integer", "number": "integer", "boolean": "boolean"}
SAID["array"] = "array"
WEATHER = TOOLS[0]["function"]  # (the cross-artifact checks' weather tool)


def said(schema: Any) -> dict[str, Any]:
    """What a stub says of a parameter's schema: its type as far as Python's names tell it,
    and a description that is there."""
    result: dict[str, Any] = {}
    kind = schema.get("type")
    if isinstance(kind, str) and kind in SAID:
        result["type"] = SAID[kind]
    if schema.get("description"):
        result["description"] = schema["description"]
    return result


def expressed(definition: dict[str, Any]) -> dict[str, Any]:
    """The function object a stub of ``definition`` says."""
    parameters = definition.get("parameters") or {}
    properties = parameters.get("properties") or {}
    result: dict[str, Any] = {"name": definition["name"]}
    description = (definition.get("description") or "").strip()
    if description:
        result["description"] = description
    result["parameters"] = {
        "type": "object",
        "properties": {name: said(schema) for name, schema in properties.items()},
    }
    required = [name for name in properties if name in parameters.get("required", [])]
    if required:
        result["parameters"]["required"] = required
    returned = (definition.get("returns") or {}).get("properties") or {}
    if returned:
        properties = {name: said(schema) for name, schema in returned.items()}
        result["returns"] = {"type": "object", "properties": properties}
    return result


# Names may hold the signature's own punctuation; descriptions anything but a stub's lines
# ("[" of a parameter's mark) and a marker ("<").
NAMES = st.text(alphabet="abxy_09(,: )", min_size=1, max_size=8)
DESCRIPTIONS = st.text(alphabet='ab -:()"\n\t中', max_size=12)
TYPES = st.sampled_from(["string", "integer", "number", "boolean", "array", "object", None])


@st.composite
def schemas(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    kind = draw(TYPES)
    if kind is not None:
        schema["type"] = kind
    if draw(st.booleans()):
        schema["description"] = draw(DESCRIPTIONS)
    if kind == "string" and draw(st.booleans()):
        schema["enum"] = ["a", "b"]  # not written: lost
    return schema


@st.composite
def definitions(draw: st.DrawFn) -> dict[str, Any]:
    properties = draw(st.dictionaries(NAMES, schemas(), max_size=4))
    definition: dict[str, Any] = {"name": draw(NAMES)}
    if draw(st.booleans()):
        definition["description"] = draw(DESCRIPTIONS)
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    parameters["required"] = [name for name in properties if draw(st.booleans())]
    definition["parameters"] = parameters
    if draw(st.booleans()):
        returned = draw(st.dictionaries(NAMES, schemas(), max_size=2))
        definition["returns"] = {"type": "object", "properties": returned}
    return definition


@given(st.lists(definitions(), min_size=1, max_size=3, unique_by=lambda d: d["name"]))
def test_the_stubs_read_back_as_the_tools_they_say(tools: list[dict[str, Any]]) -> None:
    text = SEED.render(stub_request(tools)).text
    parsed = SEED.parse_conversation(text, strict=True).to_request()
    assert [tool["function"] for tool in parsed["tools"]] == [expressed(d) for d in tools]
    assert SEED.render(parsed).text == text


def test_calls_are_typed_by_the_tools_read_back() -> None:
    arguments = json.dumps({"city": "0", "days": 3})
    call = {
        "id": "a",
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments},
    }
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]
    request = {**stub_request([WEATHER]), "messages": messages}
    parsed = SEED.parse_conversation(SEED.render(request).text, strict=True).to_request()
    (read,) = parsed["messages"][1]["tool_calls"]
    assert json.loads(read["function"]["arguments"]) == {"city": "0", "days": 3}
    assert parsed["tools"] == request["tools"]


def test_a_description_may_hold_the_separator_and_the_closing_quotes() -> None:
    tricky = {"name": "f", "description": 'a\n    """\n\nFunction:\ndef g():', "parameters": {}}
    tools = [tricky, {"name": "h", "parameters": {"type": "object", "properties": {}}}]
    text = SEED.render(stub_request(tools)).text
    parsed = SEED.parse_conversation(text, strict=True).to_request()
    assert [tool["function"]["name"] for tool in parsed["tools"]] == ["f", "h"]
    assert parsed["tools"][0]["function"]["description"] == tricky["description"]


@pytest.mark.parametrize(
    ("written", "edited", "where", "problem"),
    [
        ("days: int)", "days: float)", "days: float)", "'days: float' is not NAME: TYPE"),
        ("- days (int)", "- day (int)", "\n    - city (str)", "no Args line for parameter 'days'"),
        ('\n    """\n工具', "\n工具", "get_weather(", 'no closing """ of its docstring'),
    ],
)
def test_text_that_is_no_stub_is_reported_where_it_is(
    written: str, edited: str, where: str, problem: str
) -> None:
    text = SEED.render(stub_request([WEATHER])).text
    check_reported_where(SEED, text, (written, edited), where, problem, "get_weather(")


def test_the_stubs_before_a_malformed_one_are_read() -> None:
    text = SEED.render(stub_request([WEATHER, {**WEATHER, "name": "other"}])).text
    start = text.index("get_weather(")
    listing = text[start : text.index("\n工具")].replace("other(city: str", "other(city: float")
    tools, position, problem = read_listing(listing)
    assert [tool["name"] for tool in tools] == ["get_weather"]
    assert listing[position:].startswith("other(")
    assert problem is not None and listing[problem.position :].startswith("city: float")
