"""Python literals and calls written from JSON: what :mod:`pawlette.codecs.python_calls`
reads back (ChatGLM3's ``tool_call(...)``, breeze's ``[f(...), g(...)]``, MRPromptV3's
``repr`` strings, tool listings and results written as Python values).

:func:`python_literal` writes a JSON value, :func:`encode_call` one call from its JSON
arguments, :func:`encode_calls` a list of them.  ``decode(encode_call(name, arguments))``
gives back ``json.dumps(json.loads(arguments), ensure_ascii=False)``.

>>> encode_calls([("get_weather", '{"city": "Paris"}')])
"[get_weather(city='Paris')]"
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Sequence
from typing import Any, Literal

from ..errors import RequestError, UnsupportedFeature
from ..json_values import refuse_json_constant
from .python_calls import is_plain_identifier

__all__ = [
    "REPR_ESCAPED",
    "Quote",
    "Spelling",
    "encode_call",
    "encode_calls",
    "python_literal",
    "raw_string_end",
    "template_argument",
]

Quote = Literal["'", '"', "repr"]
Spelling = Literal["literal", "template"]
"""How a call's arguments are written: ``"literal"``, each a Python literal in the ``quote``
style; ``"template"``, as a chat template writes ``"'" + value + "'"`` for a string, ``tojson``
for an object and Python's ``str()`` for anything else (LFM2.5's): a string raw between single
quotes (no escape at all), an object as JSON (``{"k": true}``), a list, number or constant as
``repr`` writes it (see :func:`template_argument`)."""

_RAW_END = re.compile("'(?:['),]|$)")

# What a literal escapes: the backslash, its own quote, and what is invisible or unwritable
# (C0/C1 control characters, lone surrogates).  Everything else, non-ASCII too, is kept.
_STRING_ESCAPES = {
    quote: re.compile(f"[\\\\{quote}\\x00-\\x1f\\x7f-\\x9f\\ud800-\\udfff]") for quote in "'\""
}
_NAMED_ESCAPES = {"\\": "\\\\", "'": "\\'", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_character(match: re.Match[str]) -> str:
    character = match.group()
    named = _NAMED_ESCAPES.get(character)
    if named is not None:
        return named
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# What Python's repr escapes besides those, as far as a chat template can follow: the
# assigned separator and format characters of the Basic Multilingual Plane (no-break and
# other spaces, zero-width characters, bidirectional controls).  Private-use, unassigned and
# astral characters, which repr escapes too, are kept (a template cannot list them all).
REPR_ESCAPED = "".join(
    character
    for character in map(chr, range(0xA0, 0x10000))
    if not character.isprintable() and unicodedata.category(character) in ("Zs", "Zl", "Zp", "Cf")
)
_REPR_ESCAPES = {
    quote: re.compile(f"[\\\\{quote}\\x00-\\x1f\\x7f-\\x9f\\ud800-\\udfff{REPR_ESCAPED}]")
    for quote in "'\""
}


def _string_literal(text: str, quote: str) -> str:
    if text.isprintable():
        # Nothing to escape but the backslash and a quote (every character the patterns below
        # escape is unprintable), so the common string takes no regular expression: Python's
        # repr escapes exactly the backslash and the quote it picks, as ours does.
        if quote == "repr":
            return repr(text)
        if quote not in text and "\\" not in text:
            return quote + text + quote
    if quote == "repr":
        # Python's repr (MRPromptV3 writes repr): its choice of quote, and its escapes (see
        # REPR_ESCAPED for the few characters left as they are).
        quote = '"' if "'" in text and '"' not in text else "'"
        return quote + _REPR_ESCAPES[quote].sub(_escape_character, text) + quote
    return quote + _STRING_ESCAPES[quote].sub(_escape_character, text) + quote


# A value's place, built only when an error names it: (parent place, "[3]" or ".key").
_Place = tuple[Any, str] | str


def _path(place: _Place) -> str:
    steps = []
    while isinstance(place, tuple):
        place, step = place
        steps.append(step)
    return place + "".join(reversed(steps))


def _write_literal(value: Any, quote: str, place: _Place, out: list[str]) -> None:
    kind = type(value)
    if kind is str:
        out.append(_string_literal(value, quote))
    elif kind is dict:
        out.append("{")
        first = True
        for key, item in value.items():
            if type(key) is not str:
                path = _path(place)
                raise TypeError(f"{path or 'value'}: dict key {key!r}; expected a string")
            if not first:
                out.append(", ")
            first = False
            out.append(_string_literal(key, quote))
            out.append(": ")
            if type(item) is str:  # most values: no place made for them
                out.append(_string_literal(item, quote))
            else:
                _write_literal(item, quote, (place, f".{key}"), out)
        out.append("}")
    elif value is None:
        out.append("None")
    elif isinstance(value, str):
        out.append(_string_literal(str(value), quote))
    elif isinstance(value, bool):  # before int: bool is an int
        out.append("True" if value else "False")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        if not math.isfinite(value):
            path = _path(place)
            raise UnsupportedFeature(path, f"the number {value!r}", "a finite number (JSON)")
        out.append(repr(value))
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(", ")
            _write_literal(item, quote, (place, f"[{index}]"), out)
        out.append("]")
    elif isinstance(value, dict):
        _write_literal(dict(value), quote, place, out)
    else:
        path = _path(place)
        raise TypeError(f"{path or 'value'}: {type(value).__name__}; expected a JSON value")


# The fast path: a value of plain JSON types written by Python's own repr (in C).  repr writes
# dicts, lists, ints, floats, True/False/None and printable strings exactly as _write_literal
# does ("{'k': [1, 2.5, None]}", the same separators), so where the value holds nothing else
# and the text shows no escape, repr's text is the literal.  Anything else (a tuple, a
# subclass, a non-string key, a float that is not finite, a string to escape, nesting deeper
# than _PLAIN_DEPTH: a value holding itself too) takes _write_literal, errors included.
_PLAIN_DEPTH = 64
_LEAVES = frozenset((str, int, bool, type(None)))
_isfinite = math.isfinite


def _plain(value: Any, depth: int) -> bool:
    """Whether ``value`` is only dicts with string keys, lists and plain leaves (exact types)."""
    kind = type(value)
    if kind in _LEAVES:
        return True
    if kind is float:
        return _isfinite(value)
    if depth <= 0:
        return False
    if kind is dict:
        for key in value:
            if type(key) is not str:
                return False
        items = value.values()
    elif kind is list:
        items = value
    else:
        return False
    for item in items:
        kind = type(item)
        if kind in _LEAVES:
            continue
        if not _plain(item, depth - 1):
            return False
    return True


def _repr_text(text: str, quote: str) -> str | None:
    """``repr``'s text of a plain value if it is the literal in ``quote`` (else None)."""
    if "\\" in text:  # a string repr escaped: _string_literal decides what to keep
        return None
    if quote == "repr":
        return text
    if quote == "'" and '"' not in text:  # every string in single quotes, none holding one
        return text
    return None


def python_literal(value: Any, *, quote: Quote = "'", path: str = "") -> str:
    """A JSON value written as a Python literal that :class:`PythonCallDecoder` reads back.

    Strings use ``quote`` and escape only the backslash, that quote and control characters
    (``quote="repr"``: as Python's ``repr`` writes them, ``"it's"`` and ``'\\xa0'``, but for
    private-use, unassigned and astral characters, kept);
    floats are written with ``repr``; NaN and infinities are refused (they are not JSON).
    ``path`` names the value in errors.

    >>> python_literal({"k": [1, 2.5, None, True, "it's"]})
    "{'k': [1, 2.5, None, True, 'it\\\\'s']}"
    """
    if _plain(value, _PLAIN_DEPTH):
        text = _repr_text(repr(value), quote)
        if text is not None:
            return text
    out: list[str] = []
    _write_literal(value, quote, path, out)
    return "".join(out)


def raw_string_end(text: str) -> re.Match[str] | None:
    """Where ``text``, written raw between single quotes, could be taken to end: a ``'``
    followed by ``'``, ``)`` or ``,``, or last.

    The reader ends a raw string at the first ``'`` after which the call goes on (``)``, or
    ``, name=``), so text with none of these reads back whole.  The test is stricter than
    the reader, for the grammar: llguidance's lexer is greedy (a string's lexeme must end
    where the next character cannot go on with it), so a ``'`` inside the string is followed
    by a character that neither ends the string nor follows its end."""
    if "'" not in text:
        return None
    return _RAW_END.search(text)


def template_argument(value: Any, path: str) -> str:
    """A call's argument written as a chat template writes it (``Spelling`` ``"template"``):
    a string raw in single quotes (refused, naming ``path``, where it would end early: see
    :func:`raw_string_end`), a dict as ``tojson`` writes it (transformers' ``tojson`` is
    ``json.dumps`` with ``ensure_ascii=False``), anything else as :func:`python_literal`
    writes it with ``quote="repr"`` (Python's ``str()`` of a list is the ``repr`` of its
    items: ``['C:\\\\temp', "O'Hare"]``).

    >>> template_argument("O'Hare", "city"), template_argument({"k": [True]}, "o")
    ("'O'Hare'", '{"k": [true]}')
    """
    kind = type(value)
    if kind is str:
        found = raw_string_end(value)
        if found is not None:
            what = (
                f"a string holding {found.group()!r} (at {found.start()})"
                if found.group() != "'"
                else "a string ending in '"
            )
            raise UnsupportedFeature(
                path,
                what,
                "a string in which no ' is followed by ', ) or a comma, nor ends it",
                "string arguments are written raw between single quotes, as the chat template "
                "writes them, and that quote could be read as the string's end",
            )
        return f"'{value}'"
    if kind is dict:
        try:
            return json.dumps(value, ensure_ascii=False, allow_nan=False)
        except ValueError:  # 1e400 read as infinity: python_literal names where
            pass
    return python_literal(value, quote="repr", path=path)


def encode_call(
    name: str,
    arguments_json: str,
    *,
    quote: Quote = "'",
    path: str = "",
    spelling: Spelling = "literal",
) -> str:
    """``name(key=value, ...)`` from JSON arguments text (an object with identifier keys).

    ``path`` is where the call is in the request (``messages[2].tool_calls[0].function``);
    errors name ``<path>.name`` or ``<path>.arguments...``.  ``spelling="template"``: each
    argument as :func:`template_argument` writes it.

    >>> encode_call("get_weather", '{"city": "Paris", "days": 3}', quote='"')
    'get_weather(city="Paris", days=3)'
    """
    expected = "a Python identifier that is not a keyword"
    if not _identifier(name):
        prefix = f"{path}." if path else ""
        raise UnsupportedFeature(f"{prefix}name", f"the function name {name!r}", expected)
    try:
        arguments = (
            _ARGUMENTS.decode(arguments_json)
            if not arguments_json.startswith("\ufeff")
            else json.loads(arguments_json, parse_constant=refuse_json_constant)  # its BOM error
        )
    except ValueError as error:
        where = f"{path}.arguments" if path else "arguments"
        raise RequestError(where, f"not valid JSON ({error})", "a JSON object") from error
    if type(arguments) is not dict:
        where = f"{path}.arguments" if path else "arguments"
        raise RequestError(where, f"a JSON {type(arguments).__name__}", "a JSON object")
    parts: list[str] = []
    for key, value in arguments.items():
        if not _identifier(key):
            raise UnsupportedFeature(
                f"{path}.arguments" if path else "arguments",
                f"the argument name {key!r}",
                expected,
                "Python-call formats write arguments as keyword arguments",
            )
        if spelling == "template":
            where = f"{path}.arguments.{key}" if path else f"arguments.{key}"
            parts.append(f"{key}={template_argument(value, where)}")
            continue
        # json.loads made the value, so it is plain but for a float out of range (1e400).
        text = _repr_text(repr(value), quote) if _plain(value, _PLAIN_DEPTH) else None
        if text is None:
            out: list[str] = []
            where = f"{path}.arguments.{key}" if path else f"arguments.{key}"
            _write_literal(value, quote, where, out)
            text = "".join(out)
        parts.append(f"{key}={text}")
    return f"{name}({', '.join(parts)})"


_ARGUMENTS = json.JSONDecoder(parse_constant=refuse_json_constant)
"""``json.loads(text, parse_constant=...)`` builds a decoder per call; this one is built once."""
_IDENTIFIERS: dict[str, bool] = {}
"""Names already checked by :func:`is_plain_identifier` (the same few recur in every render)."""


def _identifier(name: str) -> bool:
    known = _IDENTIFIERS.get(name)
    if known is None:
        known = is_plain_identifier(name)
        if len(_IDENTIFIERS) < 4096:  # bounded: names come from requests
            _IDENTIFIERS[name] = known
    return known


def encode_calls(
    calls: Sequence[tuple[str, str]],
    *,
    quote: Quote = "'",
    separator: str = ", ",
    path: str = "",
    spelling: Spelling = "literal",
) -> str:
    """``[f(...), g(...)]`` from ``(name, arguments_json)`` pairs.

    ``path`` is where the list of calls is (``messages[2].tool_calls``).

    >>> encode_calls([("f", "{}"), ("g", '{"x": 1}')], separator=",")
    '[f(),g(x=1)]'
    """
    encoded = [
        encode_call(
            name, arguments, quote=quote, path=f"{path}[{index}].function", spelling=spelling
        )
        for index, (name, arguments) in enumerate(calls)
    ]
    return "[" + separator.join(encoded) + "]"
