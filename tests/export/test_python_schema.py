"""The Python-literal grammar's numbers: every number it allows is one the parser reads."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.codecs.python_literals import python_literal
from pawlette.errors import ParseError
from pawlette.export.python_schema import INTEGER_REGEX, NUMBER_REGEX, python_literal_text
from pawlette.legacy.python_reader import parse_python_literal


def read_back(written: str) -> object:
    """The number as a breeze or ChatGLM3 parser reads it (the decoder behind both), through
    the JSON text of the arguments."""
    value = parse_python_literal(written)
    assert isinstance(value, (int, float))
    assert math.isfinite(value)
    assert json.loads(json.dumps(value)) == value
    return value


@settings(max_examples=300, deadline=None)
@given(st.from_regex(NUMBER_REGEX, fullmatch=True))
def test_every_sampled_number_parses_back(written: str) -> None:
    read_back(written)


@settings(max_examples=100, deadline=None)
@given(st.from_regex(INTEGER_REGEX, fullmatch=True))
def test_every_sampled_integer_parses_back_as_itself(written: str) -> None:
    assert read_back(written) == int(written)


@pytest.mark.parametrize(
    "written",
    [
        "9" * 200 + "." + "9" * 50 + "e99",  # the largest the grammar allows
        "-" + "9" * 200 + "e+99",
        "0." + "0" * 400 + "1e-99",  # underflows to 0.0: still a number
        "9" * 200,
    ],
)
def test_the_grammar_s_extremes_parse_back(written: str) -> None:
    assert re.fullmatch(NUMBER_REGEX, written)
    read_back(written)


@pytest.mark.parametrize("written", ["1e0111000", "1e309", "1" + "0" * 4300])
def test_numbers_the_parser_refuses_are_outside_the_grammar(written: str) -> None:
    with pytest.raises(ParseError):
        parse_python_literal(written)
    assert re.fullmatch(NUMBER_REGEX, written) is None


PYTHON_MARKER_SCHEMA = {
    "type": "object",
    "properties": {
        "a": {"const": "<|eot_id|>x"},
        "b": {"enum": ["[gMASK]sop", ["x<|user|>"], {"<|eot_id|>": "Aesop"}, 1]},
        "c": {"type": "object", "properties": {"<|python_tag|>": {"type": "integer"}}},
    },
    "required": ["a", "b", "c"],
}
PYTHON_MARKERS = {
    "breeze": ("<|eot_id|>", "<|python_tag|>", "<|use_tool|>"),
    "chatglm3": ("[gMASK]sop", "<|user|>"),
}


def _gbnf_unquote(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r", "t": "\t"}.get(m[1], m[1]), body)


@pytest.mark.parametrize("syntax", ["gbnf", "lark"])
@pytest.mark.parametrize("name", ["breeze", "chatglm3"])
def test_python_literals_spell_no_marker_and_read_back(name: str, syntax: Any) -> None:
    """A ``const``/``enum`` value or a property name spelling a marker is written in a
    Python-call grammar with one character escaped (``'\\x3c|eot_id|>x'``), in GBNF and Lark
    alike: no quoted literal of the grammar spells a marker, and each reads back (the
    parser's reader) as the schema's value (spelt, it read as the marker)."""
    from pawlette.export import export_grammar
    from pawlette.formats import get_format

    markers = get_format(name).grammar.markers
    assert set(PYTHON_MARKERS[name]) <= set(markers)
    tools = [{"type": "function", "function": {"name": "f", "parameters": PYTHON_MARKER_SCHEMA}}]
    text = export_grammar(name, tools, "required", True, syntax)
    lines = [line for line in text.splitlines() if re.match(r"(args|call)[-_]", line)]
    quoted = [
        _gbnf_unquote(body) for line in lines for body in re.findall(r'"((?:[^"\\]|\\.)*)"', line)
    ]
    assert not [piece for piece in quoted if any(marker in piece for marker in markers)]
    literals = [piece for piece in quoted if piece[:1] in ("'", '"', "[", "{")]
    read = [parse_python_literal(piece) for piece in literals if piece not in ("[", "{")]
    for value in ("<|eot_id|>x", "[gMASK]sop", ["x<|user|>"], {"<|eot_id|>": "Aesop"}):
        assert value in read, (value, literals)
    keys = [piece for piece in quoted if "python_tag" in piece]
    assert keys and parse_python_literal(keys[0]) == "<|python_tag|>"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["<|eot_id|>", "sop", "[gMASK]", "\\", "'", '"', "\n", "a", "é", "😀"])
        | st.text(max_size=3),
        max_size=8,
    ).map("".join),
    st.sampled_from(["repr", '"', "'"]),
)
def test_broken_python_literals_read_back_as_the_value(value: str, quote: Any) -> None:
    markers = ("<|eot_id|>", "sop", "[gMASK]")
    for written in (value, [value, {value: 1}]):
        text = python_literal_text(python_literal(written, quote=quote), markers)
        assert not any(marker in text for marker in markers)
        assert parse_python_literal(text) == written
