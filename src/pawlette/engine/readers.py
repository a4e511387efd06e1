"""Readers: what a parse state does with the text between markers.

Each reader is made when its state is entered and closed when a marker (or the end of input)
leaves it.  Readers never look back at text they already consumed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import partial

from ..types import (
    MetadataItem,
    ReasoningDelta,
    TextDelta,
    Tool,
    ToolCallEnd,
    ToolsDeclared,
)
from .call_arguments import (
    LONG_VALUE,
    MAX_NESTING,
    arguments_problem,
    load_json,
    nested_deeper,
    read_object,
    scan_long_value,
    scan_value,
    within_three,
)
from .call_scanner import CallScanner, offered_tools, unknown_tool
from .call_text import CallText
from .machine import Parser, Reader, ReaderFactory
from .quick_json import many_values, quick_object_check


class ContentReader:
    """Text is message content."""

    __slots__ = ("_parser",)
    whole_kind = "content"  # see pawlette.engine.whole

    def __init__(self, parser: Parser) -> None:
        self._parser = parser

    def feed(self, text: str, offset: int) -> None:
        self._parser.emit(TextDelta(text))

    def close(self, marker: str | None, offset: int) -> None:
        pass


class ReasoningReader:
    """Text is reasoning; entering the state starts (possibly empty) reasoning."""

    __slots__ = ("_parser",)
    whole_kind = "reasoning"  # see pawlette.engine.whole

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
    whole_kind = "scaffold"  # see pawlette.engine.whole

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
_KEY_RUN = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*").match


class HeaderSteps:
    """The steps of one ``key="value"`` header pair, a character at a time: an identifier,
    ``=``, then a JSON string.  Readers that hold text while it can still be a header take
    these steps (``_advance`` is False at the first character no pair can hold)."""

    __slots__ = ("_escaped", "_phase")

    def __init__(self) -> None:
        self._phase = "start"  # start, key, value, string, done, content
        self._escaped = False

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


class HeaderReader(HeaderSteps):
    """``key="value"<separator>`` pairs at the start of a turn, then content.

    Text is held while it can still be a header pair (an identifier, ``=``, a JSON string);
    the separator marker commits it.  Anything else turns the held text into content.
    """

    __slots__ = ("_buffer", "_parser", "_separator")

    def __init__(self, parser: Parser, separator: str) -> None:
        super().__init__()
        self._parser = parser
        self._separator = separator
        self._buffer: list[str] = []

    def feed(self, text: str, offset: int) -> None:
        if self._phase == "content":
            self._parser.emit(TextDelta(text))
            return
        if self._phase == "start":
            # The usual turn starts with text that is no header: a word ended by anything
            # but ``=`` (what the character steps below find, at C speed).
            key = _KEY_RUN(text)
            end = 0 if key is None else key.end()
            if end < len(text) and (end == 0 or text[end] != "="):
                self._phase = "content"
                self._parser.emit(TextDelta(text))
                return
        for character in text:
            if not self._advance(character):
                self._phase = "content"
                self._parser.emit(TextDelta("".join(self._buffer) + text))
                self._buffer = []
                return
        self._buffer.append(text)

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
    """The keys of a JSON call object: ``{"id": ..., "name": ..., "arguments": {...}}``.

    ``also_arguments``: other keys the arguments may come under (exactly one of
    ``arguments`` and these is in a valid call).  ``ignored``: ``(key, value)`` members a
    valid call may hold, with exactly that string value; they are dropped."""

    name: str = "name"
    arguments: str = "arguments"
    id: str | None = "id"
    also_arguments: tuple[str, ...] = ()
    ignored: tuple[tuple[str, str], ...] = ()

    @property
    def arguments_keys(self) -> tuple[str, ...]:
        return (self.arguments, *self.also_arguments)

    def arguments_key_in(self, keys: Collection[str]) -> str | None:
        """The one arguments key among ``keys`` (None: none of them, or several)."""
        present = [key for key in self.arguments_keys if key in keys]
        return present[0] if len(present) == 1 else None


class JsonCallReader:
    """One call written as a JSON object; the arguments value is streamed verbatim.

    The call's text is kept (once: :class:`CallText`, which keeps a big call's arguments
    apart, checked as they come) and read whole at the close by ``json``'s C scanner
    (:func:`read_object`; for a big call, the text around the arguments): a valid call
    becomes ``ToolCallStart``, one ``ToolCallDelta`` with its arguments as written,
    ``ToolCallEnd`` (which is what the parser's call gate releases anyway).  With
    ``stream_arguments`` a :class:`CallScanner` also follows the call as it comes, starting
    it once its name and id are known and passing argument text on at once.  Anything
    :func:`read_object` does not accept goes the slow way, which finds out what is wrong: the
    scanner run over the whole text (as it would have run over the pieces, so generated ids
    are asked for as before) and the checks of :meth:`_validate`.
    """

    # The call's text: its first piece as it came (a call fed whole is one piece: nothing
    # else is made for it), a CallText from the second piece on.  Defaults read from the
    # class until set (a reader is made per call).
    _first = ""
    _text: CallText | None = None
    _fed = False
    _offset = 0
    _live: CallScanner | None = None
    _refused_name = False  # the call's problem is its name: no tool of the request has it
    whole_kind = "call"  # see pawlette.engine.whole: a marker closes it, read as plain_call

    def __init__(self, parser: Parser, envelope: CallEnvelope, close_marker: str) -> None:
        self._parser = parser
        self._envelope = envelope
        self._close_marker = close_marker
        self._open_marker = parser.entered_by or ""
        if parser.stream_arguments:
            self._live = CallScanner(parser, envelope, keep_arguments=False, emit=True)

    def feed(self, text: str, offset: int) -> None:
        if not self._fed:
            self._fed = True
            self._offset = offset
            self._first = text
        else:
            kept = self._text
            if kept is None:
                kept = self._text = CallText(self._envelope.arguments)
                kept.append(self._first)
                self._first = ""
            kept.append(text)
        if self._live is not None:
            self._live.feed(text)

    def _take_text(self) -> str:
        """The call's whole text, let go here."""
        kept = self._text
        if kept is None:
            text, self._first = self._first, ""
            return text
        return kept.take()

    # the close -----------------------------------------------------------------------------

    def close(self, marker: str | None, offset: int) -> None:
        if marker is not None:
            kept = self._text
            if kept is None:
                accepted = self._accept(self._first)
                if accepted:
                    self._first = ""
                    return
            else:
                envelope = kept.envelope()  # a big call: the text around its arguments
                if envelope is None:
                    accepted = self._accept(kept.text())
                else:
                    accepted = self._accept(envelope, kept.arguments)
                if accepted:
                    kept.clear()
                    return
        text = self._take_text()
        # The slow way: what the scanner makes of the whole text, and what is wrong with it.
        scanner = self._live
        if scanner is None:
            scanner = CallScanner(self._parser, self._envelope, keep_arguments=True, emit=True)
            scanner.feed(text)
        if marker is None:
            problem: str | None = "the call is not closed"
        elif scanner is self._live:  # the live scanner kept no arguments: read them again
            checked = CallScanner(self._parser, self._envelope, keep_arguments=True, emit=False)
            checked.feed(text)
            problem = self._validate(text, checked)
        else:
            problem = self._validate(text, scanner)
        if problem is None:
            scanner.maybe_start(final=True)
            scanner.flush()
            if scanner.index is not None:
                self._parser.emit(ToolCallEnd(scanner.index))
                return
            problem = "no call name"
        # Malformed as a call object: what the scanner began is no call.
        scanner.drop_outgoing()
        begun = scanner.call_id if scanner.index is not None else None
        if scanner.index is not None:
            self._parser.abandon_call(scanner.index)
        if marker is not None and not self._refused_name:
            calls = self.recover(text)
            if calls is not None:
                problem = self._emit_recovered(calls, begun)
                if problem is None:
                    return
        # No call at all.  Its text, markers included, comes back once, as content.
        closing = marker if marker == self._close_marker else ""
        raw = self._open_marker + text + closing
        if self._refused_name:
            expected = offered_tools(self._parser.tools)
        else:
            expected = f"a JSON object {{{self._describe()}}} then {self._close_marker!r}"
        where = self._offset if self._fed else offset
        self._parser.malformed(where, f"call {text[:60]!r}: {problem}", expected, raw)
        self._parser.emit(TextDelta(raw))

    def recover(self, text: str) -> list[tuple[str, str | None, str]] | None:
        """The calls (name, id as written or None, arguments as JSON text) in a closed
        call's text that is not one valid call object, read another way; None: it is
        malformed.  A subclass's hook for what models write beside the declared spelling
        (several calls joined by ``;``).  :meth:`close` emits them, or refuses them all as
        it refuses one object: one of them to a tool the request does not offer makes the
        whole text no call (content, with a warning; none of it dropped)."""
        return None

    def _emit_recovered(
        self, calls: list[tuple[str, str | None, str]], begun: str | None
    ) -> str | None:
        """Emit the calls :meth:`recover` read, or say what makes them no calls (a name the
        request's tools do not have).  ``begun``: the id of the call the scanner began and
        gave up, for the first call read instead (so every way of feeding the text gives
        the same ids)."""
        parser = self._parser
        for name, _, _ in calls:
            problem = unknown_tool(parser.tools, name)
            if problem is not None:
                self._refused_name = True
                return problem
        for name, call_id, arguments in calls:
            index = parser.next_call_index()
            identifier = call_id or begun or parser.new_call_id()
            begun = None
            parser.emit_call(index, identifier, name, arguments)
        return None

    def _accept(self, text: str, kept_arguments: Callable[[], str] | None = None) -> bool:
        """A valid call, read in bulk: emit it and say True; else False (nothing emitted).

        ``kept_arguments``: gives the arguments, kept apart and known to be a valid object (asked
        only if they are handed on here, not streamed); ``text`` holds ``{}`` in their place.
        """
        if self._live is None:
            plain = plain_call(self._envelope, text)
            if plain is not None:  # the usual call: read with one match and the C scanner
                caller = self._parser
                written_id, called, begin, finish = plain
                if unknown_tool(caller.tools, called) is not None:
                    return False  # (the slow way says why it is no call)
                # The id first, then the index (as below: an id factory may count the calls).
                identifier = caller.new_call_id() if written_id is None else written_id
                caller.emit_call(
                    caller.next_call_index(),
                    identifier,
                    called,
                    text[begin:finish] if kept_arguments is None else kept_arguments(),
                )
                return True
        members = read_object(text)
        if members is None:
            return False
        envelope = self._envelope
        name = members.get(envelope.name)
        if envelope.also_arguments:
            key = envelope.arguments_key_in(members)
            arguments = None if key is None else members[key]
        else:
            arguments = members.get(envelope.arguments)
        call_id = None if envelope.id is None else members.get(envelope.id)
        if (
            name is None
            or arguments is None
            or not isinstance(name[0], str)
            or not name[0]  # an empty name is no name
            or not isinstance(arguments[0], dict)
            or (call_id is not None and not isinstance(call_id[0], str))
            or not _allowed_keys(envelope).issuperset(members)
        ):
            return False
        for key, value in envelope.ignored:
            if key in members and members[key][0] != value:
                return False
        if unknown_tool(self._parser.tools, name[0]) is not None:
            return False
        start, end = arguments[1], arguments[2]
        del arguments, members  # the decoded arguments go before their text is copied
        parser = self._parser
        scanner = self._live
        if scanner is not None:  # started already, or starts now: as it would have
            scanner.maybe_start(final=True)
            scanner.flush()
            index = scanner.index
        else:
            identifier = parser.new_call_id() if call_id is None else call_id[0]
            index = parser.next_call_index()
            written = text[start:end] if kept_arguments is None else kept_arguments()
            parser.emit_call(index, identifier, name[0], written)
            del written
            return True
        if index is None:  # cannot happen (the scanner saw the same name): the slow way says
            return False
        parser.emit(ToolCallEnd(index))
        return True

    def _describe(self) -> str:
        # The declared keys (also read: ``also_arguments``, which the problem names).
        keys = [self._envelope.id, self._envelope.name, self._envelope.arguments]
        return ", ".join(f'"{key}"' for key in keys if key is not None)

    def _validate(self, text: str, scanner: CallScanner) -> str | None:
        value, problem = load_json(text)
        if problem is not None:
            return problem
        envelope = self._envelope
        if not isinstance(value, dict):
            return "not a JSON object"
        unknown = sorted(set(value) - _allowed_keys(envelope))
        if unknown:
            return f"unknown keys {unknown}"
        if not isinstance(value.get(envelope.name), str):
            return f'"{envelope.name}" is not a string'
        if not value[envelope.name]:
            return f'"{envelope.name}" is empty (no name)'
        refused = unknown_tool(self._parser.tools, value[envelope.name])
        if refused is not None:
            self._refused_name = True
            return refused
        if (
            envelope.id is not None
            and envelope.id in value
            and not isinstance(value[envelope.id], str)
        ):
            return f'"{envelope.id}" is not a string'
        present = [key for key in envelope.arguments_keys if key in value]
        if not present:
            return "no " + " or ".join(f'"{key}"' for key in envelope.arguments_keys)
        if len(present) > 1:
            return "both " + " and ".join(f'"{key}"' for key in present) + " (one is the arguments)"
        key = present[0]
        if not isinstance(value[key], dict):
            return f'"{key}" is not an object'
        for ignored, fixed in envelope.ignored:
            if ignored in value and value[ignored] != fixed:
                return f'"{ignored}" is not {json.dumps(fixed)}'
        if scanner.duplicate is not None:  # json keeps the last; the stream had both
            return f"the key {scanner.duplicate!r} twice"
        return arguments_problem(scanner.values.get(key, "").strip() or "{}")


_ALLOWED: dict[int, tuple[CallEnvelope, frozenset[str]]] = {}
_PLAIN_CALLS: dict[int, tuple[CallEnvelope, Callable[[str], re.Match[str] | None] | None]] = {}
_SPACE = "[ \t\n\r]*"
_PLAIN = '"([^"\\\\\x00-\x1f]*)"'  # a JSON string with no escape nor control character
_WHITESPACE = " \t\n\r"  # JSON's
_PLAIN_TEXT = re.compile('[^"\\\\\x00-\x1f]*')  # written in JSON as it is
_CLOSE = re.compile(_SPACE + r"\}" + _SPACE + r"\Z").match


def plain_call_match(envelope: CallEnvelope) -> Callable[[str], re.Match[str] | None] | None:
    """A match of a call's text up to its arguments, for the usual calls of ``envelope``:
    its keys and nothing else (the id, if any, before or after the name; a member the
    envelope ignores, with its value, first), written plain (no escape), the name not
    empty."""
    kept = _PLAIN_CALLS.get(id(envelope))
    if kept is not None and kept[0] is envelope:
        return kept[1]
    member = f"{_SPACE}:{_SPACE}"
    identifier = (
        ""
        if envelope.id is None
        else f'(?:"{re.escape(envelope.id)}"{member}{_PLAIN}{_SPACE},{_SPACE})?'
    )
    ignored = "".join(
        f'(?:"{re.escape(key)}"{member}"{re.escape(value)}"{_SPACE},{_SPACE})?'
        for key, value in envelope.ignored
        if _PLAIN_TEXT.fullmatch(key) and _PLAIN_TEXT.fullmatch(value)
    )
    keys = "|".join(re.escape(key) for key in envelope.arguments_keys)
    name = f'"{re.escape(envelope.name)}"{member}"([^"\\\\\x00-\x1f]+)"{_SPACE},{_SPACE}'
    match: Callable[[str], re.Match[str] | None] | None = re.compile(
        f'{_SPACE}\\{{{_SPACE}{ignored}{identifier}{name}{identifier}"(?:{keys})"{member}'
    ).match
    if len(_PLAIN_CALLS) >= 256:
        _PLAIN_CALLS.clear()
    _PLAIN_CALLS[id(envelope)] = (envelope, match)
    return match


def plain_call(envelope: CallEnvelope, text: str) -> tuple[str | None, str, int, int] | None:
    """``(id or None, name, start, end)`` of the arguments when ``text`` is a valid call of
    ``envelope`` written the usual way (see :func:`plain_call_match`), its arguments an
    object as :func:`read_object` takes it; else None (the caller reads it the long way,
    which also says what is wrong)."""
    match = plain_call_match(envelope)
    found = None if match is None else match(text)
    if found is None:
        return None
    groups = found.groups()
    if len(groups) == 3:
        before, name, after = groups
        if before is not None and after is not None:
            return None  # the id written twice
        identifier = before if after is None else after
    else:
        identifier, name = None, groups[0]
    start = found.end()
    if not text.startswith("{", start):
        return None
    if len(text) - start >= LONG_VALUE and many_values(text, start):
        # Long arguments of many values are checked on their text, not decoded (see
        # quick_json), up to the call's closing brace; the call object is one level more.
        end = len(text)
        while end > start and text[end - 1] in _WHITESPACE:
            end -= 1
        if text.startswith("}", end - 1):
            end -= 1
            while end > start and text[end - 1] in _WHITESPACE:
                end -= 1
            if quick_object_check(text[start:end], MAX_NESTING - 1):
                return identifier, name, start, end
    try:
        if len(text) - start < LONG_VALUE:
            value, end = scan_value(text, start)
        else:  # only the value's shape is looked at below
            value, end = scan_long_value(text, start)
    except (ValueError, StopIteration, RecursionError):
        return None
    if type(value) is not dict or _CLOSE(text, end) is None:
        return None
    # The call object holds its arguments, and nothing else that nests (the match above):
    # arguments found to nest at most three deep nest four in all, no measure needed.
    if not within_three(value) and nested_deeper(text):
        return None
    return identifier, name, start, end


def _allowed_keys(envelope: CallEnvelope) -> frozenset[str]:
    """The keys a valid call of ``envelope`` may hold, worked out once per envelope (kept
    by identity, with the envelope: a reader is made per call)."""
    kept = _ALLOWED.get(id(envelope))
    if kept is not None and kept[0] is envelope:
        return kept[1]
    ignored = [key for key, _ in envelope.ignored]
    allowed = frozenset(
        key for key in (envelope.id, envelope.name, *envelope.arguments_keys, *ignored) if key
    )
    if len(_ALLOWED) >= 256:
        _ALLOWED.clear()
    _ALLOWED[id(envelope)] = (envelope, allowed)
    return allowed


def json_call_reader(envelope: CallEnvelope, close_marker: str) -> ReaderFactory:
    return partial(JsonCallReader, envelope=envelope, close_marker=close_marker)


def reader_factory(reader: Callable[[Parser], Reader]) -> ReaderFactory:
    """Name a reader class as a factory (readers whose constructor takes only the parser)."""
    return reader
