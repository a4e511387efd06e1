"""Parse model output from token ids, one id (or a few) at a time.

:class:`IdParser` sits in front of a format's :class:`~pawlette.engine.machine.Parser`:

- an id of one of the format's markers is that marker;
- any other id is text: its bytes go through an incremental UTF-8 decoder, so a character
  split across ids (Llama 3 writes most CJK characters and emoji as two or three byte
  tokens) is held back until it is whole, and never reaches the parser as two halves.  An
  incomplete character left before a marker or at the end becomes U+FFFD.

How the two reach the parser depends on the format:

- formats that escape markers inside text (PCML, omni): the ids decode to exactly the
  rendered text, escapes included, and the text is parsed as text (markers by their
  spelling).  Parsing ids then gives what parsing their decoded text gives, by construction;
  markers written with a newline (PCML's ``\\n<call>``, ``</think>\\n``, which are a newline
  token and a marker token) are read as the one marker they are in text;
- formats that do not escape (ChatGLM3, breeze): a marker that holds a special token is a
  marker only when that token comes as its id
  (:meth:`~pawlette.engine.machine.Parser.feed_marker`); text is fed as text
  (:meth:`~pawlette.engine.machine.Parser.feed_text`), so text spelling a special token stays
  text.  This is the exact parse the text form cannot give.  A marker that holds no special
  token (a fence spelled as text, ``<tool_call>`` where the tokenizer has no such token) has
  no id: the model writes it as text, so it is read from the decoded text by its spelling,
  as the text form reads it.  Markers that the grammar only knows
  joined (ChatGLM3's ``[gMASK]sop``, two tokens; a declared format's ``<think>\\n`` or
  ``\\n<tool_call>\\n``, a marker with layout text around it) are joined before they are
  fed: the pieces are held while they can still become such a marker (text that could begin
  one, like a trailing ``\\n``, is held until the next id says).

Tokenizers whose tokens are not byte runs (no ``ByteLevel`` decoder) are decoded by decoding
the ids since the last emitted text again (the method of transformers' text streamer): text is
emitted once it no longer ends with U+FFFD.
"""

from __future__ import annotations

import codecs
from collections import OrderedDict
from collections.abc import Iterable

from ..engine.lexer import Lexer, Token, prefix_regex
from ..errors import RequestError
from ..format import Format
from ..formats import get_format
from ..json_values import show
from ..types import Event
from .backend import TokenizerBackend, load_backend

__all__ = ["IdParser"]


class _Tables:
    """What an :class:`IdParser` needs to know of a format and a tokenizer, built once per
    pair (a server makes an IdParser per request): the marker ids, the markers ids can spell
    and their prefixes, and the text of each id already decoded (filled as ids come)."""

    __slots__ = (
        "grammar_markers",
        "lead_characters",
        "lead_prefixes",
        "lead_search",
        "lead_starts",
        "longest_marker",
        "marker_prefixes",
        "markers",
        "owners",
        "plain_markers",
        "plain_starts",
        "texts",
        "token_bytes",
    )

    def __init__(self, fmt: Format, backend: TokenizerBackend) -> None:
        self.owners = (fmt, backend)  # kept alive while cached: their ids are the key
        self.markers: dict[int, str] = {}
        for marker in fmt.special_markers:
            token_id = backend.added_id(marker)
            if token_id is not None:
                self.markers[token_id] = marker
        # The markers ids can spell: those holding a special token.  A grammar marker may
        # join special tokens and layout text (``<think>\n``, ``\n<tool_call>\n``,
        # ``<|start_header_id|>user<|end_header_id|>\n\n``): its pieces are held while they
        # can still become one, and fed as the one marker the text form reads.
        special = tuple(fmt.special_markers)
        grammar_markers = frozenset(
            marker for marker in fmt.grammar.markers if any(s in marker for s in special)
        )
        self.grammar_markers = grammar_markers
        # The markers of text alone (fences spelled as text): no id stands for them, so the
        # decoded text is read for them as the text form reads it.
        self.plain_markers = frozenset(
            marker for marker in fmt.grammar.markers if not any(s in marker for s in special)
        )
        self.plain_starts = tuple(sorted({marker[0] for marker in self.plain_markers if marker}))
        self.marker_prefixes = frozenset(
            marker[:length] for marker in grammar_markers for length in range(1, len(marker))
        )
        # Text alone never makes a marker: before the first special token of a marker only
        # its leading layout text (the "\n" of "\n<tool_call>\n") may be held.
        leads = {
            marker[: min(marker.find(s) for s in special if s in marker)]
            for marker in grammar_markers
        }
        self.lead_prefixes = frozenset(
            lead[:length] for lead in leads for length in range(1, len(lead) + 1)
        )
        self.longest_marker = max(map(len, leads), default=0)
        # Every character of that leading text: a text ending in none of them holds nothing.
        self.lead_characters = frozenset("".join(leads))
        self.lead_starts = tuple(sorted({lead[0] for lead in leads if lead}))
        # ``lead_search(text, start)``: where the longest end of ``text`` (from ``start`` on)
        # that begins a lead starts (the prefixes of the leads are closed under prefixes).
        pattern = prefix_regex(self.lead_prefixes)
        self.lead_search = None if pattern is None else pattern.search
        self.token_bytes = backend.token_bytes()
        # The text of an id whose bytes decode whole (most ids), as decoding them gives it.
        self.texts: dict[int, str] = {}


_IDS_KEPT = 256
"""The generic decoder lets go of the ids it will not decode again once this many pile up (a
long text between markers would otherwise keep every id of it)."""

_TABLES: OrderedDict[tuple[int, int], _Tables] = OrderedDict()
_TABLES_KEPT = 8


def _tables(fmt: Format, backend: TokenizerBackend) -> _Tables:
    key = (id(fmt), id(backend))
    found = _TABLES.get(key)
    if found is not None:
        _TABLES.move_to_end(key)
        return found
    tables = _TABLES[key] = _Tables(fmt, backend)
    while len(_TABLES) > _TABLES_KEPT:
        _TABLES.popitem(last=False)
    return tables


class IdParser:
    """Feeds token ids to a parser of ``fmt``: ``feed_ids(ids)`` / ``finish()`` return events.

    ``tokenizer`` is anything :func:`~pawlette.tokenization.load_backend` accepts; the other
    keyword arguments go to :meth:`pawlette.Format.parser` (``strict``, ``conversation``,
    ``id_factory``, ``tools``, ...), unless ``parser`` is given.

    Example (``tokenizer`` holds PCML's markers)::

        parser = IdParser("pcml", tokenizer)
        events = []
        for token in completion_ids:  # as the engine streams them
            events += parser.feed_ids([token])
        events += parser.finish()
    """

    def __init__(
        self,
        fmt: Format | str,
        tokenizer: object,
        *,
        parser: object = None,
        **parser_options: object,
    ) -> None:
        self.format = get_format(fmt) if isinstance(fmt, str) else fmt
        self.backend: TokenizerBackend = load_backend(tokenizer)
        if parser is None:
            parser = self.format.parser(**parser_options)  # type: ignore[arg-type]
        from ..engine.machine import Parser

        if not isinstance(parser, Parser):
            raise RequestError("parser", f"a {type(parser).__name__}", "a pawlette Parser")
        self.parser = parser
        tables = _tables(self.format, self.backend)
        self._markers = tables.markers
        # (also a format whose markers are plain text: Grammar.text_ids)
        self._as_text = self.format.grammar.escape or self.format.grammar.text_ids
        self._grammar_markers = tables.grammar_markers
        self._marker_prefixes = tables.marker_prefixes
        self._lead_prefixes = tables.lead_prefixes
        self._lead_characters = tables.lead_characters
        self._lead_starts = tables.lead_starts
        self._lead_search = tables.lead_search
        self._longest_marker = tables.longest_marker
        self._held: list[tuple[bool, str]] = []  # (is a marker, text) pieces being joined
        self._token_bytes = tables.token_bytes
        self._texts = tables.texts
        self._partial = b""  # the bytes of a character not yet whole
        # Text goes to the parser as text to lex (escaping formats) or as known text, read
        # for the markers of text alone first where the format has some.
        self._plain: Lexer | None = None
        self._plain_starts = tables.plain_starts
        self._plain_fed = 0  # the characters fed to that lexer (past its offset: held)
        if self._as_text:
            self._feed_text = parser.feed
        elif tables.plain_markers:
            self._plain = Lexer(tables.plain_markers, escape=False)
            self._feed_text = self._plain_text
        else:
            self._feed_text = self._piece_of_text
        # The generic decoder: text ids since the last marker, and how far they were emitted.
        self._text_ids: list[int] = []
        self._prefix = 0
        self._read = 0

    # ------------------------------------------------------------------ public

    def feed_ids(self, ids: Iterable[int]) -> list[Event]:
        """Feed token ids; return the events they completed."""
        events: list[Event] = []
        markers = self._markers
        texts = self._texts
        for token in ids:
            marker = markers.get(token)
            if marker is None:
                text = None if self._partial else texts.get(token)
                if text is None:
                    text = self._decode(token)
                if text:
                    fed = self._feed_text(text)
                    if fed:
                        if events:
                            events += fed
                        else:
                            events = fed
                continue
            tail = self._flush_text()
            if tail:
                events += self._text(tail)
            if self._plain is not None:
                events += self._plain_runs(self._plain.finish())
            events += self._marker(marker)
        return events

    def finish(self, finish_reason: str | None = None) -> list[Event]:
        """The end of the output (``finish_reason`` as :meth:`Parser.finish` takes it)."""
        events: list[Event] = []
        tail = self._flush_text()
        if tail:
            events += self._text(tail)
        if self._plain is not None:
            events += self._plain_runs(self._plain.finish())
        events += self._release_marker()
        return events + self.parser.finish(finish_reason)

    # ------------------------------------------------------------------ markers and text

    def _text(self, text: str) -> list[Event]:
        return self._feed_text(text)

    def _piece_of_text(self, text: str) -> list[Event]:
        # The usual: nothing held, and no end of the text can begin a marker (its last
        # character is in none of the markers' leading layout text, or no end of it is the
        # start of such text): the text goes at once.
        if not self._held and (text[-1] not in self._lead_characters or not self._holdback(text)):
            return self.parser.feed_text(text)
        return self._piece(False, text)

    def _plain_text(self, text: str) -> list[Event]:
        """Decoded text, read for the markers of text alone (what may still begin one is
        held by the lexer until the next text, id or the end says)."""
        lexer = self._plain
        assert lexer is not None  # (this reader is chosen only with the lexer)
        if self._plain_fed == lexer.offset:
            # Nothing held: a text with no marker's first character in it holds no marker
            # and begins none (most texts), and goes on without the lexer.
            for first in self._plain_starts:
                if first in text:
                    break
            else:
                return self._piece_of_text(text)
        self._plain_fed += len(text)
        return self._plain_runs(lexer.feed(text))

    def _plain_runs(self, tokens: list[Token]) -> list[Event]:
        events: list[Event] = []
        for marker, text, _ in tokens:
            if marker is not None:
                events += self._piece(True, marker)
            elif text:
                events += self._piece_of_text(text)
        return events

    def _marker(self, marker: str) -> list[Event]:
        if self._as_text:
            return self.parser.feed(marker)
        return self._piece(True, marker)

    def _piece(self, is_marker: bool, text: str) -> list[Event]:
        """One decoded piece: held while the held pieces and it can still join into a
        marker, fed as that marker once they do, else fed as they came."""
        prefixes, markers = self._marker_prefixes, self._grammar_markers
        if not self._held:
            if is_marker:
                if text in prefixes:
                    self._held = [(True, text)]
                    return []
                return self.parser.feed_marker(text)
            cut = self._holdback(text)
            events = self.parser.feed_text(text[: len(text) - cut]) if cut < len(text) else []
            if cut:
                self._held = [(False, text[len(text) - cut :])]
            return events
        held = "".join(piece for _, piece in self._held)
        if is_marker:
            joined = held + text
            if joined in prefixes:
                self._held.append((True, text))
                return []
            if joined in markers:
                self._held = []
                return self.parser.feed_marker(joined)
        elif not any(held_is_marker for held_is_marker, _ in self._held):
            if held + text in self._lead_prefixes:
                self._held.append((False, text))  # still only layout that may lead a marker
                return []
        else:
            best = 0
            for length in range(1, len(text) + 1):
                joined = held + text[:length]
                if joined in markers:
                    best = length
                if joined not in prefixes:
                    break
            else:
                self._held.append((False, text))  # all of it may still grow into a marker
                return []
            if best:
                self._held = []
                events = self.parser.feed_marker(held + text[:best])
                return events + (self._piece(False, text[best:]) if best < len(text) else [])
        # No marker joins: the held pieces are what they came as (the whole run may itself
        # be a marker that did not grow), then the new piece.
        pieces, self._held = [*self._held, (is_marker, text)], []
        events = []
        marker, rest = self._leading_marker(pieces)
        if marker:
            events += self.parser.feed_marker(marker)
            pieces = rest
        else:
            first_is_marker, first = pieces.pop(0)
            if first_is_marker:
                events += self.parser.feed_marker(first)
            elif len(first) > 1 and pieces:
                # A marker may begin inside held layout text ("\n\n" then "</think>": the
                # text form reads "\n" and the marker "\n</think>"): as the lexer does, one
                # character is text and the rest is read again.
                events += self.parser.feed_text(first[0])
                pieces.insert(0, (False, first[1:]))
            else:
                events += self.parser.feed_text(first)
        for piece_is_marker, piece in pieces:
            events += self._piece(piece_is_marker, piece)
        return events

    def _leading_marker(self, pieces: list[tuple[bool, str]]) -> tuple[str, list[tuple[bool, str]]]:
        """The longest marker the pieces begin with (ending after a marker piece, within or
        at the end of a text piece), and the pieces after it; ``""`` if they begin with none.
        The held run may have grown past a marker while it could still become a longer one
        (``\\n</think>`` then ``\\n`` toward ``\\n</think>\\n\\n``): the text form reads
        that marker, so the ids do too."""
        markers = self._grammar_markers
        best, best_rest = "", pieces
        joined = ""
        seen_marker = False
        for index, (piece_is_marker, piece) in enumerate(pieces):
            if piece_is_marker:
                joined += piece
                seen_marker = True
                if joined in markers:
                    best, best_rest = joined, pieces[index + 1 :]
                continue
            for length in range(1, len(piece) + 1):
                if seen_marker and joined + piece[:length] in markers:
                    best = joined + piece[:length]
                    tail = [(False, piece[length:])] if length < len(piece) else []
                    best_rest = tail + pieces[index + 1 :]
            joined += piece
        return best, best_rest

    def _holdback(self, text: str) -> int:
        """The length of the longest end of ``text`` that begins a marker (``\\n`` before
        ``<tool_call>``)."""
        search = self._lead_search
        if search is None:
            return 0
        window = max(0, len(text) - self._longest_marker)
        # Such an end begins with a marker's first character: most texts hold none (a
        # str.find each), and only those that do are matched against the markers' leads.
        for first in self._lead_starts:
            if text.find(first, window) >= 0:
                match = search(text, window)
                return 0 if match is None else len(text) - match.start()
        return 0

    def _release_marker(self) -> list[Event]:
        pieces, self._held = self._held, []
        events: list[Event] = []
        while pieces:
            held = "".join(piece for _, piece in pieces)
            if held in self._grammar_markers:
                return events + self.parser.feed_marker(held)
            # Held toward a longer marker that never came: the text form reads the marker
            # they begin with ("\n" and an end marker, held toward a spelling that goes on).
            marker, rest = self._leading_marker(pieces)
            if marker:
                events += self.parser.feed_marker(marker)
                pieces = rest
                continue
            is_marker, piece = pieces.pop(0)
            events += self.parser.feed_marker(piece) if is_marker else self.parser.feed_text(piece)
        return events

    # ------------------------------------------------------------------ decoding

    def _decode(self, token: int) -> str:
        # Only ids missing from the caches come here, so the check costs the hot path nothing.
        if type(token) is not int:
            raise RequestError("ids", f"found {show(token)}", "token ids (int)")
        table = self._token_bytes
        if table is not None:
            if not 0 <= token < len(table):
                raise RequestError(
                    "ids", f"id {token}", f"an id of the tokenizer (0..{len(table) - 1})"
                )
            # As codecs' incremental UTF-8 decoder does: bytes of a character not yet whole
            # wait for the next id.
            partial = self._partial
            data = partial + table[token] if partial else table[token]
            text, consumed = codecs.utf_8_decode(data, "replace", False)
            self._partial = data[consumed:]
            if not partial and consumed == len(data):
                self._texts[token] = text
            return text
        self._text_ids.append(token)
        decode = self.backend.decode
        before = decode(self._text_ids[self._prefix : self._read])
        now = decode(self._text_ids[self._prefix :])
        if len(now) > len(before) and not now.endswith("\ufffd"):
            self._prefix, self._read = self._read, len(self._text_ids)
            if self._prefix >= _IDS_KEPT:  # the ids before the prefix are not decoded again
                del self._text_ids[: self._prefix]
                self._read -= self._prefix
                self._prefix = 0
            return now[len(before) :]
        return ""

    def _flush_text(self) -> str:
        if self._token_bytes is not None:
            partial, self._partial = self._partial, b""
            return codecs.utf_8_decode(partial, "replace", True)[0] if partial else ""
        if self._read == len(self._text_ids):
            self._text_ids, self._prefix, self._read = [], 0, 0
            return ""
        decode = self.backend.decode
        before = decode(self._text_ids[self._prefix : self._read])
        now = decode(self._text_ids[self._prefix :])
        self._text_ids, self._prefix, self._read = [], 0, 0
        return now[len(before) :]
