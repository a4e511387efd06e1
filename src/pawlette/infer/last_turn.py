"""Text a template writes at the start of a conversation's last assistant turn only.

Nemotron Nano v2 writes its final assistant message as ``<SPECIAL_11>Assistant\\n<think>\\n``
+ answer (a block it opens and never closes: what its generation prompt writes, kept when a
conversation ends with the answer), and every earlier one without it.  :class:`LastTurnLead`
writes that text there, as the template does; it is layout, so reading takes it as the
answer's text only where it stands (a conversation read whole), and a completion, read after
the prompt that wrote it, never holds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..declare.concept import Concept
from ..declare.pieces import Fence

if TYPE_CHECKING:
    from ..declare.jinja import Template
    from ..declare.write import Render

__all__ = ["LastTurnLead"]


@dataclass(frozen=True)
class LastTurnLead(Concept):
    """``lead``: written after the opener of the assistant turn that ends the conversation
    (not a generation prompt's turn)."""

    lead: Fence

    def write_opening(self, out: Render, index: int) -> None:
        if out.role == "assistant" and index == len(out.messages) - 1:
            out.fence(self.lead, "content")

    def jinja_opening(self, out: Template, role: str) -> None:
        if role != "assistant":
            return
        out.out("{%- if index == (messages | length) - 1 -%}")
        out.fence(self.lead)
        out.out("{%- endif -%}")
