"""The two readers of one Python literal, side by side: where they agree and where they do
not.

- ``declare.json_calls.python_literal`` (``ast``): a call object written as Python's
  ``repr`` (``JsonCalls(arguments="repr")``: declarations a user writes or ``pawlette
  detect`` infers; no shipped format);
- ``codecs.python_calls.parse_python_literal`` / ``python_literal_or_none`` (the Python call
  decoder): tag values written as a literal (``XmlCalls(values="literal")``: Seed-OSS,
  MiniCPM), Breeze's tools, results and media, Apriel's tools.

Each row of :data:`DIFFERENT` is an input one reader accepts and the other refuses, with the
value the accepting one gives; :data:`SAME` are inputs both read alike (or both refuse).
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from pawlette.codecs.python_calls import parse_python_literal
from pawlette.declare.json_calls import _NOT_LITERAL, python_literal
from pawlette.errors import ParseError

REFUSED = object()


def by_ast(text: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ("'\\d'" is an invalid escape sequence to ast)
        value = python_literal(text)
    return REFUSED if value is _NOT_LITERAL else value


def by_decoder(text: str) -> Any:
    try:
        return parse_python_literal(text)
    except ParseError:
        return REFUSED


NESTED = "[" * 150 + "]" * 150  # nesting the decoder refuses (MAX_NESTING: 99 in a value)


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


DIFFERENT = [
    # (text, what the ast reader gives, what the decoder gives)
    ("true", REFUSED, True),  # JSON's constants: a name to Python
    ("false", REFUSED, False),
    ("null", REFUSED, None),
    ("r'a\\d'", "a\\d", REFUSED),  # string prefixes
    ("u'x'", "x", REFUSED),
    ("'''a\nb'''", "a\nb", REFUSED),  # triple quotes ('''x''' is '' 'x' '' to the decoder)
    ("'''a'b'''", "a'b", REFUSED),
    ("0x10", 16, REFUSED),  # int literals other than decimal
    ("0o7", 7, REFUSED),
    ("0b1", 1, REFUSED),
    ("-0x1", -1, REFUSED),
    ("(1)", 1, REFUSED),  # parentheses around a value
    ("([1])", [1], REFUSED),
    ("-(1)", -1, REFUSED),
    ("- 1", -1, REFUSED),  # a space after the minus
    ("[1, # c\n 2]", [1, 2], REFUSED),  # comments
    ("[1]#c", [1], REFUSED),
    ("[1, \\\n 2]", [1, 2], REFUSED),  # a line continuation between tokens
    ("\u3000[1]\u3000", [1], REFUSED),  # Unicode whitespace around (str.strip)
    ("'\\ud800'", "\ud800", REFUSED),  # an escaped lone surrogate
    ("'a\x00b'", REFUSED, "a\x00b"),  # a raw NUL in a string
    (NESTED, _nested(150), REFUSED),
]

SAME = [
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


@pytest.mark.parametrize(("text", "ast_value", "decoder_value"), DIFFERENT)
def test_where_the_readers_differ(text: str, ast_value: Any, decoder_value: Any) -> None:
    assert (ast_value is REFUSED) != (decoder_value is REFUSED)
    for read, value in ((by_ast, ast_value), (by_decoder, decoder_value)):
        if value is REFUSED:
            assert read(text) is REFUSED
        else:
            assert read(text) == value


@pytest.mark.parametrize(("text", "value"), SAME)
def test_where_the_readers_agree(text: str, value: Any) -> None:
    if value is REFUSED:
        assert by_ast(text) is REFUSED and by_decoder(text) is REFUSED
    else:
        assert by_ast(text) == value == by_decoder(text)
        assert type(by_ast(text)) is type(by_decoder(text))


def test_how_deep_each_reads() -> None:
    def deepest(read: Any) -> int:
        depth = 1
        while read("[" * depth + "]" * depth) is not REFUSED:
            depth += 1
        return depth - 1

    assert (deepest(by_ast), deepest(by_decoder)) == (200, 99)
