"""IFM-K2-Horizon's tools block with its template's default presentation: the tools as
Markdown (:mod:`.markdown`), or all of them as JSON lines where one holds what the Markdown
does not write, as the template falls back."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar

from pawlette.declare import ToolsBlock
from pawlette.declare.readers import ToolItemsReader
from pawlette.engine.kept import Kept, marshal_key
from pawlette.engine.readers import WholeTextReader
from pawlette.errors import UnsupportedFeature
from pawlette.types import TextDelta, ToolsDeclared

from . import markdown, schema
from .markdown_jinja import JINJA_MACROS
from .schema_jinja import SHARED_MACROS

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import Parser, ReaderFactory


class _ListingReader(WholeTextReader):
    """The tools block's text: Markdown, not read back into tools (the Markdown is not the
    JSON schema it was written from), or the template's JSON fallback, read back as the
    JSON presentation is; text that is neither stays text, with a warning."""

    __slots__ = ()

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        parser.confirm_message()  # (the turn holding the tools, as the JSON reader has it)

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        if text.startswith("\n{"):  # every tool as JSON: each on a line of its own
            items = ToolItemsReader(self._parser, "\n", "", "openai", False, False)
            items.feed(text, self._offset)
            items.close(marker, offset)
            return
        if text.startswith("\n## "):
            self._parser.lose_tools("Markdown")
            # A block, read as holding no tools: a turn written only for it is no message.
            self._parser.emit(ToolsDeclared(()))
            return
        self._parser.malformed(
            self._offset, f"tools text {text[:60]!r}", "the tools as the template lists them", text
        )
        self._parser.emit(TextDelta(text))


@dataclass(frozen=True)
class MarkdownTools(ToolsBlock):
    """The tools as Markdown between ``open`` and ``close``; where the template would write
    them as JSON (:func:`.markdown.presentable`), each as ``item_open`` + its JSON, as
    :class:`~pawlette.declare.ToolsBlock` writes them.  A tool the template raises on is
    refused (:func:`.markdown.problem`)."""

    MACRO: ClassVar[str] = "ifm_markdown"

    @cached_property
    def _listings(self) -> Kept[str | None]:
        """The Markdown of a request's tools (None: written as JSON), by their content."""
        return Kept(limit=256, longest=1 << 14)

    def check(self, out: Render) -> None:
        super().check(out)
        for number, tool in enumerate(out.tools):
            found = schema.problem(tool.definition, f"tools[{number}].function")
            if found is not None:
                where, what, expected = found
                raise UnsupportedFeature(
                    where, what, f"{expected}: IFM-K2-Horizon's template raises on it"
                )

    def _listing(self, out: Render) -> str | None:
        definitions = [tool.definition for tool in out.tools]
        return self._listings.get(
            marshal_key(definitions),
            lambda: markdown.listing(definitions) if schema.presentable(definitions) else None,
        )

    def block(self, out: Render, *, separated: bool = False) -> None:
        listing = self._listing(out)
        if listing is None:  # the template's fallback: every tool as JSON
            super().block(out, separated=separated)
            return
        out.fence(self.separated_open if separated else self.open, "tools")
        out.text(listing, "tools")
        out.fence(self.close, "tools")

    def items_reader(self, table: Table) -> ReaderFactory:
        return _ListingReader

    def jinja_setup(self, out: Template) -> None:
        super().jinja_setup(out)
        out.macro("ifm_schema", SHARED_MACROS)
        out.macro(self.MACRO, JINJA_MACROS)

    def jinja_block(self, out: Template, *, separated: bool = False) -> None:
        # Refused as render refuses: where the template raises on a tool's schema.
        out.out("{%- set ifm_md_fault_text = ifm_faults(tools, true) -%}")
        out.out("{%- if ifm_md_fault_text -%}")
        out.out(
            "{{- raise_exception(ifm_md_fault_text ~ \": IFM-K2-Horizon's template raises on "
            'it") -}}'
        )
        out.out("{%- endif -%}")
        out.fence(self.separated_open if separated else self.open)
        out.out("{%- if ifm_presentable(tools) -%}")
        out.out("{{- ifm_md_listing(tools) -}}")
        out.out("{%- else -%}")
        out.out("{%- for tool in tools -%}")
        out.fence(self.item_open)
        out.value(f"tool | {self._tojson()}")
        out.fence(self.item_close)
        out.out("{%- endfor -%}")
        out.out("{%- endif -%}")
        out.fence(self.close)
