"""A format's options checked against the types their options class declares, where they are
given (:meth:`pawlette.Format.with_options`, ``--option`` on the command line).

A frozen dataclass checks nothing itself: ``tools_in_user_message="yes"`` would be kept and
read as true, a date given as ``"2025-03-05"`` written as it is rather than formatted as the
template formats a date.  Each field's annotation says what it takes:

- ``bool``: True or False only (not 1, not ``"yes"``); ``int``: an int, never a bool;
  ``float``: a float or an int, never a bool; ``str``; ``datetime.date`` (a datetime too);
- ``Literal[...]``: one of its values, of the same type (``Literal["4.6"]`` refuses 4.6);
- an enum, or any other class: an instance of it;
- a union (``X | None``): what any of its members takes;
- ``tuple[X, ...]``, ``tuple[X, Y]``, ``list[X]``, ``frozenset[X]``, ``dict[K, V]``: that
  container, each item checked (its place named: ``options.names[2]``);
- ``Callable[...]``: something callable; ``Any``: anything.

An annotation of another kind (a type variable, a protocol) takes anything: it says nothing
this check can test.  The annotations are resolved once per options class, each against the
module of the class that declares it; a class whose annotations do not resolve (a name
imported only for type checkers) has each annotation that resolves on its own checked, the
others taken as given.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import enum
import sys
import types
import typing
from collections.abc import Mapping
from typing import Any, NamedTuple

from .errors import RequestError

FOUND_CHARACTERS = 100
"""How much of a refused value's ``repr`` an error shows."""
DATE_EXAMPLE = "datetime.date(2024, 7, 26)"

_RESOLVED: dict[type, dict[str, Any]] = {}
"""Each options class's field annotations, resolved once (that costs ~0.4 ms; ``with_options``
runs per variant, per candidate in a detection)."""

_CONTAINERS: dict[Any, type] = {
    tuple: tuple,
    list: list,
    frozenset: frozenset,
    set: set,
    dict: dict,
    collections.abc.Sequence: tuple,
    collections.abc.Set: frozenset,
    collections.abc.Mapping: dict,
}
"""A container annotation's origin and the class a value of it is checked to be (a
``Sequence[str]`` option of a frozen dataclass holds a tuple: a list could change under it)."""


class Mismatch(NamedTuple):
    """Where inside an option a value is refused (``""``: the option itself, ``[2]``: its
    third item), the value refused there, and what that place takes."""

    place: str
    value: object
    expected: str


def option_annotations(options_class: type) -> dict[str, Any]:
    """The field annotations of ``options_class``, resolved (each class of its bases in its
    own module: an inferred format's switched options hold fields of two); fields whose
    annotations cannot be resolved are left out (see the module's description)."""
    resolved = _RESOLVED.get(options_class)
    if resolved is None:
        try:
            hints = typing.get_type_hints(options_class)
        except (NameError, TypeError, AttributeError, SyntaxError):
            hints = _resolved_one_by_one(options_class)
        fields = (
            {field.name for field in dataclasses.fields(options_class)}
            if dataclasses.is_dataclass(options_class)
            else set(hints)
        )
        resolved = {name: hints[name] for name in fields if name in hints}
        _RESOLVED[options_class] = resolved
    return resolved


def _resolved_one_by_one(options_class: type) -> dict[str, Any]:
    """The annotations of ``options_class`` that resolve, each on its own (in the module of
    the class that declares it, as :func:`typing.get_type_hints` resolves them all)."""
    hints: dict[str, Any] = {}
    for kind in reversed(options_class.__mro__):
        module = sys.modules.get(kind.__module__)
        namespace = dict(vars(module)) if module is not None else {}
        for name, annotation in vars(kind).get("__annotations__", {}).items():
            hints.pop(name, None)
            if isinstance(annotation, typing.ForwardRef):
                annotation = annotation.__forward_arg__
            if isinstance(annotation, str):
                try:  # what typing.get_type_hints does with each, where it can
                    annotation = eval(annotation, namespace, dict(vars(kind)))
                except Exception:
                    continue
            hints[name] = annotation
    return hints


def check_options(format_name: str, options: object, changes: Mapping[str, Any]) -> None:
    """A :class:`~pawlette.errors.RequestError` for the first change (by name) whose value
    the annotation of its field in ``options``'s class does not take; a name that is no
    field is left to the caller (``dataclasses.replace`` names the fields)."""
    annotations = option_annotations(type(options))
    for name in sorted(changes):
        if name not in annotations:
            continue
        annotation = annotations[name]
        mismatch = find_mismatch(annotation, changes[name])
        if mismatch is None:
            continue
        expected = mismatch.expected
        if mismatch.place == "" and _takes_date(annotation):
            expected += f" (the date {format_name} writes, such as {DATE_EXAMPLE})"
        raise RequestError(f"options.{name}{mismatch.place}", found(mismatch.value), expected)


def found(value: object) -> str:
    """A refused value as an error shows it: its ``repr`` (cut short) and its type."""
    return f"{value!r}"[:FOUND_CHARACTERS] + f" ({type(value).__name__})"


def find_mismatch(annotation: Any, value: object) -> Mismatch | None:
    """Where ``value`` is not what ``annotation`` takes, or None: it is."""
    annotation = _unwrapped(annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return _union_mismatch(typing.get_args(annotation), value)
    if origin in _CONTAINERS:
        return _container_mismatch(annotation, value)
    if admits(annotation, value):
        return None
    return Mismatch("", value, describe(annotation))


def admits(annotation: Any, value: object) -> bool:
    """Whether ``annotation`` takes ``value`` (containers item by item)."""
    annotation = _unwrapped(annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType) or origin in _CONTAINERS:
        return find_mismatch(annotation, value) is None
    if annotation is Any:
        return True
    if annotation is None or annotation is type(None):
        return value is None
    if origin is typing.Literal:
        return any(
            type(value) is type(allowed) and value == allowed
            for allowed in typing.get_args(annotation)
        )
    if origin is collections.abc.Callable or annotation is collections.abc.Callable:
        return callable(value)
    if annotation is bool:
        return type(value) is bool
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(annotation, type):
        return isinstance(value, annotation)
    return True  # a type variable, a protocol: nothing this check can test


def describe(annotation: Any) -> str:
    """What ``annotation`` takes, in words (``True or False``, ``one of 'xs', 's'``, ``a
    datetime.date or None``, ``a tuple of str``)."""
    annotation = _unwrapped(annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return _describe_union(typing.get_args(annotation))
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(allowed) for allowed in typing.get_args(annotation))
    if origin in _CONTAINERS:
        return _describe_container(annotation)
    if origin is collections.abc.Callable or annotation is collections.abc.Callable:
        return "a callable"
    if annotation is Any:
        return "anything"
    if annotation is None or annotation is type(None):
        return "None"
    if annotation is bool:
        return "True or False"
    if annotation is float:
        return "a float (or an int)"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        members = ", ".join(f"{annotation.__name__}.{member.name}" for member in annotation)
        return f"{article(annotation.__qualname__)}: one of {members}"
    if annotation is datetime.date:
        return "a datetime.date"
    if isinstance(annotation, type):
        return article(annotation.__qualname__)
    return repr(annotation)


def article(name: str) -> str:
    """``name`` after its indefinite article (``an int``, ``a str``)."""
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _unwrapped(annotation: Any) -> Any:
    """``Annotated[X, ...]`` as ``X``; ``Optional`` and ``NewType`` as what they stand for."""
    while True:
        if typing.get_origin(annotation) is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif isinstance(annotation, typing.NewType):
            annotation = annotation.__supertype__
        else:
            return annotation


def _takes_date(annotation: Any) -> bool:
    """Whether ``annotation`` is a date, or a union holding one (its error shows an example)."""
    annotation = _unwrapped(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return datetime.date in typing.get_args(annotation)
    return annotation is datetime.date


def _union_mismatch(members: tuple[Any, ...], value: object) -> Mismatch | None:
    """A union takes what any member takes; a value of the container class of just one
    member is refused where its item is (``options.names[1]``), else as a whole."""
    if any(admits(member, value) for member in members):
        return None
    containers = [
        member
        for member in members
        if typing.get_origin(_unwrapped(member)) in _CONTAINERS
        and isinstance(value, _CONTAINERS[typing.get_origin(_unwrapped(member))])
    ]
    if len(containers) == 1:
        return find_mismatch(containers[0], value)
    return Mismatch("", value, _describe_union(members))


def _describe_union(members: tuple[Any, ...]) -> str:
    if all(member in (bool, type(None)) for member in members):
        return "True, False or None"
    spelled = [describe(member) for member in members if member is not type(None)]
    if type(None) in members:
        spelled.append("None")
    return ", ".join(spelled[:-1]) + f" or {spelled[-1]}"


def _container_mismatch(annotation: Any, value: object) -> Mismatch | None:
    origin = typing.get_origin(annotation)
    container = _CONTAINERS[origin]
    arguments = typing.get_args(annotation)
    if not isinstance(value, container):
        return Mismatch("", value, describe(annotation))
    if isinstance(value, dict):
        key_type, value_type = arguments or (Any, Any)
        for key, item in value.items():
            if not admits(key_type, key):
                return Mismatch(f"[{key!r}] (its key)", key, describe(key_type))
            inner = find_mismatch(value_type, item)
            if inner is not None:
                return inner._replace(place=f"[{key!r}]{inner.place}")
        return None
    items = list(typing.cast("collections.abc.Iterable[object]", value))
    if _empty_tuple(annotation):
        arguments = ((),)
    if container is tuple and arguments and arguments[-1] is not Ellipsis:
        if arguments == ((),):  # tuple[()]: empty
            arguments = ()
        if len(items) != len(arguments):
            return Mismatch("", value, describe(annotation))
        item_types = list(arguments)
    else:
        item_types = [arguments[0] if arguments else Any] * len(items)
    for index, (item_type, item) in enumerate(zip(item_types, items, strict=True)):
        inner = find_mismatch(item_type, item)
        if inner is not None:
            # A set's items have no place of their own: the set is named whole.
            if container in (frozenset, set):
                return Mismatch("", value, describe(annotation))
            return inner._replace(place=f"[{index}]{inner.place}")
    return None


def _describe_container(annotation: Any) -> str:
    container = _CONTAINERS[typing.get_origin(annotation)]
    arguments = typing.get_args(annotation)
    name = container.__name__
    if _empty_tuple(annotation):
        return "an empty tuple"
    if not arguments:
        return article(name)
    if container is dict:
        return f"a dict of {_spelled(arguments[0])} to {_spelled(arguments[1])}"
    if container is tuple and arguments[-1] is not Ellipsis:
        if arguments == ((),):
            return "an empty tuple"
        return f"a tuple of {len(arguments)}: " + ", ".join(_spelled(item) for item in arguments)
    return f"{article(name)} of {_spelled(arguments[0])}"


def _empty_tuple(annotation: Any) -> bool:
    """Whether ``annotation`` is ``tuple[()]``: Python 3.11 gives it no arguments, as a bare
    ``typing.Tuple`` has (which takes any tuple), where later versions give ``((),)``."""
    return (
        typing.get_origin(annotation) is tuple
        and typing.get_args(annotation) in ((), ((),))
        and annotation is not typing.Tuple  # noqa: UP006 (the bare alias, not tuple)
    )


def _spelled(annotation: Any) -> str:
    """An item's annotation as a container's description names it (``str``, ``'a' | 'b'``)."""
    annotation = _unwrapped(annotation)
    if isinstance(annotation, type) and typing.get_origin(annotation) is None:
        return annotation.__qualname__ if annotation is not type(None) else "None"
    return f"({describe(annotation)})"
