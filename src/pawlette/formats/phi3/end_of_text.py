"""Phi-3.5's two quirks as concepts: the end-of-text token that ends a training render, and
tool messages that the template does not write."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

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


@dataclass(frozen=True)
class Unwritten(Concept):
    """Tool messages are not written, as the template writes no ``tool`` role (a recorded
    loss each, their names included)."""

    claims: ClassVar[frozenset[str]] = frozenset({"tool"})

    def turn_roles(self) -> frozenset[str]:
        return frozenset()

    def check(self, out: Render) -> None:
        out.handles("tool_name")
        for index, message in enumerate(out.messages):
            if message.role == "tool":
                out.lose(f"messages[{index}]", "a tool message: not written")

    def write_message(self, out: Render, index: int) -> None:
        del out, index  # nothing is written

    def jinja_message(self, out: Template, role: str) -> None:
        del out, role  # nothing is written
