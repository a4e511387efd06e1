"""Bielik's tools block: one JSON array, its items on lines of their own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pawlette.declare import ToolsBlock
from pawlette.declare.readers import tool_items_reader

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import ReaderFactory


class LinedToolArray(ToolsBlock):
    """The tools as one JSON array whose items are separated by ``,\\n`` (the template writes
    ``[``, each tool's ``tojson`` joined by ``,\\n``, ``]``): read back as the array it is."""

    def block(self, out: Render, *, separated: bool = False) -> None:
        out.fence(self.separated_open if separated else self.open, "tools")
        items = ",\n".join(self.tool_texts(out.tools))
        out.text(f"[{items}]", "tools")
        out.fence(self.close, "tools")

    def items_reader(self, table: Table) -> ReaderFactory:
        return tool_items_reader("", "", self.wrap, text_after=False, array=True)

    def jinja_block(self, out: Template, *, separated: bool = False) -> None:
        out.fence(self.separated_open if separated else self.open)
        out.literal("[")
        out.out("{%- for tool in tools -%}")
        out.value(f"tool | {self._tojson()}")
        out.out("{%- if not loop.last -%}" + '{{- ",\\n" -}}' + "{%- endif -%}")
        out.out("{%- endfor -%}")
        out.literal("]")
        out.fence(self.close)
