"""Command R+'s tools listing read back (``pawlette.formats.cohere.stub_reading``): a
conversation's function stubs give back the tools as far as a stub says them (names,
descriptions, parameters' types, required), writing those tools gives the same stubs, the
stubs the real template writes read too; text that is no stub is reported where it is."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pawlette
from pawlette.formats.cohere.stub_reading import read_listing
from tests.declare.conversations import TOOLS, conversations, normalise

from ..helpers import canonical
from ..support.template_compare import corpus_reference
from .stub_checks import check_reported_where, stub_request

PLUS = pawlette.get_format("cohere:command-r-plus")
TEMPLATE = "CohereForAI-c4ai-command-r-plus-tool_use"
WEATHER = TOOLS[0]["function"]  # (the cross-artifact checks' weather tool)
KNOWN = ("string", "number", "integer", "boolean", "array", "object")


def said_type(kind: Any) -> Any:
    """What a stub says of one item of a list of types: a name the template does not know
    is ``null``; a list stays a list."""
    if isinstance(kind, list):
        return [said_type(item) for item in kind]
    return kind if kind in KNOWN else "null"


def said_schema(schema: Any) -> dict[str, Any]:
    """What a stub says of a schema's type: the JSON type the Python type names; an
    object's ``additionalProperties`` as far as its type says it (``Any``: none)."""
    if not isinstance(schema, dict) or "type" not in schema:
        return {}
    kind = schema["type"]
    if isinstance(kind, list):
        return {"type": said_type(kind)}
    if kind != "object":
        return {"type": said_type(kind)}
    inner = schema.get("additionalProperties")
    if "additionalProperties" not in schema or said_schema(inner) == {"type": "null"}:
        return {"type": "object"}  # (Dict[str, Any])
    return {"type": "object", "additionalProperties": said_schema(inner)}


def said(schema: dict[str, Any]) -> dict[str, Any]:
    """What a stub says of a parameter: its type, and a description that is not empty."""
    result = said_schema(schema)
    if schema.get("description"):
        result["description"] = schema["description"]
    return result


def expressed(definition: dict[str, Any]) -> dict[str, Any]:
    """The function object a stub of ``definition`` says."""
    parameters = definition.get("parameters") or {}
    properties = parameters.get("properties") or {}
    result: dict[str, Any] = {"name": definition["name"]}
    if definition.get("description"):
        result["description"] = definition["description"]  # (written as given, untrimmed)
    result["parameters"] = {
        "type": "object",
        "properties": {name: said(schema) for name, schema in properties.items()},
    }
    required = [name for name in properties if name in parameters.get("required", [])]
    if required:
        result["parameters"]["required"] = required
    return result


# Names may hold the signature's own punctuation; descriptions anything but a stub's lines
# (no letters that spell a type or "Args").
NAMES = st.text(alphabet="abxy_09(,: )[]", min_size=1, max_size=8)
DESCRIPTIONS = st.text(alphabet='ab -:()[]"`\n\t中', max_size=12)
TYPES = st.one_of(
    st.sampled_from([*KNOWN, "null", "file", None]),
    st.lists(st.sampled_from([*KNOWN, "null"]), min_size=1, max_size=3),
)


@st.composite
def schemas(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    kind = draw(TYPES)
    if kind is not None:
        schema["type"] = kind
    if kind == "object" and draw(st.booleans()):
        inner = draw(st.sampled_from([*KNOWN, "null", None]))
        schema["additionalProperties"] = {} if inner is None else {"type": inner}
    if draw(st.booleans()):
        schema["description"] = draw(DESCRIPTIONS)
    if kind == "array" and draw(st.booleans()):
        schema["items"] = {"type": "string"}  # not written: lost
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
    return definition


@given(st.lists(definitions(), min_size=1, max_size=3, unique_by=lambda d: d["name"]))
def test_the_stubs_read_back_as_the_tools_they_say(tools: list[dict[str, Any]]) -> None:
    text = PLUS.render(stub_request(tools)).text
    parsed = PLUS.parse_conversation(text, strict=True).to_request()
    assert [tool["function"] for tool in parsed["tools"]] == [expressed(d) for d in tools]
    assert PLUS.render(parsed).text == text


def test_the_templates_stubs_read_back() -> None:
    described = {
        "name": "search",
        "description": "Search the web.\nTwo lines.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "limit": {"type": "integer", "description": "At most."},
                "ratio": {"type": ["number", "string"], "description": "A share."},
                "tags": {
                    "type": "object",
                    "additionalProperties": {"type": "boolean"},
                    "description": "Flags.",
                },
            },
            "required": ["query", "tags"],
        },
    }
    tool = {"type": "function", "function": described}
    expected = corpus_reference(TEMPLATE).render(
        [{"role": "user", "content": "Hi"}], [tool], add_generation_prompt=True
    )
    assert expected.text is not None
    parsed = PLUS.parse_conversation(expected.text, strict=True).to_request()
    assert parsed["tools"] == [tool]


def test_calls_and_the_tools_they_call_read_back() -> None:
    arguments = json.dumps({"city": "0", "days": 3})
    call = {
        "id": "a",
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments},
    }
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
    ]
    request = {**stub_request([WEATHER]), "messages": messages}
    parsed = PLUS.parse_conversation(PLUS.render(request).text, strict=True).to_request()
    (read,) = parsed["messages"][1]["tool_calls"]
    assert json.loads(read["function"]["arguments"]) == {"city": "0", "days": 3}
    assert parsed["tools"] == request["tools"]


def test_a_declared_directly_answer_tool_is_called_in_a_conversation_read_back() -> None:
    answer = {"name": "directly-answer", "parameters": {"type": "object", "properties": {}}}
    call = {"id": "a", "type": "function", "function": {"name": "directly-answer"}}
    call["function"]["arguments"] = "{}"
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
    ]
    request = {**stub_request([answer]), "messages": messages}
    parsed = PLUS.parse_conversation(PLUS.render(request).text, strict=True).to_request()
    (read,) = parsed["messages"][1]["tool_calls"]
    assert read["function"]["name"] == "directly-answer"


def test_a_description_may_hold_the_separator_and_the_closing_fence() -> None:
    # (The closing fence, then the separator and a stub's opening, not both in a row.)
    tricky = {"name": "f", "description": 'a\n    """\n    pass\n```!\n\n```python\ndef g():'}
    tools = [tricky, {"name": "h", "parameters": {"type": "object", "properties": {}}}]
    text = PLUS.render(stub_request(tools)).text
    parsed = PLUS.parse_conversation(text, strict=True).to_request()
    assert [tool["function"]["name"] for tool in parsed["tools"]] == ["f", "h"]
    assert parsed["tools"][0]["function"]["description"] == tricky["description"]


@pytest.mark.parametrize(
    ("written", "edited", "where", "problem"),
    [
        ("city: str,", "city: string,", "city: string", "'city: string, days: Optional[int] = N"),
        (
            "        days (Optional[int])",
            "        day (Optional[int])",
            "\n        day (Optional",
            "no Args line for parameter 'days'",
        ),
        (
            "    pass\n```",
            "    pass\n",
            "```python\ndef get_weather(",
            "no closing ``` of its stub",
        ),
    ],
)
def test_text_that_is_no_stub_is_reported_where_it_is(
    written: str, edited: str, where: str, problem: str
) -> None:
    text = PLUS.render(stub_request([WEATHER])).text
    check_reported_where(PLUS, text, (written, edited), where, problem, "def get_weather(")


def test_the_stubs_before_a_malformed_one_are_read() -> None:
    text = PLUS.render(stub_request([WEATHER, {**WEATHER, "name": "other"}])).text
    start = text.index("```python")
    listing = text[start : text.index("<|END_OF_TURN_TOKEN|>")]
    listing = listing.replace("other(city: str", "other(city: text")
    tools, position, problem = read_listing(listing)
    assert [tool["name"] for tool in tools] == ["get_weather"]
    assert listing[position:].startswith("```python\ndef other(")
    assert problem is not None and listing[problem.position :].startswith("city: text")


@given(st.data())
def test_whole_conversations_read_back_with_their_tools(data: st.DataObject) -> None:
    request = data.draw(conversations(PLUS))
    parsed = PLUS.parse_conversation(PLUS.render(request).text, strict=True).to_request()
    assert canonical(parsed) == canonical(normalise(PLUS, request))
    assert parsed.get("tools") == request.get("tools")  # (the checks' tools, said whole)
