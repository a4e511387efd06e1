"""What makes a call's arguments valid: the one check every reader and test uses.

A tool call pawlette returns has arguments that ``json.loads`` turns into a JSON object, in
any consumer: so the text is strict JSON (no ``NaN``/``Infinity``, which Python's ``json``
would accept but JSON does not; no number beyond a double's range such as ``1e400``, which
Python's ``json`` reads as infinity), an object, no integer longer than Python's default
limit (4,300 digits: ``json.loads`` refuses it), and nested at most :data:`MAX_NESTING` deep (so
a consumer's recursive decoder never runs out of stack: CPython's fails near 1,000).
"""

from __future__ import annotations

import json
import json.scanner
import math
import re
from collections.abc import Callable, Iterable
from typing import Any, cast

from ..json_values import refuse_json_constant, refuse_json_overflow

MAX_NESTING = 100
"""The deepest nesting of objects and arrays accepted in arguments (the object itself is 1)."""


# What the nesting measure keeps of a JSON text's UTF-8: quotes and brackets, every bracket
# made square (the kind of a bracket does not change how deep it is).
_SQUARE = bytes.maketrans(b"{}", b"[]")
_NOT_STRUCTURE = bytes(byte for byte in range(256) if byte not in b'"[]{}')


def nested_deeper(text: str, limit: int = MAX_NESTING) -> bool:
    """Whether the containers of ``text``, strict JSON text (already read: its strings are
    closed and its brackets balanced), nest deeper than ``limit``.

    Measured on the text, at C speed, never by walking the decoded value: drop the escaped
    backslashes and quotes (so every quote left opens or closes a string), keep only quotes
    and brackets, drop the strings (each ``""`` once they hold no bracket, the usual case),
    then take away the innermost pairs ``[]`` one level a pass (``bytes.replace`` does not
    rescan what it joins): the passes are the depth."""
    # A text of at most ``limit`` characters holds at most ``limit`` brackets (the usual
    # call: no measure at all).
    if len(text) <= limit:
        return False
    # Each level needs its own opening bracket.  Counted first (C speed) where the skeleton
    # costs more than the count: text beyond ASCII (its UTF-8 is written out) or with
    # escapes (dropped one step each: a long string may hold thousands); otherwise on the
    # skeleton, which is about as cheap to make as the count and needed when it fails.
    if (not text.isascii() or "\\" in text) and text.count("{") + text.count("[") <= limit:
        return False
    data = text.encode("utf-8", "surrogatepass")
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    return brackets_deeper(data.translate(_SQUARE, _NOT_STRUCTURE), limit)


def brackets_deeper(skeleton: bytes, limit: int) -> bool:
    """:func:`nested_deeper` of a text's skeleton: its quotes and brackets only (escaped
    quotes dropped), every bracket square."""
    quotes = skeleton.count(b'"')
    if len(skeleton) - quotes <= 2 * limit:  # (counting the closing brackets too)
        return False
    # The quotes alternate, opening and closing, so a bracket is inside a string exactly
    # when an odd number of quotes comes before it.  When every run of quotes between two
    # brackets is even, none is (the usual case: no string holds a bracket); ``count`` of
    # ``""`` takes half of each run, rounded down, so the runs are all even exactly when the
    # pairs hold every quote.  Both are counted in one C pass each, nothing is built per
    # string.  Then the quotes just go.
    if 2 * skeleton.count(b'""') == quotes:
        brackets = skeleton.translate(None, b'"')
    else:  # a string holds a bracket: drop every string by its quotes
        brackets = b"".join(skeleton.split(b'"')[::2])
    for _ in range(limit):
        if not brackets:
            return False
        brackets = brackets.replace(b"[]", b"")
    return bool(brackets)


def shallow(value: Any) -> bool:
    """Whether ``value`` is an object or array whose members are none of them containers
    (or not a container at all): it nests at most one deep, so its text needs no nesting
    measure.  A look at the value's own members, which the read just made, not a walk of the
    value: it spares the measure's passes over the text where they cost the most, a long
    string argument (whose text holds no bracket that nests, only characters to search)."""
    for member in _members(value):
        kind = type(member)
        if kind is dict or kind is list:
            return False
    return True


def _members(value: Any) -> Iterable[Any]:
    """The members of ``value``, an object or array (none: not a container)."""
    kind = type(value)
    if kind is dict:
        return value.values()  # type: ignore[no-any-return]
    return value if kind is list else ()


_SMALL = 16
"""The most members :func:`within_three` looks through in a container inside the value."""


def within_three(value: Any) -> bool:
    """Whether ``value`` (an object or array) nests at most three deep, itself counted, found
    by a look at its members and at theirs when a member is a small container (at most
    :data:`_SMALL` members); False: not known.  The usual arguments (a list of a few names
    or numbers among their members) are so measured by a few checks of the value the read
    made, not by :func:`nested_deeper`'s passes over the call's text; a larger member is
    left to those passes (looking through it could cost more than they do)."""
    for member in _members(value):
        kind = type(member)
        if (kind is dict or kind is list) and (len(member) > _SMALL or not shallow(member)):
            return False
    return True


_decode: Callable[[str], Any] = json.JSONDecoder(
    parse_constant=refuse_json_constant, parse_float=refuse_json_overflow
).decode
"""``json.loads`` with these hooks, its decoder built once (``json.loads`` given a hook
builds a decoder on every call, a few microseconds: two per call of some formats)."""


def load_json(text: str, limit: int = MAX_NESTING) -> tuple[Any, str | None]:
    """``(value, None)`` for strict JSON text nested at most ``limit`` deep, else
    ``(None, what is wrong)``.  Never raises (Python's ``json`` raises ``RecursionError`` and
    plain ``ValueError`` on some inputs, not only ``JSONDecodeError``)."""
    try:
        if text.startswith("\ufeff"):  # as json.loads refuses it (the decoder does not look)
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        value = _decode(text)
    except json.JSONDecodeError as error:
        return None, f"not valid JSON ({error.msg} at char {error.pos})"
    except RecursionError:
        return None, f"nested deeper than {MAX_NESTING}"
    except ValueError as error:  # NaN/Infinity, 1e400, an integer over Python's digit limit
        return None, f"not valid JSON ({error})"
    if not shallow(value) and nested_deeper(text, limit):
        return None, f"nested deeper than {limit}"
    return value, None


def arguments_problem(text: str) -> str | None:
    """None when ``text`` is valid call arguments (see the module docstring), else why not."""
    value, problem = load_json(text)
    if problem is not None:
        return problem
    if not isinstance(value, dict):
        return "not a JSON object"
    return None


# ---------------------------------------------------------------------- whole call objects

# JSON's whitespace, as json's decoder skips it (the pattern always matches: typed so, once)
_skip = cast(Callable[[str, int], "re.Match[str]"], re.compile(r"[ \t\n\r]*").match)
# json's C scanners (typeshed leaves them out): a value at an index, a string after its quote.
_scan_value: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder(
    parse_constant=refuse_json_constant, parse_float=refuse_json_overflow
).scan_once  # type: ignore[attr-defined]
scan_value = _scan_value
"""``(value, end)`` of the strict JSON value at an index of a text (json's C scanner, refusing
``NaN``, infinities and numbers beyond a double; ``StopIteration`` or ``ValueError`` if
none is there)."""


class _FloatsKept:
    """What json's scanner reads its hooks from: the strict reading of :data:`scan_value`,
    but each number with a fraction or exponent kept as its text in ``floats`` (and None in
    the value), not read by a Python hook one at a time."""

    __slots__ = (
        "memo",
        "object_hook",
        "object_pairs_hook",
        "parse_constant",
        "parse_float",
        "parse_int",
        "strict",
    )

    def __init__(self, floats: list[str]) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = None
        self.parse_float = floats.append
        self.parse_int = int
        self.parse_constant = refuse_json_constant
        self.memo: dict[str, str] = {}


LONG_VALUE = 2048
"""From this many characters on, :func:`scan_long_value` reads a value (see there)."""


def scan_long_value(text: str, start: int) -> tuple[Any, int]:
    """:data:`scan_value` for a long value whose use needs only its shape (its containers,
    strings and integers): the numbers with a fraction or exponent are None in it, read
    after the scan all at once, in C, and refused the same (``ValueError``) when one is
    beyond a double's range.  The hook's Python call per number costs more than a scanner
    made for the value once it holds a few (an array of 200 objects with a price each)."""
    floats: list[str] = []
    scanner = json.scanner.make_scanner(_FloatsKept(floats))  # type: ignore[arg-type]
    value, end = scanner(text, start)
    if floats and any(map(math.isinf, map(float, floats))):
        raise ValueError("a number beyond a double's range, read as infinity")
    return value, end


_scan_string: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

# A key with no escape (nor control character), its colon and the whitespace after it; a
# string value with none (its value is its text); a member's end, "," or "}", and whitespace.
_PLAIN_KEY = re.compile(r'"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*').match
_PLAIN_STRING = re.compile(r'"([^"\\\x00-\x1f]*)"').match
_SEPARATOR = re.compile(r"[ \t\n\r]*([,}])[ \t\n\r]*").match

Member = tuple[Any, int, int]
"""A top-level member's decoded value and where its text begins and ends."""


def read_object(text: str) -> dict[str, Member] | None:
    """The members of ``text`` when it is one strict JSON object (as :func:`load_json` takes
    it, nested at most :data:`MAX_NESTING` deep) with no key written twice; else None (the
    caller then finds out what is wrong the slow way).

    The values are decoded by ``json``'s C scanner in place, so a call's arguments are found
    and checked without copying them or walking them in Python.
    """
    skip = _skip
    try:
        position = skip(text, 0).end()
        if text[position : position + 1] != "{":
            return None
        position = skip(text, position + 1).end()
        members: dict[str, Member] = {}
        if text[position : position + 1] == "}":
            position += 1
        else:
            while True:
                # The usual key (no escape) and its colon in one match; any other the long way.
                found = _PLAIN_KEY(text, position)
                if found is not None:
                    key = found.group(1)
                    start = found.end()
                else:
                    if text[position : position + 1] != '"':
                        return None
                    key, position = _scan_string(text, position + 1, True)
                    position = skip(text, position).end()
                    if text[position : position + 1] != ":":
                        return None
                    start = skip(text, position + 1).end()
                if key in members:
                    return None
                plain = _PLAIN_STRING(text, start) if text.startswith('"', start) else None
                if plain is not None:  # a string with no escape: its text is its value
                    value, position = plain.group(1), plain.end()
                else:
                    value, position = _scan_value(text, start)
                members[key] = (value, start, position)
                separator = _SEPARATOR(text, position)
                if separator is None:
                    return None
                position = separator.end()
                if separator.group(1) == "}":
                    break
    except (ValueError, StopIteration, RecursionError):
        return None
    if skip(text, position).end() != len(text):
        return None
    # The object is one level; its members' values were read whole: deeper only through one.
    for value, _, _ in members.values():
        if not shallow(value):
            return None if nested_deeper(text) else members
    return members


def member_start(text: str, key: str) -> int | None:
    """Where the value of the top-level member ``key`` begins in ``text``, the beginning of a
    JSON object (a call being streamed), when everything before that value is strict JSON
    object text with no key written twice and the value has begun; else None (not yet, or
    never: the caller reads the call whole instead)."""
    skip = _skip
    try:
        position = skip(text, 0).end()
        if text[position : position + 1] != "{":
            return None
        position = skip(text, position + 1).end()
        seen: set[str] = set()
        while True:
            if text[position : position + 1] != '"':
                return None
            name, position = _scan_string(text, position + 1, True)
            if name in seen:
                return None
            seen.add(name)
            position = skip(text, position).end()
            if text[position : position + 1] != ":":
                return None
            start = skip(text, position + 1).end()
            if name == key:
                return start if start < len(text) else None
            _, position = _scan_value(text, start)
            position = skip(text, position).end()
            if text[position : position + 1] != ",":
                return None
            position = skip(text, position + 1).end()
    except (ValueError, StopIteration, RecursionError):
        return None
