"""Work done once per distinct input and kept: a bounded store keyed by the input's content.

A server gets the same tools with every request, so the writers keep what they derive from
them (a checked tools block, a Python-literal listing, an indented definition).  The key must
be the content, never the identity of a mutable dict a caller may change later, and must tell
apart any two inputs that could be written differently.  :func:`marshal_key` gives such a key
for plain data: ``marshal`` writes only the exact built-in types (a subclass, whose methods
could say anything, is refused) and writes each type, key order and value apart (``1`` and
``"1"``, ``1`` and ``True``, a list and a tuple), so equal bytes are an equal value of the
same types.  A store that is full starts over: the inputs that recur come back at once.
"""

from __future__ import annotations

import functools
import marshal
from collections.abc import Callable
from typing import Any, Generic, TypeVar

Value = TypeVar("Value")

MISSING: Any = object()
"""What :meth:`Kept.find` returns for a key with no value kept."""


def marshal_key(value: Any) -> bytes | None:
    """``value``'s ``marshal`` bytes (format 2: no references), or None for a value of a type
    ``marshal`` does not write exactly (a subclass, an object) or nested too deeply."""
    try:
        return marshal.dumps(value, 2)
    except ValueError:
        return None


def shared_key(value: Any) -> bytes | None:
    """A content key as :func:`marshal_key`'s, in ``marshal``'s format 4, about half the cost
    (a short ASCII string is written as it is, not encoded to UTF-8 first), or None.

    Format 4 writes an object met again (one with other references) as a reference to the
    first, so equal keys are still an equal value of the same exact types (the bytes decode to
    one value), but equal values may have different keys (a miss, never a wrong value), and a
    value holding itself has a key: only for a store whose value is made by a step that
    refuses such a value itself (a walk bounded in depth)."""
    try:
        return marshal.dumps(value, 4)
    except ValueError:
        return None


class Kept(Generic[Value]):
    """At most ``limit`` values, each made once per key of at most ``longest`` characters or
    bytes (a longer key's value is made every time: a bound on memory)."""

    __slots__ = ("kept", "limit", "longest")

    def __init__(self, limit: int, longest: int) -> None:
        self.kept: dict[bytes | str, Value] = {}
        """The values by key: read it directly where a method call counts (``kept.get(key,
        MISSING)``: the dict stays the same object); add through :meth:`keep`."""
        self.limit = limit
        self.longest = longest

    def get(self, key: bytes | str | None, make: Callable[[], Value]) -> Value:
        """The value kept for ``key``, else ``make()`` (kept when the key is short enough);
        a None key (an input with no exact key) is made every time."""
        if key is None:
            return make()
        found = self.kept.get(key, MISSING)
        if found is not MISSING:
            return found  # type: ignore[no-any-return]
        made = make()
        self.keep(key, made)
        return made

    def find(self, key: bytes | str) -> Value:
        """The value kept for ``key``, or :data:`MISSING` (then :meth:`keep` what is made):
        :meth:`get` without making a function to call on a miss."""
        return self.kept.get(key, MISSING)  # type: ignore[no-any-return]

    def keep(self, key: bytes | str, made: Value) -> None:
        """Keep ``made`` for ``key`` when the key is short enough (see the class)."""
        if len(key) <= self.longest:
            if len(self.kept) >= self.limit:
                self.kept.clear()
            self.kept[key] = made


def checked_once(check: Callable[[Value, str], None]) -> Callable[[Value, str], None]:
    """``check(value, where)`` run once per content of ``value`` (:func:`marshal_key`): the
    values it passed are kept, a failure never is, so it raises again, worded as before (the
    tools a template checks come with every request)."""
    passed: Kept[bool] = Kept(limit=256, longest=1 << 14)

    @functools.wraps(check)
    def checked(value: Value, where: str) -> None:
        key = marshal_key(value)
        if key is None or passed.find(key) is MISSING:
            check(value, where)
            if key is not None:
                passed.keep(key, True)

    return checked
