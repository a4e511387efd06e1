"""The marker lexer: turns a stream of text into text runs and markers.

It finds the leftmost, longest marker; it holds back any suffix that could still grow into a
marker (and, with escaping, any run of backslashes that a marker might follow), so a marker
split across chunks is still seen whole.  Nothing already emitted is scanned again, so the cost
per character is O(1) amortised.

Escaping (formats whose markers are plain text, such as PCML): a run of ``k`` backslashes
before a marker encodes ``k // 2`` literal backslashes, and the marker is literal text when
``k`` is odd.  A backslash run not followed by a marker is plain text.  An escaped marker is
the *shortest* marker at its place (``\\</think>`` before ``\n<tools>`` must not swallow the
newline that begins the next, real marker).  :func:`escape_text` is the inverse, used by the
writer.  One rule binds declarations: a marker that ends a longer marker (``<call>`` ends
``\n<call>``) is never written right after caller text; write the longer spelling there.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable

Token = tuple[str | None, str, int]
"""``(marker, text, offset)``: ``marker`` is None for a text run; offsets are absolute."""


def marker_pattern(markers: Iterable[str]) -> re.Pattern[str]:
    """A regex whose leftmost match is the leftmost, longest marker."""
    ordered = sorted(set(markers), key=lambda marker: (-len(marker), marker))
    source = "|".join(re.escape(marker) for marker in ordered)
    _MARKERS_OF_PATTERN.setdefault(source, tuple(ordered))
    return re.compile(source)


# The markers of each pattern made by marker_pattern, by the pattern's source (a handful: one
# per set of markers), so that marker_scan can split a pattern's markers by first character.
_MARKERS_OF_PATTERN: dict[str, tuple[str, ...]] = {}


class MarkerScan:
    """Whether a text holds any of some markers: the question every escaped text asks first.

    The marker regex answers it slowly when the markers do not share a first character (PCML's
    begin with ``[``, ``<`` or a newline): ``re`` then tries every position of the text, a few
    nanoseconds a character.  Here each first character is looked for with ``in`` (``str``'s
    fast search), and only when it is there, the markers that begin with it, by a regex whose
    literal first character ``re`` does search for quickly.
    """

    __slots__ = ("_groups",)

    def __init__(self, markers: Iterable[str]) -> None:
        by_first: dict[str, list[str]] = {}
        for marker in markers:
            by_first.setdefault(marker[0], []).append(marker)
        self._groups = tuple(
            (first, marker_pattern(group)) for first, group in sorted(by_first.items())
        )

    def holds_marker(self, text: str) -> bool:
        for first, pattern in self._groups:
            if first in text and pattern.search(text) is not None:
                return True
        return False


@functools.lru_cache(maxsize=64)
def marker_scan(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    """``text -> bool``: whether ``pattern`` (from :func:`marker_pattern`) matches in ``text``."""
    markers = _MARKERS_OF_PATTERN.get(pattern.pattern)
    if not markers or "" in markers or pattern.flags != re.UNICODE:
        # Not one of ours (other flags change what matches), or degenerate: the regex itself.
        return lambda text: pattern.search(text) is not None
    return MarkerScan(markers).holds_marker


def _backslashes_before(text: str, index: int, floor: int) -> int:
    count = 0
    while index - count - 1 >= floor and text[index - count - 1] == "\\":
        count += 1
    return count


def escape_text(text: str, pattern: re.Pattern[str], *, before_marker: bool) -> str:
    """Escape every marker inside ``text`` so the lexer reads it back as literal text.

    ``before_marker``: a real marker follows this text, so a trailing backslash run must be
    doubled too.
    """
    if not marker_scan(pattern)(text) and not (before_marker and text.endswith("\\")):
        return text  # the common case: nothing to escape
    pieces: list[str] = []
    position = 0
    for match in pattern.finditer(text):
        start = match.start()
        run = _backslashes_before(text, start, position)
        pieces.append(text[position : start - run])
        pieces.append("\\" * (2 * run + 1))
        pieces.append(match.group())
        position = match.end()
    tail = text[position:]
    if before_marker and tail.endswith("\\"):
        run = _backslashes_before(tail, len(tail), 0)
        tail = tail + "\\" * run
    pieces.append(tail)
    return "".join(pieces)


class Lexer:
    """Incremental marker lexer (sans-IO): ``feed(text)`` / ``feed_marker(m)`` / ``finish()``."""

    __slots__ = (
        "_buffer",
        "_escape",
        "_extendable",
        "_literal",
        "_longest_prefix",
        "_offset",
        "_pattern",
        "_prefixes",
    )

    def __init__(self, markers: Iterable[str], *, escape: bool) -> None:
        marker_set = frozenset(markers)
        self._pattern = marker_pattern(marker_set)
        self._prefixes = frozenset(
            marker[:length] for marker in marker_set for length in range(1, len(marker))
        )
        # A marker that is a proper prefix of another may still grow: hold it back at the end.
        self._extendable = frozenset(marker for marker in marker_set if marker in self._prefixes)
        # An escaped marker is the shortest marker that begins it (see the module docstring).
        self._literal = {
            marker: min((other for other in marker_set if marker.startswith(other)), key=len)
            for marker in marker_set
        }
        self._longest_prefix = max((len(marker) - 1 for marker in marker_set), default=0)
        self._escape = escape
        self._buffer = ""
        self._offset = 0

    @property
    def offset(self) -> int:
        """The absolute offset of the first character not yet emitted."""
        return self._offset

    def feed(self, text: str) -> list[Token]:
        buffer = self._buffer + text if self._buffer else text
        tokens: list[Token] = []
        position = self._scan(buffer, tokens)
        tail = buffer[position:]
        hold = self._holdback(tail)
        if hold < len(tail):
            self._emit_text(tokens, tail[: len(tail) - hold], position)
        self._offset += position + len(tail) - hold
        self._buffer = tail[len(tail) - hold :]
        return tokens

    def feed_marker(self, marker: str) -> list[Token]:
        """A marker known to be one (a special token id): flush the buffer as text first.

        With escaping, the writer doubled the backslash run before a real marker: halve it.
        """
        if self._escape and self._buffer.endswith("\\"):
            run = _backslashes_before(self._buffer, len(self._buffer), 0)
            kept = (run + 1) // 2
            self._buffer = self._buffer[: len(self._buffer) - run + kept]
            self._offset -= kept - run  # offsets stay those of the raw input
        tokens = self.finish()
        tokens.append((marker, marker, self._offset))
        self._offset += len(marker)
        return tokens

    def feed_text(self, text: str) -> list[Token]:
        """Text known to be text (decoded from ordinary token ids): no marker is read in it.

        The buffer is flushed as text first, as :meth:`feed_marker` does.
        """
        tokens = self.finish()
        if text:
            tokens.append((None, text, self._offset))
            self._offset += len(text)
        return tokens

    def finish(self) -> list[Token]:
        tokens: list[Token] = []
        buffer = self._buffer
        self._buffer = ""
        position = self._scan(buffer, tokens, final=True)
        if position < len(buffer):
            self._emit_text(tokens, buffer[position:], position)
        self._offset += len(buffer)
        return tokens

    def _emit_text(self, tokens: list[Token], text: str, position: int) -> None:
        if tokens and tokens[-1][0] is None:
            previous = tokens[-1]
            tokens[-1] = (None, previous[1] + text, previous[2])
        else:
            tokens.append((None, text, self._offset + position))

    def _scan(self, buffer: str, tokens: list[Token], *, final: bool = False) -> int:
        """Emit every complete marker (and the text before it); return where scanning stopped."""
        position = 0
        search = self._pattern.search
        while True:
            match = search(buffer, position)
            if match is None:
                return position
            start, end = match.span()
            marker = match.group()
            if not final:
                # A marker that starts earlier and is not complete yet may still win
                # (leftmost-longest: ``\n</tools>...<tool_call>...`` holds ``<tool_call>``).
                earlier = self._incomplete_before(buffer, position, start)
                if earlier is not None:
                    return self._flush_before(buffer, position, earlier, tokens)
            if not final and marker in self._extendable and buffer[start:] in self._prefixes:
                # It may still grow into a longer marker (the text after it so far is the
                # start of one, not only when the buffer ends with it): decide when more
                # text comes.
                return (
                    position
                    if start == position
                    else self._flush_before(buffer, position, start, tokens)
                )
            run = _backslashes_before(buffer, start, position) if self._escape else 0
            before = buffer[position : start - run] + "\\" * (run // 2)
            if run % 2:
                marker = self._literal[marker]
                end = start + len(marker)
                self._emit_text(tokens, before + marker, position)
            else:
                if before:
                    self._emit_text(tokens, before, position)
                tokens.append((marker, marker, self._offset + start))
            position = end

    def _incomplete_before(self, buffer: str, position: int, start: int) -> int | None:
        """The first place before ``start`` where the rest of the buffer could still begin a
        marker (only places within a marker's length of the end can)."""
        for place in range(max(position, len(buffer) - self._longest_prefix), start):
            if buffer[place:] in self._prefixes:
                return place
        return None

    def _flush_before(self, buffer: str, position: int, start: int, tokens: list[Token]) -> int:
        # Emit the text before a held marker, keeping any backslash run that escapes it.
        run = _backslashes_before(buffer, start, position) if self._escape else 0
        if start - run > position:
            self._emit_text(tokens, buffer[position : start - run], position)
        return start - run

    def _holdback(self, tail: str) -> int:
        """How many trailing characters could still be the start of a marker (or its escape)."""
        hold = 0
        prefixes = self._prefixes
        for length in range(min(len(tail), self._longest_prefix), 0, -1):
            if tail[-length:] in prefixes:
                hold = length
                break
        if self._escape:
            hold += _backslashes_before(tail, len(tail) - hold, 0)
        return hold
