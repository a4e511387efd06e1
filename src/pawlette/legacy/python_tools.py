"""The tools block as one Python list: a concept of the declaration layer, all its interpreters.

A layout whose ``tools`` is a :class:`PythonToolsBlock` writes the request's function objects
(OpenAI's ``function``, without the ``{"type": "function"}`` wrapper) as one Python list
literal, as MediaTek's ``MRPromptV3`` writes them with ``repr``::

    Customized Functions: [{'name': 'get_weather', 'parameters': {...}}]\\n\\n---\\n

It is a :class:`~.layout.ToolsBlock` (host, placement and the ``open``/``close`` fences mean
what they mean there; the item fences are unused), so the shared interpreters place it as any
tools block and dispatch only where the listing is written or read: :func:`write_listing`
(writer), :func:`tools_reader` (parse table: the list read back into declared tools, nothing
evaluated), :func:`jinja_listing` (Jinja, with the Python-literal macros).  The model never
writes the tools, so the turn grammar has no part here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..codecs.python_literals import Quote, python_literal
from ..engine.kept import Kept, marshal_key
from ..engine.machine import Parser, ReaderFactory
from ..engine.readers import WholeTextReader
from ..export.templates._common import PYTHON_LITERAL_MACROS, jinja_string
from ..types import TextDelta, Tool, ToolsDeclared
from . import rows
from .layout import Layout, ToolsBlock
from .rows import Row

if TYPE_CHECKING:  # the interpreters hand themselves in; importing them here would cycle
    from .jinja import _Emitter
    from .write import _Render


@dataclass(frozen=True)
class PythonToolsBlock(ToolsBlock):
    """The tools as one Python list literal between ``open`` and ``close``."""

    quote: Quote = "repr"


def _derive(layout: Layout) -> tuple[PythonToolsBlock, Row, Row]:
    block = layout.tools
    assert isinstance(block, PythonToolsBlock)
    head = Row(rows.pieces(layout, block.open, "tools"))
    return block, head, Row(rows.pieces(layout, block.close, "tools"))


_rows_of = rows.once_per(_derive)


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


def write_listing(render: _Render) -> None:
    """The block, written (called by :mod:`.write` in place of the JSON items)."""
    block, head, tail = _rows_of(render.layout)
    definitions = [dict(tool.definition) for tool in render.tools]
    text = listing(definitions, block.quote)
    head.write(render.writer)
    render.writer.text(text, "tools")
    tail.write(render.writer)


class PythonToolsReader(WholeTextReader):
    """The tools block's list, read whole; with ``text_after``, the host's text follows it
    (after the block's close, which is its own row when it has one)."""

    __slots__ = ("_text_after",)

    def __init__(self, parser: Parser, text_after: bool) -> None:
        super().__init__(parser)
        self._text_after = text_after
        parser.confirm_message()

    def close(self, marker: str | None, offset: int) -> None:
        from .python_reader import python_literal_or_none

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
    return lambda parser: PythonToolsReader(parser, text_after)


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
    return lambda parser: AfterBlockReader(parser, default)


def jinja_listing(emitter: _Emitter) -> None:
    """The block in Jinja (called by :mod:`.jinja` in place of the JSON items)."""
    block = emitter.layout.tools
    assert isinstance(block, PythonToolsBlock)
    emitter.fence(block.open)
    emitter.out(
        "{{- python_literal(tools | map(attribute='function') | list, "
        f"{jinja_string(block.quote)}, 'tools') -}}}}"
    )
    emitter.fence(block.close)


def literal_macros(layout: Layout) -> str:
    """The Python-literal macros, when a concept of the layout writes Python literals and the
    calls' macros (which include them) are not there: emitted once, before the others."""
    from . import python_calls, python_results

    if python_calls.is_python(layout.calls):
        return ""
    boxes = layout.parts is not None and layout.parts.boxes is not None
    if (
        boxes
        or python_results.is_python(layout.results)
        or isinstance(layout.tools, PythonToolsBlock)
    ):
        return PYTHON_LITERAL_MACROS.strip()
    return ""
