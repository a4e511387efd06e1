"""The GBNF and the Lark written for a JSON schema accept exactly the JSON texts the schema
validates, and no string in them spells a marker.

For each schema of the supported subset, random JSON values are written out (keys in the
schema's declared order, as the grammar requires, in several whitespace styles) and the
grammar's verdict, run through llguidance, is compared with the ``jsonschema`` package's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

import jsonschema
import llguidance
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.emit.grammar_ast import JsonSchemaValue, MarkerSpelling, Rules, to_gbnf, to_lark
from pawlette.emit.json_lark import SchemaToLark
from pawlette.emit.json_schema import JSON_ESCAPE, SchemaToGbnf
from pawlette.emit.text_language import TextLanguage, gbnf_string_rules, unabsorbed

from ..support.small_bpe import small_tokenizer
from . import gbnf

SCHEMAS: dict[str, dict[str, Any]] = {
    "object": {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "boolean"}},
        "required": ["b"],
        "additionalProperties": False,
    },
    "open object": {
        "type": "object",
        "properties": {"a": {"type": "number"}},
        "additionalProperties": {"type": "string"},
    },
    "any object": {"type": "object"},
    "array bounds": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
    "tuple": {
        "type": "array",
        "prefixItems": [{"type": "string"}, {"type": "null"}],
        "items": False,
        "minItems": 1,
    },
    "string length": {"type": "string", "minLength": 2, "maxLength": 4},
    "enum and const": {
        "type": "object",
        "properties": {"e": {"enum": ["x", 1, None]}, "k": {"const": "fixed"}},
        "additionalProperties": False,
    },
    "type list": {"type": ["string", "null", "boolean"]},
    "any of": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "string"}}]},
    "refs": {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/node"}},
                "required": ["v"],
                "additionalProperties": False,
            }
        },
        "$ref": "#/$defs/node",
    },
    "anything": {},
}

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.floats(-3.4028234663852886e38, 3.4028234663852886e38, width=32),
    st.sampled_from(["x", "fixed", "ab", "abcde", "", 'é\n"\\']),
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "b", "c", "e", "k", "v", "next", "z"]), children)
    ),
    max_leaves=10,
)


def ordered(value: Any, schema: Any, root: Any) -> Any:
    """``value`` with object keys in the schema's declared order (others after)."""
    if isinstance(schema, Mapping) and "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            if part:
                target = target[part]
        return ordered(value, target, root)
    if isinstance(schema, Mapping) and "anyOf" in schema:
        for option in schema["anyOf"]:
            if validator(option).is_valid(value):
                return ordered(value, option, root)
        return value
    if isinstance(value, dict):
        properties = schema.get("properties", {}) if isinstance(schema, Mapping) else {}
        keys = [key for key in properties if key in value] + [
            key for key in value if key not in properties
        ]
        return {key: ordered(value[key], properties.get(key, {}), root) for key in keys}
    if isinstance(value, list) and isinstance(schema, Mapping):
        prefix = schema.get("prefixItems", [])
        items = schema.get("items", {})
        return [
            ordered(item, prefix[index] if index < len(prefix) else items, root)
            for index, item in enumerate(value)
        ]
    return value


def validator(schema: Any) -> Any:
    """JSON Schema's validator, except that an integer is written without a fraction
    (``1.0`` is an integer to JSON Schema; the grammars, like llguidance's, say no)."""
    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine(
        "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool)
    )
    return jsonschema.validators.extend(base, type_checker=checker)(schema)


EOS = "<|eos|>"


@cache
def tokenizers() -> tuple[Any, Any]:
    tok = small_tokenizer((EOS,))
    return tok, llguidance.LLTokenizer(tok.to_str(), eos_token=tok.token_to_id(EOS))


def compiled(schema: Any, syntax: str, markers: tuple[str, ...] = ()) -> str:
    """The grammar of one JSON value under ``schema``, compiled for llguidance."""
    rules = Rules(markers=markers)
    if syntax == "gbnf":
        if markers:  # as a format's turn rules define them (emit/turn_rules.rules_for)
            language = TextLanguage(markers, escape=False)
            strings = gbnf_string_rules(language, "json-str", '"\\', "\\x00-\\x1F", JSON_ESCAPE)
            rules.gbnf_extra.update(strings)
            rules.gbnf_extra["json-char"] = "json-str-char"
            rules.gbnf_extra["json-string"] = '"\\"" json-str-body "\\""'
        rule = SchemaToGbnf(rules, "value", "schema").convert(schema)
        rules.add("start", JsonSchemaValue(schema, gbnf=rule))
        lark = gbnf.to_lark(gbnf.parse(to_gbnf(rules, [], MarkerSpelling())))
    else:
        rule = SchemaToLark(rules, "value", "schema").convert(schema)
        rules.add("start", JsonSchemaValue(schema, gbnf="unused", lark=rule))
        lark = to_lark(rules, [], MarkerSpelling())
    grammar: str = llguidance.LLMatcher.grammar_from_lark(lark)
    return grammar


@cache
def grammar_for(name: str, syntax: str = "gbnf") -> str:
    return compiled(SCHEMAS[name], syntax)


def accepts_ids(grammar: str, ids: list[int]) -> bool:
    matcher = llguidance.LLMatcher(tokenizers()[1], grammar, log_level=0)
    return bool(matcher.consume_tokens(ids) and matcher.is_accepting())


def accepted(name: str, text: str, syntax: str = "gbnf") -> bool:
    ids = tokenizers()[0].encode(text, add_special_tokens=False).ids
    return accepts_ids(grammar_for(name, syntax), ids)


@pytest.mark.parametrize("syntax", ["gbnf", "lark"])
@pytest.mark.parametrize("name", sorted(SCHEMAS))
@settings(max_examples=120)
@given(value=json_values, style=st.sampled_from([{}, {"separators": (",", ":")}, {"indent": 1}]))
def test_grammar_accepts_exactly_the_valid_values(
    syntax: str, name: str, value: Any, style: Any
) -> None:
    schema = SCHEMAS[name]
    value = ordered(value, schema, schema)
    text = json.dumps(value, ensure_ascii=False, **style)
    valid = validator(schema).is_valid(value)
    # The documented gap (schema_walk's docstring): an extra key allowed by a schema-valued
    # additionalProperties may spell a declared name, so {"a": "x"} passes "open object"'s
    # grammar as an extra string member although "a" is declared a number. Exactly that, and
    # nothing more, is accepted beyond the valid values.
    gap = validator(declared_names_as_extras(schema)).is_valid(value)
    assert accepted(name, text, syntax) is (valid or gap), text
    if not valid and gap:
        assert name == "open object", text


def declared_names_as_extras(schema: Any) -> Any:
    """``schema`` where each declared property may also take the value an extra key may
    (what the grammar allows: extras are any names, declared ones included)."""
    additional = schema.get("additionalProperties", True) if isinstance(schema, dict) else False
    if not isinstance(additional, dict) or "properties" not in schema:
        return schema
    properties = {key: {"anyOf": [sub, additional]} for key, sub in schema["properties"].items()}
    return {**schema, "properties": properties}


def test_unenforced_keywords_are_noted() -> None:
    rules = Rules()
    SchemaToGbnf(rules, "v", "tools[0].parameters").convert(
        {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}
    )
    assert rules.notes == ["tools[0].parameters.properties.n: 'minimum' is not enforced in GBNF"]


MARKER_SCHEMA = {
    "type": "object",
    "properties": {
        "a": {"const": "</call><end>"},
        "b": {"enum": ["<end>", ["x<call>"], 1]},
        "<call>": {"type": "integer"},
    },
    "required": ["a", "b", "<call>"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("syntax", ["gbnf", "lark"])
def test_literals_spell_no_marker(syntax: str) -> None:
    """A ``const``, an ``enum`` value or a property name spelling a marker is written with a
    ``\\u`` escape of the marker's first character: the same JSON value, but text the engine's
    stop strings and the format's lexer do not read as the marker (spelt, it ended the call
    the grammar forced: a real engine under ``tool_choice: required`` answered no call)."""
    grammar = compiled(MARKER_SCHEMA, syntax, ("<end>", "<call>", "</call>"))
    tok = tokenizers()[0]

    def accepts(text: str) -> bool:
        return accepts_ids(grammar, tok.encode(text, add_special_tokens=False).ids)

    escaped = '{"a": "\\u003c/call>\\u003cend>", "b": ["x\\u003ccall>"], "\\u003ccall>": 3}'
    assert json.loads(escaped) == {"a": "</call><end>", "b": ["x<call>"], "<call>": 3}
    assert accepts(escaped)
    assert not accepts('{"a": "</call><end>", "b": ["x<call>"], "<call>": 3}')


STRINGS = {
    "string": {"type": "string"},
    "bounded string": {"type": "string", "minLength": 1, "maxLength": 12},
    "key": {"type": "object", "additionalProperties": {"type": "integer"}},
    "anything": {},
}


@pytest.mark.parametrize("syntax", ["gbnf", "lark"])
@pytest.mark.parametrize("name", sorted(STRINGS))
@pytest.mark.parametrize("marker", ["<call>", "</call>", "<end>"])
def test_no_string_spells_a_marker_even_token_by_token(syntax: str, name: str, marker: str) -> None:
    """A string (a value, a key, one under length bounds, one inside any value) takes no
    marker's text, whether a tokenizer would read it as one token or the model writes it
    character by character (llguidance's %json, which the Lark once used, took both)."""
    grammar = compiled(STRINGS[name], syntax, ("<end>", "<call>", "</call>"))
    tok = tokenizers()[0]

    def ids(text: str) -> list[int]:
        return tok.encode(text, add_special_tokens=False).ids

    def written(inside: str) -> list[list[int]]:
        head, tail = ('{"', '": 1}') if name == "key" else ('"', '"')
        whole = ids(head + inside + tail)
        by_character = [i for part in [head, *inside, tail] for i in ids(part)]
        return [whole, by_character]

    for sequence in written("ab"):
        assert accepts_ids(grammar, sequence)
    for sequence in written(f"a{marker}b"):
        assert not accepts_ids(grammar, sequence), (syntax, name, marker)
    for sequence in written("a\\u003c" + marker[1:] + "b"):
        assert accepts_ids(grammar, sequence)


MARKERS_HOLDING_MARKERS = ("say <call> now", "<call>", "<end>", "a</call>b", "</call>")


@settings(max_examples=300)
@given(text=st.text(alphabet="<>/acelndswo y", max_size=16))
def test_leaving_out_markers_that_hold_another_keeps_the_language(text: str) -> None:
    """A text spells a marker of the whole set exactly when it spells one of those kept."""
    kept = unabsorbed(MARKERS_HOLDING_MARKERS)
    assert kept == ("<call>", "<end>", "</call>")
    assert any(m in text for m in MARKERS_HOLDING_MARKERS) == any(m in text for m in kept)


@pytest.mark.parametrize("syntax", ["gbnf", "lark"])
@pytest.mark.parametrize(
    ("inside", "expected"),
    [
        ("say <cal now", True),
        ("a</cal", True),
        ("say <call> now", False),
        ("a</call>b", False),
        ("x<call>", False),
        ("x</call>y", False),
        ("x<end>", False),
    ],
)
def test_a_string_spells_no_marker_that_holds_another(
    syntax: str, inside: str, expected: bool
) -> None:
    """Markers that hold another (a format's whole passages read as structure, Hermes 2 Pro's
    tools instructions) are kept out of strings as before, the Lark naming only the others."""
    grammar = compiled({"type": "string"}, syntax, MARKERS_HOLDING_MARKERS)
    tok = tokenizers()[0]
    assert accepts_ids(grammar, tok.encode(f'"{inside}"', add_special_tokens=False).ids) is (
        expected
    )
    if syntax == "lark":
        assert "say <call> now" not in grammar and "a<\\x2Fcall>b" not in grammar


@pytest.mark.parametrize("name", ["pcml", "chatml", "llama3", "omni"])
def test_no_quoted_string_of_a_json_call_grammar_spells_a_marker(name: str) -> None:
    import pawlette
    from pawlette.export import export_grammar

    fmt = pawlette.get_format(name)
    # (GBNF's quoted strings are checked raw: these markers hold no character GBNF escapes)
    plain = sorted(
        marker
        for marker in fmt.grammar.markers
        if marker.isprintable() and not set(marker) & set('"\\')
    )
    schema = json.loads(json.dumps(MARKER_SCHEMA))
    spelled = plain[0]  # one of the format's own markers, in every literal slot
    schema["properties"]["a"]["const"] = spelled
    schema["properties"]["b"]["enum"][1] = [f"x{spelled}"]
    schema["properties"][spelled] = schema["properties"].pop("<call>")
    schema["required"] = ["a", "b", spelled]
    tools = [{"type": "function", "function": {"name": "f", "parameters": schema}}]
    text = export_grammar(fmt, tools, "required", syntax="gbnf")
    rules = [line for line in text.splitlines() if line.startswith("args-")]  # the schema's
    assert rules
    quoted = [body for line in rules for body in re.findall(r'"((?:[^"\\]|\\.)*)"', line)]
    assert not [piece for piece in quoted if any(marker in piece for marker in plain)]


@pytest.mark.parametrize("syntax", ["gbnf", "lark"])
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"b": 1}', True),
        ('{"a":"x","b":1}', True),
        ('{\n  "a": "x",\n  "b": 1\n}', True),
        ('{\n\n\t\t"b": 1\n}', True),
        ("{\n" + " " * 20 + '"b": 1}', True),
        ("{\n" + " " * 21 + '"b": 1}', False),
        ('{"b"  : 1}', False),
        ('{\t"b": 1}', False),
        ('{"b": 1\n\n\n}', False),
        ('{"b": 1\r\n}', False),
    ],
)
def test_whitespace_between_tokens_is_bounded_alike(syntax: str, text: str, expected: bool) -> None:
    """Both syntaxes take the whitespace JSON writers write (compact, spaced, indented) and
    refuse runs a sampler could spend its budget in (llguidance's %json takes any by default)."""
    tok, ll = tokenizers()
    grammar = grammar_for("object", syntax)
    matcher = llguidance.LLMatcher(ll, grammar, log_level=0)
    ids = tok.encode(text, add_special_tokens=False).ids
    assert bool(matcher.consume_tokens(ids) and matcher.is_accepting()) is expected
