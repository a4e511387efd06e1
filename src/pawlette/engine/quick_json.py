"""A quick yes to a long JSON object's text: valid call arguments for certain, or not known.

A call's arguments are returned as the text the model wrote, checked (strict JSON, nested at
most so deep, every number within a double: :mod:`pawlette.engine.call_arguments`), never
decoded.  ``json``'s C decoder checks them by building the whole value, one Python object
per string, number, array and object: on arguments holding many small values that is most
of a parse.  SQLite's ``json_valid`` (in the standard library's ``sqlite3``) checks strict
JSON text without building anything, several times faster; what it does not check, the
nesting limit and the numbers ``json`` would read as infinity or refuse as too long, is
measured on the text here in C passes (``bytes.translate`` and searches).

So :func:`quick_object_check` says True only when the text is certainly what ``json``'s
reading takes: an object, nested at most the limit, with no exponent of three digits or more
and no 100 digits in a row (the only numbers that can go beyond a double or Python's digit
limit: those, and texts whose strings look like them, are left to ``json``).  Any other
answer is "not known": the caller reads the text the usual way, which says what is wrong, so
a text is never taken that ``json`` would refuse, nor refused here.  It is tried only on
texts of many small values (judged by their first characters): a few long strings ``json``
reads faster than SQLite does.

SQLite is used only where it agrees with ``json`` on a set of texts where JSON readers
differ (JSON5's extensions, control characters in strings, other whitespace, byte order
marks, numbers ``json`` takes and JSON does not), checked once per process; where it does
not, or ``sqlite3`` is missing, nothing is known here.  Each thread has its own in-memory
connection (a child process after ``fork`` makes new ones).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from .call_arguments import MAX_NESTING, brackets_deeper, load_json

_TABLE = bytearray(b" " * 256)
for _byte in b"0123456789":
    _TABLE[_byte] = ord("0")
_TABLE[ord("e")] = _TABLE[ord("E")] = ord("e")
for _byte in b'"[]':
    _TABLE[_byte] = _byte
_TABLE[ord("{")] = ord("[")  # (the kind of a bracket does not change how deep it is)
_TABLE[ord("}")] = ord("]")
_SKELETON = bytes(_TABLE)
_DROPPED = (
    bytes(
        byte
        for byte in range(256)
        if chr(byte).isascii() and chr(byte).isalpha() and byte not in b"eE"
    )
    + b"+"
)
"""Each UTF-8 byte as the checks see it: a digit, an ``e``, a quote or a bracket, dropped (a
letter but ``e``, and ``+``: ``1e+308`` is ``0e000``), else a space (which ends a number)."""
_SAMPLE = 2048
_MANY = _SAMPLE // 24
"""Separators (``,`` and ``:``) in the first :data:`_SAMPLE` characters from which values
are many enough for the check here to cost less than ``json``'s reading (measured: an array
of small objects has one in 8 characters, a long string of prose one in 40)."""
_EXPONENT = b"e000"
"""An exponent of three digits or more: the numbers that may go beyond a double."""
_LONG_DIGITS = b"0" * 100
"""Fewer digits in a row, and an exponent of two digits at most, make no number beyond a
double (1.8e308) nor beyond Python's 4,300 digits."""


def many_values(text: str, start: int = 0) -> bool:
    """Whether the text from ``start`` looks like many small values, where the check here is
    worth it (json's cost is per value, SQLite's and these passes' per byte): judged by the
    separators at the beginning."""
    end = start + _SAMPLE
    return text.count(",", start, end) + text.count(":", start, end) >= _MANY


def quick_object_check(text: str, limit: int) -> bool:
    """True when ``text`` is for certain one strict JSON object as
    :func:`~pawlette.engine.call_arguments.load_json` takes it, nested at most ``limit``
    deep; False: not known (read it the usual way)."""
    if not text.startswith("{") or "\x00" in text or not many_values(text):
        return False  # (SQLite's text ends at a NUL)
    validate = _validator()
    if validate is None:
        return False
    return _checked(text, limit, validate)


def _checked(text: str, limit: int, validate: Callable[[str], bool]) -> bool:
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: json's to judge
        return False
    if b"\\" in data:  # an escaped quote or backslash is no quote (nor a digit's neighbour)
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    skeleton = data.translate(_SKELETON, _DROPPED)
    # Strings may hold such digits too: then the text is left to json, as well.
    if _EXPONENT in skeleton or _LONG_DIGITS in skeleton:
        return False
    # Measured before SQLite reads it: SQLite never reads a text nested deeper than the limit.
    if brackets_deeper(skeleton.translate(None, b" 0e"), limit):
        return False
    try:
        return validate(text)
    except Exception:  # any failure of SQLite: not known
        return False


# ---------------------------------------------------------------------- SQLite, checked once

_QUERY = "select json_valid(?)"
_PROBES = (
    '{"a": 1, "b": [true, false, null, -0.5e-3, 1E2], "c": {"d": "\\u00e9\\n\\"\\\\\\/"}}',
    '{ "a" :\t1\n,\r"b":2 }',
    '{"a": "\\ud800"}',
    '{"a": "\U0001f600"}',
    '{"a": "\x7f"}',
    '{"a": "\x01"}',
    '{"a": "\x1f"}',
    '{"a": "\t"}',
    '{"a": "\n"}',
    '{"a": "\r"}',
    '{\f"a": 1}',
    '{\v"a": 1}',
    '{\u00a0"a": 1}',
    '{\u2028"a": 1}',
    '{\ufeff"a": 1}',
    '{"a": 1}\ufeff',
    '{"a": 1}\x1a',
    '{"a": 1}\u00a0',
    "{a: 1}",
    "{'a': 1}",
    "{\"a\": 'x'}",
    '{"a": 1,}',
    '{"a": [1,]}',
    '{"a": 0x1F}',
    '{"a": .5}',
    '{"a": 5.}',
    '{"a": +1}',
    '{"a": 01}',
    '{"a": -01}',
    '{"a": -}',
    '{"a": Infinity}',
    '{"a": -Infinity}',
    '{"a": NaN}',
    '{"a": True}',
    '{"a": tru}',
    '{"a": "\\x41"}',
    '{"a": "\\v"}',
    '{"a": "\\0"}',
    '{"a": "\\\'"}',
    '{"a": "a\\\nb"}',
    '{"a": "\\u12"}',
    '{"a": "\\u12G4"}',
    '{"a": "\\U0041"}',
    '{"a": 1/*c*/}',
    '{"a": 1}//c',
    '{"a" 1}',
    '{"a": 1 "b": 2}',
    '{"a": 1}}',
    '{"a": [1}',
    '{"a": 1} {}',
    '{"a": "x',
    "{,}",
    '{"a": 1,, "b": 2}',
    '{"a": 1, "a": 2}',
    '{"a": 1e400}',
    '{"a": \u0661}',
)
"""Texts where JSON readers differ from strict JSON, and some where they must not."""

_agrees: bool | None = None
_local = threading.local()


def _validator() -> Callable[[str], bool] | None:
    """This thread's ``json_valid``, when SQLite agrees with ``json`` (else None)."""
    global _agrees
    validate: Callable[[str], bool] | None = getattr(_local, "validate", None)
    if validate is not None or _agrees is False:
        return validate
    validate = _connect()
    if validate is not None and _agrees is None:
        _agrees = _agreement(validate)
    if not _agrees:
        _agrees = False
        return None
    _local.validate = validate
    return validate


def _connect() -> Callable[[str], bool] | None:
    """SQLite's ``json_valid``, on a connection of this thread's own."""
    try:
        import sqlite3

        execute = sqlite3.connect(":memory:").execute
        execute(_QUERY, ("{}",)).fetchone()
    except Exception:  # no sqlite3, or no JSON in it: nothing known
        return None

    def validate(text: str) -> bool:
        return bool(execute(_QUERY, (text,)).fetchone()[0] == 1)

    return validate


def _agreement(validate: Callable[[str], bool]) -> bool:
    """Whether the check here answers as ``json``'s reading on every probe."""
    for probe in _PROBES:
        value, problem = load_json(probe)
        expected = problem is None and isinstance(value, dict)
        quick = "\x00" not in probe and _checked(probe, MAX_NESTING, validate)
        if quick and not expected:
            return False
        # A valid probe taken by json is refused here only for its number's exponent.
        if expected and not quick and "e" not in probe.lower():
            return False
    return True


def _forget_connections() -> None:
    global _local
    _local = threading.local()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_connections)
