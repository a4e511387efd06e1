"""RWKV World's turns end with a blank line, plain text that the text of a turn may hold
too (a paragraph break): reading ends a turn at a blank line only where another turn
opens after it, or where the input ends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import Concept
from pawlette.declare.readers import Described
from pawlette.declare.table import end

if TYPE_CHECKING:
    from pawlette.declare.table import Table
    from pawlette.engine.machine import Reader, ReaderFactory


class _TailDropped:
    """A reader that drops ``tail`` where its state's text ends with it at the end of the
    input or at one of ``ends`` (held until it is known whether more text follows) and
    passes the rest on."""

    __slots__ = ("_ends", "_held", "_inner", "_tail")

    def __init__(self, inner: Reader, tail: str, ends: frozenset[str]) -> None:
        self._inner = inner
        self._tail = tail
        self._ends = ends
        self._held = ""

    def feed(self, text: str, offset: int) -> None:
        held = self._held + text
        start = offset - len(self._held)
        # Keep back the longest end of the text that may still become the tail.
        keep = next(
            (
                size
                for size in range(min(len(self._tail), len(held)), 0, -1)
                if self._tail.startswith(held[-size:])
            ),
            0,
        )
        if len(held) > keep:
            self._inner.feed(held[: len(held) - keep], start)
        self._held = held[len(held) - keep :]

    def close(self, marker: str | None, offset: int) -> None:
        dropped = self._held == self._tail and (marker is None or marker in self._ends)
        if self._held and not dropped:
            self._inner.feed(self._held, offset - len(self._held))
        self._held = ""
        self._inner.close(marker, offset)


def tail_dropped(reader: ReaderFactory, tail: str, ends: frozenset[str]) -> ReaderFactory:
    """``reader`` for a state whose text may end with ``tail`` at the end of the input or
    at one of ``ends`` (its turn's other ends), layout (its turn's end), dropped there."""
    make: ReaderFactory = lambda parser: _TailDropped(reader(parser), tail, ends)  # noqa: E731
    return Described("tail dropped", make, ends=ends, reader=reader, tail=tail)


@dataclass(frozen=True)
class BlankLineEnds(Concept):
    """A turn ends at ``end`` (the frames' end, plain text) only when another turn's opener
    follows it, or at the end of the input (where it is dropped); elsewhere it is the text's
    own.  An answer holding ``end`` followed by an opener (``\\n\\nUser: ``) cannot be read
    back whole.  A turn grammar's text holds no ``end``: an engine stops the turn there.
    Put after every concept that adds openers (it copies the rows that leave ``outside``)."""

    end: str = "\n\n"

    def rows(self, table: Table) -> None:
        opening = [
            (marker, target, actions)
            for (state, marker), (target, actions) in table.steps.items()
            if state == "outside" and target != "outside"
        ]
        for name, spec in list(table.states.items()):
            if not spec.ends or spec.role is None or self.end not in table.ends(spec.role):
                continue
            others = frozenset(table.ends(spec.role)) - {self.end}
            table.reader(name, tail_dropped(spec.reader, self.end, others), ends=False)
            for marker, target, actions in opening:
                table.on(name, self.end + marker, target, end, *actions)
            for spelling in sorted(others):  # the role's other ends, as written
                table.on(name, spelling, "outside", end)
        # Between turns it is layout.  The row makes it a marker of the lexer, read as text
        # where it has no row (it is plain text: a soft marker): so a turn grammar's free
        # text holds none, as an engine stops there (it is the model's end of turn).
        table.on("outside", self.end, "outside")
