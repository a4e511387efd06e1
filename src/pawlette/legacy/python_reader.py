"""Readers that drive :class:`~pawlette.codecs.python_calls.PythonCallDecoder` in parse states.

- :class:`CallStream`: one decoder inside a reader: the calls it starts are numbered within
  the parser's message and remembered for result pairing
  (:mod:`pawlette.engine.call_results`), its events go to the parser as they come.
- :class:`PythonCallListReader`: a state whose text is a call list ``[f(a=1), g()]``
  (breeze's ``<|use_tool|>[...]<|eot_id|>``; a parse-table state gets it from
  :func:`pawlette.legacy.python_calls.call_list_reader`).
- :class:`ClosingFence`: streams the body of a Markdown code block, holding back a tail that
  may be its closing fence (a line ````` ``` ````` followed by nothing but whitespace up to the
  end of the state), so a fenced call or program streams without waiting for its end.
- :func:`parse_python_literal`: one Python literal (a tools list, a results list, boxes), read
  by the same decoder, so nothing is ever evaluated.
"""

from __future__ import annotations

import json
from typing import Any

from ..codecs.python_calls import Mode, PythonCallDecoder
from ..engine.call_results import forget_call, remember_call
from ..engine.machine import Parser
from ..errors import ParseError
from ..types import Event, ParseWarning, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart


class CallPairing:
    """Where a reader remembers the calls it starts, so results can answer them by position:
    by default :mod:`pawlette.engine.call_results` (the declared layouts keep their own list: see
    :mod:`pawlette.legacy.python_calls`)."""

    def remember(self, parser: Parser, call_id: str) -> None:
        remember_call(parser, call_id)

    def forget(self, parser: Parser) -> None:
        forget_call(parser)


_ENGINE_PAIRING = CallPairing()


class CallStream:
    """A :class:`PythonCallDecoder` for one parse state, bound to the parser.

    Strict parsers raise the decoder's :class:`ParseError`; lenient ones get its warning and
    the unplaced text as content, exactly as the decoder documents.
    """

    __slots__ = (
        "_decoder",
        "_fixed_callee",
        "_indices",
        "_keep_text",
        "_mode",
        "_name",
        "_offset",
        "_open",
        "_pairing",
        "_parser",
        "_preamble",
        "calls",
        "failed",
        "started",
    )

    def __init__(
        self,
        parser: Parser,
        *,
        mode: Mode,
        fixed_callee: str | None = None,
        name: str | None = None,
        preamble: str = "",
        pairing: CallPairing | None = None,
        keep_text: bool = False,
    ) -> None:
        self._parser = parser
        self._pairing = pairing or _ENGINE_PAIRING
        self._mode: Mode = mode
        self._fixed_callee = fixed_callee
        self._name = name
        self._preamble = preamble
        """Text written before the call (a fence, a name line): in lenient mode it goes to
        content with the call's text when the call turns out malformed."""
        self._decoder: PythonCallDecoder | None = None
        self._keep_text = keep_text
        """Keep all the text fed (for :meth:`text`), as references into the call's JSON where
        they read the same (``mode="single"`` and a parser holding calls; else the decoder
        keeps no text past the call, and :meth:`text` is refused)."""
        self._offset = 0
        self._indices: dict[int, int] = {}  # the decoder's call index -> the parser's
        self._open: int | None = None  # the parser's index of the call being read
        self.calls = 0
        """Calls read whole (valid)."""
        self.failed = False
        """The decoder met text it could not place (lenient mode: that text is content)."""
        self.started = False
        """A call has begun (it will end, or the decoder fails: either way it is no empty
        list)."""

    def _start(self, offset: int) -> PythonCallDecoder:
        if self._decoder is None:
            self._offset = offset
            self._decoder = PythonCallDecoder(
                mode=self._mode,
                strict=self._parser.strict,
                first_index=self._parser.calls_in_message,
                id_factory=self._parser.new_call_id,
                fixed_callee=self._fixed_callee,
                name=self._name,
                base_offset=offset,
                # A parser holding calls until they are known valid gets each call's
                # arguments as one delta at its end: the decoder keeps them compactly, and
                # the parser makes their string once the text it read is let go.
                hold_arguments=False if self._parser.stream_arguments else "late",
                keep_text=self._keep_text and not self._parser.stream_arguments,
            )
        return self._decoder

    def feed(self, text: str, offset: int, start: int = 0, end: int | None = None) -> None:
        """Read ``text[start:end]`` (in place), which begins at ``offset``."""
        if not text if end is None else end <= start:
            return
        decoder = self._decoder
        if decoder is None:
            decoder = self._start(offset)
        events = decoder.feed(text) if end is None else decoder.feed(text, start, end)
        if events:  # most feeds (a token inside a call) complete no event
            self._forward(events)

    def text(self) -> str:
        """All the text fed, as written (``keep_text``, once finished)."""
        if self._decoder is None:
            return ""
        return self._decoder.text()

    def finish(self, offset: int) -> None:
        self._forward(self._start(offset).finish())

    def _forward(self, events: list[Event]) -> None:
        parser = self._parser
        for event in events:
            if isinstance(event, ToolCallStart):
                self._check_name(event.name)
                self.started = True
                index = self._indices[event.index] = parser.next_call_index()
                self._open = index
                self._pairing.remember(parser, event.id)
                event = ToolCallStart(index, event.id, event.name)
            elif isinstance(event, ToolCallDelta):
                event = ToolCallDelta(self._indices[event.index], event.arguments)
            elif isinstance(event, ToolCallEnd):
                event = ToolCallEnd(self._indices[event.index])
                self._open = None
                self.calls += 1
                self._preamble = ""  # it belongs to this call, which stands
            elif isinstance(event, ParseWarning):
                self.failed = True
                if self._open is not None:  # the call being read is no call
                    self._pairing.forget(parser)
                    parser.abandon_call(self._open)
                    self._open = None
            parser.emit(event)
            if isinstance(event, ParseWarning) and self._preamble:
                # The decoder's text of the failed call follows: put what preceded it first.
                parser.emit(TextDelta(self._preamble))
                self._preamble = ""

    def _check_name(self, name: str) -> None:
        """A name outside the declared tools (when the parser knows them) is malformed; lenient
        mode keeps the call as written: the caller decides what an unknown name means."""
        known = [tool.name for tool in self._parser.tools if tool.kind == "function"]
        if self._parser.tools and name not in known:
            self._parser.malformed(
                self._offset,
                f"unknown function {name!r}",
                "one of " + ", ".join(repr(k) for k in known) if known else "no function",
                name,
            )


class PythonCallListReader:
    """The text of the state is one call list, ``[f(a=1), g(b='x')]``, of at least one call:
    the state is entered by a marker that announces calls, so an empty list is malformed."""

    __slots__ = ("_calls", "_parser", "_raw")

    def __init__(self, parser: Parser, pairing: CallPairing | None = None) -> None:
        self._parser = parser
        self._calls = CallStream(parser, mode="list", pairing=pairing)
        # The text, kept only until a call begins (then the list is not empty: the call ends,
        # or the decoder fails and gives the text back itself).
        self._raw: list[str] | None = []

    def feed(self, text: str, offset: int) -> None:
        raw = self._raw
        if raw is not None:
            raw.append(text)
        self._calls.feed(text, offset)
        if raw is not None and self._calls.started:
            self._raw = None

    def close(self, marker: str | None, offset: int) -> None:
        calls = self._calls
        calls.finish(offset)
        if calls.calls or calls.failed:
            return
        raw = "".join(self._raw or ())
        self._parser.malformed(offset, f"an empty list of calls {raw.strip()!r}", "a call", raw)
        self._parser.emit(TextDelta(raw))


# --------------------------------------------------------------------------- fenced blocks

_SPACE = frozenset(" \t\r\n")


class ClosingFence:
    """The body of a code block, streamed; the closing fence is held back until the end.

    The block ends with ``\\n```\\n``-style closing fence: a newline, three backticks, then only
    whitespace up to the end of the state.  :meth:`feed` returns the body text that can no
    longer be part of that fence; :meth:`close` says whether the held tail is the fence (and
    returns it, to be dropped, or to be kept as body text when it is not a fence).
    """

    __slots__ = ("_held", "_phase", "_ticks")

    def __init__(self) -> None:
        self._held: list[str] = []
        self._phase: str | None = None  # None, "ticks" (after \n), "space" (after \n```)
        self._ticks = 0

    def feed(self, text: str) -> str:
        released: list[str] = []
        position, length = 0, len(text)
        while position < length:
            if self._phase is None:
                newline = text.find("\n", position)
                if newline < 0:
                    released.append(text[position:])
                    break
                released.append(text[position:newline])
                self._hold_newline()
                position = newline + 1
                continue
            character = text[position]
            if self._phase == "ticks":
                if character == "`":
                    self._held.append(character)
                    self._ticks += 1
                    if self._ticks == 3:
                        self._phase = "space"
                    position += 1
                elif character == "\n":
                    released.extend(self._held)
                    self._hold_newline()
                    position += 1
                else:
                    released.extend(self._held)
                    self._held = []
                    self._phase = None  # read the character again, outside any fence
            elif character in _SPACE:
                self._held.append(character)
                position += 1
            else:
                held = "".join(self._held)
                if held.endswith("\n"):  # a fresh line may still be the fence
                    released.append(held[:-1])
                    self._hold_newline()
                else:
                    released.append(held)
                    self._held = []
                    self._phase = None
        return "".join(released)

    def _hold_newline(self) -> None:
        self._held = ["\n"]
        self._phase = "ticks"
        self._ticks = 0

    def close(self) -> tuple[bool, str]:
        """``(True, fence)`` when the held tail is the closing fence, else ``(False, text)``."""
        return self._phase == "space", "".join(self._held)


# --------------------------------------------------------------------------- literals


def parse_python_literal(text: str, *, offset: int = 0) -> Any:
    """One Python literal (JSON-compatible: str, number, bool, None, list, dict) as a value.

    Read by :class:`PythonCallDecoder` (as the argument of a call ``_(v=...)``), so only
    literals are accepted and nothing is evaluated.  Raises :class:`ParseError` whose offset
    is ``offset`` plus the position in ``text``.

    >>> parse_python_literal("[{'temperature': 22}, None]")
    [{'temperature': 22}, None]
    """
    prefix = "_(v="
    decoder = PythonCallDecoder(
        mode="single",
        strict=True,
        fixed_callee="_",
        id_factory=lambda: "",
        base_offset=offset - len(prefix),
    )
    events = decoder.feed(prefix) + decoder.feed(text) + decoder.feed(")") + decoder.finish()
    arguments = json.loads("".join(e.arguments for e in events if isinstance(e, ToolCallDelta)))
    if list(arguments) != ["v"]:
        raise ParseError(offset, f"{text[:40]!r}", "one Python literal", text[:80])
    return arguments["v"]


def python_literal_or_none(text: str, *, offset: int = 0) -> Any:
    """:func:`parse_python_literal`, or None for text that is not one literal (a reader then
    keeps the text as it is)."""
    try:
        return parse_python_literal(text, offset=offset)
    except ParseError:
        return None
