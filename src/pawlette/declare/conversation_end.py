"""A marker that ends a conversation rendered without a generation prompt, as a concept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from .concept import Concept
from .pieces import Marker

if TYPE_CHECKING:
    from .concept import Render, Table, Template


@dataclass(frozen=True)
class ConversationEnd(Concept):
    """``marker``, one :class:`Marker` (not a fence: ``ConversationEnd(Marker("<|endoftext|>"))``),
    ends a conversation rendered without a generation prompt (templates write
    ``eos_token`` there: Phi-3.5, Phi-4-mini); never trainable (it follows the last turn's
    ``after``, and the assistant's own end is its frame's).  Parsing a conversation reads it
    as the end, outside every turn."""

    marker: Marker

    job: ClassVar[str | None] = "conversation end"

    def write_finish(self, out: Render) -> None:
        if not out.prompt:
            out.at(None, len(out.messages))
            out.fence((self.marker,), "close")

    def jinja_finish(self, out: Template) -> None:
        out.fence_if("not add_generation_prompt", (self.marker,))

    def rows(self, table: Table) -> None:
        table.on("outside", self.marker.text, "outside")
