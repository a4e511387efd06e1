"""JSON text for writers: byte for byte what ``json.dumps`` writes, errors included."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.engine.json_text import (
    MAX_DEPTH,
    checked_compact_json,
    compact_json,
    indented_json,
    json_string,
    kept_indented_json,
    kept_json_string,
    written_as_is,
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(),  # NaN and infinities too: json writes them, the fast writer leaves them to it
    st.text(),  # lone surrogates, quotes, backslashes, control characters, non-ASCII
)
keys = st.one_of(st.text(max_size=5), st.integers(), st.booleans(), st.none(), st.floats())
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=6), children, max_size=4),
        st.dictionaries(keys, children, max_size=3),
    ),
    max_leaves=20,
)


def outcome(write: Callable[[], str]) -> object:
    try:
        return write()
    except Exception as error:  # errors must be json's own
        return (type(error), str(error))


@given(values)
def test_indented_json_is_json_dumps(value: Any) -> None:
    expected = outcome(lambda: json.dumps(value, ensure_ascii=False, indent=4))
    assert outcome(lambda: indented_json(value)) == expected


@given(values)
def test_compact_json_and_json_string_are_json_dumps(value: Any) -> None:
    expected = outcome(lambda: json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    assert outcome(lambda: compact_json(value)) == expected
    text = str(value)
    assert json_string(text) == json.dumps(text, ensure_ascii=False)


def nested(depth: int) -> Any:
    value: Any = {"leaf": [1.5, math.pi]}
    for level in range(depth):
        value = {"level": level, "next": [value]} if level % 2 else [value, "x"]
    return value


def test_deep_nesting_is_written_by_json() -> None:
    for depth in (MAX_DEPTH - 2, MAX_DEPTH + 5):
        value = nested(depth)
        assert indented_json(value) == json.dumps(value, ensure_ascii=False, indent=4)


def test_a_circular_value_gets_jsons_error() -> None:
    value: dict[str, Any] = {"a": []}
    value["a"].append(value)
    assert outcome(lambda: indented_json(value)) == (ValueError, "Circular reference detected")


def test_other_types_get_jsons_error() -> None:
    value = {"a": [1, {2, 3}]}
    expected = outcome(lambda: json.dumps(value, ensure_ascii=False, indent=4))
    assert outcome(lambda: indented_json(value)) == expected
    assert isinstance(expected, tuple) and expected[0] is TypeError


def test_special_numbers_are_jsons() -> None:
    for number in (math.nan, math.inf, -math.inf, -0.0, 1e300, 5e-324, 10**40, True, False):
        for value in (number, [number], {"n": number}):
            expected = json.dumps(value, ensure_ascii=False, indent=4)
            assert indented_json(value) == expected


# Kept: the same text, kept by content.

definition_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
    lambda children: (
        st.lists(children, max_size=3)
        | st.lists(children, max_size=2).map(tuple)
        | st.dictionaries(st.text(max_size=3), children, max_size=3)
        | st.dictionaries(st.integers(0, 2) | st.booleans() | st.none(), children, max_size=2)
    ),
    max_leaves=8,
)


@settings(max_examples=300)
@given(st.dictionaries(st.text(max_size=3), definition_like, max_size=4))
def test_a_kept_definition_is_what_json_indents(value: dict[str, Any]) -> None:
    expected = json.dumps(value, ensure_ascii=False, indent=4)
    assert kept_indented_json(value) == expected
    assert kept_indented_json(value) == expected  # kept


def test_kept_definitions_that_compare_equal_agree_and_refusals_stay() -> None:
    for value in ({"1": (1.0, None)}, {1: [1.0, None]}, {"1": [1.0, None]}):
        assert kept_indented_json(value) == json.dumps(value, ensure_ascii=False, indent=4)
    looped: dict[str, Any] = {}
    looped["self"] = looped
    with pytest.raises(ValueError, match="Circular"):
        kept_indented_json(looped)
    with pytest.raises(TypeError, match="set"):
        kept_indented_json({"a": {1}})


@given(values)
def test_kept_json_string_is_json_dumps_new_and_kept(value: Any) -> None:
    """Written through the C encoder made once (a value with a marshal key) or json_string
    (one without): json.dumps's text or error, the first time and when kept."""
    expected = outcome(lambda: json.dumps(value, ensure_ascii=False))
    for _ in range(2):
        assert outcome(lambda: kept_json_string(value)) == expected
    for odd in ({"a": {1, 2}}, {"a": b"x"}, {"a": 1j}, {(1,): 2}):  # marshal keys, no JSON
        assert outcome(lambda odd=odd: kept_json_string(odd)) == outcome(  # type: ignore[misc]
            lambda odd=odd: json.dumps(odd, ensure_ascii=False)  # type: ignore[misc]
        )


def test_kept_json_string_of_a_circular_value_gets_jsons_error() -> None:
    value: dict[str, Any] = {"a": []}
    value["a"].append(value)
    assert outcome(lambda: kept_json_string(value)) == (ValueError, "Circular reference detected")


# Checked and written in one walk: json's compact text of a plain value, or None.

BITS = 64


def plain(value: Any, depth: int) -> bool:
    """What checked_compact_json takes, said plainly: exact JSON types, string keys, finite
    floats, integers of at most BITS bits, containers at most ``depth`` deep."""
    kind = type(value)
    if kind is dict or kind is list:
        if depth <= 0:
            return False
        if kind is dict:
            if any(type(key) is not str for key in value):
                return False
            value = list(value.values())
        return all(plain(item, depth - 1) for item in value)
    if kind is int:
        return bool(value.bit_length() <= BITS)
    if kind is float:
        return math.isfinite(value)
    return kind in (str, bool, type(None))


@given(values, st.integers(1, 5))
def test_checked_compact_json_is_json_dumps_of_plain_values(value: Any, depth: int) -> None:
    found = checked_compact_json(value, depth, BITS)
    if plain(value, depth):
        assert found == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    else:
        assert found is None


def test_checked_compact_json_refuses_what_json_would_write_otherwise() -> None:
    class Text(str):
        pass

    for value in (
        {1: "a"},  # json writes "1"
        {True: "a"},
        {None: 1},
        [(1, 2)],  # json writes a list
        {"a": Text("x")},
        [math.nan],
        [-math.inf],
        [2**BITS],
        [{1, 2}],
        [b"x"],
    ):
        assert checked_compact_json(value, 8, BITS) is None, value
    assert checked_compact_json([2**BITS - 1, -(2**BITS - 1)], 8, BITS) is not None
    looped: list[Any] = []
    looped.append(looped)
    assert checked_compact_json(looped, 50, BITS) is None  # (the depth bounds the walk)
    assert checked_compact_json(nested(6), 20, BITS) == compact_json(nested(6))
    assert checked_compact_json([[[]]], 3, BITS) == "[[[]]]"
    assert checked_compact_json([[[]]], 2, BITS) is None
    assert checked_compact_json("\ud800", 1, BITS) == '"\ud800"'  # (the caller checks text)


class _Text(str):
    pass


class _Number(int):
    def __repr__(self) -> str:
        return "number"


def test_subclasses_are_written_by_json() -> None:
    """A subclass of a JSON type (whose methods may say anything) is left to json itself."""
    for leaf in (_Text("a"), _Number(3), True, 2.5, None):
        for value in ({"k": leaf}, [leaf], {"k": [leaf, {"j": leaf}]}, {_Text("k"): 1}):
            expected = json.dumps(value, ensure_ascii=False, indent=4)
            assert indented_json(value) == expected


# Texts of objects as a caller may spell them: members of every kind, the separators json
# writes and others, keys written twice, escapes and the characters json escapes.
_json_keys = st.sampled_from(['"a"', '"b"', '""', '"\\u00e9"', '"é"', '"a\\"b"', '"\u2028"'])
_json_leaves = st.sampled_from(
    [
        *("0", "-0", "7", "-12", "10", "1.5", "1e5", "true", "false", "null", '"x"', '""', '"é"'),
        *('"a\\"b"', '"\\\\"', '"\\u00e9"', '"\\n"', '"\x7f"', '"\u2028"', "[]", "{}", "[1, 2]"),
    ]
)
_members = st.tuples(_json_keys, st.sampled_from([": ", ":", " : "]), _json_leaves).map("".join)
_objects = st.tuples(
    st.lists(_members, max_size=4), st.sampled_from([", ", ",", " ,"]), st.sampled_from(["", " "])
).map(lambda parts: "{" + parts[2] + parts[1].join(parts[0]) + parts[2] + "}")


@settings(max_examples=500)
@given(_objects)
def test_a_text_written_as_is_is_what_json_string_writes(text: str) -> None:
    """Whenever a text is found written as is, json_string writes exactly it: a text that
    is not is written (the check may say False of a text json would write the same)."""
    value = json.loads(text)
    if written_as_is(text, value):
        assert json_string(value) == text


@pytest.mark.parametrize(
    ("text", "as_is"),
    [
        ('{"location": "Paris", "unit": "celsius"}', True),
        ('{"a": -3, "b": true, "c": null, "d": 0}', True),
        ('{"a": "b: c, d", "e": ""}', True),
        ('{"a": "é\u2028\x7f"}', True),  # (json escapes none of these)
        ("{}", True),
        ('{"a":"b"}', False),  # (json writes ": ")
        ('{"a": "b","c": "d"}', False),  # (and ", ")
        ('{ "a": "b"}', False),
        ('{"a": "b", "a": "c"}', False),  # (a key written twice: json writes it once)
        ('{"a": "\\u00e9"}', False),  # (json writes the character)
        ('{"a": -0}', False),  # (json writes 0)
        ('{"a": 1.5}', False),  # (a float: not known without writing it)
        ('{"a": ["b"]}', False),  # (nor a container)
        ('["a"]', False),
    ],
)
def test_texts_written_as_is(text: str, as_is: bool) -> None:
    value = json.loads(text)
    assert written_as_is(text, value) is as_is
    if as_is:
        assert json_string(value) == text
