"""Call ids of the shape a calls concept's ``id_pattern`` says its format writes.

A format whose template refuses other ids (Mistral's nine letters and digits) must also give
a call the model wrote without an id one of that shape, and its forced grammar must let the
model write only such ids: else the client's next turn, which sends the call back under the
id it was served, is refused.  So the pattern is read here as the small language such ids are
written in: a sequence of pieces, each a character (escaped or not) or a bracketed set of
characters and ranges, followed by an optional count ``{n}`` or ``{m,n}``.  A pattern outside
it is refused when the format is declared (:func:`id_pieces` says why).

>>> pieces = id_pieces("[A-Za-z0-9]{9}")
>>> len(mint_id(pieces)), len(pieces[0].chars)
(9, 62)
"""

from __future__ import annotations

import random
import re
import secrets
import string
from dataclasses import dataclass, field
from typing import overload

from ..emit.grammar_ast import CharClass, Node, Repeat, seq
from ..errors import FormatError

_PIECE = re.compile(
    r"(\[(?:[^\]\\]|\\.)+\]|\\[A-Za-z0-9]|\\.|[^\\\[\]{}()|*+?.^$])(\{\d+(?:,\d+)?\})?"
)
_SHORTHANDS = {"\\d": string.digits}
ID_LANGUAGE = (
    "characters and bracketed sets of them, each with an optional count {n} or {m,n} (the "
    "ids the format mints for calls written without one are of this shape)"
)
"""What an ``id_pattern`` of a calls concept may hold, as an error says it."""


@dataclass(frozen=True)
class IdPiece:
    """One of ``chars``, written between ``minimum`` and ``maximum`` times."""

    chars: str
    minimum: int
    maximum: int


def _class_chars(body: str) -> str | None:
    """The characters of a bracketed set's ``body`` (ranges spelt out); None: a negated set
    or a shorthand other than ``\\d`` (not minted)."""
    if body.startswith("^"):
        return None
    chars: list[str] = []
    index = 0
    while index < len(body):
        character = body[index]
        if character == "\\":
            escaped = body[index : index + 2]
            if escaped in _SHORTHANDS:
                chars.extend(_SHORTHANDS[escaped])
            elif escaped[1:].isalnum():
                return None
            else:
                chars.append(escaped[1:])
            index += 2
            continue
        if index + 2 < len(body) and body[index + 1] == "-":
            low, high = ord(character), ord(body[index + 2])
            if high < low:
                return None
            chars.extend(chr(code) for code in range(low, high + 1))
            index += 3
            continue
        chars.append(character)
        index += 1
    return "".join(dict.fromkeys(chars))


def id_pieces(pattern: str) -> tuple[IdPiece, ...] | str:
    """The pieces of ``pattern``, or what in it is outside the language of ids (see the
    module docstring)."""
    pieces: list[IdPiece] = []
    at = 0
    while at < len(pattern):
        match = _PIECE.match(pattern, at)
        if match is None:
            return f"{pattern[at:]!r} at {at}: not a character, a set of characters or a count"
        atom, count = match.group(1), match.group(2)
        if atom.startswith("["):
            chars = _class_chars(atom[1:-1])
        elif atom in _SHORTHANDS:
            chars = _SHORTHANDS[atom]
        elif atom.startswith("\\"):
            chars = None if atom[1:].isalnum() else atom[1:]
        else:
            chars = atom
        if not chars:
            return f"{atom!r} at {at}: not a plain set of characters"
        low = high = 1
        if count is not None:
            bounds = count[1:-1].split(",")
            low, high = int(bounds[0]), int(bounds[-1])
            if high < low:
                return f"{count!r} at {match.start(2)}: a count whose bounds are reversed"
        pieces.append(IdPiece(chars, low, high))
        at = match.end()
    if not pieces:
        return "an empty pattern"
    return tuple(pieces)


@overload
def id_shape(owner: str, pattern: str) -> tuple[IdPiece, ...]: ...
@overload
def id_shape(owner: str, pattern: str | None) -> tuple[IdPiece, ...] | None: ...
def id_shape(owner: str, pattern: str | None) -> tuple[IdPiece, ...] | None:
    """The pieces of ``owner``'s ``id_pattern`` (None: any id), which the parser mints ids of;
    a pattern outside the language of ids is refused, since the format could not give an id
    its render takes back (a layout refuses it when declared, naming itself; this refuses it
    for a concept used outside a layout)."""
    if pattern is None:
        return None
    pieces = id_pieces(pattern)
    if isinstance(pieces, str):
        raise FormatError(f"{owner}.id_pattern: {pattern!r}, {pieces}; expected {ID_LANGUAGE}")
    return pieces


def mint_id(pieces: tuple[IdPiece, ...], seed: str | None = None) -> str:
    """A random id of these pieces, each at its longest: drawn from the system's generator,
    or from ``seed`` (the same seed, the same id: a conversation read twice gives the same
    ids)."""
    choice = secrets.choice if seed is None else random.Random(seed).choice
    return "".join("".join(choice(piece.chars) for _ in range(piece.maximum)) for piece in pieces)


@dataclass
class ReplacedCallIds:
    """The call ids written in the text read that were served under other ids (of a shape the
    format's render refuses), by the id written: a later result that names one answers the
    call under its new id (a parser context)."""

    ids: dict[str, str] = field(default_factory=dict)


def id_node(pieces: tuple[IdPiece, ...]) -> Node:
    """The grammar of an id of these pieces."""
    return seq(*(_piece_node(piece) for piece in pieces))


def _piece_node(piece: IdPiece) -> Node:
    one = CharClass(piece.chars)
    if (piece.minimum, piece.maximum) == (1, 1):
        return one
    return Repeat(one, piece.minimum, piece.maximum)
