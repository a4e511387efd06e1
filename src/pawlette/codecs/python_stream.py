"""The reader part that drives :class:`~pawlette.codecs.python_calls.PythonCallDecoder` in
parse states: :class:`CallStream`, one decoder inside a reader (beside the codec it drives,
below the concepts whose readers use it).  The calls it starts are
numbered within the parser's message, its events go to the parser as they come (results are
paired with calls by position in the fold: :func:`pawlette.engine.fold.pair_results`).  Breeze's
call lists (:class:`pawlette.declare.python_calls.PythonCallListReader`) and ChatGLM3's
calls read through it.
"""

from __future__ import annotations

from ..engine.call_scanner import offered_tools, unknown_tool
from ..engine.machine import Parser
from ..types import Event, ParseWarning, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from .python_calls import Mode, PythonCallDecoder


class CallStream:
    """A :class:`PythonCallDecoder` for one parse state, bound to the parser.

    Strict parsers raise the decoder's :class:`ParseError`; lenient ones get its warning and
    the unplaced text as content, exactly as the decoder documents.  A call to a name none of
    the request's tools has is such text (the decoder refuses it before it begins); without
    tools in the request any name is a call.
    """

    __slots__ = (
        "_decoder",
        "_fixed_callee",
        "_indices",
        "_keep_text",
        "_mode",
        "_name",
        "_open",
        "_parser",
        "_preamble",
        "_raw_strings",
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
        keep_text: bool = False,
        raw_strings: bool = False,
    ) -> None:
        self._parser = parser
        self._raw_strings = raw_strings
        """A call's argument in single quotes is raw (see the decoder's ``raw_strings``)."""
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
            self._decoder = PythonCallDecoder(
                mode=self._mode,
                strict=self._parser.strict,
                first_index=self._parser.calls_in_message,
                id_factory=self._parser.new_call_id,
                fixed_callee=self._fixed_callee,
                name=self._name,
                refuse_name=self._refused if self._parser.tools else None,
                base_offset=offset,
                # A parser holding calls until they are known valid gets each call's
                # arguments as one delta at its end: the decoder keeps them compactly, and
                # the parser makes their string once the text it read is let go.
                hold_arguments=False if self._parser.stream_arguments else "late",
                keep_text=self._keep_text and not self._parser.stream_arguments,
                raw_strings=self._raw_strings,
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
                self.started = True
                index = self._indices[event.index] = parser.next_call_index()
                self._open = index
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
                    parser.abandon_call(self._open)
                    self._open = None
            parser.emit(event)
            if isinstance(event, ParseWarning) and self._preamble:
                # The decoder's text of the failed call follows: put what preceded it first.
                parser.emit(TextDelta(self._preamble))
                self._preamble = ""

    def _refused(self, name: str) -> tuple[str, str] | None:
        """What makes a call to ``name`` no call (found, expected), or None."""
        tools = self._parser.tools
        problem = unknown_tool(tools, name)
        return None if problem is None else (problem, offered_tools(tools))
