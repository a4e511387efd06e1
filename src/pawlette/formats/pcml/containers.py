"""Containers: every turn a container, with text between two containers and a close after the
model's end.

PCML writes ``between`` (``\\n\\n``) before every turn but the first, the generation prompt
included, so nothing follows the last container; an assistant turn is ``[AST]...<end>[/AST]``:
the model writes ``<end>`` (its frame's end, trainable, the stop), the system writes the
container's ``close`` (``[/AST]``) after it.  Parsing also takes the close without the end
(``[AST]Hi[/AST]``), and reads the close after the end as layout.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pawlette.declare import Concept, Fence, fence
from pawlette.declare.table import end

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render


@dataclass(frozen=True)
class Containers(Concept):
    """Fields:

    - ``between``: layout text written before every turn but the first (and before the
      generation prompt when something precedes it).
    - ``close``: per role, the fence the format writes after the turn's end (never
      trainable); a turn of that role also ends at it when its end is missing.
    """

    between: Fence = field(default_factory=lambda: fence("\n\n"))
    close: Mapping[str, Fence] = field(default_factory=dict)

    # ------------------------------------------------------------------ the writer

    def hook_is_local(self, hook: str, role: str) -> bool:
        # (a message's turn: ``between`` unless it is the first, the close of its role)
        return hook in ("write_before", "write_after")

    def prompt_is_local(self) -> bool:
        return type(self).write_before is Containers.write_before  # (``between``, or none)

    def write_before(self, out: Render, index: int) -> None:
        # The first message's turn follows nothing, or the turn the format writes with no
        # message (which wrote the text between itself and the next turn).
        if out.previous is not None and index != 0:
            out.fence(self.between, "separator")

    def write_after(self, out: Render, index: int) -> None:
        role = out.role
        if role is not None and role in self.close:
            out.fence(self.close[role], "close")
        if index == -1 and (out.messages or out.prompt):
            # A turn the format writes with no message (the tools' system turn, before the
            # first message): the text between it and the next belongs to it.
            out.fence(self.between, "separator")

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        for role, pieces in self.close.items():
            text = table.text(pieces)
            for state in table.states_of(role):
                table.on(state, text, "outside", end)
            table.on("outside", text, "outside")  # after the end the model wrote

    # ------------------------------------------------------------------ the Jinja template

    def jinja_before(self, out: Template, role: str) -> None:
        out.fence_if("ns.previous is not none", self.between)

    def jinja_after(self, out: Template, role: str) -> None:
        if role in self.close:
            out.fence(self.close[role])
