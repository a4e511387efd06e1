"""The tools block as one Python list (Breeze 2).

The request's function objects (OpenAI's ``function``, without the ``{"type": "function"}``
wrapper) are written as one Python list literal, as MediaTek's ``MRPromptV3`` writes them with
``repr``::

    Customized Functions: [{'name': 'get_weather', 'parameters': {...}}]\\n\\n---\\n

It is a :class:`~pawlette.declare.ToolsBlock` (placement and the ``open``/``close`` fences
mean what they mean there; the item fences are unused) whose listing is written and read as
one literal (nothing evaluated).  The model never writes the tools, so the turn grammar has
no part here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...codecs.python_calls import python_literal_or_none
from ...codecs.python_literals import Quote, python_literal
from ...declare import SystemPrompt, ToolsBlock
from ...declare.python_calls import literal_macros
from ...declare.readers import Described
from ...declare.table import begin
from ...emit.jinja_text import jinja_string
from ...engine.kept import Kept, marshal_key
from ...engine.machine import Parser, ReaderFactory
from ...engine.readers import ScaffoldReader, WholeTextReader
from ...errors import FormatError
from ...types import TextDelta, Tool, ToolsDeclared

if TYPE_CHECKING:
    from ...declare.jinja import Template
    from ...declare.layout import Layout
    from ...declare.table import Table
    from ...declare.write import Render


@dataclass(frozen=True)
class PythonTools(ToolsBlock):
    """The tools as one Python list literal between ``open`` and ``close``, in the first
    system turn (``place="system"``).  ``quote``: as :class:`~pawlette.declare.PythonCalls`'."""

    quote: Quote = "repr"

    def validate(self, layout: Layout) -> None:
        super().validate(layout)
        if self.place != "system" or self.wrap != "openai" or self.array:
            raise FormatError(
                f"{layout.name}: PythonTools: place={self.place!r}, wrap={self.wrap!r}, "
                f"array={self.array}; expected the system turn's block (the function objects, "
                "one Python list)"
            )

    def block(self, out: Render, *, separated: bool = False) -> None:
        out.fence(self.separated_open if separated else self.open, "tools")
        definitions = [dict(tool.definition) for tool in out.tools]
        out.text(listing(definitions, self.quote), "tools")
        out.fence(self.close, "tools")

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        layout = table.layout
        system = layout.concept(SystemPrompt)
        preamble = system.preamble if system is not None else ()
        with_tools = system.preamble_with_tools if system is not None else ()
        default = table.text(system.default_fence) if system is not None else ""
        reader = tools_reader(text_after=self.first and not self.close)
        table.state("system.tools", reader, "system", ends=not self.close)
        opening = table.text(layout.frames["system"].open, with_tools, preamble, self.open)
        table.on("outside", opening, "system.tools", begin("system"))
        if not self.first:
            table.on("system.body", table.text(self.separator, self.open), "system.tools")
        if self.close:
            # A block before the text: the system text follows its close.
            after = after_block_reader(default) if self.first else ScaffoldReader
            table.state("system.after_tools", after, "system", ends=True)
            table.on("system.tools", table.text(self.close), "system.after_tools")

    # ------------------------------------------------------------------ the Jinja template

    def jinja_setup(self, out: Template) -> None:
        super().jinja_setup(out)
        literal_macros(out)

    def jinja_block(self, out: Template, *, separated: bool = False) -> None:
        out.fence(self.separated_open if separated else self.open)
        out.out(
            "{{- python_literal(tools | map(attribute='function') | list, "
            f"{jinja_string(self.quote)}, 'tools') -}}}}"
        )
        out.fence(self.close)


_LISTINGS: Kept[str] = Kept(limit=256, longest=1 << 14)
"""Listings kept (the same tools come with every request: each is written once); a listing
whose key is longer than ``longest`` bytes is written every time (a bound on memory)."""


def listing(definitions: list[dict[str, Any]], quote: Quote) -> str:
    """The tools as one Python literal, kept by the definitions' content
    (:func:`~pawlette.engine.kept.marshal_key`, which tells any two values apart: an ``int``
    key from a ``str`` one, ``True`` from ``1``), so one key is one literal.  A value with no
    such key (a subclass, an object) is written each time, and refused, by
    :func:`~pawlette.codecs.python_literals.python_literal` itself."""
    return _LISTINGS.get(
        marshal_key((quote, definitions)),
        lambda: python_literal(definitions, quote=quote, path="tools"),
    )


class PythonToolsReader(WholeTextReader):
    """The tools block's list, read whole; with ``text_after``, the host's text follows it
    (after the block's close, which is its own row when it has one)."""

    __slots__ = ("_text_after",)

    def __init__(self, parser: Parser, text_after: bool) -> None:
        super().__init__(parser)
        self._text_after = text_after
        parser.confirm_message()

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        value = python_literal_or_none(text, offset=self._offset)
        tools = (
            tuple(Tool(item["name"], item) for item in value)
            if isinstance(value, list)
            and all(isinstance(item, dict) and isinstance(item.get("name"), str) for item in value)
            else None
        )
        if tools is None:
            self._parser.malformed(
                self._offset, f"tools block text {text[:60]!r}", "a Python list of functions", text
            )
            self._parser.emit(ToolsDeclared(()))
            self._parser.emit(TextDelta(text))
            return
        self._parser.emit(ToolsDeclared(tools))


def tools_reader(text_after: bool) -> ReaderFactory:
    make: ReaderFactory = lambda parser: PythonToolsReader(parser, text_after)  # noqa: E731
    return Described("Python tool list", make, text_after=text_after)


class AfterBlockReader(WholeTextReader):
    """The host's text after a block written first: the format's default text (what it
    writes when the conversation has no system message) is no text."""

    __slots__ = ("_default",)

    def __init__(self, parser: Parser, default: str) -> None:
        super().__init__(parser)
        self._default = default

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        if text and text != self._default:
            self._parser.emit(TextDelta(text))


def after_block_reader(default: str) -> ReaderFactory:
    make: ReaderFactory = lambda parser: AfterBlockReader(parser, default)  # noqa: E731
    return Described("system text after the tools", make, default=default)
