"""The streaming object check against ``json`` itself: over any split of the text, it finds
the end of a valid object exactly where ``json``'s scanner does, and never accepts what
:func:`~pawlette.engine.call_arguments.read_object` would refuse as a member's value."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.engine.call_arguments import MAX_NESTING, read_object
from pawlette.engine.json_check import MAX_DEPTH, ObjectCheck

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=10,
)
spaces = st.sampled_from(["", " ", "\n", " \t\r\n"])
breakers = st.sampled_from(
    [
        "",
        "{",
        "}",
        "[",
        "]",
        '"',
        ",",
        ":",
        "\\",
        "\\u12",
        "NaN",
        "-",
        "01",
        "1.",
        "1e",
        "tru",
        "\x01",
        "\x7f",
        "\ud800",
        "Infinity",
        "1" * 5000,
        "[" * MAX_NESTING,
    ]
)


@st.composite
def object_texts(draw: st.DrawFn) -> str:
    """A JSON object's text as a model may write it, sometimes broken, then more text."""
    value = draw(st.dictionaries(st.text(max_size=4), values, max_size=4))
    text = json.dumps(value, ensure_ascii=draw(st.booleans()), indent=draw(st.none() | st.just(1)))
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 3))
        text = text[:at] + draw(breakers) + text[at + cut :]
    return text + draw(spaces) + draw(st.sampled_from(["", "}", ', "id": "x"}', "x"]))


def _check(text: str, cuts: list[int]) -> tuple[int | None, bool]:
    """(the end found, refused) feeding ``text`` in pieces cut at ``cuts``."""
    check = ObjectCheck()
    position = 0
    for cut in [*sorted(set(cuts)), len(text)]:
        piece = text[position:cut]
        if not piece:
            continue
        end = check.feed(piece)
        if end is not None:
            return position + end, False
        if check.failed:
            return None, True
        position = cut
    return None, check.failed


def _json_end(text: str) -> int | None:
    """Where ``read_object`` finds the object's end, as the value of a member (None: refused)."""
    members = read_object('{"a": ' + text.rstrip() + "}")
    if members is not None:
        return members["a"][2] - len('{"a": ')
    # Not the whole text: find the value's end with json's scanner and read just that.
    try:
        _, end = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):
        return None
    members = read_object('{"a": ' + text[:end] + "}")
    return None if members is None else end


@settings(max_examples=400)
@given(object_texts(), st.lists(st.integers(0, 200), max_size=6))
def test_the_check_agrees_with_json(text: str, cuts: list[int]) -> None:
    end, _ = _check(text, [cut for cut in cuts if cut < len(text)])
    expected = _json_end(text)
    if end is not None:  # accepted: exactly what json accepts, ending where json's does
        assert expected == end, (text, end, expected)
        assert isinstance(json.loads(text[:end]), dict)
    elif expected is not None and text.lstrip()[:1] == "{" == text[:1]:
        # refused or unfinished: only texts json refuses too, or texts cut in a long token
        assert _check(text, [])[0] == expected or "1" * 600 in text, text


@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_every_split_of_escapes_numbers_and_words(size: int) -> None:
    text = '{"a": "x\\u00e9\\n\\"y", "b": [-0.5e+10, 0, 12, true, false, null], "c": {}}  }'
    end = text.index("}  }") + 1
    assert _check(text, list(range(size, len(text), size))) == (end, False)


def test_refusals() -> None:
    for text in (
        '{"a": NaN}',
        '{"a": 01}',
        '{"a": 1.}',
        '{"a": "\x01"}',
        '{"a": "\\x"}',
        '{"a": tru}',
        '{"a": 1,}',
        "[1]",
        ' {"a": 1}',
        '{"a" 1}',
        "{1: 2}",
    ):
        assert _check(text, []) == (None, True), text
    deep = '{"a": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}"
    assert _check(deep, []) == (None, True)
    ok = '{"a": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"
    assert _check(ok, []) == (len(ok), False)
    digits = sys.get_int_max_str_digits()
    assert _check('{"a": ' + "1" * (digits + 1) + "}", []) == (None, True)
    assert _check('{"a": 1.' + "1" * (digits + 1) + "}", [])[1] is False


@pytest.mark.parametrize(
    "number", ["1e400", "-1e400", "1E+999", "1" * 400 + ".5", "1" * 400 + "e1"]
)
def test_numbers_beyond_a_double_are_refused(number: str) -> None:
    # json reads them as infinity, which no JSON reader takes back (README, Contracts, rule 1)
    text = '{"a": [' + number + "]}"
    for size in (1, 3, len(text)):
        assert _check(text, list(range(size, len(text), size))) == (None, True), (number, size)
    for fits in ("1e-400", "1.7e308", "-1.7E+308", "9" * 400):  # underflow is 0; ints are exact
        assert _check('{"a": ' + fits + "}", []) == (len(fits) + 7, False), fits
