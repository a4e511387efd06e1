"""The date options of a format (Llama 3.2's ``date``, Granite's ``date``, Mistral's
``today``...) checked where they are given: a date a template reads from its clock is a
:class:`datetime.date`, and a string there would be written as it is (``Today Date: x``)
rather than formatted as the template formats a date."""

from __future__ import annotations

import datetime
import types
import typing
from collections.abc import Mapping
from typing import Any

from .errors import RequestError


def _allowed_types(annotation: object) -> tuple[type, ...]:
    """The classes an option's annotation admits (``date | None``: date and NoneType)."""
    arguments = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return tuple(item for item in arguments if isinstance(item, type))
    return (annotation,) if isinstance(annotation, type) else ()


_RESOLVED: dict[type, dict[str, Any]] = {}
"""Each options class's annotations, resolved once (that costs ~0.4 ms; ``with_options``
runs per variant, per candidate in a detection)."""


def _annotations(options_class: type) -> dict[str, Any]:
    """The options class's field annotations, resolved (a class whose annotations name
    something its module no longer holds gives none: its date options go unchecked
    here, as they went before)."""
    resolved = _RESOLVED.get(options_class)
    if resolved is None:
        try:  # each class of its bases resolved in its own module (an inferred format's: two)
            resolved = typing.get_type_hints(options_class)
        except (NameError, TypeError, AttributeError):
            resolved = {}
        _RESOLVED[options_class] = resolved
    return resolved


def check_date_options(format_name: str, options: object, changes: Mapping[str, Any]) -> None:
    """A :class:`~pawlette.errors.RequestError` for a change that gives a date option
    (annotated ``datetime.date``) something no annotation of it admits."""
    annotations = _annotations(type(options))
    for name in sorted(changes):
        allowed = _allowed_types(annotations.get(name))
        if datetime.date not in allowed or isinstance(changes[name], allowed):
            continue
        value = changes[name]
        spelled = " or ".join(
            "None"
            if kind is type(None)
            else f"a {kind.__module__}.{kind.__qualname__}"
            if kind is datetime.date
            else f"a {kind.__qualname__}"
            for kind in allowed
        )
        raise RequestError(
            f"options.{name}",
            f"{value!r}"[:100] + f" ({type(value).__name__})",
            f"{spelled} (the date {format_name} writes, such as datetime.date(2024, 7, 26))",
        )
