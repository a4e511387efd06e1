"""How Solar Open's assistant turns end: as the model ends them, and as its template writes
them.

The model ends an answer with ``<|flush|>`` and a turn of calls with ``<|calls|>``, the
tokens its engines stop on.  The template writes ``<|calls|>`` after calls too, but ends every
answer it writes with ``<|end|>``, which the model writes only to close its reasoning (and
goes on).  So a rendered answer ends with ``<|end|>``, as the template writes it, and that
``<|end|>`` is no part of what the model learns to write: it is not trainable.

A concept of :mod:`pawlette.declare` used only by :mod:`pawlette.formats.solar`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import CallTurnEnd, Fence
from pawlette.errors import FormatError

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.layout import Layout
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render

_CALLS = "message.tool_calls is defined and message.tool_calls"


@dataclass(frozen=True)
class TurnEnds(CallTurnEnd):
    """:class:`pawlette.declare.CallTurnEnd` (``end``: what ends a turn with calls), and
    ``written_end``: what ends an answer where the template writes one, in place of the
    assistant frame's ``end`` (what the model writes to end an answer: the stop).

    ``written_end`` is written after the answer, not trainable (the model never ends an
    answer so), and read as the end of any assistant turn: a past answer's, and a
    completion's where a model writes it.  The frame's ``end`` is never written, only read,
    in the stop set and in the turn grammars."""

    written_end: Fence = ()

    def validate(self, layout: Layout) -> None:
        super().validate(layout)
        frame = layout.frames["assistant"]
        if not self.written_end or self.written_end in (frame.end, *frame.also_end):
            raise FormatError(
                f"{layout.name}: TurnEnds.written_end: {self.written_end!r}; expected the "
                "fence the template ends an answer with, other than the assistant frame's "
                "end and also_end fences (the ends the model writes)"
            )

    def hook_is_local(self, hook: str, role: str) -> bool:
        # (both act on the message's own calls alone)
        return hook in ("turn_end", "write_after")

    def turn_end(self, out: Render, index: int) -> Fence | None:
        if 0 <= index < len(out.messages) and not out.messages[index].tool_calls:
            return ()  # written after the turn's trainable part (write_after)
        return super().turn_end(out, index)

    def write_after(self, out: Render, index: int) -> None:
        if 0 <= index < len(out.messages) and not out.messages[index].tool_calls:
            out.fence(self.written_end, "close")

    def jinja_end(self, out: Template, role: str) -> bool:
        out.fence_if(_CALLS, self.end)
        return True

    def jinja_after(self, out: Template, role: str) -> None:
        out.fence_if(f"not ({_CALLS})", self.written_end)

    def rows(self, table: Table) -> None:
        from pawlette.declare.table import end

        written = table.text(self.written_end)
        for state in table.states_of("assistant"):
            table.on(state, written, "outside", end)


__all__ = ["TurnEnds"]
