"""Blocks holding JSON: a JSON object alone (an image request, a tool definition), and a
JSON header before text (a voice part) (omni).

- :class:`JsonBlock`: ``\\n<open>\\n{json, indent 4}\\n<close>\\n``, one event (a content
  part, or one tool definition).
- :class:`HeadedText`: ``\\n<start>\\n{json header}\\n<body>\\ntext\\n<end>\\n``, one
  content part made from both (the text gives its leading newline to ``body`` and its
  trailing one to ``end``).

Their share of each interpreter is here: writers, readers, Jinja macros and grammars.
"""

# ruff: noqa: E501  (Jinja source: one tag per line reads better than wrapped tags)

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ...declare.pieces import Marker
from ...emit.grammar_ast import JsonSchemaValue, Lit, Node, Rules, seq
from ...emit.grammar_ast import Marker as MarkerNode
from ...emit.jinja_text import fill, jinja_string
from ...emit.json_lark import SchemaToLark
from ...emit.json_schema import SchemaToGbnf
from ...emit.text_language import text_terminal
from ...emit.turn_rules import ANY_OBJECT
from ...engine import rows
from ...engine.json_text import indented_json, kept_indented_json
from ...engine.machine import Parser, ReaderFactory
from ...engine.rows import Row
from ...engine.writer import Writer
from ...errors import RequestError
from ...types import ContentPart, Event, PartAdded, Tool, ToolsDeclared
from .spans import Block, Trim, close_json_block, continue_block, fail, open_block


@dataclass(frozen=True)
class JsonBlock:
    """``<open>`` JSON object ``<close>``: an image request part, or a tool definition."""

    open: Marker
    close: Marker


class JsonBlockReader:
    """A JSON object between an opening marker and ``close``, made into one event (a content
    part, a tool definition).  ``label`` names the block in warnings (None: by its opening
    marker); ``errors`` are what ``make`` raises for an object it refuses (the block then
    becomes text)."""

    __slots__ = ("_block", "_chunks", "_close", "_errors", "_label", "_make", "_parser")

    def __init__(
        self,
        parser: Parser,
        make: Callable[[dict[str, Any]], Event],
        close: str,
        label: str | None,
        errors: tuple[type[Exception], ...],
    ) -> None:
        self._parser = parser
        self._make = make
        self._close = close
        self._block = Block(raw=[parser.entered_by or ""])
        self._label = f"{self._block.raw[0]!r} block" if label is None else label
        self._errors = errors
        self._chunks: list[str] = []

    def feed(self, text: str, offset: int) -> None:
        if not self._chunks:
            self._block.offset = offset
        self._chunks.append(text)
        self._block.raw.append(text)

    def close(self, marker: str | None, offset: int) -> None:
        text = "".join(self._chunks)
        found = f"{self._label} {text.strip()[:60]!r}"
        close_json_block(
            self._parser,
            self._block,
            offset,
            marker,
            self._close,
            text,
            self._make,
            self._errors,
            found,
            "a JSON object",
        )


def json_part_reader(make: Callable[[dict[str, Any]], ContentPart], close: str) -> ReaderFactory:
    """A JSON object that becomes one content part (``make`` may refuse it with a
    :class:`RequestError` or ``ValueError``)."""

    return partial(
        JsonBlockReader,
        make=lambda value: PartAdded(make(value)),
        close=close,
        label=None,
        errors=(RequestError, ValueError),
    )


def definition_reader(make: Callable[[Mapping[str, Any]], Tool], close: str) -> ReaderFactory:
    """One tool definition, a JSON object (``make`` may refuse it with a :class:`RequestError`)."""

    return partial(
        JsonBlockReader,
        make=lambda value: ToolsDeclared((make(value),)),
        close=close,
        label="definition",
        errors=(RequestError,),
    )


@dataclass(frozen=True)
class HeadedText:
    """``<start>{json header}<body>text<end>``: one content part made from both.

    The text gives its one leading newline to ``body`` and its one trailing newline to ``end``.
    """

    start: Marker
    body: Marker
    end: Marker
    make: Callable[[dict[str, Any], str], ContentPart] | None = field(default=None, compare=False)

    @property
    def key(self) -> str:
        return f"headed:{self.start.text}"

    def header_reader(self) -> ReaderFactory:
        return partial(_HeaderReader, headed=self)

    def body_reader(self) -> ReaderFactory:
        return partial(_HeadedBodyReader, headed=self)


class _HeaderReader:
    __slots__ = ("_block", "_headed", "_parser")

    def __init__(self, parser: Parser, headed: HeadedText) -> None:
        self._parser = parser
        self._headed = headed
        self._block = open_block(parser, headed.key)

    def feed(self, text: str, offset: int) -> None:
        if not self._block.header:
            self._block.offset = offset
        self._block.header += text
        self._block.raw.append(text)

    def close(self, marker: str | None, offset: int) -> None:
        if marker != self._headed.body.text:
            found = f"{self._headed.start.text!r} block not closed"
            fail(self._parser, self._block, offset, found, f"{self._headed.body.text!r}")


class _HeadedBodyReader:
    __slots__ = ("_block", "_headed", "_parser", "_text", "_trim")

    def __init__(self, parser: Parser, headed: HeadedText) -> None:
        self._parser = parser
        self._headed = headed
        self._block = continue_block(parser, headed.key)
        self._trim = Trim(True)
        self._text: list[str] = []

    def feed(self, text: str, offset: int) -> None:
        if not self._block.passes_on(self._parser, text):
            self._text.append(self._trim.feed(text))

    def close(self, marker: str | None, offset: int) -> None:
        headed, block = self._headed, self._block
        if block.closes_as_text(self._parser, marker, headed.end.text):
            return
        self._text.append(self._trim.close(marker == headed.end.text))

        def make(header: dict[str, Any]) -> Event:
            assert headed.make is not None
            return PartAdded(headed.make(header, "".join(self._text)))

        found = f"{headed.start.text!r} block: header {block.header.strip()[:60]!r}"
        close_json_block(
            self._parser,
            block,
            offset,
            marker,
            headed.end.text,
            block.header,
            make,
            (RequestError, ValueError),
            found,
            "a JSON object header",
        )


def write_json_block(
    writer: Writer,
    block: JsonBlock,
    value: Mapping[str, Any],
    kind: str,
    *,
    trainable: bool,
    edge_after: bool = True,
    recurring: bool = False,
) -> None:
    """``\\n<open>\\n{json}\\n<close>\\n`` (``edge_after``: with the last newline; a
    tool definition has none, the next one or the turn's end follows; ``recurring``: a
    value that comes back in other requests, a tool definition, whose text is kept)."""
    head, tail = _block_rows(block, kind, trainable, edge_after)
    text = (kept_indented_json if recurring else indented_json)(dict(value))
    head.write(writer)
    writer.text(text, kind, trainable=trainable)
    tail.write(writer)


def _block_rows(block: JsonBlock, kind: str, trainable: bool, edge_after: bool) -> tuple[Row, Row]:
    known = _rows_of(block)
    key = (kind, trainable, edge_after)
    found = known.get(key)
    if found is None:
        newline = (False, "\n", kind, trainable)
        head = (newline, (True, block.open.text, kind, trainable), newline)
        tail = (newline, (True, block.close.text, kind, trainable))
        found = known[key] = (Row(head), Row((*tail, newline) if edge_after else tail))
    return found


def _no_rows(block: JsonBlock) -> dict[tuple[str, bool, bool], tuple[Row, Row]]:
    return {}  # filled by _block_rows: a block is written in a few kinds


_rows_of = rows.once_per(_no_rows)


def write_headed(
    writer: Writer, headed: HeadedText, header: Mapping[str, Any], text: str, *, trainable: bool
) -> None:
    """``\\n<start>\\n{header}\\n<body>\\ntext\\n<end>\\n``."""
    writer.raw("\n", "voice", trainable=trainable)
    writer.marker(headed.start.text, "voice", trainable=trainable)
    writer.raw("\n", "voice", trainable=trainable)
    writer.text(indented_json(dict(header)), "voice", trainable=trainable)
    writer.raw("\n", "voice", trainable=trainable)
    writer.marker(headed.body.text, "voice", trainable=trainable)
    writer.raw("\n", "voice", trainable=trainable)
    writer.text(text, "voice", trainable=trainable)
    writer.raw("\n", "voice", trainable=trainable)
    writer.marker(headed.end.text, "voice", trainable=trainable)
    writer.raw("\n", "voice", trainable=trainable)


JSON_JINJA = r"""{%- macro json_block(value) -%}
{{- escape(value|tojson(indent=4), false) -}}
{%- endmacro -%}"""
"""``json_block(value)``: a JSON object as the writer writes it (needs the ``escape`` macro)."""

_JINJA = r"""{%- macro voice(part) -%}
{%- set prosody = part.voice.prosody if part.voice.prosody is defined and part.voice.prosody is not none else {} -%}
{{- '\n' ~ @START@ ~ '\n' ~ json_block(prosody) ~ '\n' ~ @BODY@ ~ '\n' ~ escape(part.voice.text, false) ~ '\n' ~ @END@ ~ '\n' -}}
{%- endmacro -%}"""


def jinja(headed: HeadedText) -> str:
    """``voice(part)`` (it needs the ``json_block`` and ``escape`` macros)."""
    values = {
        f"@{name.upper()}@": jinja_string(getattr(headed, name).text)
        for name in ("start", "body", "end")
    }
    return fill(_JINJA, values)


def jinja_json_block(block: JsonBlock, value: str) -> str:
    """A Jinja expression writing the block of the object ``value`` (an expression)."""
    return (
        f"'\\n' ~ {jinja_string(block.open.text)} ~ '\\n' ~ json_block({value}) ~ '\\n' ~ "
        f"{jinja_string(block.close.text)} ~ '\\n'"
    )


TEXT_ANY_NL = text_terminal("TEXT", "ANY_NL")  # text (maybe none), then a newline


def any_object(rules: Rules, name: str) -> JsonSchemaValue:
    return JsonSchemaValue(
        ANY_OBJECT,
        SchemaToGbnf(rules, name, name).convert(ANY_OBJECT),
        lark=SchemaToLark(rules, name, name).convert(ANY_OBJECT),
    )


def headed_grammar(headed: HeadedText, rules: Rules) -> Node:
    """The part after the newline that opens it."""
    return seq(
        MarkerNode(headed.start.text),
        Lit("\n"),
        any_object(rules, "prosody"),
        Lit("\n"),
        MarkerNode(headed.body.text),
        Lit("\n"),
        TEXT_ANY_NL,
        MarkerNode(headed.end.text),
        Lit("\n"),
    )


def json_block_grammar(block: JsonBlock, rules: Rules, name: str) -> Node:
    """The block after the newline that opens it."""
    return seq(
        MarkerNode(block.open.text),
        Lit("\n"),
        any_object(rules, name),
        Lit("\n"),
        MarkerNode(block.close.text),
        Lit("\n"),
    )
