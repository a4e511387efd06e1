"""The text of a JSON call being streamed, kept once: a big call's arguments kept apart.

A call reader keeps its call's text until the close: a valid call hands its arguments on as
written, a malformed one gives its whole text back as content.  :class:`CallText` keeps it
in as little memory as it can:

- the text grows as one string, extended in place (CPython resizes a string that nothing
  else references instead of copying it; big strings are resized by the system's ``mremap``,
  with no copy at all), not as a list of pieces joined at the end (the pieces and the joined
  copy would be held at once);
- once the text passes :data:`SPLIT_AT` characters and the arguments' value has begun after
  well-formed members, the text is kept in three parts: the members before the arguments,
  the arguments' value (growing in place) and the rest; an :class:`ObjectCheck` follows the
  arguments as they come, so at the close they are known to be a valid JSON object and can
  be handed on as they are: no copy of them is cut from the whole text and no decoded copy
  is made to check them.  If the check refuses them (not an object, not strict JSON, too
  deep), the parts are joined back and the call is read whole, as a small call always is.

The two ways give the same result (the check refuses nothing the whole read accepts as an
object): only memory differs.
"""

from __future__ import annotations

import codecs
import mmap
import re
import sys
import zlib
from array import array

from .call_arguments import member_start
from .call_scanner import TextPieces
from .json_check import ObjectCheck

SPLIT_AT = 1 << 16
"""Below this many characters a call is read whole at the close (fastest, and its copies
are small); from it on, its arguments are kept apart (see the module docstring)."""
RETRY_GROWTH = 2.0
"""How much the text grows before the arguments are looked for again (each look reads the
members before them again)."""
STEP = 1 << 12
"""The arguments are checked and kept by pieces of at least this many characters (feeds of a
character or a token each cost a list append, not a check each)."""


class CallText:
    """A call's text, appended piece by piece (see the module docstring)."""

    __slots__ = (
        "_arguments",
        "_check",
        "_key",
        "_next_try",
        "_pending",
        "_pending_size",
        "_prefix",
        "_rest",
        "_size",
        "_text",
    )

    def __init__(self, arguments_key: str) -> None:
        self._key = arguments_key
        self._text = TextPieces()  # the whole text, while it is not split
        self._size = 0
        self._next_try = SPLIT_AT  # the length at which to look for the arguments next
        self._check: ObjectCheck | None = None  # set once split
        self._prefix = ""
        self._arguments = MappedText()
        self._pending: list[str] = []  # the latest pieces, not yet checked
        self._pending_size = 0
        self._rest: list[str] = []  # the text after the arguments

    def append(self, text: str) -> None:
        if self._check is None:
            self._text.append(text)
            self._size += len(text)
            if self._size >= self._next_try:
                self._split()
            return
        self._pending.append(text)
        self._pending_size += len(text)
        if self._pending_size >= STEP:
            self._flush()

    def _split(self) -> None:
        whole = self._text.take()
        start = member_start(whole, self._key)
        if start is None:
            # Not yet (or a long member comes first): look again once the text has grown.
            self._next_try = max(len(whole) + 1, int(len(whole) * RETRY_GROWTH))
            self._text.append(whole)
            return
        check = ObjectCheck()
        self._check = check
        self._prefix = whole[:start]
        self._take_arguments(check, whole, start)

    def _flush(self) -> None:
        """Check the pending pieces and keep them (arguments, or the text after them)."""
        check = self._check
        pending = self._pending
        if check is None or not pending:
            return
        batch = pending[0] if len(pending) == 1 else "".join(pending)
        self._pending = []
        self._pending_size = 0
        if check.ended:
            self._rest.append(batch)
        else:
            self._take_arguments(check, batch, 0)

    def _take_arguments(self, check: ObjectCheck, text: str, start: int) -> None:
        end = check.feed(text, start)
        if check.failed:
            if start:  # refused at once, by _split: ``text`` is the whole text so far
                self._prefix = ""
            self._unsplit(text)
            return
        self._arguments.append(text if end is None and not start else text[start:end])
        if end is not None and end < len(text):
            self._rest.append(text[end:])

    def _unsplit(self, text: str) -> None:
        """Back to one text (the arguments are no valid object: the call is read whole)."""
        self._check = None
        self._next_try = sys.maxsize  # never again
        for piece in (self._prefix, self._arguments.take(), *self._pending, text):
            self._text.append(piece)
        self._prefix = ""
        self._pending = []
        self._pending_size = 0

    def envelope(self) -> str | None:
        """When split and the arguments ended as a valid object: the call's text with ``{}``
        in place of the arguments (:meth:`arguments` gives them); else None."""
        self._flush()
        check = self._check
        if check is None or not check.ended:
            return None
        return "".join((self._prefix, "{}", *self._rest))

    def arguments(self) -> LateText:
        """The arguments kept apart (once :meth:`envelope` gave a text), made by their
        consumer: a :class:`LateText` that takes their map with it."""
        kept, self._arguments = self._arguments, MappedText()
        return late_text(kept)

    def text(self) -> str:
        """The whole text, as one string (kept: joined back if it was split)."""
        self._flush()
        if self._check is not None:
            rest, self._rest = self._rest, []
            self._unsplit("".join(rest))
        text = self._text.take()
        self._text.append(text)
        return text

    def take(self) -> str:
        """The whole text, as one string; the buffer is empty afterwards."""
        text = self.text()
        self._text.take()
        return text

    def clear(self) -> None:
        """Let go of the text (the call was handed on)."""
        self._text.take()
        self._arguments.clear()
        self._prefix = ""
        self._pending = []
        self._rest = []
        self._check = None


class MappedText:
    """Text kept as UTF-8 in an anonymous memory map, which grows without copying (the
    system moves its pages: ``mremap``) and holds memory only for the bytes written; a
    string grown in place is instead moved and copied by ``malloc`` whenever it meets a
    block in use, and the place it left stays in the process.  The first piece is kept as
    it came (a call fed whole needs no map).  ``text`` decodes it all back, once."""

    __slots__ = ("_first", "_map", "_size")

    def __init__(self) -> None:
        self._first = ""
        self._map: mmap.mmap | None = None
        self._size = 0

    def append(self, text: str) -> None:
        if self._map is None:
            if not self._first:
                self._first = text
                return
            first, self._first = self._first, ""
            self._map = _anonymous_map(2 * max(len(first) + len(text), mmap.PAGESIZE))
            self._write(self._map, first)
        self._write(self._map, text)

    def _write(self, buffer: mmap.mmap, text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")
        end = self._size + len(data)
        if end > len(buffer):
            buffer.resize(max(end, 2 * len(buffer)))
        buffer[self._size : end] = data
        self._size = end

    def text(self) -> str:
        """All the text appended, as one string (kept as a string from then on)."""
        buffer, self._map = self._map, None
        if buffer is not None:
            with memoryview(buffer) as view, view[: self._size] as written:
                self._first = codecs.utf_8_decode(written, "surrogatepass", True)[0]
            buffer.close()  # its memory goes back to the system at once
            self._size = 0
        return self._first

    def take_pieces(self) -> list[str]:
        """All the text appended, as strings of at most :data:`PIECE_BYTES` of UTF-8 each
        (one string if it never needed a map); empty afterwards.  Each piece's pages of the
        map go back to the system as soon as it is made, so the map and the pieces together
        hold the text about once, where one string made from the map holds it twice."""
        buffer, self._map = self._map, None
        if buffer is None:
            first, self._first = self._first, ""
            return [first] if first else []
        size, self._size = self._size, 0
        pieces: list[str] = []
        start = released = 0
        with memoryview(buffer) as view:
            while start < size:
                end = min(start + PIECE_BYTES, size)
                with view[start:end] as part:
                    # Not final but at the end: a character cut by ``end`` waits for the next.
                    piece, used = codecs.utf_8_decode(part, "surrogatepass", end == size)
                pieces.append(piece)
                start += used
                whole_pages = start - start % mmap.PAGESIZE
                if _RELEASE is not None and whole_pages > released:
                    buffer.madvise(_RELEASE, released, whole_pages - released)
                    released = whole_pages
        buffer.close()
        return pieces

    def take(self) -> str:
        """All the text appended, as one string; empty afterwards."""
        text = self.text()
        self._first = ""
        return text

    def __bool__(self) -> bool:
        return bool(self._first) or self._size > 0

    def clear(self) -> None:
        """Let go of the text, unread."""
        buffer, self._map = self._map, None
        if buffer is not None:
            buffer.close()
        self._first = ""
        self._size = 0


class MappedPieces:
    """Text appended in pieces of any size (a character, a token, a whole feed), kept in a
    :class:`MappedText` by batches of :data:`PIECES_PER_BATCH` pieces or :data:`STEP`
    characters, whichever comes first: memory for the
    characters only (no object per piece), and given back to the system as soon as it is
    taken or cleared (text kept by ``malloc`` would stay in the process once freed, where
    a later big string need not fit)."""

    __slots__ = ("_mapped", "_pieces", "_size")

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._size = 0  # characters in the pieces
        self._mapped = MappedText()

    def append(self, text: str) -> None:
        pieces = self._pieces
        pieces.append(text)
        self._size += len(text)
        if self._size >= STEP or len(pieces) >= PIECES_PER_BATCH:
            self._mapped.append(pieces[0] if len(pieces) == 1 else "".join(pieces))
            pieces.clear()
            self._size = 0

    def __bool__(self) -> bool:
        return bool(self._pieces) or bool(self._mapped)

    def take(self) -> str:
        """All the text appended, as one string; empty afterwards."""
        self._store()
        return self._mapped.take()

    def take_pieces(self) -> list[str]:
        """All the text appended, as :meth:`MappedText.take_pieces` gives it; empty afterwards."""
        self._store()
        return self._mapped.take_pieces()

    def _store(self) -> None:
        pieces = self._pieces
        if pieces:
            self._mapped.append(pieces[0] if len(pieces) == 1 else "".join(pieces))
            pieces.clear()
            self._size = 0

    def clear(self) -> None:
        """Let go of the text, unread."""
        self._pieces.clear()
        self._size = 0
        self._mapped.clear()


class LateText(str):
    """A held call's arguments not made into strings yet: an empty ``str`` standing in a
    ``ToolCallDelta`` until its consumer (:class:`~pawlette.engine.machine.Parser`) calls
    :meth:`pieces` and hands them on as one delta each.

    Made at the close, the arguments' one string would be a second copy of them next to the
    map that holds them, and for a call fed whole a third next to the text the reader still
    holds.  The parser makes them once the text it read is let go (at the end of the feed),
    in pieces of :data:`PIECE_BYTES`, releasing the map as it goes: the same text, in the
    same order, held about once instead."""

    source: MappedPieces | MappedText
    made: list[str] | None = None

    def pieces(self) -> list[str]:
        """The arguments, in pieces (made once; later calls give the same list)."""
        made = self.made
        if made is None:
            made = self.made = self.source.take_pieces()
        return made

    def take(self) -> str:
        """The arguments as one string (the pieces joined, once: kept as the one piece)."""
        pieces = self.pieces()
        if len(pieces) == 1:
            return pieces[0]
        joined = "".join(pieces)
        pieces[:] = [joined]
        return joined


def late_text(source: MappedPieces | MappedText) -> LateText:
    """A :class:`LateText` made of ``source`` (which it keeps: the caller lets go of it)."""
    late = LateText()
    late.source = source
    return late


class PackedText:
    """Text kept only in case it is needed again (a block's text, given back as content if
    the block turns out malformed), appended in pieces: once it passes :data:`STEP`
    characters it is kept compressed (zlib's fastest level), batch by batch.  A reader that
    keeps a call's text this way, next to the call's arguments, adds a fraction of the
    text to its peak memory instead of the text's whole size."""

    __slots__ = ("_compressor", "_packed", "_pieces", "_size")

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._size = 0  # characters in the pieces
        self._packed: list[bytes] = []
        self._compressor: zlib._Compress | None = None

    def append(self, text: str, start: int = 0, end: int | None = None) -> None:
        """Append ``text[start:end]`` (cut here by windows when big: no copy of it whole)."""
        if end is None:
            end = len(text)
        if end - start > STEP:  # packed a window at a time: no whole UTF-8 copy
            self._pack()
            for window in range(start, end, STEP):
                self._pieces.append(text[window : min(window + STEP, end)])
                self._pack()
            return
        if start or end < len(text):
            text = text[start:end]
        pieces = self._pieces
        pieces.append(text)
        self._size += len(text)
        if self._size >= STEP:
            self._pack()

    def _pack(self) -> None:
        if not self._pieces:
            return
        if self._compressor is None:
            self._compressor = zlib.compressobj(1)
        data = "".join(self._pieces).encode("utf-8", "surrogatepass")
        self._pieces.clear()
        self._size = 0
        packed = self._compressor.compress(data)
        if packed:
            self._packed.append(packed)

    def take(self) -> str:
        """All the text appended, as one string; empty afterwards."""
        compressor, self._compressor = self._compressor, None
        if compressor is None:
            text = "".join(self._pieces)
        else:
            tail = "".join(self._pieces).encode("utf-8", "surrogatepass")
            self._packed.append(compressor.compress(tail) + compressor.flush())
            data = zlib.decompress(b"".join(self._packed))
            self._packed.clear()
            text = codecs.utf_8_decode(data, "surrogatepass", True)[0]
        self._pieces.clear()
        self._size = 0
        return text

    def clear(self) -> None:
        """Let go of the text, unread."""
        self._pieces.clear()
        self._size = 0
        self._packed.clear()
        self._compressor = None


class EchoText:
    """Raw text kept as references into the JSON text transcoded from it: a stretch of the
    raw text that equals a stretch of the JSON (a string's contents, whose escapes read the
    same in the Python literal and in JSON) is kept as that stretch's place in the JSON;
    the rest (names, ``=``, quotes, numbers, whitespace, escapes that differ) is kept as it
    is (:class:`PackedText`).  A call's raw text, needed again only for a lenient warning,
    then costs a few places and its punctuation, not a second copy of its arguments.

    The raw text is a sequence of entries ``(literal length, JSON start, JSON length)``: that
    many characters of the kept literal text, then that stretch of the JSON; the literal text
    after the last entry ends it.  :meth:`text` rebuilds it exactly, given the JSON.  Should
    the entries grow past a small fraction of the text (a string whose every few characters
    escape differently), the rest is kept as literal text (:meth:`literal` from then on): a
    bound on the entries' memory, never a change in the text.
    """

    __slots__ = (
        "_entries",
        "_given_up",
        "_literal_run",
        "_pending",
        "_pending_size",
        "_store",
        "size",
    )

    def __init__(self) -> None:
        self._entries = array("q")  # flat (literal length, JSON start, JSON length) triples
        self._store = PackedText()  # the literal text, but for the pending pieces
        self._pending: list[str] = []  # the latest literal pieces
        self._pending_size = 0
        self._literal_run = 0  # literal characters since the last entry
        self._given_up = False
        self.size = 0
        """The raw text's length so far, in characters."""

    def literal(self, text: str) -> None:
        """Append raw text kept as it is."""
        pending = self._pending
        pending.append(text)
        self._pending_size += len(text)
        self._literal_run += len(text)
        self.size += len(text)
        if self._pending_size >= STEP or len(pending) >= PIECES_PER_BATCH:
            self._store.append(pending[0] if len(pending) == 1 else "".join(pending))
            pending.clear()
            self._pending_size = 0

    def copy(self, text: str, first: int, last: int, json_start: int, borrow: int = 0) -> None:
        """Append raw text equal to the JSON from ``json_start`` on: ``text[first:last]``,
        after the ``borrow`` characters that ended what :meth:`literal` kept last (the JSON's
        from ``json_start`` on too)."""
        if self._given_up:
            self.literal(text[first:last])
            return
        pending = self._pending
        if borrow and pending and len(pending[-1]) >= borrow:
            pending[-1] = pending[-1][:-borrow]
            self._pending_size -= borrow
            self._literal_run -= borrow
            self.size -= borrow
        else:  # (stored already: they stay literal, the JSON after them is referred to)
            json_start += borrow
            borrow = 0
        length = last - first + borrow
        entries = self._entries
        self.size += length
        if not self._literal_run and entries and entries[-2] + entries[-1] == json_start:
            entries[-1] += length  # it goes on where the last stretch ended
            return
        entries.append(self._literal_run)
        entries.append(json_start)
        entries.append(length)
        self._literal_run = 0
        if len(entries) > 3 * (ENTRIES_FREE + self.size // CHARACTERS_PER_ENTRY):
            self._given_up = True

    def text(self, json_text: str) -> str:
        """The raw text, given the JSON its entries refer to (it is kept)."""
        literal = self._store.take() + "".join(self._pending)
        self._store.append(literal)
        self._pending = []
        self._pending_size = 0
        entries = self._entries
        parts: list[str] = []
        cursor = 0
        for index in range(0, len(entries), 3):
            literal_length, start, length = entries[index : index + 3]
            parts.append(literal[cursor : cursor + literal_length])
            cursor += literal_length
            parts.append(json_text[start : start + length])
        parts.append(literal[cursor:])
        return "".join(parts)


ENTRIES_FREE = 64
"""Entries an :class:`EchoText` may always have."""
CHARACTERS_PER_ENTRY = 256
"""Beyond :data:`ENTRIES_FREE`, an :class:`EchoText` keeps an entry per this many characters
of raw text at most (24 bytes each: under a tenth of the text), then keeps the rest literally."""


class ObjectText:
    """The text of one JSON object with whitespace around it (a call's arguments as written
    after a marker: omni's ``<arguments>``), appended in pieces of any size and kept once:
    the object in a :class:`MappedText`, the whitespace before and the text after it apart.
    Pieces are checked by :class:`ObjectCheck` in batches of :data:`STEP` characters, so a
    big object is known valid at its end with no decoded copy of it and no object per piece.

    :meth:`checked_object` says whether it was checked so and is a valid object (a text of
    fewer than :data:`STEP` characters is never checked: ``json`` reads it faster at the
    close); :meth:`take_object` then gives the object's text alone (what ``str.strip`` of the
    whole text gives), :meth:`take` gives the whole text as written.
    """

    __slots__ = ("_check", "_checked", "_lead", "_object", "_pending", "_pending_size", "_rest")

    def __init__(self) -> None:
        self._check = ObjectCheck()
        self._checked = False  # some text went through the check
        self._lead = ""  # JSON whitespace before the object
        self._object = MappedText()  # from the object's first character (all of it if refused)
        self._pending: list[str] = []  # the latest pieces, not yet checked
        self._pending_size = 0
        self._rest: list[str] = []  # the text after the object's end

    def append(self, text: str) -> None:
        self._pending.append(text)
        self._pending_size += len(text)
        if self._pending_size >= STEP:
            self._flush()

    def _flush(self) -> None:
        pending = self._pending
        if not pending:
            return
        batch = pending[0] if len(pending) == 1 else "".join(pending)
        pending.clear()
        self._pending_size = 0
        self._checked = True
        check = self._check
        if check.ended:
            self._rest.append(batch)
            return
        if check.failed:
            self._object.append(batch)
            return
        start = 0
        if not self._object:  # the object has not begun: whitespace before it is kept apart
            start = _JSON_SPACE.match(batch).end()  # type: ignore[union-attr]
            if start == len(batch):
                self._lead += batch
                return
            self._lead += batch[:start]
        end = check.feed(batch, start)
        if end is None:  # the object goes on (or was refused: then all is kept as it came)
            self._object.append(batch[start:] if start else batch)
            return
        self._object.append(batch if not start and end == len(batch) else batch[start:end])
        if end < len(batch):
            self._rest.append(batch[end:])

    def checked_object(self) -> bool:
        """Whether the text was checked as it came and is one valid JSON object, with only
        whitespace (``str.strip``'s) around it."""
        if not self._checked:
            return False
        self._flush()
        return self._check.ended and not any(piece.strip() for piece in self._rest)

    def take_object(self) -> str:
        """The object's text alone (once :meth:`checked_object` said True); empty afterwards."""
        self._lead = ""
        self._rest = []
        return self._object.take()

    def late_object(self) -> LateText:
        """What :meth:`take_object` gives, made by its consumer: a :class:`LateText` that
        takes the object's map with it."""
        self._lead = ""
        self._rest = []
        kept, self._object = self._object, MappedText()
        return late_text(kept)

    def take(self) -> str:
        """The whole text as written; empty afterwards."""
        if not self._checked:  # a small text: not checked, only joined
            text = "".join(self._pending)
            self._pending = []
            self._pending_size = 0
            return text
        self._flush()
        text = "".join((self._lead, self._object.take(), *self._rest))
        self._lead = ""
        self._rest = []
        return text

    def clear(self) -> None:
        """Let go of the text, unread."""
        self._pending = []
        self._pending_size = 0
        self._lead = ""
        self._rest = []
        self._object.clear()


_JSON_SPACE = re.compile(r"[ \t\n\r]*")


PIECES_PER_BATCH = 1024
"""How many pieces :class:`MappedPieces` joins before it stores them."""
PIECE_BYTES = 1 << 18
"""The most UTF-8 bytes of one piece :meth:`MappedText.take_pieces` makes: the peak above
the text held once is about one piece (6% of a 4 MB call), and a call under this size is
handed on in one piece."""
_RELEASE: int | None = getattr(mmap, "MADV_DONTNEED", None)
"""How pages of a map already read are given back (Linux: at once; elsewhere, when the map
is closed)."""


def _anonymous_map(size: int) -> mmap.mmap:
    """A private anonymous map (a shared one cannot grow: its pages past the first size
    fault); Windows has no such flag, and its maps grow by copying."""
    private = getattr(mmap, "MAP_PRIVATE", None)
    if private is None:
        return mmap.mmap(-1, size)
    return mmap.mmap(-1, size, flags=private)
