"""The segment writer: what every renderer writes through.

Markers become special segments; format scaffolding is written raw; caller text is escaped
(when the format escapes) so the lexer reads it back as text whatever it contains.

Rendering is on the serving path (one render per request), so the three write methods are
kept lean: a render makes dozens of segments, and each method is a few attribute reads and
one append.  Most segments are a format's own fences, which are the same in every render for
the same message role and index: :class:`ConstantSegments` builds those once per layout and
:meth:`Writer.extend` writes them in one step.

The rendering's text is the segments' texts joined, each taken out of its segment at the end,
which costs more per segment than the join itself.  A writer that writes a run of segments
whose text it holds already (a turn kept whole, written again) gives that text beside them,
and only the segments between such runs have their texts taken out one by one: when
``_texted`` (the segments whose text ``_texts`` holds) is short of the segments written, the
texts of the rest are added first, then the run's text with ``_add_text``, its segments, and
``_texted`` set to them all.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from collections.abc import Set as AbstractSet
from operator import itemgetter

from ..types import Rendering, Role, Segment, new_rendering
from .lexer import escape_text, marker_scan

# ``Segment(...)`` goes through the named tuple's Python-level ``__new__``; building the tuple
# and handing it to ``tuple.__new__`` makes the same Segment at about half the cost.
_new_tuple = tuple.__new__
text_of = itemgetter(0)
"""A segment's text (``segment.text``, without the named tuple's attribute lookup)."""


def _holds_nothing(text: str) -> bool:
    return False


class Writer:
    """Collects segments for one rendering, within the current message context."""

    __slots__ = (
        "_add_text",
        "_append",
        "_escape",
        "_extend",
        "_holds_marker",
        "_segments",
        "_texted",
        "_texts",
        "_unfinished",
        "losses",
        "message_index",
        "present",
        "role",
    )

    def __init__(self, escape: re.Pattern[str] | None) -> None:
        self._escape = escape
        # Whether a text holds a marker (most hold none, so most need no escaping).
        self._holds_marker = _holds_nothing if escape is None else marker_scan(escape)
        self._segments: list[Segment] = []
        self._append = self._segments.append
        self._extend = self._segments.extend
        # The text of the first ``_texted`` segments, in pieces (see the module).
        self._texts: list[str] = []
        self._add_text = self._texts.append
        self._texted = 0
        # Caller text that ends with a backslash, written as the last segment: if a real marker
        # comes next, its trailing backslash run must be doubled (see :func:`escape_text`).
        self._unfinished: str | None = None
        self.role: Role | None = None
        self.message_index = -1
        self.losses: list[str] | None = None
        """What the format dropped on purpose (see :attr:`Rendering.losses`), or None."""
        self.present: AbstractSet[str] | None = None
        """What the messages written hold (:func:`pawlette.openai.present_in`), when the
        caller found it as it read them (:meth:`pawlette.Format.render`); None: not known."""

    def at(self, role: Role | None, message_index: int) -> None:
        """Following segments belong to this message (``-1``: outside any message)."""
        self.role = role
        self.message_index = message_index

    def marker(self, text: str, kind: str, *, trainable: bool = False) -> None:
        if self._unfinished is not None:
            self._finish_backslashes()
        self._append(
            _new_tuple(Segment, (text, True, self.role, self.message_index, kind, trainable))
        )

    def text(self, text: str, kind: str, *, trainable: bool = False) -> None:
        """Caller text (content, arguments, names): escaped when the format escapes."""
        if not text:
            return
        written = text
        escape = self._escape
        if escape is not None:
            if self._holds_marker(text):
                written = escape_text(text, escape, before_marker=False)
            self._unfinished = text if text[-1] == "\\" else None
        self._append(
            _new_tuple(Segment, (written, False, self.role, self.message_index, kind, trainable))
        )

    def raw(self, text: str, kind: str, *, trainable: bool = False) -> None:
        """Scaffolding the format itself writes (separators, header keys): never escaped."""
        if not text:
            return
        self._unfinished = None
        self._append(
            _new_tuple(Segment, (text, False, self.role, self.message_index, kind, trainable))
        )

    def extend(self, segments: tuple[Segment, ...]) -> None:
        """Write segments built for the current message context (:class:`ConstantSegments`):
        the same as writing each with :meth:`marker` or :meth:`raw`."""
        if self._unfinished is not None and segments:
            if segments[0][1]:  # a marker comes first: settle the text's backslashes
                self._finish_backslashes()
            self._unfinished = None
        self._extend(segments)  # (no segments: extends by nothing)

    def _finish_backslashes(self) -> None:
        # A real marker follows caller text ending in backslashes: the run must not escape it.
        source = self._unfinished
        self._unfinished = None
        if source is None or self._escape is None:
            return
        last = self._segments[-1]
        fixed = escape_text(source, self._escape, before_marker=True)
        self._segments[-1] = last._replace(text=fixed)
        if self._texted == len(self._segments):  # (its text is the end of the last piece)
            texts = self._texts
            texts[-1] = texts[-1][: len(texts[-1]) - len(last.text)] + fixed

    def lose(self, what: str) -> None:
        """Record a documented loss (``"messages[2].reasoning_content: not written"``)."""
        if self.losses is None:
            self.losses = []
        self.losses.append(what)

    def rendering(self) -> Rendering:
        segments = tuple(self._segments)
        texts = self._texts
        if texts:
            texted = self._texted
            if texted < len(segments):
                texts.append("".join(map(text_of, segments[texted:])))
                self._texted = len(segments)
            text = "".join(texts)
        else:
            text = "".join(map(text_of, segments))
        if self.losses:
            return new_rendering(text, segments, tuple(self.losses))
        return new_rendering(text, segments)


MAX_CACHED_INDEX = 256
"""Segments of messages up to this index are kept (per layout); later ones are built anew."""

MAX_CONSTANT_SEGMENTS = 1 << 16
"""Segment tuples a layout keeps at most (fences keyed by value may hold caller text): a full
store starts over, as the store of messages read does, so the fences that recur come back
instead of a long-running server keeping only the first ones it met."""

Pieces = tuple[tuple[bool, str], ...]
"""A fence as ``(is a marker, text)`` pairs."""


class ConstantSegments:
    """A layout's fences as segments, built once per message context and kept.

    A fence's segments depend on nothing but the fence, its kind and trainability, and the
    message context (role and index) they are written in, so a layout renders the same
    segment tuples in every render.  Keys (``found``) are ``(fence key, kind, trainable,
    role, index)``, the fence key chosen by the caller (a name, or the id of a fence the
    caller keeps alive); each layout holds one cache, bounded by :data:`MAX_CACHED_INDEX`.
    A writer looks a key up in ``found`` (the hot path: one dict lookup), calls :meth:`build`
    when it is missing, and writes the segments with :meth:`Writer.extend`.
    """

    __slots__ = ("found",)

    def __init__(self) -> None:
        self.found: dict[tuple[Hashable, str, bool, Role | None, int], tuple[Segment, ...]] = {}

    def build(
        self,
        writer: Writer,
        key: Hashable,
        pieces: Pieces,
        kind: str,
        trainable: bool = False,
        also: Hashable = None,
    ) -> tuple[Segment, ...]:
        """The segments :meth:`Writer.marker` and :meth:`Writer.raw` would write for
        ``pieces`` (what ``key`` stands for) in the writer's context, kept for next time
        (under ``also`` too when it is not None: another key standing for the same)."""
        role = writer.role
        index = writer.message_index
        segments = tuple(
            _new_tuple(Segment, (text, special, role, index, kind, trainable))
            for special, text in pieces
            if special or text  # raw() writes no empty text; marker() writes any
        )
        if index < MAX_CACHED_INDEX:
            if len(self.found) >= MAX_CONSTANT_SEGMENTS:
                self.found.clear()
            self.found[(key, kind, trainable, role, index)] = segments
            if also is not None:
                self.found[(also, kind, trainable, role, index)] = segments
        return segments
