"""Devstral's and Ministral 3's tools block, right after the first system turn.

Their templates write ``[AVAILABLE_TOOLS][...][/AVAILABLE_TOOLS]`` straight after the system
turn (the conversation's first, its own or the default one) in every conversation with tools,
before any other message: a conversation of a system message alone ends with the block,
generation prompt or not (the prompt writes nothing).  The answer has no opener, so it may
begin right after the block as it may right after the system turn: reading a conversation,
the block's close leads where the system turn's end does, into a turn of the assistant that
is there once something of it is read.  A text that ends after the block so ends where the
model answers (the generation prompt, as after ``[/INST]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import ToolsBlock
from pawlette.declare.pieces import markers_in
from pawlette.declare.table import begin
from pawlette.declare.tools import Place
from pawlette.errors import FormatError

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.layout import Layout
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render


@dataclass(frozen=True)
class ToolsAfterSystemTurn(ToolsBlock):
    """:class:`~pawlette.declare.ToolsBlock` with ``place="after_system"`` (see the module):
    written after the first system turn, not before the message that follows it (there may
    be none), and read as the end of that turn."""

    place: Place = "after_system"

    def validate(self, layout: Layout) -> None:
        super().validate(layout)
        if self.place != "after_system" or not self.close or "system" not in layout.frames:
            raise FormatError(
                f"{layout.name}: ToolsAfterSystemTurn(place={self.place!r}, close="
                f"{self.close!r}); expected place 'after_system', a close fence and a system "
                "frame (the block ends the system turn's reading)"
            )

    def hook_roles(self, hook: str) -> frozenset[str] | None:
        return frozenset({"system"}) if hook.endswith("_after") else frozenset()

    def write_after(self, out: Render, index: int) -> None:
        if index <= 0 and out.tools:  # (the first system turn: its message's or the default)
            out.at(None, -1)  # (the block is in no message's turn)
            self.block(out)
            out.at(out.role, index)

    def jinja_after(self, out: Template, role: str) -> None:
        if role == "system":
            with out.when("has_tools and index <= 0"):
                self.jinja_block(out)

    def rows(self, table: Table) -> None:
        inner = markers_in((*self.item_open, *self.item_close, *self.separator))
        table.state("tools.block", self.items_reader(table), inner=inner)
        table.on("outside", table.text(self.open), "tools.block")
        # (the assistant's turn, there once something of it is read: as after the system's end)
        assistant = begin("assistant", pending=True)
        table.on("tools.block", table.text(self.close), table.first_state["assistant"], assistant)
