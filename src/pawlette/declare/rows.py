"""Rows: runs of a layout's own segments (markers and layout text), built once, written at once.

A concept writer writes several fences in a row around the caller's text (a turn's header
then a decision token; the calls' close, the turn's end, the newline after it).  Those
segments depend on nothing but the fences and the message context (role and index), so the
same tuples come back in every render: a :class:`Row` holds the pieces, and :func:`write`
looks its segments up by (row, role, index), builds them the first time, and hands them to
:meth:`~pawlette.engine.writer.Writer.extend` in one step, where writing each piece costs a
call (and each fence a cache lookup) per render.

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
Row = tuple[Piece, ...]

MAX_INDEX = 256
"""Segments of messages up to this index are kept; later ones are built anew (a bound)."""
MAX_ROWS = 1 << 16
"""Kept rows at most (rows come from layouts, so a process has few; this only bounds them)."""
MAX_LAYOUTS = 64
"""Layouts whose derived values :func:`per_layout` keeps at once."""
T = TypeVar("T")

_new_tuple = tuple.__new__  # Segment's named-tuple __new__ is Python code: skip it, as writer.py
# (id of the row, role, index) -> (the row, its segments): keyed by identity, as hashing a
# row's pieces on every write would cost what the row saves; the row is kept with its
# segments and compared, so an id reused by another row is never mistaken for it.
_kept: dict[tuple[int, Role | None, int], tuple[Row, tuple[Segment, ...]]] = {}


def pieces(layout: Layout, fence_: Fence, kind: str, trainable: bool = False) -> Row:
    """A fence as a row (its :class:`~.layout.Option` pieces read from the layout's options)."""
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


def write(writer: Writer, row: Row) -> None:
    """Write ``row`` in the writer's message context."""
    role, index = writer.role, writer.message_index
    found = _kept.get((id(row), role, index))
    if found is not None and found[0] is row:
        writer.extend(found[1])
        return
    segments = tuple(
        _new_tuple(Segment, (text, special, role, index, kind, trainable))
        for special, text, kind, trainable in row
        if special or text  # raw() writes no empty text; marker() writes any
    )
    if index < MAX_INDEX:
        if len(_kept) >= MAX_ROWS:  # rows of layouts gone (made per request): start again
            _kept.clear()
        _kept[(id(row), role, index)] = (row, segments)
    writer.extend(segments)


def per_layout(build: Callable[[Layout], T]) -> Callable[[Layout], T]:
    """``build(layout)``, computed once per layout: what a concept's writer derives from the
    layout alone (its rows, its checks) is not derived again in every render."""
    memo: dict[int, tuple[Layout, T]] = {}

    def get(layout: Layout) -> T:
        found = memo.get(id(layout))
        if found is not None and found[0] is layout:
            return found[1]
        value = build(layout)
        if len(memo) >= MAX_LAYOUTS:  # layouts made per request (with_options): a bound
            memo.clear()
        memo[id(layout)] = (layout, value)  # the layout kept: its id is no other's
        return value

    return get
