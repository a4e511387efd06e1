"""Turns with no end marker: Nemotron Nano 2's system and user turns end with whitespace
(``\\n\\n`` and ``\\n``, the frames' ``after``), then the next turn's opener.

Their texts are written trimmed, so the whitespace before the next opener is the layout's
alone: :class:`UnendedTurns` reads those turns' text without it, holding back whitespace at
the end of what it has read until text follows (streamed in any pieces, the same text).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import Concept
from pawlette.declare.readers import Described
from pawlette.engine.machine import Parser, Reader, ReaderFactory

if TYPE_CHECKING:
    from pawlette.declare.table import Table


@dataclass(frozen=True)
class UnendedTurns(Concept):
    """The text of the ``roles``' turns, read without the whitespace at its end (see the
    module).  It must come after the concepts that read those turns (the system prompt)."""

    roles: tuple[str, ...] = ("system", "user")

    def rows(self, table: Table) -> None:
        for role in self.roles:
            name = f"{role}.body"
            spec = table.states.get(name)
            if spec is not None:
                table.reader(name, _without_trailing(spec.reader))


def _without_trailing(inner: ReaderFactory) -> ReaderFactory:
    make = functools.partial(without_trailing, inner)
    return Described("trailing whitespace dropped", make, reader=inner)


def without_trailing(inner: ReaderFactory, parser: Parser) -> Reader:
    """The reader ``inner`` makes, fed without the whitespace that ends the text."""
    return TrailingLayoutReader(parser, inner(parser))


class TrailingLayoutReader:
    """``inner`` fed all but the whitespace that ends the text (see the module)."""

    __slots__ = ("_held", "_held_offset", "_inner")

    def __init__(self, parser: Parser, inner: Reader) -> None:
        self._inner = inner
        self._held = ""
        self._held_offset = 0

    def feed(self, text: str, offset: int) -> None:
        if not text:
            return
        stripped = text.rstrip()
        if not stripped:  # whitespace only: held until text follows
            if not self._held:
                self._held_offset = offset
            self._held += text
            return
        if self._held:
            self._inner.feed(self._held, self._held_offset)
            self._held = ""
        self._inner.feed(stripped, offset)
        if len(stripped) < len(text):
            self._held = text[len(stripped) :]
            self._held_offset = offset + len(stripped)

    def close(self, marker: str | None, offset: int) -> None:
        self._inner.close(marker, offset)
