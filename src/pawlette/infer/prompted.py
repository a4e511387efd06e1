"""A generation prompt that stops short of the assistant's opener.

Some templates open a past assistant turn with ``assistant: `` but prompt the model with
``assistant:``: the model writes the rest of the opener (the space) before its text.  Read
after such a prompt, that rest is layout, not the answer's text; read after the whole
opener (a conversation), the text is as written.  :class:`PromptRest` gives the parse table
a state for each: the prompt's row leads to a copy of the assistant's first state whose
reader drops the rest where the text begins, and a completion starts there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..declare.concept import Concept
from ..declare.readers import lead_dropped

if TYPE_CHECKING:
    from ..declare.table import Table

__all__ = ["PromptRest"]

HEAD = "assistant.head"
PROMPTED = "assistant.prompted"


@dataclass(frozen=True)
class PromptRest(Concept):
    """``prompt``: the generation prompt; ``rest``: what the assistant's opener writes after
    it (whitespace).  Reading only: the frame writes both.  Put last in a layout's concepts
    (it copies the rows the others gave the assistant's first state)."""

    prompt: str
    rest: str

    def rows(self, table: Table) -> None:
        head = table.states[HEAD]
        table.state(PROMPTED, lead_dropped(head.reader, self.rest), "assistant", ends=head.ends)
        for (state, marker), step in list(table.steps.items()):
            if state == HEAD:
                table.steps[(PROMPTED, marker)] = step
        opening = table.steps.get(("outside", self.prompt))
        if opening is not None and opening[0] == HEAD:
            table.steps[("outside", self.prompt)] = (PROMPTED, opening[1])
        if table.completion_start == HEAD:
            table.completion_start = PROMPTED
