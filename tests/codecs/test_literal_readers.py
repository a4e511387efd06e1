"""The one reader of a Python literal (``codecs.python_calls.parse_python_literal`` /
``python_literal_or_none``): what it reads and what it refuses.

It reads call arguments written as Python's ``repr`` (``JsonCalls(arguments="repr")``:
declarations a user writes or ``pawlette detect`` infers), tag values written as a literal
(``XmlCalls(values="literal")``: Seed-OSS, MiniCPM), Breeze's tools, results and media and
Apriel's tools.  It reads what ``repr`` writes of JSON values, and JSON's own constants; it
refuses Python that is no such ``repr`` (other number bases, string prefixes, parentheses,
comments), whatever Python's ``ast`` would make of it.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.codecs import python_calls
from pawlette.codecs.python_calls import parse_python_literal
from pawlette.errors import ParseError

REFUSED = object()


def read(text: str) -> Any:
    try:
        return parse_python_literal(text)
    except ParseError:
        return REFUSED


NESTED = "[" * 150 + "]" * 150  # nesting past MAX_NESTING (99 in a value)


OTHER_READINGS = [
    # (text, what the reader gives) where ast.literal_eval reads otherwise
    ("true", True),  # JSON's constants: a name to Python
    ("false", False),
    ("null", None),
    ("r'a\\d'", REFUSED),  # string prefixes
    ("u'x'", REFUSED),
    ("'''a\nb'''", REFUSED),  # triple quotes ('''x''' is '' 'x' '' to the decoder)
    ("'''a'b'''", REFUSED),
    ("0x10", REFUSED),  # int literals other than decimal
    ("0o7", REFUSED),
    ("0b1", REFUSED),
    ("-0x1", REFUSED),
    ("(1)", REFUSED),  # parentheses around a value
    ("([1])", REFUSED),
    ("-(1)", REFUSED),
    ("- 1", REFUSED),  # a space after the minus
    ("[1, # c\n 2]", REFUSED),  # comments
    ("[1]#c", REFUSED),
    ("[1, \\\n 2]", REFUSED),  # a line continuation between tokens
    ("\u3000[1]\u3000", REFUSED),  # Unicode whitespace around (str.strip)
    ("'\\ud800'", REFUSED),  # an escaped lone surrogate
    ("'a\x00b'", "a\x00b"),  # a raw NUL in a string
    (NESTED, REFUSED),
]

LIKE_AST = [
    # (text, what the reader gives) where ast.literal_eval reads alike
    ("{'a': 1, 'b': [True, None, 'x']}", {"a": 1, "b": [True, None, "x"]}),
    ("[1, 2,]", [1, 2]),
    ("'a' \"b\"", "ab"),
    ("'''x'''", "x"),
    ("1_000", 1000),
    ("-.5", -0.5),
    ("5.", 5.0),
    ("'\\d'", "\\d"),
    ("'\\N{BULLET}'", "\u2022"),
    ("[1,\x0c2]", [1, 2]),
    ("00", 0),
    ("{'a' 'b': 1}", {"ab": 1}),
    ("1e999", REFUSED),  # not finite
    ("1j", REFUSED),
    ("+1", REFUSED),
    ("--1", REFUSED),
    ("-True", REFUSED),
    ("01", REFUSED),
    ("b'x'", REFUSED),
    ("f'x'", REFUSED),
    ("(1, 2)", REFUSED),
    ("{1, 2}", REFUSED),
    ("{1: 2}", REFUSED),
    ("{'a': 1, 'a': 2}", REFUSED),  # a key written twice
    ("...", REFUSED),
    ("nan", REFUSED),
    ("1 + 2", REFUSED),
    ("'a\nb'", REFUSED),
    ("1" * 5000, REFUSED),  # past Python's digit limit
    ("", REFUSED),
]


@pytest.mark.parametrize(("text", "value"), OTHER_READINGS + LIKE_AST)
def test_what_it_reads(text: str, value: Any) -> None:
    if value is REFUSED:
        assert read(text) is REFUSED
    else:
        assert read(text) == value
        assert type(read(text)) is type(value)


def test_how_deep_it_reads() -> None:
    depth = 1
    while read("[" * depth + "]" * depth) is not REFUSED:
        depth += 1
    assert depth - 1 == 99


# ---------------------------------------------------------------------- the quick reading

_PIECES = [
    *("1", "-0", "0.5", "-2.5e-3", "1E+2", "1e400", ".5", "5.", "1_000", "01", "9" * 5000),
    *("True", "False", "None", "true", "null", "NaN", "Infinity", "Truex", "x", "1+2"),
    *("'a'", '"b"', "'x y'", "'it\"s'", '"it\'s"', "'True'", "'None'", "'\\n'", "'\t'"),
    *("'\ud800'", "'é'", "'a' 'b'", "'", '"', "'''t'''", "b'x'", "\x00", "#c", "\\"),
    *("[", "]", "{", "}", "(", ")", ",", ":", " ", "\n", "\f", "[1,]", "{'a'}", "{1: 2}"),
    *("{'a': 1, 'a': 2}", "{'a': 1, 'b': 2}", "[" * 99 + "]" * 99, "[" * 100 + "]" * 100),
]


def _slow_read(text: str) -> Any:
    """The decoder's reading alone (the quick reading put aside)."""
    saved = python_calls._quick_literal
    python_calls._quick_literal = lambda text: python_calls._NOT_KNOWN
    try:
        return read(text)
    finally:
        python_calls._quick_literal = saved


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=8))
def test_the_quick_reading_of_a_literal_is_the_decoders(pieces: list[str]) -> None:
    """A literal read at C speed (plain text: one kind of quote, no backslash) gives the
    decoder's value exactly, or leaves the text to the decoder."""
    text = "".join(pieces)
    quick = python_calls._quick_literal(text)
    if quick is python_calls._NOT_KNOWN:
        return
    slow = _slow_read(text)
    assert slow is not REFUSED, text
    assert (type(quick), repr(quick)) == (type(slow), repr(slow)), text


@pytest.mark.parametrize(
    "text",
    [
        "[{'id': 0, 'name': 'item 0', 'tags': ['a', 'b'], 'price': 0.0, 'ok': True}]",
        '{"a": [1, -2.5e-3, None, False], "b": {"c": "d"}}',
        "['temperature', 'precipitation']",
        "[" * 99 + "]" * 99,
    ],
)
def test_a_plain_literal_is_read_quickly(text: str) -> None:
    """What a model writes of a value as Python's ``repr`` is read at C speed."""
    quick = python_calls._quick_literal(text)
    assert quick is not python_calls._NOT_KNOWN
    assert quick == _slow_read(text)


@pytest.mark.parametrize(
    "text",
    [
        "{'a': 1, 'a': 2}",  # json would keep the last
        "[1e400]",  # json would read infinity
        "[" * 100 + "]" * 100,  # past the decoder's nesting limit
        "['a', \"b\"]",  # both quotes
        "['a\\n']",  # an escape
        "[1,]",  # Python, not JSON
    ],
)
def test_what_the_quick_reading_cannot_vouch_for_is_left_to_the_decoder(text: str) -> None:
    assert python_calls._quick_literal(text) is python_calls._NOT_KNOWN
