"""The Python-literal encoder: every literal, quotes, refusals and their paths (what the
decoder reads back is tested with it in test_python_calls.py: round trips, the fast path)."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest

from pawlette.codecs.python_literals import (
    encode_call,
    encode_calls,
    python_literal,
    template_argument,
)
from pawlette.errors import RequestError, UnsupportedFeature


@pytest.mark.parametrize(
    ("value", "quote", "written"),
    [
        ("it's", "'", r"'it\'s'"),
        ("it's", '"', '"it\'s"'),
        ('say "hi"', "'", "'say \"hi\"'"),
        ('say "hi"', '"', r'"say \"hi\""'),
        ("a\\b", "'", r"'a\\b'"),
        ("\n\t\r", "'", r"'\n\t\r'"),
        ("\x00\x1b\x7f\x85", "'", r"'\x00\x1b\x7f\x85'"),
        ("\ud800", "'", r"'\ud800'"),
        ("é 北京 😀 \u2028", "'", "'é 北京 😀 \u2028'"),
        (None, "'", "None"),
        (True, "'", "True"),
        (False, "'", "False"),
        (0, "'", "0"),
        (-5, "'", "-5"),
        (10**30, "'", str(10**30)),
        (1.5, "'", "1.5"),
        (1e16, "'", "1e+16"),
        (-0.0, "'", "-0.0"),
        ([], "'", "[]"),
        ([1, [2, "x"]], "'", "[1, [2, 'x']]"),
        ((1, 2), "'", "[1, 2]"),
        ({}, "'", "{}"),
        ({"k": {"j": []}, "it's": None}, "'", r"{'k': {'j': []}, 'it\'s': None}"),
        ({"k": "v"}, '"', '{"k": "v"}'),
    ],
)
def test_python_literal(value: Any, quote: Literal["'", '"'], written: str) -> None:
    assert python_literal(value, quote=quote) == written


@pytest.mark.parametrize("value", [float("nan"), float("inf"), [float("-inf")]])
def test_python_literal_refuses_what_json_cannot_hold(value: Any) -> None:
    with pytest.raises(UnsupportedFeature):
        python_literal(value)


def test_python_literal_refuses_non_json_values() -> None:
    with pytest.raises(TypeError):
        python_literal({1, 2})
    with pytest.raises(TypeError):
        python_literal({1: "a"})


def test_encode_call_and_calls() -> None:
    assert encode_call("f", "{}") == "f()"
    assert encode_call("f", '{"a": 1, "b": [true, null]}') == "f(a=1, b=[True, None])"
    assert encode_call("f", ' { "s" : "x" } ', quote='"') == 'f(s="x")'
    assert encode_calls([]) == "[]"
    assert encode_calls([("f", "{}"), ("g", '{"a": 1}')], separator=",") == "[f(),g(a=1)]"


@pytest.mark.parametrize(
    ("name", "arguments", "error", "path"),
    [
        ("get-weather", "{}", UnsupportedFeature, "call.name"),
        ("class", "{}", UnsupportedFeature, "call.name"),
        ("f", '{"my-key": 1}', UnsupportedFeature, "call.arguments"),
        ("f", '{"class": 1}', UnsupportedFeature, "call.arguments"),
        ("f", '{"": 1}', UnsupportedFeature, "call.arguments"),
        ("f", '{"ﬁle": 1}', UnsupportedFeature, "call.arguments"),
        ("f", '{"a": 1e999}', UnsupportedFeature, "call.arguments.a"),
        ("f", '{"a": [NaN]}', RequestError, "call.arguments"),
        ("f", '{"a": 1', RequestError, "call.arguments"),
        ("f", "[1]", RequestError, "call.arguments"),
        ("f", "", RequestError, "call.arguments"),
    ],
)
def test_encode_call_refusals(
    name: str, arguments: str, error: type[RequestError], path: str
) -> None:
    with pytest.raises(error) as caught:
        encode_call(name, arguments, path="call")
    assert caught.value.path == path
    if error is RequestError:
        assert not isinstance(caught.value, UnsupportedFeature)


def test_encode_calls_names_the_failing_call() -> None:
    with pytest.raises(UnsupportedFeature) as caught:
        encode_calls([("f", "{}"), ("g", '{"a-b": 1}')], path="messages[1].tool_calls")
    assert caught.value.path == "messages[1].tool_calls[1].function.arguments"


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("O'Hare", "'O'Hare'"),
        ("C:\\temp\n", "'C:\\temp\n'"),
        ("", "''"),
        ({"k": "it's", "n": [1.5, None, True]}, '{"k": "it\'s", "n": [1.5, null, true]}'),
        ({"é": "<"}, '{"é": "<"}'),  # tojson: ensure_ascii=False, no HTML escapes
        (["C:\\temp", "O'Hare", {"minutes": 57}], "['C:\\\\temp', \"O'Hare\", {'minutes': 57}]"),
        (1e-05, "1e-05"),
        (True, "True"),
        (None, "None"),
        (10**30, str(10**30)),
    ],
)
def test_template_argument(value: Any, written: str) -> None:
    assert template_argument(value, "a") == written


@pytest.mark.parametrize(
    ("value", "found"),
    [("f('x')", '"\')" (at 4)'), ("a', 'b'", '"\'," (at 1)'), ("x'", "ending in")],
)
def test_template_argument_refuses_a_string_a_quote_could_end(value: str, found: str) -> None:
    with pytest.raises(UnsupportedFeature) as refused:
        encode_call(
            "f", json.dumps({"text": value}), quote="repr", path="call", spelling="template"
        )
    assert refused.value.path == "call.arguments.text"
    assert found in refused.value.found


def test_template_argument_refuses_what_json_cannot_hold() -> None:
    with pytest.raises(UnsupportedFeature) as refused:
        encode_call("f", '{"o": {"k": 1e999}}', quote="repr", path="call", spelling="template")
    assert refused.value.path == "call.arguments.o.k"
