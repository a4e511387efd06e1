"""Tools written as Functionary v3.2 writes them, as a plain tools block inference places.

Each tool is a TypeScript type (:func:`pawlette.formats.functionary_v3_2.typescript.
function_type`: ``// DESCRIPTION``, ``type NAME = (_: {`` + its parameters + ``}) => any;``
and a blank line), between the item fences.  Functionary's own concept writes the whole
``functions`` namespace in a system turn of its own; a template that writes these types where
a tools block goes (the namespace's head and foot around them, written without tools too)
is this block.  The types are not read back into JSON schemas: reading records that loss.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..declare import ToolsBlock
from ..engine.readers import WholeTextReader
from ..formats.functionary_v3_2 import typescript
from ..types import Tool

if TYPE_CHECKING:
    from ..declare.jinja import Template
    from ..declare.table import Table
    from ..declare.write import Render
    from ..engine.machine import ReaderFactory

__all__ = ["NamespaceTypes"]


@dataclass(frozen=True)
class NamespaceTypes(ToolsBlock):
    """A :class:`~pawlette.declare.ToolsBlock` whose items are Functionary v3.2's
    TypeScript types of the tools."""

    def check(self, out: Render) -> None:
        super().check(out)
        for number, tool in enumerate(out.tools):
            typescript.check(tool.definition, f"tools[{number}].function")

    def tool_texts(self, tools: tuple[Tool, ...]) -> tuple[str, ...]:
        return tuple(typescript.function_type(dict(tool.definition)) for tool in tools)

    def items_reader(self, table: Table) -> ReaderFactory:
        return _TypesReader

    def jinja_setup(self, out: Template) -> None:
        super().jinja_setup(out)
        out.macro("fv32", typescript.JINJA_MACROS)

    def jinja_item(self, out: Template) -> None:
        # (each tool's type: the namespace of that one tool, less its head and foot)
        head, foot = len(typescript.HEADER), len(typescript.FOOTER)
        out.out(f"{{{{- fv32_namespace([tool])[{head}:-{foot}] -}}}}")


class _TypesReader(WholeTextReader):
    """The block's types: not read back into tools (a TypeScript type is not the JSON
    schema it was written from)."""

    def close(self, marker: str | None, offset: int) -> None:
        if self._text().strip():
            self._parser.lose_tools("TypeScript types")
