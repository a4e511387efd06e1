"""Tool calls written in Python call syntax: literals only, read incrementally, never evaluated.

Two wire shapes, one grammar::

    mode="list"    [get_weather(city='San Francisco', metric='celsius'), get_weather(city='Paris')]
    mode="single"  tool_call(location="beijing", unit="celsius")

The grammar accepted (whitespace, newlines included, is allowed between any two tokens)::

    calls     := "[" [call ("," call)* [","]] "]"              (mode "list")
    call      := NAME "(" [keyword ("," keyword)* [","]] ")"    (alone in mode "single")
    keyword   := NAME "=" value
    value     := string+ | number | constant | list | dict     (string+: adjacent strings join)
    list      := "[" [value ("," value)* [","]] "]"
    dict      := "{" [string+ ":" value ("," string+ ":" value)* [","]] "}"
    number    := ["-"] Python decimal int or float (1_000, 0.5, .5, 5., 1e-3; no hex, no complex)
    constant  := True | False | None | true | false | null
    string    := '...' or "..." with Python escapes (\\n \\t \\xhh \\uhhhh \\Uhhhhhhhh \\N{name}
                 octal \\0..\\377, line continuation); no prefixes, no triple quotes

Anything else (an expression such as ``1+2``, a bare name, a positional argument, a nested
call, attribute access, a tuple, ``**kwargs``) is refused: nothing in model text is evaluated.

Decisions
---------
- Arguments stream as JSON text: the ``ToolCallDelta.arguments`` of one call concatenate to
  exactly ``json.dumps(arguments, ensure_ascii=False)``.  ``ToolCallStart`` is emitted at the
  ``(``, string contents as they arrive, numbers and constants when their token ends, and
  ``ToolCallEnd`` at the ``)``.  A string's closing ``"`` waits for the next token, because
  Python joins adjacent strings (``'a' 'b'`` is ``'ab'``).
- Keyword names and the callee are NFKC-normalised, as Python does with identifiers.  A
  repeated keyword, or a repeated key in a dict literal, is an error (Python refuses the first;
  the second would silently lose data).
- Unknown escapes such as ``'\\d'`` keep their backslash, as Python does.
- With ``fixed_callee="tool_call"`` only that callee is accepted; ``name`` (if given) is the
  name reported in ``ToolCallStart`` instead of the callee as written (ChatGLM3 puts the real
  tool name on the header line).
- ``refuse_name`` (if given) says what is wrong with a call to a name it refuses (found,
  expected), or None: a call it refuses is an error at its ``(``, before its
  ``ToolCallStart`` (a reader gives its text back: a call to a tool the request does not
  offer), so a refused call never begins, streamed or not.  It sees the name reported (``name``
  when given).
- Leading whitespace and trailing whitespace are allowed; other trailing text is an error.
- Strict mode raises :class:`~pawlette.errors.ParseError` with the absolute offset
  (``base_offset`` + position) of the offending token.  After that the decoder is dead: later
  calls raise the same error.
- Lenient mode never raises.  Input is divided at *commit points*: the ``)`` of each call
  and the ``]`` of the list.  Text up to the last commit point belongs to completed calls;
  on an error, everything after it (the call in progress, the separator before it, the rest of
  the input, later chunks too) is returned as ``TextDelta``, after one ``ParseWarning`` whose
  ``text`` is that raw text up to and including the offending character.  So every input
  character is in a completed call's source or in a ``TextDelta``.  A call that had already
  started never gets its ``ToolCallEnd``: a call without one is no call (its events are to
  be dropped, as :class:`~pawlette.engine.machine.Parser` does); its text is in the
  ``TextDelta``.  Events that were already returned are never retracted.
- Containers (the call's arguments, lists, dicts) nest at most
  :data:`~pawlette.engine.call_arguments.MAX_NESTING` deep, and a lone surrogate (Python
  makes one of ``'\\ud800'``) is written as its JSON ``\\u`` escape, never raw: so every
  call's arguments are JSON any consumer can read and encode.
- ``hold_arguments=True`` (a parser that holds each call until it is known valid): a call's
  arguments come as one ``ToolCallDelta`` at its ``)``, kept meanwhile as UTF-8 in a memory
  map (:class:`~pawlette.engine.call_text.MappedPieces`); the raw text since the last
  commit point is kept compressed (:class:`~pawlette.engine.call_text.PackedText`), and let
  go before the arguments' string is made.  Events are otherwise the same: joined, the
  deltas are the same text.  ``hold_arguments="late"``
  (:class:`~pawlette.engine.machine.Parser`'s readers): that delta's arguments are a
  :class:`~pawlette.engine.call_text.LateText` whose strings its consumer makes later, once
  the text fed is let go (a call fed whole is not held three times: text, map, string), in
  pieces as the map is released (a delta each: see :mod:`pawlette.engine.machine`).
- ``keep_text=True`` (``mode="single"``, held arguments; chatglm3's reader): the decoder
  keeps all the text it is fed, for :meth:`PythonCallDecoder.text` (the fenced call's text,
  given back in a warning when its closing fence is missing) and in place of the raw text
  since the commit point.  Up to :data:`ECHO_FROM` characters it is kept as it is; past
  that, as references into the call's JSON wherever the two read the same
  (:class:`~pawlette.engine.call_text.EchoText`: string contents, and the escapes whose JSON
  is the escape as written, ``\\"`` ``\\\\`` ``\\n`` ``\\t``...), the rest (names, quotes,
  numbers, other escapes) as it is: a big call's text costs a few entries, not a copy.
- ``raw_strings=True`` (LFM2.5, whose template writes ``"'" + value + "'"``): a call's
  argument in single quotes is raw, with no escape (``'C:\\temp'`` keeps its backslash), and
  ends at the first ``'`` after which the call goes on: ``)``, or ``,`` then spaces, a name,
  spaces and ``=`` (``city='O'Hare', days=3``: ``O'Hare``).  Such a ``'`` and what follows it
  are held until they tell (``', da`` may be text); held text that turns out to be the
  string's goes on as its content.  A string inside a list or a dict, and a string in double
  quotes, is read as Python reads it.
- ``feed(text, start, end)`` reads ``text[start:end]`` in place: a reader holding a big run
  of text hands over a part of it with no copy cut out of it.
- Work per character is O(1) amortised: string contents are consumed by regular-expression
  jumps, tokens are buffered only until they end, and nothing consumed is scanned again.

What the decoder reads is written by :mod:`pawlette.codecs.python_literals`
(:func:`~pawlette.codecs.python_literals.encode_call` and the rest).

>>> decoder = PythonCallDecoder(mode="list", id_factory=lambda: "call_1")
>>> decoder.feed("[get_weather(city='Paris')]") + decoder.finish()  # doctest: +NORMALIZE_WHITESPACE
[ToolCallStart(index=0, id='call_1', name='get_weather'),
 ToolCallDelta(index=0, arguments='{"city": "Paris"}'), ToolCallEnd(index=0)]
"""

from __future__ import annotations

import json
import keyword
import math
import re
import secrets
import unicodedata
from collections.abc import Callable
from typing import Any, Literal

from ..engine.call_arguments import MAX_NESTING, nested_deeper
from ..engine.call_text import EchoText, LateText, MappedPieces, PackedText, late_text
from ..errors import ParseError
from ..json_values import refuse_json_constant, refuse_json_overflow
from ..types import Event, ParseWarning, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart

__all__ = ["PythonCallDecoder", "parse_python_literal", "python_literal_or_none"]

Mode = Literal["list", "single"]

# --------------------------------------------------------------------------- shared tables

# Python's whitespace between tokens (inside brackets newlines are whitespace too).
_WHITESPACE = frozenset(" \t\n\r\f")
_DIGITS = frozenset("0123456789")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_OCTAL_DIGITS = frozenset("01234567")
_NUMBER_CHARACTERS = frozenset("0123456789_.eE")
_QUOTES = frozenset("'\"")

# A string's content runs up to its quote, a backslash or a line break: one regex jump.
_STRING_STOP = {
    "'": re.compile(r"[\\'\n\r]"),
    '"': re.compile(r'[\\"\n\r]'),
}

_SIMPLE_ESCAPES = {
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}
_HEX_ESCAPE_LENGTH = {"x": 2, "u": 4, "U": 8}
# Simple escapes whose JSON is the escape as written (``\\"`` ``\\n``...): kept by reference.
_SAME_ESCAPES = {
    character: "\\" + character
    for character, decoded in _SIMPLE_ESCAPES.items()
    if json.dumps(decoded, ensure_ascii=False)[1:-1] == "\\" + character
}
ECHO_FROM = 1 << 14
"""``keep_text``: past this many characters a call's text is kept as references into its JSON
(below, as it is: a small call is cheaper kept than referred to)."""
_HELD_BATCH = 256  # held arguments: pieces joined and stored at a time within one feed
_HELD_STEP = 4096  # held arguments: stored at least once per this many characters fed
_LONGEST_CHARACTER_NAME = 256  # far above any Unicode name; bounds what \N{ may buffer

# Python's decimal literals (PEP 515 underscores), with the unary minus models write.
_DIGIT_PART = r"[0-9](?:_?[0-9])*"
_POINT_FLOAT = rf"(?:{_DIGIT_PART})?\.{_DIGIT_PART}|{_DIGIT_PART}\."
_NUMBER = re.compile(
    rf"-?(?:(?:{_DIGIT_PART}|{_POINT_FLOAT})[eE][+-]?{_DIGIT_PART}"
    rf"|{_POINT_FLOAT}|[1-9](?:_?[0-9])*|0(?:_?0)*)"
)

_CONSTANTS = {
    "True": "true",
    "False": "false",
    "None": "null",
    "true": "true",
    "false": "false",
    "null": "null",
}

_CLOSERS = {"list": "]", "dict": "}", "call": ")"}

# What a stray character after a complete value most likely is, for the error message.
_AFTER_VALUE_FOUND = {
    "(": "a call on a value",
    ".": "attribute access or a method call",
    "[": "indexing",
    "=": "'=' after a value",
}


def _is_name_start(character: str) -> bool:
    return character.isidentifier()


def _is_name_continue(character: str) -> bool:
    return ("a" + character).isidentifier()


def _misplaced_name(name: str, character: str, otherwise: str) -> str:
    """What ``name`` followed by ``character`` most likely is, for an error message."""
    if character == "(":
        return f"a nested call to {name!r}"
    if character == ".":
        return f"attribute access on {name!r}"
    return otherwise


def is_plain_identifier(name: str) -> bool:
    """What a keyword argument or callee may be, exactly as the decoder will read it back."""
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and unicodedata.normalize("NFKC", name) == name
    )


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


# What json.dumps(ensure_ascii=False) escapes in a string (the quote, the backslash, control
# characters) and the lone surrogates written escaped here: text with none is its own body.
_JSON_ESCAPED = re.compile(r'["\\\x00-\x1f\ud800-\udfff]')


def _json_string_body(text: str) -> str:
    """``text`` as JSON string content, escaped as ``json.dumps`` escapes it, except that a
    lone surrogate (``'\\ud800'`` is one in Python) is written as its ``\\u`` escape: no
    UTF-8 text can hold it raw, and ``json.loads`` reads the escape back to the same string."""
    if _JSON_ESCAPED.search(text) is None:
        return text  # most text: nothing to escape
    body = json.dumps(text, ensure_ascii=False)[1:-1]
    if _SURROGATE.search(body) is None:
        return body
    return _SURROGATE.sub(_escape_surrogate, body)


def random_call_id() -> str:
    """``call_`` and 24 random hex characters, like OpenAI's ids."""
    return "call_" + secrets.token_hex(12)


# --------------------------------------------------------------------------- decoder


class _Frame:
    """An open container: the call's keyword arguments, a list or a dict."""

    __slots__ = ("has_items", "keys", "kind")

    def __init__(self, kind: Literal["call", "list", "dict"]) -> None:
        self.kind = kind
        self.has_items = False
        self.keys: set[str] = set()


_State = Callable[[str, int], int]


class PythonCallDecoder:
    """Reads tool calls in Python call syntax, incrementally; never evaluates anything.

    ``feed(text)`` returns the events that text completed, ``finish()`` those of the end of
    input.  See the module docstring for the grammar and the lenient-mode rule.

    >>> decoder = PythonCallDecoder(
    ...     mode="single", fixed_callee="tool_call", name="get_weather", id_factory=lambda: "c"
    ... )
    >>> events = decoder.feed('tool_call(location="beij') + decoder.feed('ing")')
    >>> "".join(event.arguments for event in events if isinstance(event, ToolCallDelta))
    '{"location": "beijing"}'
    """

    __slots__ = (
        "_after_name",
        "_base_offset",
        "_call_index",
        "_commit",
        "_commit_size",
        "_consumed",
        "_copy_end",
        "_copy_raw",
        "_copy_start",
        "_counted",
        "_counted_size",
        "_echo",
        "_end",
        "_escape",
        "_escape_length",
        "_escape_offset",
        "_events",
        "_failure",
        "_finished",
        "_fixed_callee",
        "_frames",
        "_held",
        "_in_string",
        "_json_stored",
        "_keep",
        "_key",
        "_late",
        "_made",
        "_mark",
        "_mode",
        "_new_id",
        "_next_index",
        "_outgoing",
        "_passing_through",
        "_pending_name",
        "_quote",
        "_raw",
        "_raw_held",
        "_raw_strings",
        "_refuse_name",
        "_reported_name",
        "_state",
        "_strict",
        "_string_escape",
        "_string_stop",
        "_token",
        "_token_offset",
        "_unflushed",
    )

    def __init__(
        self,
        *,
        mode: Mode,
        strict: bool = True,
        first_index: int = 0,
        id_factory: Callable[[], str] | None = None,
        fixed_callee: str | None = None,
        name: str | None = None,
        refuse_name: Callable[[str], tuple[str, str] | None] | None = None,
        base_offset: int = 0,
        hold_arguments: bool | Literal["late"] = False,
        keep_text: bool = False,
        raw_strings: bool = False,
    ) -> None:
        if mode not in ("list", "single"):
            raise ValueError(f"mode: {mode!r}; expected 'list' or 'single'")
        if keep_text and (mode != "single" or not hold_arguments):
            raise ValueError("keep_text: only with mode='single' and hold_arguments")
        if fixed_callee is not None and not is_plain_identifier(fixed_callee):
            raise ValueError(f"fixed_callee: {fixed_callee!r}; expected a Python identifier")
        self._mode: Mode = mode
        self._strict = strict
        self._next_index = first_index
        self._new_id = id_factory or random_call_id
        self._fixed_callee = fixed_callee
        self._reported_name = name
        self._refuse_name = refuse_name
        self._base_offset = base_offset
        self._raw_strings = raw_strings
        self._raw_held: list[str] = []  # a raw string's ' and what follows it, undecided

        self._state: _State = self._before_calls
        # The string's readers (their ``keep_text`` variants once the call's text is echoed).
        self._in_string: _State = self._read_string
        self._string_escape: _State = self._read_escape
        self._events: list[Event] = []
        self._outgoing: list[str] = []  # argument text of this feed, sent as one delta
        self._unflushed = 0  # characters fed since the outgoing text was last stored (held)
        # Held (``hold_arguments``): a call's JSON arguments kept as UTF-8 in a memory map as
        # they are transcoded, handed on as one delta at its ')': no delta per feed, no list
        # of pieces, no decoded value (a parser that holds calls until they are known valid
        # would only join the deltas at the ')').
        self._held: MappedPieces | None = MappedPieces() if hold_arguments else None
        self._late = hold_arguments == "late"
        self._frames: list[_Frame] = []
        self._call_index: int | None = None  # the call whose arguments are being read
        self._consumed = 0  # characters in earlier chunks
        # Raw text since the last commit point: earlier chunks in ``_raw``, this chunk from
        # ``_commit``.  Lenient mode returns it as text on an error; strict quotes its tail.
        # (Kept compressed: a call fed a character at a time is not a list of characters,
        # and a big call's text, needed only if it fails, is not a second copy of it next
        # to its arguments.)
        self._raw = PackedText()
        self._commit = 0
        self._end = 0  # where this chunk's text ends (``feed``'s ``end``)
        # ``keep_text``: all the text fed is kept (in ``_raw`` while the call is small; past
        # ECHO_FROM characters as references into the call's JSON where
        # they read the same (:class:`EchoText`), for :meth:`text` and in place of ``_raw``.
        self._keep = keep_text
        self._echo: EchoText | None = None
        self._mark = 0  # this chunk's text before this is kept (``keep_text``)
        self._commit_size = 0  # characters fed up to the last commit point (``keep_text``)
        self._json_stored = 0  # JSON characters of the call stored (``keep_text``)
        self._counted = 0  # pieces of ``_outgoing`` counted...
        self._counted_size = 0  # ...and their characters
        self._made: str | None = None  # the call's arguments, once made (a LateText, late)
        self._copy_raw = -1  # the echo's stretch being read: where in this chunk (-1: none)...
        self._copy_start = 0  # ...and its place in the JSON
        self._copy_end = 0
        self._passing_through = False  # lenient, after an error: everything is text
        self._failure: ParseError | None = None
        self._finished = False

        # The token being read (a name or a number) and where it began.
        self._token: list[str] = []
        self._token_offset = 0
        self._pending_name = ""  # a keyword name or callee waiting for '=' or '('
        self._after_name: _State = self._after_callee  # what reads past the name
        # The string being read.
        self._quote = "'"
        self._string_stop = _STRING_STOP["'"]
        self._key: list[str] | None = None  # decoded text of a dict key being read
        self._escape: list[str] = []
        self._escape_length = 0
        self._escape_offset = 0

    # ------------------------------------------------------------------ public

    def feed(self, text: str, start: int = 0, end: int | None = None) -> list[Event]:
        """Read a chunk of text, ``text[start:end]`` (read in place: no copy of it is made
        to be read); return the events it completed."""
        if self._failure is not None or self._finished:
            self._check_usable()
        length = len(text) if end is None else end
        consumed = self._consumed
        if self._passing_through:
            if length > start:
                passed = text[start:length]  # (``text`` itself when it is all of it)
                self._events.append(TextDelta(passed))
                if self._keep:
                    self._keep_text(passed)
        else:
            if self._keep and self._echo is None and consumed + length - start > ECHO_FROM:
                self._start_echo()  # (from the start of a feed: a call fed whole, too)
            self._commit = self._mark = position = start
            self._end = length
            if start:
                self._consumed = consumed - start  # offsets in ``text`` are positions
            if self._held is None:
                while position < length:
                    position = self._state(text, position)
            else:
                outgoing = self._outgoing  # one list, cleared in place by _flush
                while position < length:
                    position = self._state(text, position)
                    if len(outgoing) >= _HELD_BATCH:  # a big feed is not kept as pieces
                        self._flush()
            if self._passing_through:
                pass
            elif self._keep:  # all of it (up to the mark: in the echo already)
                if self._copy_raw >= 0:
                    self._flush_copy(text)
                if self._mark < length:
                    self._keep_text(text[self._mark : length])
            elif self._commit < length:
                self._raw.append(text, self._commit, length)
        self._consumed = consumed + length - start
        if self._held is None or self._call_index is None:
            self._flush()
        else:
            # Held arguments: small feeds (a token each) gather their pieces here and are
            # stored a batch at a time, not a store per feed (the delta comes at the ')').
            self._unflushed += length
            if self._unflushed >= _HELD_STEP:
                self._flush()
        events = self._events
        if not events:
            return []
        self._events = []
        return events

    def finish(self) -> list[Event]:
        """End of input: an unterminated call or list is an error (strict) or text (lenient)."""
        self._check_usable()
        if self._finished:
            return []
        self._finished = True
        if self._passing_through or self._state == self._done:
            self._flush()
            return self._take()
        if not self._keep:
            raw = self._raw.take()
        else:
            whole = self._take_kept()
            raw = whole[self._commit_size :]
            self._keep_again(whole)  # (the call's JSON goes below)
        offset = self._base_offset + self._consumed
        expected = self._expected_at_end()
        if self._strict:
            self._failure = ParseError(offset, "end of input", expected, raw[-60:])
            raise self._failure
        self._drop_held()
        self._flush()
        self._call_index = None  # an unfinished call gets no ToolCallEnd: it is no call
        self._events.append(ParseWarning(offset, f"end of input; expected {expected}", raw))
        if raw:
            self._events.append(TextDelta(raw))
        return self._take()

    # ------------------------------------------------------------------ plumbing

    def _check_usable(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._finished:
            raise RuntimeError("PythonCallDecoder: feed() or finish() after finish()")

    def _take(self) -> list[Event]:
        events = self._events
        self._events = []
        return events

    def _flush(self) -> None:
        self._unflushed = 0
        outgoing = self._outgoing
        if outgoing and self._call_index is not None:
            joined = outgoing[0] if len(outgoing) == 1 else "".join(outgoing)
            if self._held is None:
                self._events.append(ToolCallDelta(self._call_index, joined))
            else:
                self._held.append(joined)
                if self._keep:
                    self._json_stored += len(joined)
        if self._counted:
            self._counted = self._counted_size = 0
        outgoing.clear()

    def _drop_held(self) -> None:
        """The call being read is no call: its held arguments go (streamed ones were sent)."""
        if self._held is not None:
            self._outgoing.clear()
            self._counted = self._counted_size = 0
            self._held.clear()

    def _close_open_call(self) -> None:
        if self._call_index is not None:
            self._events.append(ToolCallEnd(self._call_index))
            self._call_index = None

    def _offset(self, position: int) -> int:
        return self._base_offset + self._consumed + position

    def _fail(self, text: str, position: int, offset: int, found: str, expected: str) -> int:
        """The character at ``position`` cannot be placed; ``offset`` is what to report."""
        end = self._end
        if not self._keep:
            earlier = self._raw.take()
            known = earlier + text[self._commit : position + 1]
            rest = earlier + text[self._commit : end]
        else:  # the raw text since the commit point, out of all the text kept
            self._flush_copy(text)
            whole = self._take_kept()
            kept = len(whole)
            whole += text[self._mark : end]
            known = whole[self._commit_size : kept + position + 1 - self._mark]
            rest = whole[self._commit_size :]
            self._keep_again(whole)  # kept as it is from now on: the call's JSON goes below
            self._mark = end
        if self._strict:
            self._failure = ParseError(offset, found, expected, known[-60:])
            raise self._failure
        self._drop_held()
        self._flush()
        self._call_index = None  # an unfinished call gets no ToolCallEnd: it is no call
        self._events.append(ParseWarning(offset, f"{found}; expected {expected}", known))
        self._events.append(TextDelta(rest))
        self._frames = []
        self._passing_through = True
        return end

    def _fail_here(self, text: str, position: int, expected: str) -> int:
        found = repr(text[position])
        return self._fail(text, position, self._offset(position), found, expected)

    def _commit_through(self, position: int) -> None:
        """Everything up to and including ``position`` is placed: forget its raw text (kept
        with ``keep_text``: only the commit point's place in it is noted)."""
        if self._keep:
            self._commit_size = self._consumed + position + 1
        else:
            self._raw.clear()
        self._commit = position + 1

    # ------------------------------------------------------------------ kept text

    def text(self) -> str:
        """All the text fed, as written (``keep_text``; once the call is read or failed)."""
        if not self._keep or self._call_index is not None:
            raise RuntimeError("PythonCallDecoder.text: keep_text, and no call being read")
        if self._echo is not None:
            return self._echo.text(self._echo_json())
        whole = self._raw.take()
        self._raw.append(whole)
        return whole

    def _keep_text(self, text: str) -> None:
        if self._echo is None:
            self._raw.append(text)
        else:
            self._echo.literal(text)

    def _take_kept(self) -> str:
        """All the text kept (``keep_text``), up to the mark; the JSON being held, if any,
        is taken with it (the caller lets it go)."""
        if self._echo is None:
            return self._raw.take()
        return self._echo.text(self._echo_json())

    def _keep_again(self, whole: str) -> None:
        """Keep ``whole`` as the text so far, as it is (the JSON is let go)."""
        self._echo = None
        self._raw.clear()
        self._raw.append(whole)
        self._use_string_readers(self._read_string, self._read_escape)  # the plain ones again

    def _start_echo(self) -> None:
        """The call is big: from now on its text is kept as references into its JSON where
        they read the same (the text so far stays as it is)."""
        echo = self._echo = EchoText()
        echo.literal(self._raw.take())
        self._use_string_readers(self._read_string_echo, self._read_escape_echo)

    def _use_string_readers(self, read_string: _State, read_escape: _State) -> None:
        """Read strings' contents and escapes with these from now on (a state inside a string
        moves to its counterpart)."""
        state = self._state
        if state == self._in_string:
            self._state = read_string
        elif state == self._string_escape:
            self._state = read_escape
        self._in_string = read_string
        self._string_escape = read_escape

    def _echo_json(self) -> str:
        """The JSON the echo refers to: the call's arguments (those being read are taken
        from the held map: the caller lets them go)."""
        if self._call_index is not None and self._held is not None:
            self._flush()
            return self._held.take()
        made = self._made
        if made is None:
            return ""
        return made.take() if type(made) is LateText else made

    def _json_position(self) -> int:
        """How many characters of JSON the call has written so far."""
        outgoing = self._outgoing
        count = len(outgoing)
        size = self._counted_size
        for index in range(self._counted, count):
            size += len(outgoing[index])
        self._counted_size = size
        self._counted = count
        return self._json_stored + size

    def _echo_copy(self, text: str, first: int, last: int, json_start: int) -> None:
        """``text[first:last]`` reads as the JSON from ``json_start`` on: keep it as that
        (what came before it since the mark is kept as it is).  The stretch being read is
        held here (``_copy_*``) while the next ones go on from it, and given to the echo when
        one does not (or the chunk ends: :meth:`_flush_copy`)."""
        mark = self._mark
        if first == mark and json_start == self._copy_end and self._copy_raw >= 0:
            self._copy_end = json_start + last - first
            self._mark = last
            return
        self._flush_copy(text)
        echo: EchoText = self._echo  # type: ignore[assignment]
        if first > mark:
            echo.literal(text[mark:first])
        elif first < mark:  # an escape's backslash ended the chunk before: kept literally
            echo.copy(text, mark, last, json_start, mark - first)
            self._mark = last
            return
        self._copy_raw = first
        self._copy_start = json_start
        self._copy_end = json_start + last - first
        self._mark = last

    def _flush_copy(self, text: str) -> None:
        """The stretch held (in ``text``, this chunk) goes to the echo."""
        raw = self._copy_raw
        if raw >= 0:
            self._copy_raw = -1
            start = self._copy_start
            self._echo.copy(text, raw, raw + self._copy_end - start, start)  # type: ignore[union-attr]

    def _read_string_echo(self, text: str, position: int) -> int:
        """:meth:`_read_string`, keeping a run that reads the same in JSON as a reference."""
        stop = self._end
        match = self._string_stop.search(text, position, stop)
        end = stop if match is None else match.start()
        if end > position:
            run = text[position:end]
            outgoing = self._outgoing
            if self._counted != len(outgoing):
                self._json_position()
            json_start = self._json_stored + self._counted_size
            body = _json_string_body(run)
            outgoing.append(body)
            self._counted += 1
            self._counted_size += len(body)
            if self._key is not None:
                self._key.append(run)
            if body is run:
                self._echo_copy(text, position, end, json_start)
            else:  # the characters JSON escapes are kept as they are, the rest referred to
                cursor = position
                shift = json_start - position  # JSON place - raw place, in this stretch
                for escaped in _JSON_ESCAPED.finditer(run):
                    at = position + escaped.start()
                    if at > cursor:
                        self._echo_copy(text, cursor, at, cursor + shift)
                    shift += len(_json_string_body(escaped.group())) - 1
                    cursor = at + 1
                if end > cursor:
                    self._echo_copy(text, cursor, end, cursor + shift)
        if match is None:
            return end
        return self._read_string(text, end)  # the stop character

    def _read_escape_echo(self, text: str, position: int) -> int:
        """:meth:`_read_escape`, keeping an escape that reads the same in JSON (``\\"``,
        ``\\n``...) as a reference."""
        character = text[position]
        if character not in _SAME_ESCAPES:
            return self._read_escape(text, position)
        outgoing = self._outgoing
        if self._counted != len(outgoing):
            self._json_position()
        json_start = self._json_stored + self._counted_size
        outgoing.append(_SAME_ESCAPES[character])  # the escape as written is its JSON
        self._counted += 1
        self._counted_size += 2
        if self._key is not None:
            self._key.append(_SIMPLE_ESCAPES[character])
        self._state = self._in_string
        first = position - 1
        if first == self._mark and json_start == self._copy_end and self._copy_raw >= 0:
            self._copy_end = json_start + 2  # it goes on the stretch held (most escapes)
            self._mark = position + 1
        else:
            self._echo_copy(text, first, position + 1, json_start)
        return position + 1

    def _expected_at_end(self) -> str:
        if self._state == self._before_calls:
            return "'[' opening a list of calls" if self._mode == "list" else "a call"
        if self._state in (
            self._in_string,
            self._string_escape,
            self._after_escaped_return,
            self._escape_hex,
            self._escape_octal,
            self._escape_name_open,
            self._escape_name,
        ):
            return f"{self._quote!r} closing the string"
        if self._state in (
            self._read_raw,
            self._raw_after_quote,
            self._raw_after_comma,
            self._raw_name,
            self._raw_after_name,
        ):
            return '"\')" or "\', name=" closing the string'
        if self._frames:
            return f"{_CLOSERS[self._frames[-1].kind]!r} closing the {self._frames[-1].kind}"
        if self._mode == "list":
            return "']' closing the list of calls"
        return "'(' opening the call"

    # ------------------------------------------------------------------ calls

    def _before_calls(self, text: str, position: int) -> int:
        character = text[position]
        if character in _WHITESPACE:
            return position + 1
        if self._mode == "list":
            if character == "[":
                self._state = self._callee_start
                return position + 1
            return self._fail_here(text, position, "'[' opening a list of calls")
        return self._callee_start(text, position)

    def _callee_start(self, text: str, position: int) -> int:
        character = text[position]
        if character in _WHITESPACE:
            return position + 1
        if character == "]" and self._mode == "list":
            self._commit_through(position)
            self._state = self._done
            return position + 1
        if _is_name_start(character):
            return self._start_token(character, position, self._name, self._after_callee)
        expected = "a call or ']'" if self._mode == "list" else "a call"
        return self._fail_here(text, position, expected)

    def _after_callee(self, text: str, position: int) -> int:
        character = text[position]
        if character in _WHITESPACE:
            return position + 1
        callee = self._pending_name
        if character != "(":
            found = _misplaced_name(callee, character, repr(character))
            return self._fail(text, position, self._offset(position), found, "'(' after a name")
        if keyword.iskeyword(callee):
            return self._fail(
                text, position, self._token_offset, f"keyword {callee!r}", "a function name"
            )
        if self._fixed_callee is not None and callee != self._fixed_callee:
            return self._fail(
                text, position, self._token_offset, f"callee {callee!r}", repr(self._fixed_callee)
            )
        reported = callee if self._reported_name is None else self._reported_name
        if self._refuse_name is not None:
            refused = self._refuse_name(reported)
            if refused is not None:  # (the call has not begun: nothing of it was sent)
                return self._fail(text, position, self._token_offset, *refused)
        index = self._next_index
        self._next_index += 1
        self._call_index = index
        if self._keep:  # the echo's references are to this call's JSON
            self._json_stored = self._counted = self._counted_size = 0
        self._events.append(ToolCallStart(index, self._new_id(), reported))
        self._outgoing.append("{")
        self._frames = [_Frame("call")]
        self._state = self._argument_start
        return position + 1

    def _end_call(self, position: int) -> int:
        self._outgoing.append("}")
        # The call's raw text goes first: the held arguments' one string is made next.
        self._commit_through(position)
        self._flush()
        held = self._held
        if held is not None and self._call_index is not None:
            if self._late:  # the consumer makes the string (see the module docstring)
                if held:
                    self._held = MappedPieces()
                    late = late_text(held)
                    self._events.append(ToolCallDelta(self._call_index, late))
                    if self._keep:
                        self._made = late
            else:
                arguments = held.take()  # the map is released as the string is made
                if arguments:
                    self._events.append(ToolCallDelta(self._call_index, arguments))
                if self._keep:
                    self._made = arguments
        self._close_open_call()
        self._frames = []
        self._state = self._after_call if self._mode == "list" else self._done
        return position + 1

    def _after_call(self, text: str, position: int) -> int:
        character = text[position]
        if character in _WHITESPACE:
            return position + 1
        if character == ",":
            self._state = self._callee_start
            return position + 1
        if character == "]":
            self._commit_through(position)
            self._state = self._done
            return position + 1
        return self._fail_here(text, position, "',' or ']' after a call")

    def _done(self, text: str, position: int) -> int:
        character = text[position]
        if character in _WHITESPACE:
            return position + 1
        what = "the list of calls" if self._mode == "list" else "the call"
        found = f"text after {what} ({character!r})"
        return self._fail(text, position, self._offset(position), found, "only whitespace")

    # ------------------------------------------------------------------ keyword arguments

    def _argument_start(self, text: str, position: int) -> int:
        character = text[position]
        if character in _WHITESPACE:
            return position + 1
        if character == ")":
            return self._end_call(position)
        if _is_name_start(character):
            return self._start_token(character, position, self._name, self._after_argument_name)
        if character in _QUOTES or character in _DIGITS or character in "-.[{(":
            found = f"a positional argument ({character!r})"
        elif character == "*":
            found = "argument unpacking ('*')"
        else:
            found = repr(character)
        expected = "a keyword argument (name=value) or ')'"
        return self._fail(text, position, self._offset(position), found, expected)

    def _name(self, text: str, position: int) -> int:
        """A callee or a keyword name; at its end, ``_after_name`` reads what follows."""
        character = text[position]
        if _is_name_continue(character):
            self._token.append(character)
            return position + 1
        self._pending_name = unicodedata.normalize("NFKC", "".join(self._token))
        if character in _WHITESPACE:
            self._state = self._after_name
            return position + 1
        return self._after_name(text, position)

    def _after_argument_name(self, text: str, position: int) -> int:
        character = text[position]
        if character in _WHITESPACE:
            return position + 1
        name = self._pending_name
        if character != "=":
            positional = character in ",)"
            otherwise = f"a positional argument ({name!r})" if positional else None
            found = _misplaced_name(name, character, otherwise or f"{character!r} after {name!r}")
            return self._fail(text, position, self._token_offset, found, "'=' after the name")
        expected = "a keyword argument name"
        if keyword.iskeyword(name):
            return self._fail(text, position, self._token_offset, f"keyword {name!r}", expected)
        frame = self._frames[-1]
        if name in frame.keys:
            found = f"keyword argument {name!r} repeated"
            return self._fail(text, position, self._token_offset, found, "each name once")
        frame.keys.add(name)
        self._separate(frame)
        self._outgoing.append(json.dumps(name, ensure_ascii=False) + ": ")
        self._state = self._value_start
        return position + 1

    # ------------------------------------------------------------------ values

    def _value_start(self, text: str, position: int) -> int:
        character = text[position]
        if character in _WHITESPACE:
            return position + 1
        if character in _QUOTES:
            self._key = None
            self._outgoing.append('"')
            if character == "'" and self._raw_strings and len(self._frames) == 1:
                self._quote = character
                self._state = self._read_raw
                return position + 1
            self._open_string(character)
            return position + 1
        if character in _DIGITS or character in "-.":
            return self._start_token(character, position, self._number)
        if character in "[{" and len(self._frames) >= MAX_NESTING:
            found = f"{character!r} nested deeper than {MAX_NESTING}"
            return self._fail(text, position, self._offset(position), found, "a shallower value")
        if character == "[":
            self._frames.append(_Frame("list"))
            self._outgoing.append("[")
            self._state = self._list_item
            return position + 1
        if character == "{":
            self._frames.append(_Frame("dict"))
            self._outgoing.append("{")
            self._state = self._dict_key
            return position + 1
        if _is_name_start(character):
            return self._start_token(character, position, self._constant)
        found = "a tuple or a parenthesised expression" if character == "(" else repr(character)
        expected = "a literal value (string, number, True/False/None, list or dict)"
        return self._fail(text, position, self._offset(position), found, expected)

    def _value_done(self) -> None:
        self._state = self._after_value

    def _start_token(
        self, character: str, position: int, state: _State, after_name: _State | None = None
    ) -> int:
        """A name or a number begins with ``character``; ``after_name`` reads what follows a
        callee or keyword name (read by :meth:`_name`)."""
        self._token = [character]
        self._token_offset = self._offset(position)
        self._state = state
        if after_name is not None:
            self._after_name = after_name
        return position + 1

    def _close_container(self, position: int) -> int:
        """The list or dict on top of the frames closes at ``position``."""
        frame = self._frames.pop()
        self._outgoing.append(_CLOSERS[frame.kind])
        self._value_done()
        return position + 1

    def _separate(self, frame: _Frame) -> None:
        """An item begins in ``frame``: after the first, a separator is written."""
        if frame.has_items:
            self._outgoing.append(", ")
        frame.has_items = True

    def _after_value(self, text: str, position: int) -> int:
        character = text[position]
        if character in _WHITESPACE:
            return position + 1
        frame = self._frames[-1]
        if character == ",":
            if frame.kind == "list":
                self._state = self._list_item
            elif frame.kind == "dict":
                self._state = self._dict_key
            else:
                self._state = self._argument_start
            return position + 1
        closer = _CLOSERS[frame.kind]
        if character == closer:
            if frame.kind == "call":
                return self._end_call(position)
            return self._close_container(position)
        found = _AFTER_VALUE_FOUND.get(character, f"{character!r} after a value")
        if character in "+-*/%@&|^<>~!":
            found = f"an expression (operator {character!r})"
        return self._fail(text, position, self._offset(position), found, f"',' or {closer!r}")

    def _list_item(self, text: str, position: int) -> int:
        character = text[position]
        if character in _WHITESPACE:
            return position + 1
        if character == "]":
            return self._close_container(position)
        # Separators are written when the next item starts: a trailing comma writes none.
        self._separate(self._frames[-1])
        self._state = self._value_start
        return position

    def _dict_key(self, text: str, position: int) -> int:
        character = text[position]
        if character in _WHITESPACE:
            return position + 1
        if character == "}":
            return self._close_container(position)
        if character not in _QUOTES:
            found = repr(character)
            return self._fail(text, position, self._offset(position), found, "a string key or '}'")
        self._separate(self._frames[-1])
        self._key = []
        self._token_offset = self._offset(position)
        self._open_string(character)
        self._outgoing.append('"')
        return position + 1

    def _after_dict_key(self, text: str, position: int) -> int:
        character = text[position]
        if character in _WHITESPACE:
            return position + 1
        if character != ":":
            found = repr(character)
            return self._fail(text, position, self._offset(position), found, "':' after a key")
        self._outgoing.append(": ")
        self._state = self._value_start
        return position + 1

    def _number(self, text: str, position: int) -> int:
        character = text[position]
        token = self._token
        if character in _NUMBER_CHARACTERS or (character in "+-" and token[-1] in "eE"):
            token.append(character)
            return position + 1
        literal = "".join(token)
        expected = "a decimal number"
        if not _NUMBER.fullmatch(literal):
            return self._fail(text, position, self._token_offset, f"{literal!r}", expected)
        try:
            if "." in literal or "e" in literal or "E" in literal:
                number: float = float(literal)
                if not math.isfinite(number):
                    raise ValueError("JSON has no infinity")
                written = json.dumps(number)
            else:
                written = json.dumps(int(literal))
        except ValueError as error:  # too many digits (Python's limit) or out of range
            found = f"number {literal[:40]!r} ({error})"
            return self._fail(text, position, self._token_offset, found, "a number JSON can hold")
        self._outgoing.append(written)
        self._value_done()
        return position

    def _constant(self, text: str, position: int) -> int:
        character = text[position]
        if _is_name_continue(character):
            self._token.append(character)
            return position + 1
        name = unicodedata.normalize("NFKC", "".join(self._token))
        constant = _CONSTANTS.get(name)
        if constant is None:
            found = _misplaced_name(name, character, f"the name {name!r}")
            expected = "a literal value (string, number, True/False/None, list or dict)"
            return self._fail(text, position, self._token_offset, found, expected)
        self._outgoing.append(constant)
        self._value_done()
        return position

    # ------------------------------------------------------------------ strings

    def _open_string(self, quote: str) -> None:
        self._quote = quote
        self._string_stop = _STRING_STOP[quote]
        self._state = self._in_string

    def _write(self, decoded: str) -> None:
        self._outgoing.append(_json_string_body(decoded))
        if self._key is not None:
            self._key.append(decoded)

    def _read_string(self, text: str, position: int) -> int:
        stop = self._end
        match = self._string_stop.search(text, position, stop)
        end = stop if match is None else match.start()
        if end > position:
            self._write(text[position:end])
        if match is None:
            return end
        character = text[end]
        if character == self._quote:
            self._state = self._after_string
        elif character == "\\":
            self._escape_offset = self._offset(end)
            self._state = self._string_escape
        else:
            found = "a line break inside a string"
            expected = f"{self._quote!r} closing the string"
            return self._fail(text, end, self._offset(end), found, expected)
        return end + 1

    def _read_escape(self, text: str, position: int) -> int:
        character = text[position]
        simple = _SIMPLE_ESCAPES.get(character)
        self._state = self._in_string
        if simple is not None:
            self._write(simple)
        elif character == "\n":
            pass  # a line continuation: nothing
        elif character == "\r":
            self._state = self._after_escaped_return  # a continuation; swallow a CRLF's LF
        elif character in _HEX_ESCAPE_LENGTH:
            self._escape = []
            self._escape_length = _HEX_ESCAPE_LENGTH[character]
            self._state = self._escape_hex
        elif character in _OCTAL_DIGITS:
            self._escape = [character]
            self._state = self._escape_octal
        elif character == "N":
            self._state = self._escape_name_open
        else:
            self._write("\\" + character)  # Python keeps unknown escapes (with a warning)
        return position + 1

    def _after_escaped_return(self, text: str, position: int) -> int:
        self._state = self._in_string
        return position + 1 if text[position] == "\n" else position

    def _escape_hex(self, text: str, position: int) -> int:
        character = text[position]
        expected = f"{self._escape_length} hex digits"
        if character not in _HEX_DIGITS:
            found = f"a truncated escape ({character!r})"
            return self._fail(text, position, self._escape_offset, found, expected)
        self._escape.append(character)
        if len(self._escape) < self._escape_length:
            return position + 1
        code = int("".join(self._escape), 16)
        if code > 0x10FFFF:
            found = f"escape of U+{code:X}, beyond Unicode"
            return self._fail(text, position, self._escape_offset, found, "at most U+10FFFF")
        if 0xD800 <= code <= 0xDFFF:  # issue 14: Python takes it, but no text can hold it
            found = f"escape of U+{code:X}, a lone surrogate"
            expected = "a Unicode character (not U+D800..U+DFFF)"
            return self._fail(text, position, self._escape_offset, found, expected)
        self._write(chr(code))
        self._state = self._in_string
        return position + 1

    def _escape_octal(self, text: str, position: int) -> int:
        character = text[position]
        if character in _OCTAL_DIGITS:
            self._escape.append(character)
            if len(self._escape) < 3:
                return position + 1
            position += 1
        self._write(chr(int("".join(self._escape), 8)))
        self._state = self._in_string
        return position  # a non-octal character ends the escape and is read as content

    def _escape_name_open(self, text: str, position: int) -> int:
        if text[position] != "{":
            found = f"\\N followed by {text[position]!r}"
            return self._fail(text, position, self._escape_offset, found, "\\N{name}")
        self._escape = []
        self._state = self._escape_name
        return position + 1

    def _escape_name(self, text: str, position: int) -> int:
        character = text[position]
        if character != "}":
            if character in "\n\r" or character == self._quote:
                found = f"an unterminated \\N{{ escape ({character!r})"
                return self._fail(text, position, self._escape_offset, found, "'}'")
            self._escape.append(character)
            if len(self._escape) > _LONGEST_CHARACTER_NAME:
                found = "an overlong \\N{ escape"
                return self._fail(text, position, self._escape_offset, found, "a character name")
            return position + 1
        name = "".join(self._escape)
        try:
            decoded = unicodedata.lookup(name)
        except KeyError:
            decoded = ""
        if len(decoded) != 1:  # unknown, or a named sequence (Python refuses those in \N)
            found = f"unknown character name {name[:40]!r}"
            return self._fail(text, position, self._escape_offset, found, "a Unicode name")
        self._write(decoded)
        self._state = self._in_string
        return position + 1

    def _after_string(self, text: str, position: int) -> int:
        character = text[position]
        if character in _WHITESPACE:
            return position + 1
        if character in _QUOTES:  # 'a' 'b' is 'ab'
            self._open_string(character)
            return position + 1
        self._outgoing.append('"')
        if self._key is None:
            self._value_done()
            return position
        key = "".join(self._key)
        self._key = None
        frame = self._frames[-1]
        if key in frame.keys:
            found = f"dict key {key[:40]!r} repeated"
            return self._fail(text, position, self._token_offset, found, "each key once")
        frame.keys.add(key)
        self._state = self._after_dict_key
        return position

    # ------------------------------------------------------------------ raw strings

    def _read_raw(self, text: str, position: int) -> int:
        """A raw string's content, up to a ``'`` (which may end it)."""
        stop = self._end
        end = text.find("'", position, stop)
        if end < 0:
            end = stop
        if end > position:
            self._write(text[position:end])
        if end == stop:
            return end
        self._raw_held.append("'")
        self._state = self._raw_after_quote
        return end + 1

    def _raw_content(self, text: str, position: int) -> int:
        """What was held is the string's; ``position`` is read as its content again."""
        held = self._raw_held
        self._write("".join(held))
        held.clear()
        self._state = self._read_raw
        return position

    def _raw_after_quote(self, text: str, position: int) -> int:
        character = text[position]
        if character == ")":  # the call ends: so does the string
            self._raw_held.clear()
            self._outgoing.append('"')
            self._value_done()
            return position
        if character == ",":
            self._raw_held.append(character)
            self._state = self._raw_after_comma
            return position + 1
        return self._raw_content(text, position)

    def _raw_after_comma(self, text: str, position: int) -> int:
        character = text[position]
        if character == " ":
            self._raw_held.append(character)
            return position + 1
        if _is_name_start(character):
            self._raw_held.append(character)
            self._token = [character]
            self._token_offset = self._offset(position)
            self._state = self._raw_name
            return position + 1
        return self._raw_content(text, position)

    def _raw_name(self, text: str, position: int) -> int:
        character = text[position]
        if _is_name_continue(character):
            self._raw_held.append(character)
            self._token.append(character)
            return position + 1
        return self._raw_after_name(text, position)

    def _raw_after_name(self, text: str, position: int) -> int:
        character = text[position]
        if character == " ":
            self._raw_held.append(character)
            self._state = self._raw_after_name
            return position + 1
        if character != "=":
            return self._raw_content(text, position)
        # The string ended at the held quote: ", name" was the next keyword argument's.
        self._raw_held.clear()
        self._outgoing.append('"')
        self._pending_name = unicodedata.normalize("NFKC", "".join(self._token))
        return self._after_argument_name(text, position)


# --------------------------------------------------------------------------- one literal


def parse_python_literal(text: str, *, offset: int = 0) -> Any:
    """One Python literal (JSON-compatible: str, number, bool, None, list, dict) as a value.

    Read by :class:`PythonCallDecoder` (as the argument of a call ``_(v=...)``), so only
    literals are accepted and nothing is evaluated.  Raises :class:`ParseError` whose offset
    is ``offset`` plus the position in ``text``.

    >>> parse_python_literal("[{'temperature': 22}, None]")
    [{'temperature': 22}, None]
    """
    quick = _quick_literal(text)
    if quick is not _NOT_KNOWN:
        return quick
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


_NOT_KNOWN = object()


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A dict literal's members, refused when a key is written twice (as the decoder
    refuses it; ``json`` would keep the last)."""
    members = dict(pairs)
    if len(members) != len(pairs):
        raise ValueError("a key written twice")
    return members


_quick_decode: Callable[[str], Any] = json.JSONDecoder(
    object_pairs_hook=_unique_members,
    parse_constant=refuse_json_constant,
    parse_float=refuse_json_overflow,
).decode


def _quick_literal(text: str) -> Any:
    """The value of ``text`` when it is a literal written the plain way, read at C speed; else
    :data:`_NOT_KNOWN` (the decoder then reads it, and says what is wrong).

    Plain: no backslash, strings in one kind of quote that holds no quote of the other kind.
    Then the text split at its quotes alternates between what is outside the strings and
    their contents, exactly; with ``True``, ``False`` and ``None`` outside written as JSON's
    words and each quote as ``"``, it is JSON text, which ``json`` reads (strictly, a key
    written twice refused, every number within a double) to the value the decoder makes of
    the literal.  Whatever Python allows and JSON does not (``.5``, ``1_000``, a trailing
    comma, adjacent strings, a form feed, a prefix, a tuple) fails to read as JSON, and so is
    the decoder's: only a text both read the same is read here."""
    if "\\" in text or "\x00" in text:
        return _NOT_KNOWN
    if "'" in text:
        if '"' in text:
            return _NOT_KNOWN
        parts = text.split("'")
    else:
        parts = text.split('"')
    if len(parts) % 2 == 0:  # a string never closed
        return _NOT_KNOWN
    outside = "\x00".join(parts[::2])
    if "True" in outside or "False" in outside or "None" in outside:
        outside = outside.replace("True", "true").replace("False", "false")
        parts[::2] = outside.replace("None", "null").split("\x00")
    json_text = '"'.join(parts)
    try:
        value = _quick_decode(json_text)
    except (ValueError, RecursionError):  # (JSONDecodeError is a ValueError)
        return _NOT_KNOWN
    # The decoder's limit: the literal is a call's argument, one level in it.
    if nested_deeper(json_text, MAX_NESTING - 1):
        return _NOT_KNOWN
    return value


def python_literal_or_none(text: str, *, offset: int = 0) -> Any:
    """:func:`parse_python_literal`, or None for text that is not one literal (a reader then
    keeps the text as it is)."""
    try:
        return parse_python_literal(text, offset=offset)
    except ParseError:
        return None
