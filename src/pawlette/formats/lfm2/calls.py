"""LFM2's calls: one Python list of calls between ``<|tool_call_start|>`` and
``<|tool_call_end|>``, ``[get_weather(city='Paris', days=3), now()]``.

:class:`Lfm2Calls` is Breeze's :class:`~pawlette.declare.PythonCalls`
(the same writer, reader, grammar and forced prefix) with two differences of LFM2's
templates:

- a turn may hold several lists one after the other (llama.cpp's LFM2 handler reads them
  so); their calls are the turn's, in order;
- ``written=False``: the template never writes a turn's calls (LFM2 and LFM2.5-Instruct read
  only ``content``), so they are dropped as a recorded loss; a model's calls are still read
  and constrained as the model writes them.

The default variant sets Breeze's ``spelling="template"``: arguments as LFM2.5-8B-A1B's
template spells them (a string raw between single quotes, an object as JSON; see the
family's docs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import PythonCalls

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render


@dataclass(frozen=True)
class Lfm2Calls(PythonCalls):
    """Calls as one Python list (see the module)."""

    written: bool = True

    def rows(self, table: Table) -> None:
        super().rows(table)
        # A second list after the first (llama.cpp's LFM2 handler reads any number of them):
        # its calls join the turn's.
        table.on("assistant.after_call", table.text(self.open), "assistant.call")

    def check(self, out: Render) -> None:
        if self.written:
            super().check(out)
        # else: Ignored(("calls",)) records them as lost.

    def write_closing(self, out: Render, index: int) -> None:
        if self.written:
            super().write_closing(out, index)

    def jinja_setup(self, out: Template) -> None:
        if self.written:
            super().jinja_setup(out)

    def jinja_closing(self, out: Template, role: str) -> None:
        if self.written:
            super().jinja_closing(out, role)
