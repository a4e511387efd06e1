"""Laguna's own concept: the newline after a reasoning block's open tag, which Laguna XS's
generation prompt stops short of.

- :class:`PromptedReasoning`: Laguna XS opens a block with ``<think>\\n`` but its prompt
  (thinking on) ends with ``<think>``: the model writes the newline first.  Reading drops it
  where the reasoning begins (the written reasoning is ``strip()``ped: it never begins so).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import Concept
from pawlette.declare.readers import lead_dropped

if TYPE_CHECKING:
    from pawlette.declare.table import Table

REASONING = "assistant.reasoning"


@dataclass(frozen=True)
class PromptedReasoning(Concept):
    """``rest``: what the block's open fence writes after the prompt's end (reading only).
    Put it after the :class:`~pawlette.declare.Reasoning` concept."""

    rest: str

    def rows(self, table: Table) -> None:
        if REASONING in table.states:
            table.reader(REASONING, lead_dropped(table.states[REASONING].reader, self.rest))
