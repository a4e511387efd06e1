"""The marker lexer: turns a stream of text into text runs and markers.

It finds the leftmost, longest marker; it holds back any suffix that could still grow into a
marker (and, with escaping, any run of backslashes that a marker might follow), so a marker
split across chunks is still seen whole.  Nothing already emitted is scanned again, so the cost
per character is O(1) amortised.

Escaping (formats whose markers are plain text, such as PCML): a run of ``k`` backslashes
before a marker encodes ``k // 2`` literal backslashes, and the marker is literal text when
``k`` is odd.  A backslash run not followed by a marker is plain text.  An escaped marker is
the *shortest* marker at its place (``\\</think>`` before ``\\n<tools>`` must not swallow the
newline that begins the next, real marker).  :func:`escape_text` is the inverse, used by the
writer.  One rule binds declarations: a marker that ends a longer marker (``<call>`` ends
``\\n<call>``) is never written right after caller text; write the longer spelling there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

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


def marker_scan(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    """``text -> bool``: whether ``pattern`` (from :func:`marker_pattern`) matches in ``text``
    (made once per pattern: every render's writer asks for its format's)."""
    # (by the pattern's identity, the entry holding it: a pattern's own hash reads its
    # compiled code every time)
    found = _SCANS.get(id(pattern))
    if found is None or found[0] is not pattern:
        if len(_SCANS) >= 256:
            _SCANS.clear()
        found = _SCANS[id(pattern)] = (pattern, _marker_scan(pattern))
    return found[1]


_SCANS: dict[int, tuple[re.Pattern[str], Callable[[str], bool]]] = {}
"""What :func:`marker_scan` made, by pattern (a handful: one per set of markers; a full store
starts over)."""


def _marker_scan(pattern: re.Pattern[str]) -> Callable[[str], bool]:
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


class _Tables:
    """What a lexer needs to know about its markers: built once per set of markers (formats
    are constants, and a server makes a parser per request)."""

    __slots__ = (
        "extendable",
        "group_firsts",
        "group_searches",
        "holdback",
        "holdback_search",
        "inner",
        "literal",
        "long_markers",
        "longest_prefix",
        "pattern",
        "prefixes",
        "prefixes_by_last",
        "short",
    )

    def __init__(self, markers: frozenset[str]) -> None:
        self.pattern = marker_pattern(markers)
        # One regex per first character: ``re`` finds a literal first character fast, but
        # tries a set of them (PCML's ``[``, ``<``, newline) at every place, a few ns each.
        # Long texts are searched group by group (see Lexer._scan).
        by_first: dict[str, list[str]] = {}
        for marker in markers:
            by_first.setdefault(marker[:1], []).append(marker)
        self.group_searches = (
            (self.pattern.search,)
            if "" in by_first
            else tuple(marker_pattern(group).search for _, group in sorted(by_first.items()))
        )
        # Each group's first character (empty: the one search with the whole pattern), which
        # ``str.find`` looks for first: memchr's speed, where ``re`` steps through the text
        # a character at a time (a long text often holds none of a group's first character).
        self.group_firsts = ("",) if "" in by_first else tuple(sorted(by_first))
        self.prefixes = frozenset(
            marker[:length] for marker in markers for length in range(1, len(marker))
        )
        # The proper prefixes by their last character (see ends_unfinished).
        by_last: dict[str, list[str]] = {}
        for prefix in self.prefixes:
            by_last.setdefault(prefix[-1], []).append(prefix)
        self.prefixes_by_last = {last: tuple(group) for last, group in by_last.items()}
        # A marker that is a proper prefix of another may still grow: hold it back at the end.
        self.extendable = frozenset(marker for marker in markers if marker in self.prefixes)
        # Markers written inside another one, after its start (chatml's ``<tool_call>`` in its
        # tools block's long marker): only these can be part of a longer marker that began
        # earlier and is not complete yet (see Lexer._scan).
        self.inner = frozenset(
            marker
            for marker in markers
            if any(other.find(marker, 1) > 0 for other in markers if other != marker)
        )
        # An escaped marker is the shortest marker that begins it (see the module docstring).
        self.literal = {
            marker: min((other for other in markers if marker.startswith(other)), key=len)
            for marker in markers
        }
        self.longest_prefix = max((len(marker) - 1 for marker in markers), default=0)
        # ``holdback.search(text, start)``: the longest end of ``text`` (from ``start`` on)
        # that is a proper prefix of a marker, in one regex call instead of a slice and a set
        # lookup per length.  The prefixes are written as a trie, so the regex tries each
        # place once.
        # ``re`` nests a group per character of the trie: markers longer than _TRIE_DEPTH (a
        # fixed system text an inferred format writes whole) are held back past that depth
        # by ``held_start`` instead.
        self.holdback = prefix_regex(
            frozenset(prefix for prefix in self.prefixes if len(prefix) <= _TRIE_DEPTH)
        )
        self.holdback_search = None if self.holdback is None else self.holdback.search
        self.long_markers = tuple(marker for marker in markers if len(marker) > _TRIE_DEPTH + 1)
        # Up to this length one search with the whole pattern costs less than one per group.
        self.short = 40 * len(self.group_searches)

    def ends_unfinished(self, text: str) -> bool:
        """Whether an end of ``text`` is a proper prefix of a marker (what :meth:`held_start`
        finds, as a yes or no): one ``str.endswith`` over the prefixes that end with the
        text's last character (the holdback regex tries every place of the end; a slice per
        place where a marker's first character is costs the most where a marker begins
        with a space, as a long instruction text may)."""
        return bool(text) and text.endswith(self.prefixes_by_last.get(text[-1], ()))

    def held_start(self, buffer: str, low: int) -> int | None:
        """Where the longest end of ``buffer`` (from ``low`` on) that is a proper prefix of a
        marker begins (None: no such end)."""
        found = None
        if self.holdback is not None:
            match = self.holdback.search(buffer, low)
            if match is not None:
                found = match.start()
        length = len(buffer)
        for marker in self.long_markers:
            head = marker[: _TRIE_DEPTH + 1]
            start = buffer.find(head, max(low, length - len(marker) + 1))
            while start != -1 and (found is None or start < found):
                if marker.startswith(buffer[start:]):
                    found = start
                    break
                start = buffer.find(head, start + 1)
        return found


_TRIE_DEPTH = 200
# A held end longer than this that begins a long marker is remembered (see Lexer.feed):
# shorter ones cost little to scan again.
_LONG_HOLD = 64


def prefix_regex(prefixes: frozenset[str]) -> re.Pattern[str] | None:
    """A regex matching exactly the strings of ``prefixes`` (closed under taking prefixes:
    every node of their trie is one of them), then the end of the text."""
    if not prefixes:
        return None
    trie: dict[str, Any] = {}
    for prefix in prefixes:
        node = trie
        for character in prefix:
            node = node.setdefault(character, {})

    def branches(node: dict[str, Any]) -> str:
        alternatives = []
        for character, child in sorted(node.items()):
            rest = branches(child)
            alternatives.append(re.escape(character) + (f"(?:{rest})?" if rest else ""))
        return "|".join(alternatives)

    return re.compile(f"(?:{branches(trie)})\\Z")


_KEPT_TABLES: dict[frozenset[str], _Tables] = {}


def _tables(markers: frozenset[str]) -> _Tables:
    """The tables of ``markers``, built once (a dict lookup, not ``lru_cache``'s wrapper:
    a server makes a parser per request).  Kept for at most 64 sets of markers."""
    tables = _KEPT_TABLES.get(markers)
    if tables is None:
        if len(_KEPT_TABLES) >= 64:
            _KEPT_TABLES.clear()
        tables = _KEPT_TABLES[markers] = _Tables(markers)
    return tables


class Lexer:
    """Incremental marker lexer (sans-IO): ``feed(text)`` / ``feed_marker(m)`` / ``finish()``."""

    __slots__ = (
        "_buffer",
        "_escape",
        "_held_for",
        "_held_start",
        "_holdback_search",
        "_joining",
        "_longest_prefix",
        "_offset",
        "_search",
        "_short",
        "_tables",
    )

    def __init__(self, markers: Iterable[str], *, escape: bool) -> None:
        # What every feed reads is kept here; the rest is read from the tables (one set of
        # them per set of markers) when a feed holds a marker.
        tables = _tables(markers if type(markers) is frozenset else frozenset(markers))
        self._tables = tables
        self._search = tables.pattern.search
        self._short = tables.short
        self._longest_prefix = tables.longest_prefix
        self._holdback_search = tables.holdback_search
        # Only markers longer than the holdback regex nests need the slower search.
        self._held_start = tables.held_start if tables.long_markers else None
        self._escape = escape
        self._buffer = ""
        self._offset = 0
        # The long marker the whole buffer is a proper prefix of, when one is (see feed).
        self._held_for: str | None = None
        # The buffer holds text read again (see read_again) that known text and markers
        # still join (see feed_text).
        self._joining = False

    @property
    def offset(self) -> int:
        """The absolute offset of the first character not yet emitted."""
        return self._offset

    def feed(self, text: str) -> list[Token]:
        if not text and not self._buffer:
            return []  # (nothing to scan or hold: an empty completion, an empty delta)
        held_for = self._held_for
        if held_for is not None:
            # A buffer that is still a proper prefix of a long marker (a fixed instruction
            # text of thousands of characters) emits nothing: it is held whole until the
            # marker completes or the text leaves it.  Scanning it again on every feed would
            # make a stream of small pieces quadratic in the marker's length.
            if self._buffer:
                buffer = self._buffer + text
                if len(buffer) < len(held_for) and held_for.startswith(buffer):
                    self._buffer = buffer
                    return []
            self._held_for = None
        buffer = self._buffer + text if self._buffer else text
        tokens: list[Token] = []
        length = len(buffer)
        if length <= self._short:
            match = self._search(buffer)
            # Most feeds of a stream: no marker, nothing to scan.
            position = 0 if match is None else self._scan(buffer, tokens, match=match)
        else:
            position = self._scan(buffer, tokens)
        # Hold back the end that could still begin a marker (the longest end that is a
        # proper prefix of one) and, escaping, the backslash run before it.
        hold = 0
        search = self._holdback_search
        low = max(position, length - self._longest_prefix)
        if self._held_start is not None:
            held = self._held_start(buffer, low)
            if held is not None:
                hold = length - held
        elif search is not None:
            match = search(buffer, low)
            if match is not None:
                hold = length - match.start()
        if self._escape and buffer[length - hold - 1 : length - hold] == "\\":
            hold += _backslashes_before(buffer, length - hold, position)
        end = length - hold
        if end > position:
            if tokens and tokens[-1][0] is None:
                self._emit_text(tokens, buffer[position:end], position)
            else:
                tokens.append((None, buffer[position:end], self._offset + position))
        self._offset += end
        self._buffer = buffer[end:] if hold else ""
        if hold > _LONG_HOLD and self._held_start is not None:
            kept = self._buffer
            for marker in self._tables.long_markers:
                if marker.startswith(kept):
                    self._held_for = marker
                    break
        return tokens

    def feed_marker(self, marker: str) -> list[Token]:
        """A marker known to be one (a special token id): flush the buffer as text first.

        With escaping, the writer doubled the backslash run before a real marker: halve it.
        """
        if self._joining and self._buffer:
            return self._join(marker)
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

        The buffer is flushed as text first, as :meth:`feed_marker` does, unless it holds text
        read again (:meth:`read_again`) that may still begin a marker: then the text is read
        after it, as the text form of the input reads it.
        """
        if self._buffer:
            if self._joining:
                return self._join(text)
            tokens = self.finish()
        else:
            tokens = []  # (an empty buffer: finish does nothing)
        if text:
            tokens.append((None, text, self._offset))
            self._offset += len(text)
        return tokens

    def read_again(self, text: str, offset: int) -> list[Token]:
        """Read ``text`` again, from its absolute ``offset`` on, before what the lexer holds:
        ``text`` is what was emitted from ``offset`` on, as written (the parser found a
        marker that begins inside one the lexer took, where only that later marker is
        expected).  What may still grow into a marker is held as a feed holds it; text and
        markers known as such (:meth:`feed_text`, :meth:`feed_marker`) are then read after
        it as text, until what is held is decided."""
        self._buffer = text + self._buffer
        self._offset = offset
        self._held_for = None
        self._joining = True
        return self._join("")

    def _join(self, text: str) -> list[Token]:
        tokens = self.feed(text)
        if not self._buffer:
            self._joining = False
        return tokens

    def read_all(self, text: str) -> list[Token]:
        """``feed(text) + finish()``: the same runs (what a feed holds back comes as a run of
        its own, as a strict error quotes a run), in one list for the caller to run.

        The usual whole text (no end of it could still begin a marker, nothing held from an
        earlier feed) is scanned once, as at the end of the input: a feed holds nothing back
        from such a text (what it holds is an end that begins a marker, with the backslashes
        before it), so its runs are the same, and the look for an unfinished marker is made
        once, not once per marker a feed finds near the end."""
        if self.reads_at_once(text):
            tokens: list[Token] = []
            position = self._scan(text, tokens, final=True)
            if position < len(text):
                self._emit_text(tokens, text[position:], position)
            self._offset += len(text)
            return tokens
        tokens = self.feed(text)
        if self._buffer:
            tokens += self.finish()
        return tokens

    def reads_at_once(self, text: str) -> bool:
        """Whether :meth:`read_all` of ``text`` scans it once, as at the end of the input
        (see there): its runs are then split only at markers."""
        return bool(
            text
            and not self._buffer
            and not (self._escape and text[-1] == "\\")
            and not self._tables.ends_unfinished(text)
        )

    def read_already(self, text: str) -> None:
        """This lexer, new, as after ``read_all(text)`` whose tokens another lexer of the same
        markers and escaping read (its runs are the same: a new lexer's reading depends on
        nothing else); the caller runs those tokens."""
        if not self.new:
            raise ValueError("read_already: the lexer has read text already")
        self._offset = len(text)

    @property
    def new(self) -> bool:
        """Whether nothing was fed yet (nothing emitted, nothing held)."""
        return not self._offset and not self._buffer

    def finish(self) -> list[Token]:
        tokens: list[Token] = []
        buffer = self._buffer
        if not buffer:
            return tokens
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

    def _scan(
        self,
        buffer: str,
        tokens: list[Token],
        *,
        final: bool = False,
        match: re.Match[str] | None = None,
    ) -> int:
        """Emit every complete marker (and the text before it); return where scanning stopped.
        ``match``: the whole pattern's first match in a short buffer, when already found."""
        length = len(buffer)
        if length <= self._short:  # one search with the whole pattern
            if match is None:
                match = self._search(buffer)
                if match is None:
                    return 0  # most feeds of a stream: no marker
            searches: tuple[Callable[[str, int], re.Match[str] | None], ...] = (self._search,)
            firsts: tuple[str, ...] = ("",)
            matches: list[re.Match[str] | None] = [match]
            starts = [match.start()]
        else:
            tables = self._tables
            searches = tables.group_searches
            firsts = tables.group_firsts
            matches = []
            starts = []
            for first, search in zip(firsts, searches, strict=True):
                at = buffer.find(first)
                found = None if at < 0 else search(buffer, at)
                matches.append(found)
                # Each group's next marker, or the buffer's length: none (no marker starts
                # there), so the leftmost is min(starts), found in C.
                starts.append(length if found is None else found.start())
        groups = len(starts)
        position = 0
        last = length - self._longest_prefix  # a marker may begin unfinished from here
        escape = self._escape
        offset = self._offset
        # Where the rest of the buffer could still begin a marker (see _incomplete_from),
        # found once: -2 not looked for yet, -1 nowhere.
        incomplete = -2
        while True:
            # The leftmost marker: the first of the groups' (their first characters differ).
            if groups == 1:
                start = starts[0]
                match = matches[0]
            else:
                start = min(starts)
                match = matches[starts.index(start)]
            if start == length or match is None:
                return position
            end = match.end()
            marker = match.group()
            if start >= last and not final:
                if start > last and marker in self._tables.inner:
                    # A marker that starts earlier and is not complete yet may still win
                    # (leftmost-longest: ``\n</tools>...<tool_call>...`` holds
                    # ``<tool_call>``); it would hold this one after its start: only an inner
                    # one needs looking for it.
                    if incomplete == -2 or 0 <= incomplete < position:
                        incomplete = self._incomplete_from(buffer, position)
                    if 0 <= incomplete < start:
                        return self._flush_before(buffer, position, incomplete, tokens)
                if marker in self._tables.extendable and buffer[start:] in self._tables.prefixes:
                    # It may still grow into a longer marker (the text after it so far is the
                    # start of one, not only when the buffer ends with it): decide when more
                    # text comes.
                    return (
                        position
                        if start == position
                        else self._flush_before(buffer, position, start, tokens)
                    )
            run = (
                _backslashes_before(buffer, start, position)
                if escape and buffer[start - 1 : start] == "\\"
                else 0
            )
            if run % 2:
                before = buffer[position : start - run] + "\\" * (run // 2)
                marker = self._tables.literal[marker]
                end = start + len(marker)
                self._emit_text(tokens, before + marker, position)
            else:
                if start > position or run:
                    before = buffer[position : start - run] + "\\" * (run // 2)
                    if tokens and tokens[-1][0] is None:
                        self._emit_text(tokens, before, position)
                    else:
                        tokens.append((None, before, offset + position))
                tokens.append((marker, marker, offset + start))
            position = end
            if groups == 1:
                found = searches[0](buffer, position)
                matches[0] = found
                starts[0] = length if found is None else found.start()
            else:
                for index in range(groups):
                    if starts[index] < position:
                        at = buffer.find(firsts[index], position)
                        found = None if at < 0 else searches[index](buffer, at)
                        matches[index] = found
                        starts[index] = length if found is None else found.start()

    def _incomplete_from(self, buffer: str, position: int) -> int:
        """The first place from ``position`` on (and within a marker's length of the end)
        where the rest of the buffer could still begin a marker; -1: none."""
        low = max(position, len(buffer) - self._longest_prefix)
        if self._held_start is not None:
            held = self._held_start(buffer, low)
            return -1 if held is None else held
        search = self._holdback_search
        if search is None:
            return -1
        found = search(buffer, low)
        return -1 if found is None else found.start()

    def _flush_before(self, buffer: str, position: int, start: int, tokens: list[Token]) -> int:
        # Emit the text before a held marker, keeping any backslash run that escapes it.
        run = _backslashes_before(buffer, start, position) if self._escape else 0
        if start - run > position:
            self._emit_text(tokens, buffer[position : start - run], position)
        return start - run
