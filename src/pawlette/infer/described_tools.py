"""Tools written as Functionary v3.1 writes them, as a plain tools block inference places.

Each tool is ``Use the function 'NAME' to 'DESCRIPTION'``, a newline and its ``function``
object's JSON (:meth:`pawlette.formats.functionary.GeneratedSystemTurn.item`: HTML-escaped
as Hugging Face's renderer escapes the template's plain strings, or not), between the item
fences.  Functionary's own concept writes the block in a system turn of its own; a template
that writes these items where a tools block goes is this block.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar

from ..declare import ToolsBlock
from ..declare.pieces import text_of
from ..declare.readers import DeclaredTools, Described
from ..engine.readers import WholeTextReader
from ..formats.functionary import GeneratedSystemTurn, markup_unescaped, tool_items
from ..types import Tool, ToolsDeclared

if TYPE_CHECKING:
    from ..declare.jinja import Template
    from ..declare.table import Table
    from ..declare.write import Render
    from ..engine.machine import Parser, ReaderFactory

__all__ = ["DescribedTools"]

_ESCAPE = (
    '| replace("&", "&amp;") | replace("<", "&lt;") | replace(">", "&gt;")'
    ' | replace(\'"\', "&#34;") | replace("\'", "&#39;")'
)
"""MarkupSafe's five replacements, in Jinja (the exported template runs without markup)."""

_JOINED = "\n\n"
"""What follows each item in Functionary's own block (what :func:`tool_items` reads)."""


@dataclass(frozen=True)
class DescribedTools(ToolsBlock):
    """A :class:`~pawlette.declare.ToolsBlock` whose items are Functionary v3.1's
    ``Use the function`` line and JSON; ``escaped``: HTML-escaped."""

    escaped: bool = True

    @cached_property
    def _writer(self) -> GeneratedSystemTurn:
        return GeneratedSystemTurn(open=(), end=(), escaped=self.escaped)

    def check(self, out: Render) -> None:
        super().check(out)
        for number, tool in enumerate(out.tools):
            if tool.description is None:
                out.lose(
                    f"tools[{number}].function.description",
                    "none given: written as '' (the template fails on a tool without one)",
                )

    def tool_texts(self, tools: tuple[Tool, ...]) -> tuple[str, ...]:
        return self._writer.items(tools)

    def items_reader(self, table: Table) -> ReaderFactory:
        item_open, item_close = text_of(self.item_open), text_of(self.item_close)
        escaped = self.escaped

        def make(parser: Parser) -> _DescribedReader:
            return _DescribedReader(parser, item_open, item_close, escaped)

        return Described("tools, each a 'Use the function' line and its JSON", make)

    def jinja_item(self, out: Template) -> None:
        escape = _ESCAPE if self.escaped else ""
        out.literal("Use the function '")
        out.out(f"{{{{- tool.function.name {escape} -}}}}")
        out.literal("' to '")
        out.out(f'{{{{- (tool.function.description or "") {escape} -}}}}')
        out.literal("'\n")
        out.out(f"{{{{- tool.function | tojson {escape} -}}}}")


class _DescribedReader(WholeTextReader):
    """The block's items, read back into the tools they declare."""

    __slots__ = ("_escaped", "_item_close", "_item_open")
    expected: ClassVar[str] = "the tools as the template writes them"

    def __init__(self, parser: Parser, item_open: str, item_close: str, escaped: bool) -> None:
        super().__init__(parser)
        self._item_open, self._item_close, self._escaped = item_open, item_close, escaped

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        opened, closed = self._item_open, self._item_close
        # Each item as Functionary's own block writes it, followed by a blank line.
        items = text
        if text.startswith(opened) and text.endswith(closed) and text:
            inner = text[len(opened) : len(text) - len(closed)]
            items = inner.replace(closed + opened, _JOINED) + _JOINED
        if self._escaped:
            items = markup_unescaped(items)
        tools, position = tool_items(items)
        if position != len(items) or not tools:
            self._parser.malformed(self._offset, f"tools text {text[:60]!r}", self.expected, text)
            return
        self._parser.emit(ToolsDeclared(tuple(tools)))
        self._parser.context(DeclaredTools).tools = tuple(tools)
