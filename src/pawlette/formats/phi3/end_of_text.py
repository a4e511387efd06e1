"""Phi-3.5's end-of-text token that ends a training render, as a concept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...declare import Concept, Marker
from ...emit.jinja_text import jinja_string

if TYPE_CHECKING:
    from ...declare.jinja import Template
    from ...declare.table import Table
    from ...declare.write import Render


@dataclass(frozen=True)
class EndOfText(Concept):
    """``marker`` ends a conversation rendered without a generation prompt (the template
    writes ``eos_token`` there); never trainable (it follows the last turn's ``after``, and
    the assistant's own end is its frame's).  Parsing a conversation reads it as the end,
    outside every turn."""

    marker: Marker

    def write_finish(self, out: Render) -> None:
        if not out.prompt:
            out.at(None, len(out.messages))
            out.fence((self.marker,), "close")

    def jinja_finish(self, out: Template) -> None:
        out.out("{%- if not add_generation_prompt -%}")
        out.out(f"{{{{- {jinja_string(self.marker.text)} -}}}}")
        out.out("{%- endif -%}")

    def rows(self, table: Table) -> None:
        table.on("outside", self.marker.text, "outside")
