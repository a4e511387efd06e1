"""Readers the generic concepts need beyond the engine's (:mod:`pawlette.engine.readers`):
pending turns, system text that may be a default, tools blocks, results, reasoning, the
whitespace between calls, call sections, and wrappers that drop layout a state begins with.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..codecs.python_stubs import Listing
from ..engine.machine import Parser, Reader, ReaderFactory
from ..engine.readers import CallEnvelope, JsonCallReader, ScaffoldReader, WholeTextReader
from ..types import MetadataItem, ReasoningDelta, TextDelta, Tool, ToolsDeclared
from .bare_calls import DECODER
from .call_ids import ReplacedCallIds, id_shape, mint_id


class Described:
    """A reader factory as ``pawlette table`` shows it: ``words`` saying what it reads, then
    the values ``shown`` that set one such reader apart from another (``tool items
    (item_open='<tool>', ...)``), never the name or the place of its code, so code that moves
    or merges leaves the tables alone."""

    __slots__ = ("described_as", "make", "shown")

    def __init__(self, words: str, make: ReaderFactory, **shown: object) -> None:
        self.described_as, self.make, self.shown = words, make, tuple(shown.items())

    def __call__(self, parser: Parser) -> Reader:
        return self.make(parser)


class PendingReader:
    """A turn that may not be there, read by ``inner`` (its text, or a concept's own reader:
    bare calls in a turn with no opener): whitespace is held until more than whitespace
    makes the message real; whitespace that one of ``ends`` (the turn's own end spellings
    and the markers that go on within it) closes was the turn's text, and a turn of
    whitespace alone that another opener ends was layout.  ``opened``: the turn has an
    opener and may be only a generation prompt the conversation ends with
    (:class:`~pawlette.declare.PromptAlways`): any marker read in it (an empty turn's end,
    a call) makes it real as well."""

    __slots__ = ("_ends", "_held", "_inner", "_opened", "_parser", "_start")
    whole_kind = "headed"  # see pawlette.engine.whole: a completion's turn is always there

    def __init__(
        self, parser: Parser, inner: Reader, ends: frozenset[str], opened: bool = False
    ) -> None:
        self._parser = parser
        self._inner = inner
        self._ends = ends
        self._opened = opened
        self._held: list[str] = []
        self._start = 0

    def whole_reading(self) -> tuple[Reader, frozenset[str]]:
        """In a completion (no message is pending there: whitespace is never held) the
        text is ``inner``'s."""
        return self._inner, frozenset()

    def feed(self, text: str, offset: int) -> None:
        if self._parser.message_pending:
            if not text.strip():
                if not self._held:
                    self._start = offset
                self._held.append(text)
                return
            self._parser.confirm_message()
        if self._held:
            text, offset = "".join(self._held) + text, self._start
            self._held = []
        self._inner.feed(text, offset)

    def close(self, marker: str | None, offset: int) -> None:
        if self._parser.message_pending and (
            (self._opened and marker is not None) or (self._held and marker in self._ends)
        ):
            self._parser.confirm_message()
        if self._held and not self._parser.message_pending:
            self._inner.feed("".join(self._held), self._start)
        self._held = []
        self._inner.close(marker, offset)


class HostTextReader(WholeTextReader):
    """A system turn's text; the message was begun pending: text equal to a default (what
    the format writes when there is no system message; None: it writes none) leaves no
    message."""

    __slots__ = ("_defaults",)

    def __init__(self, parser: Parser, *defaults: str | None) -> None:
        super().__init__(parser)
        self._defaults = tuple(default for default in defaults if default is not None)

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        if text in self._defaults and self._parser.message_pending:
            return
        self._parser.confirm_message()
        if text:
            self._parser.emit(TextDelta(text))


def host_text_reader(default: str | None) -> ReaderFactory:
    return Described("system text", lambda parser: HostTextReader(parser, default), default=default)


def host_texts_reader(default: str | None, with_tools: str | None) -> ReaderFactory:
    """A system turn whose default text is another when the request has tools."""
    make: ReaderFactory = lambda parser: HostTextReader(parser, default, with_tools)  # noqa: E731
    return Described("system text", make, default=default, with_tools=with_tools)


@dataclass
class DeclaredTools:
    """The tools a conversation being parsed declares in its own text (a parser context):
    readers that type call arguments by the tools' schemas read them when the caller gave
    none."""

    tools: tuple[Tool, ...] = ()


def schema_tools(parser: Parser) -> tuple[Tool, ...]:
    """The tools whose schemas type a call's arguments: the caller's, else the declared."""
    return parser.tools or parser.context(DeclaredTools).tools


def _tool_of(value: Any, wrap: str) -> Tool | None:
    if not isinstance(value, dict):
        return None
    if wrap == "openai":
        if value.get("type") != "function" or not isinstance(value.get("function"), dict):
            return None
        value = value["function"]
    name = value.get("name")
    return Tool(name=name, definition=value) if isinstance(name, str) else None


class ToolItemsReader(WholeTextReader):
    """The tools of a tools block, then (``text_after``) the host's text.

    ``array``: the tools are one JSON array (``item_open``/``item_close`` unused)."""

    __slots__ = ("_array", "_item_close", "_item_open", "_text_after", "_wrap")

    def __init__(
        self,
        parser: Parser,
        item_open: str,
        item_close: str,
        wrap: str,
        text_after: bool,
        array: bool,
    ) -> None:
        super().__init__(parser)
        self._item_open = item_open
        self._item_close = item_close
        self._wrap = wrap
        self._text_after = text_after
        self._array = array
        parser.confirm_message()

    def _items(self, text: str) -> tuple[list[Tool], int]:
        tools: list[Tool] = []
        if self._array:
            try:
                value, end = DECODER.raw_decode(text)
            except json.JSONDecodeError:
                return tools, 0
            found = (
                [_tool_of(item, self._wrap) for item in value] if isinstance(value, list) else []
            )
            if not found or None in found:
                return [], 0
            return [tool for tool in found if tool is not None], end
        position = 0
        while True:
            start = position
            if not text.startswith(self._item_open, position):
                break
            position += len(self._item_open)
            try:
                value, end = DECODER.raw_decode(text, position)
            except json.JSONDecodeError:
                position = start
                break
            tool = _tool_of(value, self._wrap)
            if tool is None or not text.startswith(self._item_close, end):
                position = start
                break
            tools.append(tool)
            position = end + len(self._item_close)
        return tools, position

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        tools, position = self._items(text)
        rest = text[position:]
        if rest and not self._text_after:
            self._parser.malformed(
                self._offset + position,
                f"tools block text {rest[:60]!r}",
                "one JSON array of tools" if self._array else "one JSON tool per item",
                rest,
            )
        self._parser.emit(ToolsDeclared(tuple(tools)))
        self._parser.context(DeclaredTools).tools = tuple(tools)
        if rest:
            self._parser.emit(TextDelta(rest))


def tool_items_reader(
    item_open: str, item_close: str, wrap: str, *, text_after: bool, array: bool = False
) -> ReaderFactory:
    return Described(
        "tool items",
        lambda parser: ToolItemsReader(parser, item_open, item_close, wrap, text_after, array),
        array=array,
        item_close=item_close,
        item_open=item_open,
        text_after=text_after,
        wrap=wrap,
    )


class ResultReader(WholeTextReader):
    """One tool result: a tool message (the fold pairs it with its call; the row into its
    state begins the message)."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        self._parser.emit(TextDelta(self._text()))
        self._parser.end_message()


class ResultIdReader(WholeTextReader):
    """The id written before a tool result: the tool message begins here.  ``pattern``: the
    ids the format's render takes (:func:`answered_id`)."""

    __slots__ = ("_pattern",)

    def __init__(self, parser: Parser, pattern: str | None = None) -> None:
        super().__init__(parser)
        self._pattern = pattern
        parser.begin_message("tool")

    def close(self, marker: str | None, offset: int) -> None:
        # (a warning points where the id begins)
        begun = self._offset if self._chunks else offset
        identifier = answered_id(self._parser, self._text(), begun, self._pattern)
        self._parser.emit(MetadataItem("tool_call_id", identifier))


def answered_id(parser: Parser, written: str, offset: int, pattern: str | None = None) -> str:
    """The ``tool_call_id`` of a result whose text names the call ``written``: the id the
    call was served under when reading replaced the one it wrote; else, when ``written`` does
    not match ``pattern`` (the ids the format's render takes), a new id of that shape, as a
    call's id of another shape is served (the conversation read back renders again).  A
    warning says which."""
    written = written.strip()
    served = parser.context(ReplacedCallIds).ids.get(written)
    if served is not None:
        parser.malformed(
            offset,
            f"result's call id {written!r} (its call served as {served!r}, answered under that id)",
            "the id of a call as served",
            written,
        )
        return served
    if pattern is None or re.fullmatch(pattern, written) is not None:
        return written
    pieces = id_shape("Results", pattern)
    served = parser.mint_call_id(lambda seed: mint_id(pieces, seed))
    parser.malformed(
        offset,
        f"result's call id {written!r} is of a shape the format's render refuses (served as "
        f"{served!r})",
        f"an id matching {pattern}",
        written,
    )
    return served


class ResultTextReader(ResultReader):
    """A tool result's text after its id (the message began at the id)."""

    __slots__ = ()


class ResultBeforeIdReader(WholeTextReader):
    """A tool result's text before its id (the row into its state begins the message, the
    id's reader ends it)."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        self._parser.emit(TextDelta(self._text()))


class ResultIdAfterReader(ResultIdReader):
    """The id written after a tool result's text: the tool message ends with it (it began at
    the row into the text's state)."""

    __slots__ = ()

    def __init__(self, parser: Parser, pattern: str | None = None) -> None:
        WholeTextReader.__init__(self, parser)
        self._pattern = pattern

    def close(self, marker: str | None, offset: int) -> None:
        super().close(marker, offset)
        self._parser.end_message()


class OptionalReasoningReader:
    """Reasoning that may be empty: an empty block is no reasoning (a layout that writes an
    empty block for a turn without reasoning cannot tell the two apart)."""

    __slots__ = ("_parser",)
    whole_kind = "optional reasoning"  # see pawlette.engine.whole

    def __init__(self, parser: Parser) -> None:
        self._parser = parser

    def feed(self, text: str, offset: int) -> None:
        if text:
            self._parser.emit(ReasoningDelta(text))

    def close(self, marker: str | None, offset: int) -> None:
        pass


class BetweenCallsReader(ScaffoldReader):
    """Between a call's close and the next call or the end of the turn: only whitespace.

    The turn is not over here, so the state is no scaffold state for the engine.  Stray text
    is reported and, as nothing is dropped, kept as the message's content.
    """

    __slots__ = ()
    scaffold = False
    whole_kind = "scaffold"  # see pawlette.engine.whole (stray text: the machine reads it)

    def _report(self, text: str) -> None:
        super()._report(text)
        self._parser.emit(TextDelta(text))


@dataclass
class OpenSection:
    """A call section being read (a parser context): its opener while its first call is not
    read yet, and whether its last call so far was given back as content."""

    text: str = ""
    given_back: bool = False
    """The last call was not read and its text is content: the section's close, if it comes
    next, is content too (as the opener is when the first call is not read)."""

    def take(self) -> str:
        """At each call's start: the opener, once (the first call's text begins with it if
        the call is not read)."""
        text, self.text = self.text, ""
        self.given_back = False
        return text


def give_back(
    parser: Parser,
    offset: int,
    found: str,
    expected: str,
    raw: str,
    *,
    abandon: int | None = None,
) -> None:
    """The text ``raw``, read as calls, holds none: a warning (at ``offset``, what was
    ``found`` and what was ``expected``), then ``raw`` as content.  ``abandon``: the index
    of the call already started, withdrawn between the warning and the text."""
    parser.malformed(offset, found, expected, raw)
    if abandon is not None:
        parser.abandon_call(abandon)
    parser.emit(TextDelta(raw))


def give_back_call(
    parser: Parser,
    offset: int,
    problem: str | None,
    expected: str,
    raw: str,
    *,
    abandon: int | None = None,
) -> None:
    """The call of a section whose text is ``raw`` is no call (:func:`give_back`), and its
    section's close, if it comes next, is content with it (:class:`OpenSection`)."""
    give_back(parser, offset, f"call {raw[:60]!r}: {problem}", expected, raw, abandon=abandon)
    parser.context(OpenSection).given_back = True


def next_state(parser: Parser, marker: str | None) -> str | None:
    """The state ``marker`` leads to from the parser's state (None: it has no row there)."""
    step = parser.grammar.steps.get((parser.state.name, marker or ""))
    return None if step is None else step.target


class AfterSectionReader(BetweenCallsReader):
    """After a call section's close: only whitespace, up to the end of the turn.

    The close is content when the call before it was (:class:`OpenSection`): the section's
    text given back is then whole, never missing its last marker.
    """

    __slots__ = ()
    whole_kind = "scaffold"  # a plain completion's calls are all read: the close is layout

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        section = parser.context(OpenSection)
        if section.given_back:
            section.given_back = False
            parser.emit(TextDelta(parser.entered_by or ""))


class SectionReader(BetweenCallsReader):
    """Right after a call section's opener, before its first call.

    The opener is held until a call in the section is read: a first call given back as
    content takes it in front (see :class:`OpenSection`), and stray text or a section that
    ends before any call gives it back here, with a warning, so the opener is never dropped.
    """

    __slots__ = ()
    whole_kind = "section"  # see pawlette.engine.whole: whitespace, then a call

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        parser.context(OpenSection).text = parser.entered_by or ""

    def _report(self, text: str) -> None:
        opener = self._parser.context(OpenSection).take()
        ScaffoldReader._report(self, text)
        self._parser.emit(TextDelta(opener + text))

    def close(self, marker: str | None, offset: int) -> None:
        super().close(marker, offset)
        parser = self._parser
        section = parser.context(OpenSection)
        if not section.text:
            return
        if (next_state(parser, marker) or "").startswith("call."):
            return  # the first call opens: it takes the opener
        opener = section.take()
        found = f"a call section with no call: {opener!r}"
        give_back(parser, offset, found, "a call after its opener", opener)


class CallReader(JsonCallReader):
    """A JSON call closed by ``close``, or by another of ``closes`` (the one that closed it
    is part of the call's text if the call is malformed and becomes content); ``ends_turn``:
    the end of the turn, or of the input, closes it as well (engines cut the stop token from
    the text they return)."""

    whole_kind = "call"  # closed by a marker, as JsonCallReader (see pawlette.engine.whole)

    def __init__(
        self,
        parser: Parser,
        envelope: CallEnvelope,
        close: str,
        closes: frozenset[str] = frozenset(),
        ends_turn: bool = False,
    ) -> None:
        super().__init__(parser, envelope, close)
        self._closes, self._ends_turn = closes, ends_turn

    def close(self, marker: str | None, offset: int) -> None:
        if marker is None and self._ends_turn:
            marker = ""
        elif marker in self._closes:
            self._close_marker = marker
        super().close(marker, offset)


class _LeadDropped:
    """A reader that drops ``lead`` where its state's text begins with it (held until it
    is known whether it does) and passes the rest on."""

    __slots__ = ("_held", "_inner", "_lead", "_settled")
    whole_kind = "lead dropped"  # see pawlette.engine.whole

    def __init__(self, inner: Reader, lead: str) -> None:
        self._inner = inner
        self._lead = lead
        self._held = ""
        self._settled = False

    def whole_lead(self) -> tuple[Reader, str]:
        """The reader the text goes to and the lead dropped before it (the whole-text
        reading's view of this one)."""
        return self._inner, self._lead

    def feed(self, text: str, offset: int) -> None:
        if self._settled:
            self._inner.feed(text, offset)
            return
        held = self._held + text
        if len(held) < len(self._lead) and self._lead.startswith(held):
            self._held = held
            return
        self._settled = True
        self._held = ""
        start = offset - (len(held) - len(text))
        if held.startswith(self._lead):
            held, start = held[len(self._lead) :], start + len(self._lead)
        if held:
            self._inner.feed(held, start)

    def close(self, marker: str | None, offset: int) -> None:
        if self._held:  # a part of the lead and no more: it was text
            self._inner.feed(self._held, offset - len(self._held))
            self._held = ""
        self._inner.close(marker, offset)


def lead_dropped(
    reader: ReaderFactory, lead: str, described_as: str = "lead dropped"
) -> ReaderFactory:
    """``reader`` for a state whose text may begin with ``lead``, layout the format writes
    before the text (dropped when it is there): ``pawlette table`` shows it as
    ``described_as`` (``"turn after layout"``: the layout after the turn before,
    :meth:`.table.Table.begin_after`)."""
    make: ReaderFactory = lambda parser: _LeadDropped(reader(parser), lead)  # noqa: E731
    return Described(described_as, make, lead=lead, reader=reader)


class _TrailDropped(WholeTextReader):
    """A reader that holds its state's text whole and passes it on without ``trail`` where
    it ends with it."""

    __slots__ = ("_inner", "_trail")

    def __init__(self, parser: Parser, inner: Reader, trail: str) -> None:
        super().__init__(parser)
        self._inner = inner
        self._trail = trail

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        if text.endswith(self._trail):
            text = text[: len(text) - len(self._trail)]
        if text:
            self._inner.feed(text, self._offset)
        self._inner.close(marker, offset)


def trail_dropped(reader: ReaderFactory, trail: str) -> ReaderFactory:
    """``reader`` for a state whose text may end with ``trail``, layout the format writes
    after the text (dropped when it is there)."""
    make: ReaderFactory = lambda parser: _TrailDropped(parser, reader(parser), trail)  # noqa: E731
    return Described("trail dropped", make, trail=trail, reader=reader)


class _SpaceDropped:
    """A reader that drops the whitespace its state's text begins with and passes the rest
    on."""

    __slots__ = ("_inner", "_settled")

    def __init__(self, inner: Reader) -> None:
        self._inner = inner
        self._settled = False

    def feed(self, text: str, offset: int) -> None:
        if not self._settled:
            kept = text.lstrip()
            if not kept:
                return
            offset += len(text) - len(kept)
            text, self._settled = kept, True
        self._inner.feed(text, offset)

    def close(self, marker: str | None, offset: int) -> None:
        self._inner.close(marker, offset)


def space_dropped(reader: ReaderFactory) -> ReaderFactory:
    """``reader`` for a state whose text may begin with whitespace that is layout (dropped)."""
    make: ReaderFactory = lambda parser: _SpaceDropped(reader(parser))  # noqa: E731
    return Described("whitespace dropped", make, reader=reader)


class StubsReader(WholeTextReader):
    """The stubs of a tools block, read back into the tools they say (``_listing``, each
    family's); from text that is no stub on, the block's text stays text, with a warning.
    The tools read are declared (they type the conversation's calls)."""

    __slots__ = ()

    def _listing(self, text: str) -> Listing:
        raise NotImplementedError

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        if not text:
            return  # a heading with no tools after it (Command R+ writes one so)
        definitions, position, problem = self._listing(text)
        tools = tuple(Tool(definition["name"], definition) for definition in definitions)
        if problem is not None:
            rest = text[position:]
            self._parser.malformed(
                self._offset + problem.position,
                f"tools text {rest[:60]!r} ({problem.problem})",
                "the tools' function stubs",
                rest,
            )
        self._parser.emit(ToolsDeclared(tools))
        self._parser.context(DeclaredTools).tools = tools
        if problem is not None:
            self._parser.emit(TextDelta(text[position:]))
