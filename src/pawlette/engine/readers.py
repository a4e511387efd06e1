"""Readers: what a parse state does with the text between markers.

Each reader is made when its state is entered and closed when a marker (or the end of input)
leaves it.  Readers never look back at text they already consumed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from ..types import (
    MetadataItem,
    ReasoningDelta,
    TextDelta,
    Tool,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolsDeclared,
)
from .call_arguments import arguments_problem, load_json
from .machine import Parser, Reader, ReaderFactory


class ContentReader:
    """Text is message content."""

    __slots__ = ("_parser",)

    def __init__(self, parser: Parser) -> None:
        self._parser = parser

    def feed(self, text: str, offset: int) -> None:
        self._parser.emit(TextDelta(text))

    def close(self, marker: str | None, offset: int) -> None:
        pass


class ReasoningReader:
    """Text is reasoning; entering the state starts (possibly empty) reasoning."""

    __slots__ = ("_parser",)

    def __init__(self, parser: Parser) -> None:
        self._parser = parser
        parser.emit(ReasoningDelta(""))

    def feed(self, text: str, offset: int) -> None:
        self._parser.emit(ReasoningDelta(text))

    def close(self, marker: str | None, offset: int) -> None:
        pass


class WholeTextReader:
    """A base for readers that read their state's text whole, at the close: ``feed`` keeps
    the chunks (``_text()`` joins them) and where the first one began (``_offset``)."""

    __slots__ = ("_chunks", "_offset", "_parser")

    def __init__(self, parser: Parser) -> None:
        self._parser = parser
        self._chunks: list[str] = []
        self._offset = 0

    def feed(self, text: str, offset: int) -> None:
        if not self._chunks:
            self._offset = offset
        self._chunks.append(text)

    def _text(self) -> str:
        return "".join(self._chunks)

    def close(self, marker: str | None, offset: int) -> None:
        raise NotImplementedError


class ScaffoldReader:
    """Only whitespace belongs here (between turns, after the end of a completion).

    Stray text is reported once, whole, when the state ends (strict mode: at once): from its
    first non-whitespace character, however the input was split.  ``scaffold`` marks the
    state as outside a completion's turn (see :mod:`pawlette.engine.machine`).
    """

    __slots__ = ("_offset", "_parser", "_stray")
    scaffold = True

    def __init__(self, parser: Parser) -> None:
        self._parser = parser
        self._stray: list[str] = []
        self._offset = 0

    def feed(self, text: str, offset: int) -> None:
        if not self._stray:
            stripped = text.lstrip()
            if not stripped:
                return
            self._offset = offset + len(text) - len(stripped)
            text = stripped
            if self._parser.strict:
                self._report(text)
        self._stray.append(text)

    def _report(self, text: str) -> None:
        where = f"text in state {self._parser.state.name!r}"
        self._parser.malformed(self._offset, f"{where}: {text[:40]!r}", "only whitespace", text)

    def close(self, marker: str | None, offset: int) -> None:
        if self._stray:
            self._report("".join(self._stray))


# ------------------------------------------------------------------ key="value" headers

_KEY_START = re.compile(r"[A-Za-z_]")
_KEY_CHAR = re.compile(r"[A-Za-z0-9_.\-]")


class HeaderReader:
    """``key="value"<separator>`` pairs at the start of a turn, then content.

    Text is held while it can still be a header pair (an identifier, ``=``, a JSON string);
    the separator marker commits it.  Anything else turns the held text into content.
    """

    __slots__ = ("_buffer", "_escaped", "_parser", "_phase", "_separator")

    def __init__(self, parser: Parser, separator: str) -> None:
        self._parser = parser
        self._separator = separator
        self._buffer: list[str] = []
        self._phase = "start"  # start, key, value, string, done, content
        self._escaped = False

    def feed(self, text: str, offset: int) -> None:
        if self._phase == "content":
            self._parser.emit(TextDelta(text))
            return
        for character in text:
            if not self._advance(character):
                self._phase = "content"
                self._parser.emit(TextDelta("".join(self._buffer) + text))
                self._buffer = []
                return
        self._buffer.append(text)

    def _advance(self, character: str) -> bool:
        phase = self._phase
        if phase == "start":
            self._phase = "key"
            return bool(_KEY_START.match(character))
        if phase == "key":
            if character == "=":
                self._phase = "value"
                return True
            return bool(_KEY_CHAR.match(character))
        if phase == "value":
            self._phase = "string"
            return character == '"'
        if phase == "string":
            if self._escaped:
                self._escaped = False
            elif character == "\\":
                self._escaped = True
            elif character == '"':
                self._phase = "done"
            return True
        return False  # text after the closing quote: not a header

    def close(self, marker: str | None, offset: int) -> None:
        held = "".join(self._buffer)
        if marker != self._separator:
            if held:
                self._parser.emit(TextDelta(held))
            return
        if self._phase != "done":
            self._parser.malformed(
                offset, f"{self._separator!r} after {held[-40:]!r}", 'a key="value" header', held
            )
            self._parser.emit(TextDelta(held + self._separator))
            return
        key, _, value = held.partition("=")
        try:
            decoded = json.loads(value)
        except json.JSONDecodeError:
            self._parser.malformed(offset, f"header value {value!r}", "a JSON string", held)
            self._parser.emit(TextDelta(held + self._separator))
            return
        self._parser.emit(MetadataItem(key, decoded))


def header_reader(separator: str) -> ReaderFactory:
    return partial(HeaderReader, separator=separator)


# ------------------------------------------------------------------ JSON blocks


class JsonToolsReader(WholeTextReader):
    """A JSON array of function objects (a tools block)."""

    __slots__ = ("_kind",)

    def __init__(self, parser: Parser, kind: str = "function") -> None:
        super().__init__(parser)
        self._kind = kind

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        try:
            value = json.loads(text)
            if not isinstance(value, list) or not all(
                isinstance(item, dict) and isinstance(item.get("name"), str) for item in value
            ):
                raise ValueError("not a list of objects with a name")
        except ValueError as error:
            self._parser.malformed(
                offset,
                f"tools block {text[:60]!r} ({error})",
                "a JSON array of function objects",
                text,
            )
            self._parser.emit(TextDelta(text))
            return
        tools = tuple(Tool(name=item["name"], definition=item) for item in value)
        self._parser.emit(ToolsDeclared(tools))


@dataclass(frozen=True, slots=True)
class CallEnvelope:
    """The keys of a JSON call object: ``{"id": ..., "name": ..., "arguments": {...}}``."""

    name: str = "name"
    arguments: str = "arguments"
    id: str | None = "id"


_STRING_STOP = re.compile(r'["\\]')
_BAD_KEY = "\x00 not a key"  # a key that does not decode: no envelope key is this


class JsonCallReader:
    """One call written as a JSON object; the arguments value is streamed verbatim.

    The object is scanned once, character by character outside strings and by jumps inside
    them.  ``ToolCallStart`` is emitted once the name and id are known; argument text seen
    before that is held and released then.  The whole object is validated at the close.
    """

    def __init__(self, parser: Parser, envelope: CallEnvelope, close_marker: str) -> None:
        self._parser = parser
        self._envelope = envelope
        self._close_marker = close_marker
        self._open_marker = parser.entered_by or ""
        self._chunks: list[str] = []
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._key: list[str] | None = None  # a top-level key being read
        self._current_key: str | None = None
        self._value: list[str] | None = None  # raw text of the top-level value being read
        self._pending_space = ""  # whitespace inside the arguments value, not yet emitted
        self._values: dict[str, str] = {}
        self._index: int | None = None
        self._held_arguments: list[str] = []
        self._outgoing: list[str] = []  # argument text of this feed, sent as one delta
        self._offset = 0
        self._duplicate: str | None = None  # a top-level key written twice

    # the scanner ---------------------------------------------------------------------------

    def feed(self, text: str, offset: int) -> None:
        if not self._chunks:
            self._offset = offset
        self._chunks.append(text)
        position = 0
        length = len(text)
        while position < length:
            if self._in_string:
                position = self._scan_string(text, position)
                continue
            character = text[position]
            position += 1
            self._structural(character)
        self._flush()

    def _flush(self) -> None:
        if self._outgoing and self._index is not None:
            self._parser.emit(ToolCallDelta(self._index, "".join(self._outgoing)))
            self._outgoing = []

    def _scan_string(self, text: str, position: int) -> int:
        if self._escaped:
            self._escaped = False
            self._capture(text[position])
            return position + 1
        match = _STRING_STOP.search(text, position)
        end = len(text) if match is None else match.start()
        if end > position:
            self._capture(text[position:end])
        if match is None:
            return end
        character = text[end]
        self._capture(character)
        if character == "\\":
            self._escaped = True
        else:
            self._in_string = False
            if self._key is not None and self._depth == 1 and self._value is None:
                try:
                    self._current_key = json.loads("".join(self._key))
                except ValueError:  # a control character in the key: the close reports it
                    self._current_key = _BAD_KEY
                self._key = None
        return end + 1

    def _capture(self, text: str) -> None:
        if self._key is not None and self._value is None:
            self._key.append(text)
        elif self._value is not None:
            self._value.append(text)
            if self._current_key == self._envelope.arguments:
                self._stream(text)

    def _structural(self, character: str) -> None:
        depth = self._depth
        if character in " \t\r\n":
            if self._value is not None and self._value:
                self._value.append(character)
                if self._current_key == self._envelope.arguments:
                    self._pending_space += character
            return
        if depth == 1 and self._value is None:
            # Between top-level members: a key, a colon, or a comma.
            if character == '"' and self._current_key is None:
                self._key = ['"']
                self._in_string = True
            elif character == ":" and self._current_key is not None:
                self._value = []
            elif character == "}":
                self._depth = 0
            return
        if depth == 0:
            if character == "{":
                self._depth = 1
            return
        # Inside a top-level value.
        value = self._value
        if value is None:  # stray text between members: the validation at the close reports it
            return
        if depth == 1 and character in ",}":
            self._end_value()
            if character == "}":
                self._depth = 0
            return
        if character in "{[":
            self._depth += 1
        elif character in "}]":
            self._depth -= 1
        elif character == '"':
            self._in_string = True
        value.append(character)
        if self._current_key == self._envelope.arguments:
            self._stream(character)

    def _stream(self, text: str) -> None:
        if self._pending_space:
            text = self._pending_space + text
            self._pending_space = ""
        if self._index is None:
            self._held_arguments.append(text)
        else:
            self._outgoing.append(text)

    def _end_value(self) -> None:
        key = self._current_key
        raw = "".join(self._value or [])
        self._pending_space = ""
        self._value = None
        self._current_key = None
        if key is None:
            return
        if key in self._values:
            self._duplicate = key
        self._values[key] = raw
        if key in (self._envelope.name, self._envelope.id):
            self._maybe_start(final=False)

    def _maybe_start(self, *, final: bool) -> None:
        if self._index is not None:
            return
        envelope = self._envelope
        raw_name = self._values.get(envelope.name)
        if raw_name is None:
            return
        have_id = envelope.id is None or envelope.id in self._values
        if not (have_id or final):
            return
        name, problem = load_json(raw_name)
        call_id: Any = None
        if envelope.id is not None and envelope.id in self._values:
            call_id, id_problem = load_json(self._values[envelope.id])
            problem = problem or id_problem
        if problem is not None:
            return
        if call_id is None:
            call_id = self._parser.new_call_id()
        if not isinstance(name, str) or not isinstance(call_id, str):
            return
        self._index = self._parser.next_call_index()
        self._parser.emit(ToolCallStart(self._index, call_id, name))
        self._outgoing = self._held_arguments
        self._held_arguments = []

    # the close -----------------------------------------------------------------------------

    def close(self, marker: str | None, offset: int) -> None:
        text = "".join(self._chunks)
        problem = self._validate(text) if marker is not None else "the call is not closed"
        if problem is None:
            self._maybe_start(final=True)
            self._flush()
            if self._index is not None:
                self._parser.emit(ToolCallEnd(self._index))
                return
            problem = "no call name"
        # Malformed: no call.  Its text, markers included, comes back once, as content.
        closing = marker if marker == self._close_marker else ""
        raw = self._open_marker + text + closing
        expected = f"a JSON object {{{self._describe()}}} then {self._close_marker!r}"
        where = self._offset if self._chunks else offset
        self._parser.malformed(where, f"call {text[:60]!r}: {problem}", expected, raw)
        self._outgoing = []
        if self._index is not None:
            self._parser.abandon_call(self._index)
        self._parser.emit(TextDelta(raw))

    def _describe(self) -> str:
        keys = [self._envelope.id, self._envelope.name, self._envelope.arguments]
        return ", ".join(f'"{key}"' for key in keys if key is not None)

    def _validate(self, text: str) -> str | None:
        value, problem = load_json(text)
        if problem is not None:
            return problem
        envelope = self._envelope
        if not isinstance(value, dict):
            return "not a JSON object"
        allowed = {key for key in (envelope.id, envelope.name, envelope.arguments) if key}
        unknown = sorted(set(value) - allowed)
        if unknown:
            return f"unknown keys {unknown}"
        if not isinstance(value.get(envelope.name), str):
            return f'"{envelope.name}" is not a string'
        if (
            envelope.id is not None
            and envelope.id in value
            and not isinstance(value[envelope.id], str)
        ):
            return f'"{envelope.id}" is not a string'
        if envelope.arguments not in value:
            return f'no "{envelope.arguments}"'
        if not isinstance(value[envelope.arguments], dict):
            return f'"{envelope.arguments}" is not an object'
        if self._duplicate is not None:  # json keeps the last; the stream had both
            return f"the key {self._duplicate!r} twice"
        return arguments_problem(self._values.get(envelope.arguments, "").strip() or "{}")


def json_call_reader(envelope: CallEnvelope, close_marker: str) -> ReaderFactory:
    return partial(JsonCallReader, envelope=envelope, close_marker=close_marker)


def reader_factory(reader: Callable[[Parser], Reader]) -> ReaderFactory:
    """Name a reader class as a factory (readers whose constructor takes only the parser)."""
    return reader
