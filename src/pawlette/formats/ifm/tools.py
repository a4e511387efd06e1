"""IFM-K2-Horizon's tools block in its template's pretty presentations: the tools as
Markdown (:mod:`.markdown`, the default) or as XML (:mod:`.xml`), or all of them as JSON
lines where one holds what those do not write, as the template falls back."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from pawlette.declare import ToolsBlock
from pawlette.declare.readers import DeclaredTools, ToolItemsReader
from pawlette.engine.kept import Kept, marshal_key
from pawlette.engine.readers import WholeTextReader
from pawlette.errors import UnsupportedFeature
from pawlette.types import TextDelta, Tool, ToolsDeclared

from . import markdown, markdown_reading, schema, xml
from .markdown_jinja import JINJA_MACROS as MARKDOWN_MACROS
from .schema_jinja import SHARED_MACROS
from .xml_jinja import JINJA_MACROS as XML_MACROS

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import Parser, ReaderFactory


class _ListingReader(WholeTextReader):
    """The tools block's text: Markdown, not read back into tools (the Markdown is not the
    JSON schema it was written from) but typing the calls' string parameters, or the
    template's JSON fallback, read back as the JSON presentation is; text that is neither
    stays text, with a warning."""

    __slots__ = ()

    START: ClassVar[str] = "\n## "
    """How the presentation's text starts (its first tool's)."""
    WRITTEN_AS: ClassVar[str] = "Markdown"

    @staticmethod
    def typed_tools(listing: str) -> tuple[Tool, ...]:
        """The tools as far as the presentation types their calls' values (the Markdown:
        which parameters are strings, :mod:`.markdown_reading`)."""
        return markdown_reading.typed_tools(listing)

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
        if text.startswith(self.START):
            self._parser.lose_tools(self.WRITTEN_AS)
            # A block, read as holding no tools: a turn written only for it is no message.
            self._parser.emit(ToolsDeclared(()))
            # What the presentation says of the parameters' types still types the calls.
            self._parser.context(DeclaredTools).tools = self.typed_tools(text)
            return
        self._parser.malformed(
            self._offset, f"tools text {text[:60]!r}", "the tools as the template lists them", text
        )
        self._parser.emit(TextDelta(text))


class _XmlListingReader(_ListingReader):
    """The tools block's text: XML, not read back into tools, or the JSON fallback."""

    __slots__ = ()

    START = "\n<function name="
    WRITTEN_AS = "XML"

    @staticmethod
    def typed_tools(listing: str) -> tuple[Tool, ...]:
        """None: the XML's types are not read (every call's value is read untyped)."""
        return ()


@dataclass(frozen=True)
class PresentedTools(ToolsBlock):
    """The tools in a pretty presentation between ``open`` and ``close``; where the template
    would write them as JSON (:func:`.schema.presentable`), each as ``item_open`` + its
    JSON, as :class:`~pawlette.declare.ToolsBlock` writes them.  A tool the template raises
    on is refused (:func:`.schema.problem`).  Each presentation is a subclass naming its
    writer, its reader and its Jinja."""

    MACRO: ClassVar[str]
    """The name its Jinja macros are defined under."""
    MACROS: ClassVar[str]
    LISTING: ClassVar[str]
    """The Jinja macro writing the tools."""
    TEXT_DESCRIPTION: ClassVar[bool]
    """Whether the template raises on a function's description that is no text."""
    READER: ClassVar[type[_ListingReader]]

    @staticmethod
    def listing(definitions: Iterable[Mapping[str, Any]]) -> str:
        """The tools (their function objects) in the presentation."""
        raise NotImplementedError

    @cached_property
    def _listings(self) -> Kept[str | None]:
        """The Markdown of a request's tools (None: written as JSON), by their content."""
        return Kept(limit=256, longest=1 << 14)

    def check(self, out: Render) -> None:
        super().check(out)
        for number, tool in enumerate(out.tools):
            found = schema.problem(
                tool.definition, f"tools[{number}].function", text_description=self.TEXT_DESCRIPTION
            )
            if found is not None:
                where, what, expected = found
                raise UnsupportedFeature(
                    where, what, f"{expected}: IFM-K2-Horizon's template raises on it"
                )

    def _listing(self, out: Render) -> str | None:
        definitions = [tool.definition for tool in out.tools]
        return self._listings.get(
            marshal_key(definitions),
            lambda: self.listing(definitions) if schema.presentable(definitions) else None,
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
        return self.READER

    def jinja_setup(self, out: Template) -> None:
        super().jinja_setup(out)
        out.macro("ifm_schema", SHARED_MACROS)
        out.macro(self.MACRO, self.MACROS)

    def jinja_block(self, out: Template, *, separated: bool = False) -> None:
        # Refused as render refuses: where the template raises on a tool's schema.
        description = "true" if self.TEXT_DESCRIPTION else "false"
        out.out(f"{{%- set ifm_fault_text = ifm_faults(tools, {description}) -%}}")
        out.out("{%- if ifm_fault_text -%}")
        out.out(
            '{{- raise_exception(ifm_fault_text ~ ": IFM-K2-Horizon\'s template raises on it") -}}'
        )
        out.out("{%- endif -%}")
        out.fence(self.separated_open if separated else self.open)
        out.out("{%- if ifm_presentable(tools) -%}")
        out.out(f"{{{{- {self.LISTING}(tools) -}}}}")
        out.out("{%- else -%}")
        out.out("{%- for tool in tools -%}")
        out.fence(self.item_open)
        out.value(f"tool | {self._tojson()}")
        out.fence(self.item_close)
        out.out("{%- endfor -%}")
        out.out("{%- endif -%}")
        out.fence(self.close)


@dataclass(frozen=True)
class MarkdownTools(PresentedTools):
    """The tools as Markdown (:mod:`.markdown`), the template's default presentation."""

    MACRO = "ifm_markdown"
    MACROS = MARKDOWN_MACROS
    LISTING = "ifm_md_listing"
    TEXT_DESCRIPTION = True
    READER = _ListingReader
    listing = staticmethod(markdown.listing)


@dataclass(frozen=True)
class XmlTools(PresentedTools):
    """The tools as XML (:mod:`.xml`), the template's ``tool_presentation_format='xml'``."""

    MACRO = "ifm_xml"
    MACROS = XML_MACROS
    LISTING = "ifm_xml_listing"
    TEXT_DESCRIPTION = False
    READER = _XmlListingReader
    listing = staticmethod(xml.listing)
