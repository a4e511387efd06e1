"""Rows: runs of a layout's own segments (markers and layout text), built once, written at once.

A concept writer writes several fences in a row around the caller's text (a turn's header
then a decision token; the calls' close, the turn's end, the newline after it).  Those
segments depend on nothing but the fences and the message context (role and index), so the
same tuples come back in every render: a :class:`Row` holds the pieces and keeps their
segments per message index; :meth:`Row.write` builds them the first time and hands them to
:meth:`~pawlette.engine.writer.Writer.extend` in one step, where writing each piece costs a
call (and each fence a cache lookup) per render.  A concept makes its rows once per layout
(:func:`once_per`).

A piece is ``(is a marker, text, kind, trainable)``; a row's segments are exactly what
:meth:`~pawlette.engine.writer.Writer.marker` (for a marker) and
:meth:`~pawlette.engine.writer.Writer.raw` (for text: none when it is empty) would write
piece by piece.  Rows hold layout text only, never caller text (which is escaped).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ..engine.writer import Writer
from ..types import Role, Segment
from .layout import Fence, Layout, Marker, Option

Piece = tuple[bool, str, str, bool]
"""``(is a marker, text, kind, trainable)``."""
Pieces = tuple[Piece, ...]

MAX_INDEX = 256
"""Segments of messages up to this index are kept; later ones are built anew (a bound)."""
MAX_VALUES = 64
"""Values (layouts, blocks) whose derived values one :func:`once_per` keeps at once."""
K = TypeVar("K")
T = TypeVar("T")

_new_tuple = tuple.__new__  # Segment's named-tuple __new__ is Python code: skip it, as writer.py


class Row:
    """Pieces written together, with their segments kept per message index (and role)."""

    __slots__ = ("_built", "pieces")

    def __init__(self, pieces: Pieces) -> None:
        self.pieces = pieces
        self._built: dict[int, tuple[Role | None, tuple[Segment, ...]]] = {}

    def write(self, writer: Writer) -> None:
        """Write the row in the writer's message context."""
        index = writer.message_index
        found = self._built.get(index)
        if found is not None and found[0] == writer.role:
            writer.extend(found[1])
            return
        role = writer.role
        segments = tuple(
            _new_tuple(Segment, (text, special, role, index, kind, trainable))
            for special, text, kind, trainable in self.pieces
            if special or text  # raw() writes no empty text; marker() writes any
        )
        if index < MAX_INDEX:
            self._built[index] = (role, segments)
        writer.extend(segments)


def pieces(layout: Layout, fence_: Fence, kind: str, trainable: bool = False) -> Pieces:
    """A fence's pieces (its :class:`~.layout.Option` pieces read from the layout's options)."""
    from .write import option_text

    return tuple(
        (
            isinstance(piece, Marker),
            option_text(layout, piece) if isinstance(piece, Option) else piece.text,
            kind,
            trainable,
        )
        for piece in fence_
    )


def once_per(build: Callable[[K], T]) -> Callable[[K], T]:
    """``build(value)``, computed once per value (a layout, a block of one): what a concept's
    writer derives from its declaration alone (rows, checks) is not derived in every render.
    Values are told apart by identity (they are frozen and live as long as their layout)."""
    memo: dict[int, tuple[K, T]] = {}

    def get(value: K) -> T:
        found = memo.get(id(value))
        if found is not None and found[0] is value:
            return found[1]
        derived = build(value)
        if len(memo) >= MAX_VALUES:  # layouts made per request (with_options): a bound
            memo.clear()
        memo[id(value)] = (value, derived)  # the value kept: its id is no other's
        return derived

    return get
