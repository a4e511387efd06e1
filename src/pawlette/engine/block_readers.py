"""Readers for the blocks of special-token formats (omni is the first user).

A *block* is a run of markup between an opening and a closing marker that is not plain content.
These are generic concepts; a declaration names the markers:

- :class:`TextReader` with :class:`EdgeNewlines`: text between blocks, where one newline right
  after a block's closing marker, and one right before a block's opening marker, belong to the
  block (the layout ``text\\n<|A_START|>...<|A_END|>\\ntext``): text never gains or loses one.
  With :class:`LazyMessage` the state's message begins only once it has text or ends at a
  marker, so a rendering that ends where a message would begin parses to no empty message.
- :class:`InlineCall`: a call written ``<start>name<args>{json}<close>``.  A *function* call
  streams its arguments and, in a conversation, its result follows inline as a tool message
  (``<close>result<result end>``); an *action* becomes a content part and does not stop.
- :class:`StructuredThinking`: ``<start>preamble<step>title<reasoning>text<conclusion>text
  ...<end>``: flat reasoning text streamed as it comes, plus one step event per step.
- :class:`JsonBlockReader`: a JSON object that becomes one event: a content part
  (:func:`json_part_reader`) or one tool definition (:func:`definition_reader`).
- :class:`HeadedText`: a JSON header then text (a voice part).
- :class:`TokenRunReader`: a run of placeholder tokens that stands for a part (an image).

In lenient mode a block that does not fit becomes text (markers included) plus a warning, so
nothing is lost; in strict mode it raises :class:`~pawlette.errors.ParseError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from ..errors import RequestError
from ..types import (
    ActionPart,
    ContentPart,
    Event,
    MetadataItem,
    PartAdded,
    ReasoningDelta,
    ReasoningStepAdded,
    TextDelta,
    ThinkStep,
    Tool,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolsDeclared,
)
from .call_arguments import load_json
from .machine import Parser, ReaderFactory

NEWLINE = "\n"


# ------------------------------------------------------------------ newlines at block edges


@dataclass(frozen=True, slots=True)
class EdgeNewlines:
    """Markers that own the newline next to them: ``after`` (``<|A_END|>\\n``) and ``before``
    (``\\n<|A_START|>``)."""

    after: frozenset[str] = frozenset()
    before: frozenset[str] = frozenset()


class _Trim:
    """Drops one leading newline (if asked) and holds back one trailing newline until it is
    known whether the closing marker owns it."""

    __slots__ = ("_drop_first", "_held")

    def __init__(self, drop_first: bool) -> None:
        self._drop_first = drop_first
        self._held = False

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
        self._trim = _Trim(parser.entered_by in edges.after)

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
        out = self._trim.close(marker in self._edges.before)
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


class TokenRunReader:
    """A run of placeholder tokens that stands for a part (an image's tokens).

    The run is a state that loops on ``token``; this reader counts the loops and, when the run
    ends (at any other marker or the end of the text), emits ``make(count)``.  Text inside the
    run is not part of anything (an elided ``...``) and is ignored.
    """

    __slots__ = ("_make", "_parser", "_token")

    def __init__(self, parser: Parser, token: str, make: Callable[[int], ContentPart]) -> None:
        self._parser = parser
        self._token = token
        self._make = make
        if parser.entered_by != token:
            parser.shared[f"run:{token}"] = 0

    def feed(self, text: str, offset: int) -> None:
        pass

    def close(self, marker: str | None, offset: int) -> None:
        key = f"run:{self._token}"
        count = self._parser.shared.get(key, 0)
        if marker == self._token:
            self._parser.shared[key] = count + 1
        else:
            self._parser.emit(PartAdded(self._make(count)))


def token_run_reader(token: str, make: Callable[[int], ContentPart]) -> ReaderFactory:
    return partial(TokenRunReader, token=token, make=make)


# ------------------------------------------------------------------ blocks spanning states


@dataclass(slots=True)
class _Block:
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
        return self.failed


def _open_block(parser: Parser, key: str) -> _Block:
    block = _Block(raw=[parser.entered_by or ""])
    parser.shared[key] = block
    return block


def _continue_block(parser: Parser, key: str) -> _Block:
    block = parser.shared.get(key)
    if not isinstance(block, _Block):  # entered without its opening state: treat as text
        block = _Block(failed=True)
        parser.shared[key] = block
    block.raw.append(parser.entered_by or "")
    if block.failed:
        parser.emit(TextDelta(parser.entered_by or ""))
    return block


def _fail(
    parser: Parser, block: _Block, offset: int, found: str, expected: str, tail: str = ""
) -> None:
    """Report a block that does not fit; lenient: it becomes text, markers included."""
    raw = "".join(block.raw) + tail
    parser.malformed(block.offset or offset, found, expected, raw)
    block.failed = True
    parser.emit(TextDelta(raw))


def _json_object(text: str) -> tuple[dict[str, Any] | None, str]:
    """The JSON object in ``text``, or None and what is wrong."""
    value, problem = load_json(text)
    if problem is not None:
        return None, problem
    if not isinstance(value, dict):
        return None, "not a JSON object"
    return value, ""


def _close_json_block(
    parser: Parser,
    block: _Block,
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
    value, problem = _json_object(text)
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
    _fail(parser, block, offset, f"{found}: {problem}", f"{expected} then {close!r}", tail)


# ------------------------------------------------------------------ calls


@dataclass(frozen=True)
class InlineCall:
    """``<start>name<arguments>{json}<close>`` and, for functions in a conversation,
    ``result<result_end>``: one call whose result (if any) is written inline.

    ``kind`` is ``"function"`` (a tool call: the arguments stream; generation stops at
    ``close``) or ``"action"`` (fire and forget: an :class:`ActionPart` at ``close``).  When
    the parser knows the tools, a name outside those of this kind is malformed.
    """

    kind: Literal["function", "action"]
    start: str
    arguments: str
    close: str
    result_end: str | None = None

    @property
    def key(self) -> str:
        return f"call:{self.start}"

    def name_reader(self) -> ReaderFactory:
        return partial(_CallNameReader, call=self)

    def arguments_reader(self) -> ReaderFactory:
        return partial(_CallArgumentsReader, call=self)

    def result_reader(self, edges: EdgeNewlines) -> ReaderFactory:
        """The inline result: a tool message that answers the call (begun lazily)."""

        def start(parser: Parser) -> None:
            block = parser.shared.get(self.key)
            parser.begin_message("tool")
            if isinstance(block, _Block) and block.call_id is not None:
                parser.emit(MetadataItem("id", block.call_id))

        return text_reader(edges, lazy=LazyMessage(start))


class _CallNameReader:
    __slots__ = ("_block", "_call", "_parser")

    def __init__(self, parser: Parser, call: InlineCall) -> None:
        self._parser = parser
        self._call = call
        self._block = _open_block(parser, call.key)

    def feed(self, text: str, offset: int) -> None:
        if not self._block.name and not self._block.offset:
            self._block.offset = offset
        self._block.name += text
        self._block.raw.append(text)

    def close(self, marker: str | None, offset: int) -> None:
        parser, call, block = self._parser, self._call, self._block
        if marker != call.arguments:
            found = f"{call.start!r} block ends at {marker or 'the end of the text'}"
            _fail(parser, block, offset, found, f"a name then {call.arguments!r}")
            return
        if not block.name:
            _fail(parser, block, offset, f"{call.start!r} with no name", f"a {call.kind} name")
            return
        known = [tool.name for tool in parser.tools if tool.kind == call.kind]
        if parser.tools and block.name not in known:
            # Kept (lenient) as what the model wrote: the caller decides what an unknown name means.
            parser.malformed(
                block.offset or offset,
                f"unknown {call.kind} {block.name!r}",
                "one of " + ", ".join(repr(name) for name in known) if known else f"no {call.kind}",
                "".join(block.raw),
            )
        if call.kind == "function":
            block.index = parser.next_call_index()
            block.call_id = parser.new_call_id()
            parser.emit(ToolCallStart(block.index, block.call_id, block.name))


class _CallArgumentsReader:
    """Arguments: streamed verbatim (function calls) with surrounding whitespace dropped."""

    __slots__ = ("_block", "_call", "_chunks", "_parser", "_space", "_started")

    def __init__(self, parser: Parser, call: InlineCall) -> None:
        self._parser = parser
        self._call = call
        self._block = _continue_block(parser, call.key)
        self._chunks: list[str] = []
        self._space = ""  # whitespace not yet known to be inside the arguments
        self._started = False

    def feed(self, text: str, offset: int) -> None:
        block = self._block
        if block.passes_on(self._parser, text):
            return
        self._chunks.append(text)
        if block.index is None:
            return
        if not self._started:
            text = text.lstrip()
            if not text:
                return
            self._started = True
        body = text.rstrip()
        out = self._space + body if body else ""
        self._space = text[len(body) :] if body else self._space + text
        if out:
            self._parser.emit(ToolCallDelta(block.index, out))

    def close(self, marker: str | None, offset: int) -> None:
        parser, call, block = self._parser, self._call, self._block
        if block.closes_as_text(parser, marker, call.close):
            return
        text = "".join(self._chunks).strip()
        value, problem = _json_object(text)
        if marker is None and value is None:
            problem = (
                f"unterminated {call.arguments!r}: the arguments end before a whole JSON object"
            )
        elif marker is not None and marker != call.close:
            value, problem = None, f"the arguments end at {marker!r}"
        if call.kind == "action":
            if value is None:
                found = f"action {block.name!r}: {problem}"
                _fail(
                    parser, block, offset, found, f"a JSON object then {call.close!r}", marker or ""
                )
            else:
                parser.emit(PartAdded(ActionPart(block.name, text)))
            return
        if value is None:
            # No call: its text (markers included) comes back once, as content.
            expected = f"a JSON object then {call.close!r}"
            found = f"function {block.name!r}: {problem}"
            raw = "".join(block.raw) + (marker if marker == call.close else "")
            parser.malformed(block.offset or offset, found, expected, raw)
            if block.index is not None:
                parser.abandon_call(block.index)
                block.index = None
            block.failed = True
            parser.emit(TextDelta(raw))
            return
        if block.index is not None:
            parser.emit(ToolCallEnd(block.index))


# ------------------------------------------------------------------ structured thinking


@dataclass(slots=True)
class _Thinking:
    pieces: int = 0  # pieces of flat text written so far (an empty preamble is none)
    fields: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class StructuredThinking:
    """``<start>preamble<step>title<reasoning>text<conclusion>text ... <end>``.

    Reasoning deltas carry the flat text: the preamble (when not empty) and every title,
    reasoning and conclusion, joined by newlines; each finished step is also emitted as a
    :class:`ThinkStep`.  Each field gives its one trailing newline to the marker after it.
    """

    step: str
    reasoning: str
    conclusion: str
    end: str

    @property
    def closers(self) -> frozenset[str]:
        return frozenset((self.step, self.reasoning, self.conclusion, self.end))

    def reader(
        self, part: Literal["preamble", "title", "reasoning", "conclusion"]
    ) -> ReaderFactory:
        return partial(_ThinkingReader, thinking=self, part=part)


def flatten_thinking(preamble: str, steps: tuple[ThinkStep, ...]) -> str:
    """The flat reasoning text of a preamble and steps (see :class:`StructuredThinking`)."""
    pieces = [preamble] if preamble else []
    for step in steps:
        pieces += (step.title, step.reasoning, step.conclusion)
    return NEWLINE.join(pieces)


def split_thinking(flat: str, steps: tuple[ThinkStep, ...]) -> str | None:
    """The preamble such that ``flatten_thinking(preamble, steps) == flat``, or None."""
    if not steps:
        return flat
    tail = flatten_thinking("", steps)
    if flat == tail:
        return ""
    if len(flat) > len(tail) + 1 and flat.endswith(NEWLINE + tail):
        return flat[: -len(tail) - 1]
    return None


class _ThinkingReader:
    __slots__ = ("_offset", "_parser", "_part", "_state", "_text", "_thinking", "_trim")

    def __init__(self, parser: Parser, thinking: StructuredThinking, part: str) -> None:
        self._parser = parser
        self._thinking = thinking
        self._part = part
        self._trim = _Trim(False)
        self._text: list[str] = []
        self._offset: int | None = None  # where its text began (however the input was split)
        state = parser.shared.get("thinking")
        if part == "preamble" or not isinstance(state, _Thinking):
            state = _Thinking()
            parser.shared["thinking"] = state
            parser.emit(ReasoningDelta(""))
        if part != "preamble":
            if state.pieces:
                parser.emit(ReasoningDelta(NEWLINE))
            state.pieces += 1
            if part == "title":
                state.fields = []
        self._state = state

    def _write(self, text: str) -> None:
        if text:
            if self._part == "preamble":
                self._state.pieces = 1
            self._text.append(text)
            self._parser.emit(ReasoningDelta(text))

    def feed(self, text: str, offset: int) -> None:
        if self._offset is None:
            self._offset = offset
        self._write(self._trim.feed(text))

    def close(self, marker: str | None, offset: int) -> None:
        thinking, state = self._thinking, self._state
        inside = marker in thinking.closers
        self._write(self._trim.close(inside))
        text = "".join(self._text)
        if self._part in ("title", "reasoning"):
            state.fields.append(text)
        elif self._part == "conclusion" and len(state.fields) == 2:
            step = ThinkStep(state.fields[0], state.fields[1], text)
            self._parser.emit(ReasoningStepAdded(step))
        if not inside:
            where = repr(marker) if marker is not None else "the end of the text"
            self._parser.malformed(
                offset if self._offset is None else self._offset,
                f"the thinking is not closed: it ends at {where}",
                f"{thinking.end!r} first",
                text[-80:],
            )


# ------------------------------------------------------------------ JSON blocks


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
        self._block = _Block(raw=[parser.entered_by or ""])
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
        _close_json_block(
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

    start: str
    body: str
    end: str
    make: Callable[[dict[str, Any], str], ContentPart]

    @property
    def key(self) -> str:
        return f"headed:{self.start}"

    def header_reader(self) -> ReaderFactory:
        return partial(_HeaderReader, headed=self)

    def body_reader(self) -> ReaderFactory:
        return partial(_HeadedBodyReader, headed=self)


class _HeaderReader:
    __slots__ = ("_block", "_headed", "_parser")

    def __init__(self, parser: Parser, headed: HeadedText) -> None:
        self._parser = parser
        self._headed = headed
        self._block = _open_block(parser, headed.key)

    def feed(self, text: str, offset: int) -> None:
        if not self._block.header:
            self._block.offset = offset
        self._block.header += text
        self._block.raw.append(text)

    def close(self, marker: str | None, offset: int) -> None:
        if marker != self._headed.body:
            found = f"{self._headed.start!r} block not closed"
            _fail(self._parser, self._block, offset, found, f"{self._headed.body!r}")


class _HeadedBodyReader:
    __slots__ = ("_block", "_headed", "_parser", "_text", "_trim")

    def __init__(self, parser: Parser, headed: HeadedText) -> None:
        self._parser = parser
        self._headed = headed
        self._block = _continue_block(parser, headed.key)
        self._trim = _Trim(True)
        self._text: list[str] = []

    def feed(self, text: str, offset: int) -> None:
        if not self._block.passes_on(self._parser, text):
            self._text.append(self._trim.feed(text))

    def close(self, marker: str | None, offset: int) -> None:
        headed, block = self._headed, self._block
        if block.closes_as_text(self._parser, marker, headed.end):
            return
        self._text.append(self._trim.close(marker == headed.end))

        def make(header: dict[str, Any]) -> Event:
            return PartAdded(headed.make(header, "".join(self._text)))

        found = f"{headed.start!r} block: header {block.header.strip()[:60]!r}"
        _close_json_block(
            self._parser,
            block,
            offset,
            marker,
            headed.end,
            block.header,
            make,
            (RequestError, ValueError),
            found,
            "a JSON object header",
        )
