"""What a template writes after the assistant's stop: the rest of a past turn's end that the
model never writes, because the engine ends generation before it.

>>> from pawlette.declare import Marker, fence
>>> from pawlette.formats.apriel.after_stop import AfterStop
>>> AfterStop(fence("\\n", Marker("</s>"))).text
(Lit(text='\\n'), Marker(text='</s>'))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import Concept, Fence, Lit
from pawlette.errors import FormatError

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.layout import Layout
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render


@dataclass(frozen=True)
class AfterStop(Concept):
    """``text``, written after every assistant turn's ``end`` (before the frame's ``after``),
    where the template goes on past the marker the model stops at (Apriel 1.5 ends a turn
    ``\\n<|end|>\\n</s>``; the model stops at ``<|end|>``, its end-of-generation token).

    The assistant frame's ``end`` is then what the model writes, up to and with the stop:
    only that is trainable, in the stop set and in the turn grammars.  ``text`` is layout:
    never trainable, read between turns (after a turn's end, its leading whitespace as any
    whitespace there, the rest as one marker), and a completion that goes on past the stop
    (an engine that was not told the stop) reads the same.  It must hold something besides
    whitespace (whitespace alone is the frame's ``after``).
    """

    text: Fence = ()

    def validate(self, layout: Layout) -> None:
        if not any(not isinstance(piece, Lit) or piece.text.strip() for piece in self.text):
            raise FormatError(
                f"{layout.name}: AfterStop.text: {self.text!r}; expected a fence holding a "
                "marker or text (whitespace alone is Frame.after)"
            )
        if not layout.frames["assistant"].end:
            raise FormatError(
                f"{layout.name}: AfterStop with no assistant Frame.end; expected the end the "
                "model writes before this text"
            )

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    def write_after(self, out: Render, index: int) -> None:
        out.fence(self.text, "separator")

    def jinja_after(self, out: Template, role: str) -> None:
        out.fence(self.text)

    def rows(self, table: Table) -> None:
        # Read where the turn's end leaves the parser: between turns, where whitespace is
        # layout; the rest is one marker of the lexer there.
        rest = table.text(self.text).lstrip()
        table.on("outside", rest, "outside")
