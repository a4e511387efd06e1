"""The quick check of long arguments against json's reading: it says yes only where
``load_json`` takes the text as an object nested at most the limit, and it says yes on the
texts it is for (many small values), so the shortcut is taken."""

from __future__ import annotations

import json
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.engine import quick_json
from pawlette.engine.call_arguments import MAX_NESTING, load_json
from pawlette.engine.quick_json import quick_object_check

from .test_call_arguments import _depth
from .test_whole import _agrees, _written

LIMIT = MAX_NESTING - 1

ROWS = [{"id": n, "name": f"item {n}", "tags": ["a", "b"], "price": n * 1.5} for n in range(200)]


def _json_takes(text: str, limit: int) -> bool:
    value, problem = load_json(text)
    return problem is None and isinstance(value, dict) and _depth(value) <= limit


def test_sqlite_here_agrees_with_json() -> None:
    # CPython's sqlite3 (SQLite 3.38 and later hold JSON): the check below is this one.
    assert quick_json._validator() is not None


def test_without_sqlite_nothing_is_known_and_the_reading_is_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(quick_json, "_connect", lambda: None)
    monkeypatch.setattr(quick_json, "_agrees", None)
    monkeypatch.setattr(quick_json, "_local", threading.local())
    text = json.dumps({"rows": ROWS})
    assert not quick_object_check(text, LIMIT)
    fmt = pawlette.get_format("chatml")
    completion = f'<tool_call>\n{{"name": "f", "arguments": {text}}}\n</tool_call><|im_end|>'
    (call,) = fmt.parse(completion).message["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"rows": ROWS}


def test_many_small_values_are_checked_quickly() -> None:
    text = json.dumps({"rows": ROWS})
    assert quick_object_check(text, LIMIT)
    assert quick_object_check(json.dumps({"rows": ROWS}, indent=2), LIMIT)


@pytest.mark.parametrize(
    "inside",
    [
        '"x": 1e400',  # json reads infinity: refused as beyond a double
        '"x": 1E+308',  # within a double, but an exponent: left to json
        '"x": ' + "9" * 5000,  # beyond Python's digits
        '"x": NaN',
        '"x": "\x01"',
        '"x": "\t"',
        '"x": 01',
        '"x": [1,]',
        "'x': 1",
        '"x": "\x00"',
        '"x": "\ud800"',  # a lone surrogate in the text (json takes its escape, not this)
        '"x": "a", "x": "b"',  # json keeps the last: taken
        '"x": "\\ud800"',  # an escaped lone surrogate: json takes it
        '"x": "[[[[", "y": "]]]]"',
        '"x": "\\"[", "y": "\\\\"',
    ],
)
def test_never_takes_what_json_refuses(inside: str) -> None:
    text = '{"rows": ' + json.dumps(ROWS) + ", " + inside + "}"
    if quick_object_check(text, LIMIT):
        assert _json_takes(text, LIMIT), inside


@pytest.mark.parametrize("depth", [LIMIT - 1, LIMIT, LIMIT + 1, 2 * MAX_NESTING, 5000])
def test_nesting_at_the_limit(depth: int) -> None:
    inner = "[" * (depth - 1) + "]" * (depth - 1)
    text = '{"rows": ' + json.dumps(ROWS) + ', "deep": ' + inner + "}"
    assert quick_object_check(text, LIMIT) == (depth <= LIMIT)
    # A string's brackets never count, however they lean.
    hidden = '{"rows": ' + json.dumps(ROWS) + ', "deep": "' + "]" * depth + "[" * depth + '"}'
    assert quick_object_check(hidden, LIMIT)


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet='ab e0"\\[]{},:\u00e9\U0001f600\x1f', max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=40,
)
breakers = st.sampled_from(["", "{", "}", '"', ",", ":", "\\", "NaN", "]", "\x01", "1e999", " "])


@settings(max_examples=300)
@given(values, st.integers(0, 10_000), breakers, st.sampled_from([None, 1]), st.integers(1, 30))
def test_agrees_with_json(
    value: object, where: int, breaker: str, indent: int | None, limit: int
) -> None:
    """A broken or whole text: a yes only where json takes it within the limit."""
    text = json.dumps({"rows": ROWS, "value": value}, indent=indent)
    at = where % (len(text) + 1)
    for candidate in (text, text[:at] + breaker + text[at:]):
        if quick_object_check(candidate, limit):
            assert _json_takes(candidate, limit), candidate[at - 20 : at + 20]


def test_long_strings_are_left_to_json() -> None:
    """Few values in many bytes: json reads those faster; nothing is known here."""
    text = json.dumps({"path": "a.txt", "text": 'lorem ipsum, "quoted" \\ ' * 2000})
    assert not quick_object_check(text, LIMIT)


@pytest.mark.parametrize("name", ["pcml", "chatml", "hermes"])
@pytest.mark.parametrize("depth", [1, LIMIT - 1, LIMIT, LIMIT + 1])
def test_the_whole_reading_with_the_check_is_the_machines(name: str, depth: int) -> None:
    """Long arguments of many values, read whole through the check, give the machine's
    message (which reads them the usual way), at and beyond the nesting limit too."""
    fmt = pawlette.get_format(name)
    deep: object = []
    for _ in range(depth - 2):
        deep = [deep]
    arguments = {"rows": ROWS, "deep": deep} if depth > 1 else {"rows": ROWS}
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": "store", "arguments": json.dumps(arguments)},
            }
        ],
    }
    text = _written(fmt, message)
    assert _agrees(fmt, text, fmt.grammar.completion_start) == (depth <= LIMIT)
