"""A format's option given as text (``pawlette render --option NAME=VALUE``), read as the
value its declared type takes (:mod:`pawlette.option_types`).

The text is read as the first of these the option takes: ``null`` as None; a date written
``YYYY-MM-DD`` (also where the option takes text too, as Breeze's ``today`` does); the text
itself (a ``str`` option, a ``Literal`` of text such as ``version=4.6``); the JSON value it
spells (``true``, ``false``, a number, a list, read as a tuple where the option holds one);
an enum's member by its name or its value.  Text the option takes in
none of these ways is given as it is, and refused naming what the option takes.
"""

from __future__ import annotations

import contextlib
import datetime
import enum
import json
import types
import typing
from collections.abc import Mapping
from typing import Any

from .errors import RequestError
from .option_types import admits, option_annotations

NULL = "null"


def options_from_text(options: object, given: Mapping[str, str]) -> dict[str, Any]:
    """Each option of ``given`` (its name and its text) as the value the field of that name
    in ``options`` takes; a name that is no field keeps its text (``with_options`` refuses
    it, naming the options there are)."""
    annotations = option_annotations(type(options))
    return {
        name: value_from_text(annotations[name], text) if name in annotations else text
        for name, text in given.items()
    }


def value_from_text(annotation: Any, text: str) -> object:
    """``text`` as the value ``annotation`` takes (see the module's description)."""
    for candidate in _readings(annotation, text):
        if admits(annotation, candidate):
            return candidate
    return text


def split_option(argument: str) -> tuple[str, str]:
    """``NAME=VALUE`` as its name and its text."""
    name, equals, text = argument.partition("=")
    if not equals or not name.strip():
        raise RequestError("--option", repr(argument)[:100], "NAME=VALUE")
    return name.strip(), text


def _readings(annotation: Any, text: str) -> list[object]:
    readings: list[object] = []
    if text == NULL:
        readings.append(None)
    with contextlib.suppress(ValueError):  # (no date: the other readings)
        readings.append(datetime.date.fromisoformat(text))
    readings.append(text)
    try:
        decoded = json.loads(text)
    except ValueError:
        pass
    else:
        readings += [decoded, _tuples(decoded)]
    for kind in _members(annotation):
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            readings += [member for member in kind if text in (member.name, str(member.value))]
    return readings


def _tuples(value: object) -> object:
    """A JSON value with its lists made tuples (an option of a frozen dataclass holds one)."""
    if isinstance(value, list):
        return tuple(_tuples(item) for item in value)
    if isinstance(value, dict):
        return {key: _tuples(item) for key, item in value.items()}
    return value


def _members(annotation: Any) -> tuple[Any, ...]:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)
