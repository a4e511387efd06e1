"""What the block concepts share: text between blocks, and the state of one block.

A *block* is a run of markup between an opening and a closing marker that is not plain
content (a call, a thinking block, a voice part, a JSON block).  Text between blocks is read
by :class:`TextReader` with :class:`EdgeNewlines`: one newline right after a block's closing
marker, and one right before a block's opening marker, belong to the block (the layout
``text\\n<|A_START|>...<|A_END|>\\ntext``), so text never gains or loses one.  With
:class:`LazyMessage` the state's message begins only once it has text or ends at a marker, so
a rendering that ends where a message would begin parses to no empty message.  A block that
spans several states shares a :class:`Block`; in lenient mode a block that does not fit
becomes text (markers included, and the newlines at its edges, which are then the text's)
plus a warning, so nothing is lost; in strict mode it raises
:class:`~pawlette.errors.ParseError`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ...engine.call_arguments import load_json
from ...engine.machine import Parser, ReaderFactory
from ...types import (
    Event,
    TextDelta,
)

NEWLINE = "\n"


# ------------------------------------------------------------------ newlines at block edges


@dataclass(frozen=True, slots=True)
class EdgeNewlines:
    """Markers that own the newline next to them: ``after`` (``<|A_END|>\\n``) and ``before``
    (``\\n<|A_START|>``)."""

    after: frozenset[str] = frozenset()
    before: frozenset[str] = frozenset()


class Trim:
    """Drops one leading newline (if asked) and holds back one trailing newline until it is
    known whether the closing marker owns it."""

    __slots__ = ("_drop_first", "_held", "dropped")

    def __init__(self, drop_first: bool) -> None:
        self._drop_first = drop_first
        self._held = False
        self.dropped = False
        """The close dropped a held newline (the closing marker's)."""

    def feed(self, text: str) -> str:
        if self._drop_first and text:
            self._drop_first = False
            if text[0] == NEWLINE:
                text = text[1:]
        if not text:
            return ""
        if self._held:
            text = NEWLINE + text
        self._held = text[-1] == NEWLINE
        return text[:-1] if self._held else text

    def close(self, drop_held: bool) -> str:
        held, self._held = self._held, False
        self.dropped = held and drop_held
        return NEWLINE if held and not drop_held else ""


@dataclass(frozen=True, slots=True)
class LazyMessage:
    """Begin the state's message with ``start`` once it has text or ends at a marker.

    ``silent`` lists ``(entered by, closed by)`` marker pairs at which an empty state makes no
    message (a turn that closes right after an inline tool result).  The end of input never
    begins one.
    """

    start: Callable[[Parser], None]
    silent: frozenset[tuple[str | None, str]] = frozenset()


class TextReader:
    """Text (content, reasoning, a tool result) whose edge newlines may belong to markers."""

    __slots__ = ("_edges", "_entered", "_lazy", "_make", "_parser", "_trim")

    def __init__(
        self,
        parser: Parser,
        edges: EdgeNewlines,
        make: Callable[[str], Event] = TextDelta,
        lazy: LazyMessage | None = None,
    ) -> None:
        self._parser = parser
        self._edges = edges
        self._make = make
        self._lazy = lazy
        self._entered = parser.entered_by
        drop_first = parser.entered_by in edges.after
        if drop_first:  # unless the block that marker closed is text: the newline is text too
            blocks = parser.context(OpenBlocks)
            drop_first = blocks.closed_as_text != parser.entered_by
            blocks.closed_as_text = None
        self._trim = Trim(drop_first)

    def _begin(self) -> None:
        lazy = self._lazy
        if lazy is not None and self._parser.message_role is None:
            lazy.start(self._parser)

    def feed(self, text: str, offset: int) -> None:
        out = self._trim.feed(text)
        if out:
            self._begin()
            self._parser.emit(self._make(out))

    def close(self, marker: str | None, offset: int) -> None:
        trim = self._trim
        out = trim.close(marker in self._edges.before)
        if trim.dropped:  # the block ``marker`` opens owns it (its text, if it is no block)
            self._parser.context(OpenBlocks).newline_before = marker
        if out:
            self._begin()
            self._parser.emit(self._make(out))
        elif (
            marker is not None
            and self._lazy is not None
            and (self._entered, marker) not in self._lazy.silent
        ):
            self._begin()


def text_reader(
    edges: EdgeNewlines,
    make: Callable[[str], Event] = TextDelta,
    lazy: LazyMessage | None = None,
) -> ReaderFactory:
    return partial(TextReader, edges=edges, make=make, lazy=lazy)


# ------------------------------------------------------------------ blocks spanning states


@dataclass(slots=True)
class Block:
    """What the readers of one block share: its raw text so far (markers included) and the
    fields read; ``failed`` once it turned into text."""

    raw: list[str] = field(default_factory=list)
    offset: int = 0
    name: str = ""
    header: str = ""
    index: int | None = None
    call_id: str | None = None
    failed: bool = False

    def passes_on(self, parser: Parser, text: str) -> bool:
        """Keep ``text`` in the raw block; a failed block also passes it on as text (True)."""
        self.raw.append(text)
        if self.failed:
            parser.emit(TextDelta(text))
        return self.failed

    def closes_as_text(self, parser: Parser, marker: str | None, close: str) -> bool:
        """True for a failed block, whose closing marker (when it ends there) is text too."""
        if self.failed and marker == close:
            parser.emit(TextDelta(close))
            parser.context(OpenBlocks).closed_as_text = close
        return self.failed


@dataclass
class OpenBlocks:
    """The blocks being read, by key: a block spans several states (a call's name, then its
    arguments), and each state's reader finds the block its opener began."""

    by_key: dict[str, Block] = field(default_factory=dict)
    newline_before: str | None = None
    """The opening marker whose newline before it the text before dropped (the block's)."""
    closed_as_text: str | None = None
    """The closing marker of a block that is text: the newline after it is text too."""


def open_block(parser: Parser, key: str) -> Block:
    blocks = parser.context(OpenBlocks)
    entered = parser.entered_by or ""
    newline = NEWLINE if blocks.newline_before == entered and entered else ""
    blocks.newline_before = blocks.closed_as_text = None
    block = Block(raw=[newline + entered])
    blocks.by_key[key] = block
    return block


def continue_block(parser: Parser, key: str) -> Block:
    blocks = parser.context(OpenBlocks).by_key
    block = blocks.get(key)
    if block is None:  # entered without its opening state: treat as text
        block = blocks[key] = Block(failed=True)
    block.raw.append(parser.entered_by or "")
    if block.failed:
        parser.emit(TextDelta(parser.entered_by or ""))
    return block


def fail(
    parser: Parser, block: Block, offset: int, found: str, expected: str, tail: str = ""
) -> None:
    """Report a block that does not fit; lenient: it becomes text, markers included."""
    raw = "".join(block.raw) + tail
    parser.malformed(block.offset or offset, found, expected, raw)
    block.failed = True
    parser.emit(TextDelta(raw))
    if tail:  # (its closing marker: the newline after it is text too)
        parser.context(OpenBlocks).closed_as_text = tail


def json_object(text: str) -> tuple[dict[str, Any] | None, str]:
    """The JSON object in ``text``, or None and what is wrong."""
    value, problem = load_json(text)
    if problem is not None:
        return None, problem
    if not isinstance(value, dict):
        return None, "not a JSON object"
    return value, ""


def close_json_block(
    parser: Parser,
    block: Block,
    offset: int,
    marker: str | None,
    close: str,
    text: str,
    make: Callable[[dict[str, Any]], Event],
    errors: tuple[type[Exception], ...],
    found: str,
    expected: str,
) -> None:
    """The end of a block holding a JSON object: ``make(object)`` is emitted when the block
    closed at ``close`` with an object ``make`` accepts; otherwise the block fails with
    ``found`` and the problem (``expected``: what should have been there, before ``close``)."""
    value, problem = json_object(text)
    if marker != close:
        value, problem = None, "the block is not closed"
    if value is not None:
        try:
            event = make(value)
        except errors as error:
            problem = str(error)
        else:
            parser.emit(event)
            return
    tail = marker if marker == close else ""
    fail(parser, block, offset, f"{found}: {problem}", f"{expected} then {close!r}", tail)
