"""The incremental scanner of a JSON call object, and the buffer that keeps a call's text.

:class:`CallScanner` follows a call object as it streams (``{"id": ..., "name": ...,
"arguments": {...}}``): it records the raw text of each top-level value, starts the call
(``ToolCallStart``) once its name and id are known, and passes the arguments' text on as it
comes (whitespace between tokens only once more of the value follows it).  It reads runs of
plain characters in bulk (a regex match, or a jump to the next quote or backslash inside a
string), so its cost per character is that of ``re``, not of a Python loop; its rules are the
character-by-character ones of :meth:`CallScanner._structural`.

:class:`TextPieces` keeps fed text compactly: small pieces are joined every
:data:`PIECES_PER_BLOCK` pieces, so a call fed a character at a time costs about its own size
in memory, not a list entry and an object per piece.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ..types import ToolCallDelta, ToolCallStart
from .call_arguments import load_json

if TYPE_CHECKING:
    from ..types import Tool
    from .machine import Parser
    from .readers import CallEnvelope

PIECES_PER_BLOCK = 1024


def unknown_tool(tools: tuple[Tool, ...], name: str) -> str | None:
    """What makes a call to ``name`` no call: none of the request's ``tools`` has that name
    (compared exactly: ``get`` does not stand for ``get_weather``).  None: a tool has it, or
    the request has no tools (any name is then a call: nothing says which are offered)."""
    if tools and all(tool.name != name for tool in tools):
        return f"{NO_TOOL_NAMED}{name!r}"
    return None


NO_TOOL_NAMED = "no tool named "
"""How :func:`unknown_tool`'s problem begins (a reader that gives a call back for another
reason says what it expected otherwise)."""


def offered_tools(tools: tuple[Tool, ...]) -> str:
    """The request's tools, as a warning about a call to another name lists them (the
    first few, when there are many)."""
    names = [repr(tool.name) for tool in tools[:_LISTED_TOOLS]]
    more = len(tools) - len(names)
    listed = ", ".join(names) + (f" and {more} more" if more else "")
    return f"a call to one of the request's tools ({listed})"


_LISTED_TOOLS = 8


class TextPieces:
    """Appended text, joined once at the end (``take``), held compactly meanwhile."""

    __slots__ = ("_blocks", "_pieces")

    def __init__(self) -> None:
        self._blocks: list[str] = []
        self._pieces: list[str] = []

    def append(self, text: str) -> None:
        pieces = self._pieces
        pieces.append(text)
        if len(pieces) >= PIECES_PER_BLOCK:
            self._blocks.append("".join(pieces))
            pieces.clear()

    def take(self) -> str:
        """All the text appended so far, as one string; the buffer is empty afterwards."""
        blocks, pieces = self._blocks, self._pieces
        self._blocks, self._pieces = [], []
        if not blocks:
            return "".join(pieces)
        blocks.append("".join(pieces))
        pieces.clear()
        text = "".join(blocks)
        blocks.clear()  # the pieces go now, not when this frame ends
        return text


_STRING_STOP = re.compile(r'["\\]')
_WHITESPACE = " \t\r\n"
# Inside a top-level value, outside strings: a run of characters that are simply part of the
# value (no whitespace, quote, bracket, brace or comma), or a run of whitespace.
_VALUE_RUN = re.compile(r'[^ \t\r\n"{}\[\],]+|[ \t\r\n]+')
# Between top-level members: what changes the state there (a key, a colon, the end).
_BETWEEN_MEMBERS = re.compile(r'["}:]')
_BAD_KEY = "\x00 not a key"  # a key that does not decode: no envelope key is this


class CallScanner:
    """Follows one JSON call object through its pieces (see the module docstring).

    ``keep_arguments``: keep the arguments' raw text too (:attr:`values`), for the close to
    check it; a live scanner streams it instead and keeps only its first piece.  ``emit``:
    start the call and stream its arguments through the parser (a scanner run again over a
    whole text only to learn its values emits nothing).
    """

    def __init__(
        self, parser: Parser, envelope: CallEnvelope, *, keep_arguments: bool, emit: bool
    ) -> None:
        self._parser = parser
        self._envelope = envelope
        self._arguments_keys = envelope.arguments_keys
        self._streamed_key: str | None = None  # the arguments key streamed (the first seen)
        self._keep_arguments = keep_arguments
        self._emit = emit
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._key: list[str] | None = None  # a top-level key being read
        self._current_key: str | None = None
        self._value: list[str] | None = None  # raw text of the top-level value being read
        self._store = True  # whether the value's text is kept (else only its first piece)
        self._streaming = False  # whether the value is the arguments
        self._pending_space = ""  # whitespace inside the arguments value, not yet emitted
        self.values: dict[str, str] = {}
        self.index: int | None = None
        self.call_id: str | None = None
        """The id of the call once started (generated or read)."""
        self._held_arguments: list[str] = []
        self._outgoing: list[str] = []  # argument text of this feed, sent as one delta
        self.duplicate: str | None = None  # a top-level key written twice

    def feed(self, text: str) -> None:
        position = 0
        length = len(text)
        while position < length:
            if self._in_string:
                position = self._scan_string(text, position)
                continue
            value = self._value
            depth = self._depth
            if value is not None and depth >= 1:
                run = _VALUE_RUN.match(text, position)
                if run is not None:
                    position = run.end()
                    self._value_run(run.group(), value)
                    continue
            elif value is None:
                # Between top-level members, or before the object: skip to what matters.
                if depth == 1:
                    found = _BETWEEN_MEMBERS.search(text, position)
                    position = length if found is None else found.start()
                else:
                    position = text.find("{", position)
                    if position < 0:
                        position = length
                if position == length:
                    break
            character = text[position]
            position += 1
            self._structural(character)
        self._flush()

    def _value_run(self, run: str, value: list[str]) -> None:
        """A run that :data:`_VALUE_RUN` matched, inside a value: what ``_structural`` does
        with each of its characters, at once."""
        if run[0] in _WHITESPACE:
            if value:
                if self._store:
                    value.append(run)
                if self._streaming:
                    self._pending_space += run
            return
        if self._store or not value:
            value.append(run)
        if self._streaming:
            self._stream(run)

    def flush(self) -> None:
        self._flush()

    def _flush(self) -> None:
        if self._outgoing and self.index is not None:
            self._parser.emit(ToolCallDelta(self.index, "".join(self._outgoing)))
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
        value = self._value
        if self._key is not None and value is None:
            self._key.append(text)
        elif value is not None:
            if self._store or not value:
                value.append(text)
            if self._streaming:
                self._stream(text)

    def _structural(self, character: str) -> None:
        depth = self._depth
        if character in _WHITESPACE:
            if self._value is not None and self._value:
                if self._store:
                    self._value.append(character)
                if self._streaming:
                    self._pending_space += character
            return
        if depth == 1 and self._value is None:
            # Between top-level members: a key, a colon, or a comma.
            if character == '"' and self._current_key is None:
                self._key = ['"']
                self._in_string = True
            elif character == ":" and self._current_key is not None:
                self._begin_value()
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
        if self._store or not value:
            value.append(character)
        if self._streaming:
            self._stream(character)

    def _begin_value(self) -> None:
        self._value = []
        key = self._current_key
        # Arguments under a second accepted key (``"parameters"`` and ``"arguments"``) make
        # the call malformed (the close says so); only the first is streamed.
        self._streaming = key in self._arguments_keys and self._streamed_key in (None, key)
        if self._streaming:
            self._streamed_key = key
        self._store = self._keep_arguments or not self._streaming

    def _stream(self, text: str) -> None:
        if self._pending_space:
            text = self._pending_space + text
            self._pending_space = ""
        if self.index is None:
            self._held_arguments.append(text)
        else:
            self._outgoing.append(text)

    def _end_value(self) -> None:
        key = self._current_key
        raw = "".join(self._value or [])
        self._pending_space = ""
        self._value = None
        self._streaming = False
        self._current_key = None
        if key is None:
            return
        if key in self.values:
            self.duplicate = key
        self.values[key] = raw
        if key in (self._envelope.name, self._envelope.id):
            self.maybe_start(final=False)

    def maybe_start(self, *, final: bool) -> None:
        if self.index is not None or not self._emit:
            return
        envelope = self._envelope
        raw_name = self.values.get(envelope.name)
        if raw_name is None:
            return
        have_id = envelope.id is None or envelope.id in self.values
        if not (have_id or final):
            return
        name, problem = load_json(raw_name)
        call_id: Any = None
        if envelope.id is not None and envelope.id in self.values:
            call_id, id_problem = load_json(self.values[envelope.id])
            problem = problem or id_problem
        if problem is not None:
            return
        if isinstance(name, str) and name and unknown_tool(self._parser.tools, name) is not None:
            return  # a call to a tool the request does not offer is no call: the close says so
        if call_id is None:
            call_id = self._parser.new_call_id()
        if not isinstance(name, str) or not name or not isinstance(call_id, str):
            return  # (an empty name is no name: such a call is never started)
        self.index = self._parser.next_call_index()
        self.call_id = call_id
        self._parser.emit(ToolCallStart(self.index, call_id, name))
        self._outgoing = self._held_arguments
        self._held_arguments = []

    def drop_outgoing(self) -> None:
        self._outgoing = []
