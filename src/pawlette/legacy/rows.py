"""Rows of a layout's fences: :class:`Row` and :func:`once_per` live in
:mod:`pawlette.engine.rows`; :func:`pieces` makes a row's pieces from a fence of this layer."""

from __future__ import annotations

from ..engine.rows import MAX_INDEX, MAX_VALUES, Piece, Pieces, Row, once_per
from .layout import Fence, Layout, Marker, Option

__all__ = ["MAX_INDEX", "MAX_VALUES", "Piece", "Pieces", "Row", "once_per", "pieces"]


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
