"""IFM-K2-Horizon (:mod:`pawlette.formats.ifm`): its tools presented as Markdown (the
template's default) and as XML (``ifm:xml-tools``) for schemas of every shape those
presentations write, against the real template given ``tool_presentation_format``; the
JSON presentation (``ifm:json-tools``) likewise; the exported template for all three; and
what reading a render gives back."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.errors import RequestError
from pawlette.export.jinja import export_jinja
from pawlette.formats.ifm import markdown, schema, xml

from ..declare.conversations import TOOLS, normalise
from ..declare.conversations import conversations as declared_conversations
from ..helpers import canonical
from ..support.conversations import generate_conversations
from ..support.template_compare import compare_renders, corpus_reference, own_turns

TEMPLATE = "IFM-K2-Horizon"


def _object(properties: dict[str, Any], required: list[str] | None = None, **more: Any) -> Any:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required is not None:
        schema["required"] = required
    return {**schema, **more}


def _tool(parameters: Any, description: Any = "A tool.", **more: Any) -> dict[str, Any]:
    function = {"name": "act", "description": description, "parameters": parameters, **more}
    return {"type": "function", "function": function}


STRING = {"type": "string"}
POINT = _object({"x": {"type": "number"}}, ["x"], description="A point.")

SCHEMAS: dict[str, dict[str, Any]] = {
    "type lists": _tool(
        _object(
            {
                "a": {"type": ["string", "null"]},
                "b": {"type": ["array", "null"], "items": {"type": "integer"}},
                "c": {"type": []},
                "d": {"type": "", "items": STRING},
            }
        )
    ),
    "anyOf": _tool(
        _object(
            {
                "a": {
                    "anyOf": [{"type": "string", "description": "x\ny"}, {"type": "integer"}],
                    "description": "Pick one.",
                },
                "b": {"anyOf": [True, False, {"type": "null"}]},
            }
        )
    ),
    "oneOf nesting objects and arrays": _tool(
        _object(
            {
                "a": {
                    "oneOf": [
                        _object({"k": STRING}, ["k"]),
                        {"type": "array", "items": {"anyOf": [STRING, {"type": "null"}]}},
                    ]
                }
            }
        )
    ),
    "nested objects and arrays": _tool(
        _object(
            {
                "where": _object(
                    {"name": STRING, "address": _object({"city": STRING}, ["city"])}, ["name"]
                ),
                "reminders": {
                    "type": "array",
                    "items": _object({"minutes": {"type": "integer"}}, ["minutes"]),
                },
            },
            ["where"],
        )
    ),
    "defaults of every type": _tool(
        _object(
            {
                "a": {"type": "string", "default": ""},
                "b": {"type": "string", "default": "x\ny"},
                "c": {"type": "integer", "default": 3},
                "d": {"type": "number", "default": 1.5},
                "e": {"type": "boolean", "default": False},
                "f": {"default": None},
                "g": {"type": "array", "default": ["a  b", "it's", "back\\slash"]},
                "h": {"type": "object", "default": {"k": [1, {"z": True}]}},
                "i": {"type": "number", "default": 1e20, "minimum": 1e-07},
            }
        )
    ),
    "enums": _tool(
        _object(
            {
                "a": {"enum": ["x", 1, None, True, 2.5, "", "a\nb"]},
                "b": {"type": "string", "enum": []},
                "c": {"type": "string", "enum": ["é  中", "x"], "default": "a\u00a0\u2003b\tc"},
            }
        )
    ),
    "descriptions": _tool(
        _object(
            {
                "a": {"type": "string", "description": "line 1\nline 2\n\nline 4"},
                "b": _object({"c": {"type": "string", "description": "deep\nline"}}),
                "d": {"type": "string", "description": ""},
                "e": {"type": "integer", "description": 5},
                "f": {"type": "array", "items": {"type": "string", "description": "an\nitem"}},
            }
        ),
        description="Two\nlines.",
    ),
    "additional and pattern properties": _tool(
        _object(
            {
                "a": {"type": "object", "additionalProperties": {"type": "string"}},
                "b": {"type": "object", "additionalProperties": False},
                "c": {
                    "type": "object",
                    "patternProperties": {"^x": {"type": "integer"}, "^y": "z"},
                },
            }
        )
    ),
    "items that are no schema": _tool(
        _object({"a": {"type": "array", "items": True}, "b": {"type": "array", "items": [1, 2]}})
    ),
    "definitions and references": _tool(
        {
            "type": "object",
            "$defs": {"P": POINT, "Q": {"$ref": "#/$defs/P", "title": "Q"}},
            "properties": {
                "a": {"$ref": "#/$defs/P", "description": "First."},
                "b": {"$ref": "#/$defs/P"},
                "c": {"$ref": "#/$defs/Q"},
                "d": {"type": "array", "items": {"$ref": "#/$defs/Q"}},
                "e": {"anyOf": [{"$ref": "#/$defs/missing"}, {"$ref": "#/$defs/P"}]},
            },
        }
    ),
    "a recursive definition": _tool(
        {
            "type": "object",
            "definitions": {
                "N": _object({"v": {"type": "integer"}, "next": {"$ref": "#/definitions/N"}})
            },
            "properties": {"root": {"$ref": "#/definitions/N"}},
        }
    ),
    "parameters that are a reference": _tool(
        {"$defs": {"R": _object({"x": STRING})}, "$ref": "#/$defs/R"}
    ),
    "parameters that are one anyOf": _tool(
        {
            "anyOf": [_object({"a": STRING}), _object({"b": STRING})],
            "description": "a\nb",
            "title": "T",
        }
    ),
    "parameters that are an array": _tool({"type": "array", "items": STRING, "default": []}),
    "no parameters": _tool({"type": "object", "properties": {}}),
    "parameters of no schema": _tool({}),
    "returns": _tool(_object({"a": STRING}), returns=_object({"ok": {"type": "boolean"}})),
    "other keys": _tool(
        _object(
            {
                "a": {
                    "type": "string",
                    "title": "A",
                    "examples": ["x", "y"],
                    "format": "email",
                    "minLength": 2,
                    "pattern": "^a  b$",
                    "const": {"k": 1},
                    "not": {"type": "null"},
                    "x-info": {"k": [1, 2]},
                },
                "b": True,
                "c": "text",
            }
        ),
        strict=True,
    ),
    # The template writes every tool as JSON when one holds what its Markdown does not.
    "allOf: as JSON": _tool(_object({"a": {"allOf": [STRING]}})),
    "a reference out of the parameters: as JSON": _tool(_object({"a": {"$ref": "https://x/y"}})),
    "required in a variant: as JSON": _tool(
        _object({"a": {"anyOf": [{"required": ["x"]}, STRING]}})
    ),
    "a key nesting objects at the top: as JSON": _tool({**_object({"a": STRING}), "x-m": {"k": 1}}),
}
"""Hand-written schemas, each the one tool of a request (the first request lists them all)."""

PRETTY = {"markdown": "ifm", "xml": "ifm:xml-tools"}
"""The pretty presentations (the template's ``tool_presentation_format``) and their formats."""

NAMES = {**PRETTY, "json": "ifm:json-tools"}

REFUSED: dict[str, tuple[dict[str, Any], str]] = {
    "required that is no list": (_tool(_object({"a": STRING}, "a")), "parameters.required"),  # type: ignore[arg-type]
    "required naming no property": (_tool(_object({"a": STRING}, ["b"])), "parameters.required"),
    "required without properties": (
        _tool({"type": "object", "required": ["a"]}),
        "parameters.required",
    ),
    "nested required naming no property": (
        _tool(_object({"a": _object({"b": STRING}, ["c"])})),
        "parameters.properties.a.required",
    ),
    "properties that are a list": (_tool({"type": "object", "properties": ["a"]}), "properties"),
    "a description that is a list": (_tool(_object({"a": STRING}), ["x"]), "description"),
    "variants that are a number": (_tool(_object({"a": {"anyOf": 3}})), "anyOf"),
}
"""Tools the template raises on with its Markdown presentation, and the field the refusal
names (with its XML presentation too, but for :data:`MARKDOWN_ONLY`)."""

MARKDOWN_ONLY = {"a description that is a list"}
"""What the template raises on with the Markdown presentation only: the XML one prints a
function's description whatever it is."""


def _request(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Go."},
        ],
        "tools": tools,
    }


@cache
def _reference(presentation: str | None = None, calls: str | None = None) -> Any:
    variables = {} if presentation is None else {"tool_presentation_format": presentation}
    if calls is not None:
        variables["tool_call_format"] = calls
    return corpus_reference(TEMPLATE, variables=variables)


# ------------------------------------------------------------------ the pretty presentations


def test_the_format_renders_the_templates_defaults() -> None:
    """No variable given: the template presents the tools as Markdown, as ``ifm`` does."""
    fmt = pawlette.get_format("ifm")
    assert fmt.declaration.reference_variables()["tool_presentation_format"] == "markdown"
    conversations = generate_conversations(16, seed=3, tools_always=True, avoid=fmt.special_markers)
    report = compare_renders(fmt, _reference(), conversations)
    assert report.agrees, report.describe()
    assert report.identical == report.compared


@pytest.mark.parametrize("label", [*SCHEMAS, "all together"])
@pytest.mark.parametrize("presentation", list(PRETTY))
def test_each_schema_shape_is_presented_as_the_template_does(presentation: str, label: str) -> None:
    tools = list(SCHEMAS.values())[:14] if label == "all together" else [SCHEMAS[label]]
    fmt = pawlette.get_format(PRETTY[presentation])
    report = compare_renders(fmt, _reference(presentation), [_request(tools)])
    assert report.agrees, report.describe()
    assert report.identical == report.compared == 2  # with and without the prompt


def test_markdown_is_written_where_the_template_writes_it() -> None:
    text = (
        pawlette.get_format("ifm").render(**_request([SCHEMAS["nested objects and arrays"]])).text
    )
    assert (
        "<ifm|tools>\n## act\nA tool.\n\n**Parameters**\n"
        "- `where` *(object, required)*\n  - `name` *(string, required)*\n"
        "  - `address` *(object)*\n    - `city` *(string, required)*\n"
        "- `reminders` *(array of object)*\n  - Items *(object)*\n"
        "    - `minutes` *(integer, required)*\n</ifm|tools>"
    ) in text


def test_xml_is_written_where_the_template_writes_it() -> None:
    tools = [SCHEMAS["nested objects and arrays"], SCHEMAS["enums"]]
    text = pawlette.get_format("ifm:xml-tools").render(**_request(tools)).text
    assert (
        "<ifm|tools>\n<function name=act><description>A tool.</description><parameters>"
        "<param name=where type=object required=true><param name=name type=string"
        " required=true/><param name=address type=object><param name=city type=string"
        " required=true/></param></param><param name=reminders type=array[object]>"
        "<items type=object><param name=minutes type=integer required=true/></items></param>"
        "</parameters></function>\n<function name=act><description>A tool.</description>"
        '<parameters><param name=a type=any enum="x"|"1"|"None"|"True"|"2.5"|""|"a\nb"/>'
        '<param name=b type=string/><param name=c type=string enum="é  中"|"x"'
        ' default="a\u00a0\u2003b\tc"/></parameters></function>\n</ifm|tools>'
    ) in text


@pytest.mark.parametrize("presentation", list(PRETTY))
def test_one_tool_the_presentation_cannot_hold_makes_every_tool_json(presentation: str) -> None:
    tools = [SCHEMAS["enums"], SCHEMAS["allOf: as JSON"]]
    fmt = pawlette.get_format(PRETTY[presentation])
    text = fmt.render(**_request(tools)).text
    assert '<ifm|tools>\n{"type": "function", "function": {"name": "act"' in text
    assert "**Parameters**" not in text and "<function" not in text
    report = compare_renders(fmt, _reference(presentation), [_request(tools)])
    assert report.agrees, report.describe()


@pytest.mark.parametrize("label", list(REFUSED))
@pytest.mark.parametrize("presentation", list(PRETTY))
def test_what_the_template_raises_on_is_refused(presentation: str, label: str) -> None:
    tool, field = REFUSED[label]
    fmt = pawlette.get_format(PRETTY[presentation])
    report = compare_renders(fmt, _reference(presentation), [_request([tool])])
    assert report.agrees, report.describe()
    if presentation == "xml" and label in MARKDOWN_ONLY:  # written, as the template does
        assert report.identical == report.compared
        return
    with pytest.raises(RequestError) as raised:
        fmt.render(**_request([tool]))
    assert raised.value.path.startswith("tools[0].function."), raised.value
    assert raised.value.path.endswith(field), raised.value
    assert "IFM-K2-Horizon's template raises on it" in str(raised.value)
    assert len(report.reference_refused) == report.compared  # the template raised too


# ------------------------------------------------------------------ random schemas

_TEXTS = st.sampled_from(["", "x", "a b", "l1\nl2", "it's", "b\\s", " pad ", "é中", "#/$defs/D"])
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    _TEXTS,
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["k", "x y"]), inner, max_size=2),
    ),
    max_leaves=5,
)
_NAMES = st.sampled_from(["a", "b", "c_d", "Ä"])
_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "object", "array", "null", ""])


def _schema(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    keys: dict[str, st.SearchStrategy[Any]] = {
        "type": st.one_of(_TYPES, st.lists(_TYPES, max_size=3)),
        "description": st.one_of(_TEXTS, _SCALARS),
        "enum": st.lists(_SCALARS, max_size=3),
        "default": _VALUES,
        "properties": st.dictionaries(_NAMES, children, max_size=3),
        "items": st.one_of(children, _VALUES),
        "oneOf": st.lists(children, max_size=3),
        "anyOf": st.lists(children, max_size=3),
        "additionalProperties": st.one_of(st.booleans(), children),
        "patternProperties": st.dictionaries(st.sampled_from(["^a", ".*"]), children, max_size=2),
        "returns": st.one_of(children, _TEXTS),
        "title": _TEXTS,
        "minimum": _SCALARS,
        "x-extra": _VALUES,
        "$ref": st.sampled_from(["#/$defs/D", "#/definitions/E", "#/$defs/none", "other"]),
        "required": st.lists(_NAMES, max_size=1),
    }
    chosen = st.lists(st.sampled_from(list(keys)), max_size=4, unique=True)
    return chosen.flatmap(lambda names: st.fixed_dictionaries({name: keys[name] for name in names}))


_SCHEMAS = st.recursive(
    st.one_of(st.just({}), st.builds(lambda kind: {"type": kind}, _TYPES), st.booleans()),
    _schema,
    max_leaves=8,
)


@st.composite
def _tools(draw: st.DrawFn) -> list[dict[str, Any]]:
    parameters = draw(_schema(_SCHEMAS))
    if draw(st.booleans()):
        parameters["$defs"] = draw(
            st.dictionaries(st.sampled_from(["D", "E"]), _SCHEMAS, max_size=2)
        )
    function: dict[str, Any] = {"name": "act", "parameters": parameters}
    if draw(st.booleans()):
        function["description"] = draw(_TEXTS)
    if draw(st.booleans()):  # (pawlette reads only an object there)
        function["returns"] = draw(_schema(_SCHEMAS))
    return [{"type": "function", "function": function}]


@pytest.mark.parametrize("presentation", list(PRETTY))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tools=_tools())
def test_random_schemas_render_or_are_refused_as_the_template_does(
    presentation: str, tools: list[Any]
) -> None:
    fmt = pawlette.get_format(PRETTY[presentation])
    report = compare_renders(fmt, _reference(presentation), [_request(tools)])
    assert report.agrees, report.describe()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tools())
def test_random_schemas_render_alike_through_the_exported_template(tools: list[Any]) -> None:
    request = _request(tools)
    for presentation, name in NAMES.items():
        variables = {"tool_presentation_format": presentation}
        try:
            expected = pawlette.get_format(name).render(**request).text
        except RequestError:  # both refuse
            with pytest.raises(Exception, match="IFM-K2-Horizon's template raises on it"):
                _exported().render(**request, add_generation_prompt=False, **variables)
            continue
        assert _exported().render(**request, add_generation_prompt=False, **variables) == expected


# ------------------------------------------------------------------ the exported template


@cache
def _exported() -> Any:
    from transformers.utils.chat_template_utils import _compile_jinja_template

    return _compile_jinja_template(export_jinja(pawlette.get_format("ifm")))


@pytest.mark.parametrize("label", list(SCHEMAS))
@pytest.mark.parametrize("presentation", [None, *NAMES])
def test_the_exported_template_reads_the_presentation(label: str, presentation: str | None) -> None:
    request = _request([SCHEMAS[label]])
    name = NAMES[presentation or "markdown"]
    variables = {"tool_presentation_format": presentation} if presentation else {}
    expected = pawlette.get_format(name).render(**request, add_generation_prompt=True).text
    written = _exported().render(**request, add_generation_prompt=True, **variables)
    assert written == expected


@pytest.mark.parametrize("label", list(REFUSED))
@pytest.mark.parametrize("presentation", list(PRETTY))
def test_the_exported_template_refuses_what_render_refuses(presentation: str, label: str) -> None:
    tool, field = REFUSED[label]
    request = {**_request([tool]), "tool_presentation_format": presentation}
    if presentation == "xml" and label in MARKDOWN_ONLY:
        expected = pawlette.get_format(PRETTY[presentation]).render(**_request([tool])).text
        assert _exported().render(**request, add_generation_prompt=False) == expected
        return
    with pytest.raises(Exception, match="IFM-K2-Horizon's template raises on it") as raised:
        _exported().render(**request, add_generation_prompt=True)
    assert str(raised.value).startswith("tools[0].function."), raised.value
    assert field in str(raised.value), raised.value


# ------------------------------------------------------------------ the named variants


@pytest.mark.parametrize("presentation", ["json", "xml"])
def test_a_variant_renders_as_the_template_given_its_variable(presentation: str) -> None:
    fmt = pawlette.get_format(NAMES[presentation])
    assert fmt.declaration.reference_variables()["tool_presentation_format"] == presentation
    reference = _reference(presentation)
    conversations = generate_conversations(24, seed=1, avoid=fmt.special_markers)
    report = compare_renders(fmt, reference, conversations)
    assert report.agrees, report.describe()
    turns = own_turns(fmt, reference, conversations)
    assert turns.agrees, turns.describe()


def test_the_json_variant_writes_what_markdown_would_not() -> None:
    request = _request([SCHEMAS["enums"]])
    text = pawlette.get_format("ifm:json-tools").render(**request).text
    assert '<ifm|tools>\n{"type": "function", "function": {"name": "act"' in text
    report = compare_renders(pawlette.get_format("ifm:json-tools"), _reference("json"), [request])
    assert report.agrees, report.describe()


# ------------------------------------------------------------------ the JSON call format

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": _object({"city": STRING, "days": {"type": "integer"}}, ["city"]),
    },
}


@pytest.mark.parametrize("presentation", list(NAMES))
def test_json_calls_render_as_the_template_given_its_variable(presentation: str) -> None:
    fmt = pawlette.get_format(NAMES[presentation]).with_options(tool_call_format="json")
    assert fmt.declaration.reference_variables()["tool_call_format"] == "json"
    reference = _reference(presentation, "json")
    conversations = generate_conversations(24, seed=2, avoid=fmt.special_markers)
    report = compare_renders(fmt, reference, conversations)
    assert report.agrees, report.describe()
    assert report.identical == report.compared
    turns = own_turns(fmt, reference, conversations)
    assert turns.agrees, turns.describe()


def test_json_calls_are_written_as_the_template_writes_them() -> None:
    call = {"id": "c1", "type": "function"}
    call["function"] = {"name": "get_weather", "arguments": '{"city": "Zürich", "days": 2}'}
    request = {
        "messages": [
            {"role": "user", "content": "Go."},
            {"role": "assistant", "content": "On it.", "tool_calls": [call, call]},
        ],
        "tools": [WEATHER_TOOL],
    }
    text = pawlette.get_format("ifm:json-calls").render(**request).text
    written = (
        '<ifm|tool_call>{"name": "get_weather", "arguments": {"city": "Zürich", "days": 2}}'
        "</ifm|tool_call>"
    )
    assert f"</ifm|think>On it.<ifm|tool_calls>\n{written}\n{written}\n</ifm|tool_calls>" in text
    assert "emit one JSON object with the function name and arguments on the same line" in text


@pytest.mark.parametrize(
    "completion",
    [
        '<ifm|tool_calls>\n<ifm|tool_call>{"name": "get_weather", "arguments": {"city": "Paris",'
        ' "days": 2}}</ifm|tool_call>\n</ifm|tool_calls><|ifm|im_end|>',
        '<ifm|tool_calls><ifm|tool_call>{"name":"get_weather","arguments":{"city":"Paris",'
        '"days":2}}</ifm|tool_call></ifm|tool_calls><|ifm|im_end|>',
    ],
)
def test_a_models_json_calls_are_read(completion: str) -> None:
    fmt = pawlette.get_format("ifm:json-calls")
    read = fmt.parse("Sure.</ifm|think>" + completion, tools=[WEATHER_TOOL])
    assert read.message["reasoning_content"] == "Sure."
    assert read.finish_reason == "tool_calls"
    [call] = read.message["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris", "days": 2}


def test_the_exported_template_refuses_the_call_format_not_declared() -> None:
    request = {**_request([WEATHER_TOOL]), "tool_call_format": "xml_typed"}
    with pytest.raises(Exception, match="tool_call_format: xml_typed; expected one of xml, json"):
        _exported().render(**request, add_generation_prompt=True)


# ------------------------------------------------------------------ reading back


def _untyped(value: Any) -> Any:
    """A tag call's value read with no schema: text that is JSON reads as that JSON."""
    try:
        return json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return value


@pytest.mark.parametrize("presentation", list(PRETTY))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_render_parses_back_with_its_calls_typed_as_the_presentation_says(
    presentation: str, data: Any
) -> None:
    """The tools are not read back from the pretty presentations (a recorded loss); the
    Markdown's parameter lines still say which parameters are strings (``city``), whose
    values read back as written (:mod:`pawlette.formats.ifm.markdown_reading`); the XML's
    are not read, so every value reads untyped, text that is JSON as JSON."""
    fmt = pawlette.get_format(PRETTY[presentation])
    request = data.draw(declared_conversations(fmt))
    parsed = fmt.parse_conversation(fmt.render(request).text, strict=True)
    expected = normalise(fmt, request)
    strings = {"city"} if presentation == "markdown" else set()
    for message in expected["messages"]:
        for call in message.get("tool_calls") or []:
            values = json.loads(call["function"]["arguments"]).items()
            read = {key: value if key in strings else _untyped(value) for key, value in values}
            call["function"]["arguments"] = json.dumps(read, ensure_ascii=False)
    assert canonical(parsed.to_request()) == canonical(expected)


@pytest.mark.parametrize(("presentation", "city"), [("markdown", "0"), ("xml", 0)])
def test_a_string_argument_spelling_json_reads_back_as_the_presentation_types_it(
    presentation: str, city: Any
) -> None:
    fmt = pawlette.get_format(PRETTY[presentation])
    call = {"id": "c", "type": "function", "function": {"name": "get_weather", "arguments": ""}}
    call["function"]["arguments"] = json.dumps({"city": "0", "days": 2})
    request = {
        "messages": [
            {"role": "user", "content": "Go."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
        ],
        "tools": TOOLS,
    }
    parsed = fmt.parse_conversation(fmt.render(**request).text, strict=True)
    (read,) = parsed.messages[1]["tool_calls"]
    assert json.loads(read["function"]["arguments"]) == {"city": city, "days": 2}


def test_reading_a_render_loses_the_xml_tools() -> None:
    fmt = pawlette.get_format("ifm:xml-tools")
    request = _request([SCHEMAS["enums"]])
    read = fmt.parse_conversation(fmt.render(**request).text)
    assert read.tools == []
    assert read.losses == ("tools: written as XML, not read back into JSON schemas",)
    assert read.messages == request["messages"]
    fallback = _request([SCHEMAS["enums"], SCHEMAS["allOf: as JSON"]])
    again = fmt.parse_conversation(fmt.render(**fallback).text, strict=True)
    assert again.tools == fallback["tools"]
    assert again.losses == ()


def test_reading_a_render_loses_the_markdown_tools_and_keeps_the_json_ones() -> None:
    request = _request([SCHEMAS["enums"]])
    read = pawlette.get_format("ifm").parse_conversation(
        pawlette.get_format("ifm").render(**request).text
    )
    assert read.tools == []
    assert read.losses == ("tools: written as Markdown, not read back into JSON schemas",)
    assert read.messages == request["messages"]
    json_tools = pawlette.get_format("ifm:json-tools")
    again = json_tools.parse_conversation(json_tools.render(**request).text)
    assert again.tools == request["tools"]
    assert again.losses == ()


def test_tools_written_as_json_in_place_of_markdown_are_read_back() -> None:
    fmt = pawlette.get_format("ifm")
    request = _request([SCHEMAS["enums"], SCHEMAS["allOf: as JSON"]])
    read = fmt.parse_conversation(fmt.render(**request).text, strict=True)
    assert read.tools == request["tools"]
    assert read.losses == ()
    assert read.messages == request["messages"]


def test_the_writer_and_the_classification_agree_on_the_pool() -> None:
    """Every tool of the shared pool is written as Markdown (none falls back to JSON)."""
    from ..support.conversations import TOOL_POOL

    definitions = [tool["function"] for tool in TOOL_POOL]
    assert schema.presentable(definitions)
    assert markdown.listing(definitions).count("\n## ") == len(TOOL_POOL)
    assert xml.listing(definitions).count("\n<function name=") == len(TOOL_POOL)
