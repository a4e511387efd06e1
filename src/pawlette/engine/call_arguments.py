"""What makes a call's arguments valid: the one check every reader and test uses.

A tool call pawlette returns has arguments that ``json.loads`` turns into a JSON object, in
any consumer: so the text is strict JSON (no ``NaN``/``Infinity``, which Python's ``json``
would accept but JSON does not), an object, no integer longer than Python's default limit
(4,300 digits: ``json.loads`` refuses it), and nested at most :data:`MAX_NESTING` deep (so
a consumer's recursive decoder never runs out of stack: CPython's fails near 1,000).
"""

from __future__ import annotations

import json
from typing import Any

MAX_NESTING = 100
"""The deepest nesting of objects and arrays accepted in arguments (the object itself is 1)."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _depth(value: Any) -> int:
    """The nesting depth of a decoded JSON value (iterative: no recursion to run out of)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            items: Any = item.values()
        elif isinstance(item, list):
            items = item
        else:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_NESTING:
            return depth
        stack.extend((child, depth + 1) for child in items)
    return deepest


def load_json(text: str) -> tuple[Any, str | None]:
    """``(value, None)`` for strict JSON text nested at most :data:`MAX_NESTING` deep, else
    ``(None, what is wrong)``.  Never raises (Python's ``json`` raises ``RecursionError`` and
    plain ``ValueError`` on some inputs, not only ``JSONDecodeError``)."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        return None, f"not valid JSON ({error.msg} at char {error.pos})"
    except RecursionError:
        return None, f"nested deeper than {MAX_NESTING}"
    except ValueError as error:  # NaN/Infinity, an integer over Python's digit limit
        return None, f"not valid JSON ({error})"
    if _depth(value) > MAX_NESTING:
        return None, f"nested deeper than {MAX_NESTING}"
    return value, None


def arguments_problem(text: str) -> str | None:
    """None when ``text`` is valid call arguments (see the module docstring), else why not."""
    value, problem = load_json(text)
    if problem is not None:
        return problem
    if not isinstance(value, dict):
        return "not a JSON object"
    return None
