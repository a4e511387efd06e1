"""Bailing's thinking line: the first system turn ends with ``detailed thinking on|off``.

The template writes it after the system text (and a newline) or after the tools block; a
system text that already holds ``detailed thinking on`` or ``off`` gets none.  Without a system
message or tools the line is the whole turn (the layout's default system text).  Reading takes
the line as layout, never as the system text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import Concept
from pawlette.emit.jinja_text import jinja_string
from pawlette.engine.readers import ScaffoldReader

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render

PHRASES = ("detailed thinking on", "detailed thinking off")


@dataclass(frozen=True)
class ThinkingLine(Concept):
    """``line``: the line the first system turn ends with (``detailed thinking on``)."""

    line: str

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"system"})

    def write_closing(self, out: Render, index: int) -> None:
        if out.role != "system" or index > 0:
            return
        text = out.message_text(index) if index == 0 else None
        if text is not None and any(phrase in text for phrase in PHRASES):
            return
        if out.tools:
            out.raw(self.line, "content")
        elif text is not None:
            out.raw("\n" + self.line, "content")
        # (no message and no tools: the line is the layout's default system text)

    def rows(self, table: Table) -> None:
        table.state("system.line", ScaffoldReader, "system", ends=True)
        for phrase in PHRASES:
            table.on("system.body", "\n" + phrase, "system.line")
            if "system.after_tools" in table.states:
                table.on("system.after_tools", phrase, "system.line")

    def jinja_closing(self, out: Template, role: str) -> None:
        if role != "system":
            return
        name = jinja_string(out.layout.name)
        line = jinja_string(self.line)
        held = " or ".join(f"{jinja_string(phrase)} in line_text" for phrase in PHRASES)
        out.out("{%- if index <= 0 -%}")
        out.out(
            f"{{%- set line_text = text_of(message, index, {name}) if message is not none "
            "else none -%}"
        )
        out.out(f"{{%- if line_text is not none and ({held}) -%}}")
        out.out(f"{{%- elif has_tools -%}}{{{{- {line} -}}}}")
        out.out(f'{{%- elif line_text is not none -%}}{{{{- "\\n" + {line} -}}}}')
        out.out("{%- endif -%}")
        out.out("{%- endif -%}")
