"""The pieces a declaration spells its fences with.

- :class:`Marker`: a special token.  It is written by id and text never becomes one.
- :class:`Lit`: layout text the format writes itself (``"user\\n"``, ``"\\n\\n"``).
- :class:`Option`: text taken from the format's options (Llama 3's date), never from a clock.

A *fence* is a tuple of pieces written and read as one unit: the lexer reads a fence's whole
text (``<think>\\n``) as one marker, so the layout a marker carries never reaches a reader.

>>> fence(Marker("<think>"), "\\n")
(Marker(text='<think>'), Lit(text='\\n'))
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

from ..errors import FormatError, RequestError


@dataclass(frozen=True, slots=True)
class Marker:
    """A special token: written by id; text never becomes one."""

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text:
            raise FormatError(f"Marker({self.text!r}): an empty marker; expected its text")


@dataclass(frozen=True, slots=True)
class Lit:
    """Layout text the format itself writes."""

    text: str


@dataclass(frozen=True, slots=True)
class Option:
    """Text from the format's options: ``options.<name>``, a string, or a date written with
    ``strftime(date_format)`` (a date a template reads from a clock is an option, never the
    clock).  The exported chat template writes the template variable of the same name, as
    the caller passes it (a date as text already written), and the option's value at export
    when none is passed.

    ``name`` is a field of the options dataclass (an option callers set with
    :meth:`pawlette.Format.with_options`) or a property of its class: a derived option,
    computed from the fields whenever they change (see the guide, "Options derived from
    other options")."""

    name: str
    date_format: str | None = None


Piece: TypeAlias = Marker | Lit | Option
Fence: TypeAlias = tuple[Piece, ...]


def fence(*pieces: Piece | str) -> Fence:
    """A fence from pieces; a plain string is :class:`Lit` text."""
    made: list[Piece] = []
    for piece in pieces:
        if isinstance(piece, str):
            made.append(Lit(piece))
        elif isinstance(piece, (Marker, Lit, Option)):
            made.append(piece)
        else:
            raise FormatError(
                f"fence piece {piece!r}: a {type(piece).__name__}; "
                "expected a Marker, a Lit, an Option or a string"
            )
    return tuple(made)


def spelled(text: str, special: re.Pattern[str]) -> Fence:
    """``text`` as a fence in which each spelling ``special`` matches whole is a
    :class:`Marker` (a template that names its special tokens in instruction text: the
    tokenizer reads them as those tokens).  ``special`` has one capturing group around the
    whole spelling, so that splitting by it keeps the spellings."""
    return fence(
        *(Marker(part) if special.fullmatch(part) else part for part in special.split(text) if part)
    )


def piece_text(piece: Piece, options: Any = None, format_name: str = "") -> str:
    """A piece's text: an :class:`Option`'s from ``options`` (a date written with its
    ``date_format``)."""
    if not isinstance(piece, Option):
        return piece.text
    value: Any = getattr(options, piece.name, None)
    if piece.date_format is not None and hasattr(value, "strftime"):
        return str(value.strftime(piece.date_format))
    if not isinstance(value, str):
        expected = "a date" if piece.date_format is not None else "a string"
        raise RequestError(
            f"options.{piece.name}", f"{value!r}", f"{expected} option of {format_name}"
        )
    return value


def text_of(pieces: Fence, options: Any = None, format_name: str = "") -> str:
    """A fence's text (what the lexer reads as one marker)."""
    return "".join(piece_text(piece, options, format_name) for piece in pieces)


def markers_in(pieces: Fence) -> tuple[str, ...]:
    """The special tokens of a fence, in order."""
    return tuple(piece.text for piece in pieces if isinstance(piece, Marker))


Kind = TypeVar("Kind", Marker, Option)


def pieces_in(value: object, kind: type[Kind]) -> Iterator[Kind]:
    """Every ``kind`` piece anywhere in a declaration value: its fences, frames and concepts
    (dataclasses), tuples, lists, frozensets and mappings, in order."""
    if isinstance(value, kind):
        yield value
    elif isinstance(value, (tuple, list, frozenset)):
        for item in value:
            yield from pieces_in(item, kind)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from pieces_in(item, kind)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from pieces_in(getattr(value, field.name), kind)
