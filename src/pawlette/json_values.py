"""What a value from a caller may hold: JSON that every format can print, text that is Unicode.

A request reaches pawlette as Python values (the Python API) or as decoded JSON (the CLI and the
server), and both can hold things no prompt can carry: ``bytes``, sets, non-string keys,
``NaN``, integers too long to print (Python refuses to print more than 4,300 digits), values
nested deeper than the printers recurse, strings holding a lone surrogate (``"\\ud800"``, which
is no Unicode character and cannot be encoded as UTF-8).  These checks find them first, so each
one is a :class:`~pawlette.errors.RequestError` naming its JSON path, never a ``TypeError``, a
``ValueError`` from deep inside ``json``, a ``RecursionError`` or a ``NaN`` written into a
prompt.

>>> json_value_problem({"a": [1, float("nan")]})
('.a[1]', 'the number nan', 'a finite number (JSON has no NaN or infinity)')
"""

from __future__ import annotations

import json
import math
import re
import reprlib
from collections.abc import Iterable
from typing import Any, NoReturn

from .errors import RequestError

MAX_JSON_DEPTH = 100
"""How deep a JSON value may nest (objects and arrays); deeper is refused, not recursed into."""
MAX_INTEGER_DIGITS = 4000
"""The longest integer accepted, in decimal digits (Python prints at most 4,300)."""
_MAX_INTEGER_BITS = math.ceil(MAX_INTEGER_DIGITS * math.log2(10))

_SURROGATE = re.compile("[\ud800-\udfff]")

_UNICODE = "valid Unicode text (a \\ud800-\\udbff escape followed by a \\udc00-\\udfff one)"
"""What a string must be (worded as pawlette.tokenize words it)."""

Problem = tuple[str, str, str]
"""``(path below the value, what was found, what was expected)``."""


def surrogate_problem(text: str) -> str | None:
    """What is wrong with ``text`` (a lone surrogate at some index), or None."""
    if text.isascii():  # O(1) in CPython: nearly every string takes this path
        return None
    match = _SURROGATE.search(text)
    if match is None:
        return None
    return f"text with a lone surrogate U+{ord(match.group()):04X} at character {match.start()}"


def check_text(text: str, path: str) -> str:
    """``text``, or :class:`RequestError` at ``path`` when it is not Unicode (a lone surrogate)."""
    if not text.isascii():
        problem = surrogate_problem(text)
        if problem is not None:
            raise RequestError(path, problem, _UNICODE)
    return text


class _ShortRepr(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 200:  # repr() refuses past 4,300 digits; nobody reads 60
            return f"<an integer of {x.bit_length()} bits>"
        return super().repr_int(x, level)


_SHOW = _ShortRepr()
_SHOW.maxlevel = 3
_SHOW.maxstring = 60
_SHOW.maxother = 60
_SHOW.maxlist = _SHOW.maxdict = _SHOW.maxtuple = _SHOW.maxset = 4


def show(value: object) -> str:
    """``repr(value)`` for an error message: short, and safe on values nested 100,000 deep or
    holding lone surrogates (escaped, so the message is UTF-8)."""
    return _SHOW.repr(value)


def _member(key: str) -> str:
    return f".{key}" if key.isidentifier() and key.isascii() else f"[{json.dumps(key)}]"


def key_path(path: str, key: str) -> str:
    """``path.key``, or ``path["key"]`` (JSON-escaped, so ASCII) when the key is no identifier."""
    member = _member(key)
    return member[1:] if not path and member[0] == "." else path + member


def shorten_path(path: str, limit: int = 160) -> str:
    """``path``, its middle elided when longer than ``limit`` (a value nested 100 deep)."""
    if len(path) <= limit:
        return path
    return path[: limit // 2] + "..." + path[-limit // 2 :]


def json_value_problem(value: object, max_depth: int = MAX_JSON_DEPTH) -> Problem | None:
    """The first reason ``value`` is not a JSON value every format can print, or None."""
    kind = type(value)
    if (kind is dict or kind is list) and _clean(value, max_depth, set()):
        return None  # the common case, at a fraction of the cost of the explaining walk
    return _problem(value, max_depth, set(), set())


_BITS = _MAX_INTEGER_BITS
_search = _SURROGATE.search
_isfinite = math.isfinite


def _clean(value: Any, depth: int, done: set[int]) -> bool:
    """Whether a dict or list is plainly fine (False: ask :func:`_problem` what is wrong).

    Rendering is on the serving path and every request's tool definitions are walked, so this
    walk takes the leaves inline and uses exact type checks; anything unusual (a subclass, a
    tuple, a value that contains itself) is left to the explaining walk.
    """
    if depth <= 0:
        return False
    if type(value) is dict:
        for key in value:
            if type(key) is not str or (not key.isascii() and _search(key)):
                return False
        items: Iterable[Any] = value.values()
    else:
        items = value
    for item in items:
        kind = type(item)
        if kind is str:
            if not item.isascii() and _search(item):
                return False
        elif kind is dict or kind is list:
            identity = id(item)
            if identity not in done:
                if not _clean(item, depth - 1, done):
                    return False
                done.add(identity)  # shared, not repeated: checked once
        elif kind is int:
            if item.bit_length() > _BITS:
                return False
        elif kind is float:
            if not _isfinite(item):
                return False
        elif item is not None and kind is not bool:
            return False
    return True


def _problem(value: object, depth: int, active: set[int], done: set[int]) -> Problem | None:
    if isinstance(value, str):
        problem = surrogate_problem(value)
        return None if problem is None else ("", problem, _UNICODE)
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        if value.bit_length() > _MAX_INTEGER_BITS:
            return ("", "an integer too long to print", f"at most {MAX_INTEGER_DIGITS} digits")
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            found = f"the number {value!r}"
            return ("", found, "a finite number (JSON has no NaN or infinity)")
        return None
    items: Iterable[tuple[object, object]]
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        found = f"a {type(value).__name__} value"
        return ("", found, "a JSON value (object, array, string, number, boolean or null)")
    if depth <= 0:
        return ("", "a value nested too deeply", f"at most {MAX_JSON_DEPTH} levels of nesting")
    identity = id(value)
    if identity in active:
        return ("", "a value that contains itself", "a JSON value (a tree)")
    if identity in done:
        return None
    active.add(identity)
    try:
        for key, item in items:
            if not isinstance(value, dict):
                where = f"[{key}]"
            elif not isinstance(key, str):
                return ("", f"the key {show(key)}", "string keys (JSON object keys are strings)")
            else:
                problem = surrogate_problem(key)
                if problem is not None:
                    return ("", f"a key holding {problem}", _UNICODE)
                where = _member(key)
            inner = _problem(item, depth - 1, active, done)
            if inner is not None:
                return (where + inner[0], inner[1], inner[2])
    finally:
        active.discard(identity)
    done.add(identity)
    return None


def check_json_value(value: object, path: str) -> None:
    """Raise :class:`RequestError` (naming the path inside ``value``) unless every format can
    print ``value`` as JSON."""
    problem = json_value_problem(value)
    if problem is not None:
        raise RequestError(shorten_path(path + problem[0]), problem[1], problem[2])


def refuse_json_constant(name: str) -> NoReturn:
    """``parse_constant`` for ``json``: NaN, Infinity and -Infinity are no JSON."""
    raise ValueError(f"{name} is not JSON")


def refuse_json_overflow(text: str) -> float:
    """``parse_float`` for ``json``: a number beyond a double's range (``1e400``) is refused,
    not read as infinity (which no strict JSON reader or writer takes: JSON has no infinity)."""
    value = float(text)
    # ``inf - inf`` is NaN (true), a finite value less itself 0.0 (false): the hook runs once
    # per number with a fraction or exponent, and this spares a lookup of math.isinf each.
    if value - value:
        shown = text if len(text) <= 40 else f"{text[:20]}...{text[-12:]}"
        raise ValueError(f"the number {shown} is beyond a double's range, read as infinity")
    return value


def load_json_text(text: str, path: str, expected: str = "a JSON object as text") -> Any:
    """``json.loads(text)``, or :class:`RequestError` at ``path``: not JSON, ``NaN``, an
    integer too long, nested too deeply, or text holding a lone surrogate."""
    try:
        value = json.loads(text, parse_constant=refuse_json_constant)
    except json.JSONDecodeError as error:
        found = f"not valid JSON ({error.msg} at char {error.pos})"
        raise RequestError(path, found, expected) from error
    except ValueError as error:  # NaN, or an integer beyond Python's reading limit
        reason = "an integer too long to read" if "integer" in str(error) else str(error)
        raise RequestError(path, f"not valid JSON ({reason})", expected) from None
    except RecursionError:
        raise RequestError(
            path, "JSON nested too deeply", f"at most {MAX_JSON_DEPTH} levels of nesting"
        ) from None
    problem = json_value_problem(value)
    if problem is not None:
        where = f"at {shorten_path(problem[0])}" if problem[0] else "as the whole value"
        raise RequestError(path, f"JSON holding {problem[1]} {where}", problem[2])
    return value
