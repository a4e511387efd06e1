"""Readers the declared layouts need beyond the engine's (all generic over the layout).

- :class:`HostTextReader`: a system turn's text, which may be the layout's default system
  text (then the message was written by the format, not given: it parses to no message).
- :class:`ToolItemsReader`: a tools block's items (``item_open`` JSON ``item_close`` ...),
  optionally followed by the host message's text (a block written before the text).
- :class:`ResultReader`: one tool result; it answers the call at its position.
- :class:`BareCallReader`: an assistant turn that is either text or one call written as a
  bare JSON object (Llama 3): a turn whose first character other than whitespace is ``{``
  is a call (leading whitespace is held until that is known), then it is streamed as text
  or as the call's arguments.  A turn that is a JSON list of call objects (``[{...}]``, what
  some models write for several calls) is content with a warning: the layout writes one.
- :class:`BetweenCallsReader`: whitespace between calls, inside the turn.
- :func:`positional_call_reader`: the engine's JSON call reader, remembering call ids in
  order so results can name the call they answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..engine.call_scanner import TextPieces
from ..engine.machine import Parser, Reader, ReaderFactory
from ..engine.readers import CallEnvelope, JsonCallReader, ScaffoldReader, WholeTextReader
from ..types import MetadataItem, ReasoningDelta, TextDelta, Tool, ToolsDeclared

_CALLS = "declare.calls"
_ANSWERED = "declare.answered"


def _remember(parser: Parser, call_id: str) -> None:
    # Called while the call starts, before the parser counts it: the first call of a message
    # starts a new round of calls for the results that follow.
    if parser.calls_in_message == 0:
        parser.shared[_CALLS] = []
        parser.shared[_ANSWERED] = 0
    parser.shared.setdefault(_CALLS, []).append(call_id)


def _remembering(parser: Parser) -> None:
    factory = parser.new_call_id
    if getattr(factory, "remembers", False):
        return

    def new_call_id() -> str:
        call_id = factory()
        _remember(parser, call_id)
        return call_id

    new_call_id.remembers = True  # type: ignore[attr-defined]
    parser.new_call_id = new_call_id


class _EndedByInput(JsonCallReader):
    """A call that the end of the turn closes: the end of input closes it too (engines cut
    the stop token from the text they return)."""

    def close(self, marker: str | None, offset: int) -> None:
        super().close("" if marker is None else marker, offset)


class _ClosedByAny(JsonCallReader):
    """A call with several spellings of its close (``JsonCalls.loose_fences``): the one that
    closed it is part of the call's text if the call is malformed and becomes content."""

    def __init__(
        self, parser: Parser, envelope: CallEnvelope, close: str, closes: frozenset[str]
    ) -> None:
        super().__init__(parser, envelope, close)
        self._closes = closes

    def close(self, marker: str | None, offset: int) -> None:
        if marker in self._closes:
            self._close_marker = marker
        super().close(marker, offset)


def positional_call_reader(
    envelope: CallEnvelope,
    close: str,
    *,
    ends_turn: bool = False,
    also_close: frozenset[str] = frozenset(),
) -> ReaderFactory:
    """A JSON call (no id in the text); its generated id is remembered for the results.
    ``ends_turn``: the call runs to the end of the turn (no close fence of its own);
    ``also_close``: other spellings of ``close``."""

    def make(parser: Parser) -> Reader:
        _remembering(parser)
        if ends_turn:
            return _EndedByInput(parser, envelope, close)
        if also_close - {close}:
            return _ClosedByAny(parser, envelope, close, also_close)
        return JsonCallReader(parser, envelope, close)

    return make


def remember_started_call(parser: Parser, call_id: str) -> None:
    """A call that the parser has counted already started (readers built on the Python-call
    stream, :mod:`.python_calls`): remembered for the results as :func:`_remember` does."""
    if parser.calls_in_message <= 1:
        parser.shared[_CALLS] = []
        parser.shared[_ANSWERED] = 0
    parser.shared.setdefault(_CALLS, []).append(call_id)


def forget_started_call(parser: Parser) -> None:
    """The call last remembered turned out malformed: no result answers it."""
    calls: list[str] = parser.shared.get(_CALLS, [])
    if calls:
        calls.pop()


def next_result_id(parser: Parser) -> str | None:
    calls: list[str] = parser.shared.get(_CALLS, [])
    answered: int = parser.shared.get(_ANSWERED, 0)
    parser.shared[_ANSWERED] = answered + 1
    return calls[answered] if answered < len(calls) else None


class BetweenCallsReader(ScaffoldReader):
    """Between a call's close and the next call or the end of the turn: only whitespace.

    The turn is not over here (another call may follow), so the state is no scaffold state
    for the engine (whose completions treat those as after the turn).  Stray text is reported
    and, as nothing is dropped, kept as the message's content.
    """

    __slots__ = ()
    scaffold = False

    def _report(self, text: str) -> None:
        super()._report(text)
        self._parser.emit(TextDelta(text))


class OptionalReasoningReader:
    """Reasoning that may be empty: an empty block is no reasoning (a layout that writes an
    empty block for a turn without reasoning cannot tell the two apart, and a stream shows
    nothing for it)."""

    __slots__ = ("_parser",)

    def __init__(self, parser: Parser) -> None:
        self._parser = parser

    def feed(self, text: str, offset: int) -> None:
        if text:
            self._parser.emit(ReasoningDelta(text))

    def close(self, marker: str | None, offset: int) -> None:
        pass


class ResultReader(WholeTextReader):
    """One tool result: a tool message answering the next call in order."""

    __slots__ = ()

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        parser.begin_message("tool")
        call_id = next_result_id(parser)
        if call_id is not None:
            parser.emit(MetadataItem("tool_call_id", call_id))

    def close(self, marker: str | None, offset: int) -> None:
        self._parser.emit(TextDelta(self._text()))
        self._parser.end_message()


class HostTextReader(WholeTextReader):
    """A system turn's text.  The message was begun pending: text equal to ``default`` (the
    text the format writes when there is no system message) leaves no message."""

    __slots__ = ("_default",)

    def __init__(self, parser: Parser, default: str) -> None:
        super().__init__(parser)
        self._default = default

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        if text == self._default and self._parser.message_pending:
            return
        self._parser.confirm_message()
        self._parser.emit(TextDelta(text))


def host_text_reader(default: str) -> ReaderFactory:
    return lambda parser: HostTextReader(parser, default)


def _tool_of(value: Any, wrap: str) -> Tool | None:
    if not isinstance(value, dict):
        return None
    if wrap == "openai":
        if value.get("type") != "function" or not isinstance(value.get("function"), dict):
            return None
        value = value["function"]
    name = value.get("name")
    return Tool(name=name, definition=value) if isinstance(name, str) else None


_DECODER = json.JSONDecoder()


class ToolItemsReader(WholeTextReader):
    """The items of a tools block; with ``text_after``, the host's text follows them."""

    __slots__ = ("_item_close", "_item_open", "_text_after", "_wrap")

    def __init__(
        self, parser: Parser, item_open: str, item_close: str, wrap: str, text_after: bool
    ) -> None:
        super().__init__(parser)
        self._item_open = item_open
        self._item_close = item_close
        self._wrap = wrap
        self._text_after = text_after
        parser.confirm_message()

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        tools: list[Tool] = []
        position = 0
        while True:
            start = position
            if not text.startswith(self._item_open, position):
                break
            position += len(self._item_open)
            try:
                value, end = _DECODER.raw_decode(text, position)
            except json.JSONDecodeError:
                position = start
                break
            tool = _tool_of(value, self._wrap)
            if tool is None or not text.startswith(self._item_close, end):
                position = start
                break
            tools.append(tool)
            position = end + len(self._item_close)
        rest = text[position:]
        if rest and not self._text_after:
            self._parser.malformed(
                self._offset + position,
                f"tools block text {rest[:60]!r}",
                "one JSON tool per item",
                rest,
            )
        self._parser.emit(ToolsDeclared(tuple(tools)))
        if rest:
            self._parser.emit(TextDelta(rest))


def tool_items_reader(
    item_open: str, item_close: str, wrap: str, *, text_after: bool
) -> ReaderFactory:
    return lambda parser: ToolItemsReader(parser, item_open, item_close, wrap, text_after)


_CALL_START = re.compile(r"\s*\{")
_LIST_START = re.compile(r"\s*\[")


def _listed_calls(text: str, envelope: CallEnvelope) -> int:
    """How many calls a turn written as a JSON list of call objects holds (0: it is not one).
    Such a turn is content with a warning: the layout writes one call, as an object."""
    try:
        value = json.loads(text)
    except ValueError:
        return 0
    if not isinstance(value, list) or not value:
        return 0
    for item in value:
        if not (
            isinstance(item, dict)
            and isinstance(item.get(envelope.name), str)
            and envelope.arguments_key_in(item) is not None
        ):
            return 0
    return len(value)


class BareCallReader:
    """Text, or one call written as the whole turn's bare JSON object (see the module)."""

    __slots__ = ("_call", "_decided", "_envelope", "_held", "_listed", "_parser", "_start")

    def __init__(self, parser: Parser, envelope: CallEnvelope) -> None:
        self._parser = parser
        self._envelope = envelope
        self._held: list[str] = []
        self._start = 0
        self._decided = False
        self._call: JsonCallReader | None = None
        # A turn that starts as a JSON list: its text, to tell a list of calls at the close.
        self._listed: TextPieces | None = None

    def feed(self, text: str, offset: int) -> None:
        if self._decided:
            self._forward(text, offset)
            return
        if not self._held:
            self._start = offset
        self._held.append(text)
        held = "".join(self._held)
        candidate = held.lstrip()
        if not candidate:
            return
        if _CALL_START.match(candidate):
            self._begin_call()
        elif _LIST_START.match(candidate):
            self._listed = TextPieces()
        self._decided = True
        self._held = []
        self._forward(held, self._start)

    def _begin_call(self) -> None:
        # The call's reader quotes the marker that opened its state in lenient text: a bare
        # call has none (the turn's header is not part of the call).
        parser = self._parser
        entered, parser.entered_by = parser.entered_by, ""
        _remembering(parser)
        self._call = _EndedByInput(parser, self._envelope, "the end of the turn")
        parser.entered_by = entered

    def _forward(self, text: str, offset: int) -> None:
        if self._call is not None:
            self._call.feed(text, offset)
        else:
            if self._listed is not None:
                self._listed.append(text)
            self._parser.emit(TextDelta(text))

    def close(self, marker: str | None, offset: int) -> None:
        if not self._decided and self._held:
            held = "".join(self._held)
            self._held = []
            if _CALL_START.match(held):
                self._begin_call()
            elif _LIST_START.match(held):
                self._listed = TextPieces()
            self._forward(held, self._start)
        if self._call is not None:
            self._call.close(marker, offset)
        elif self._listed is not None:
            text = self._listed.take()
            self._listed = None
            count = _listed_calls(text, self._envelope)
            if count:  # the text is content already: reported, not dropped
                self._parser.malformed(
                    self._start,
                    f"a JSON list of {count} call(s) {text[:60]!r}",
                    "one call per turn, written as a JSON object",
                    text,
                )


def bare_call_reader(envelope: CallEnvelope) -> Callable[[Parser], Reader]:
    return lambda parser: BareCallReader(parser, envelope)
