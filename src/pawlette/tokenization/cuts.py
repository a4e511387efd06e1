"""Cutting text where the pre-tokenizer splits, so repeated pieces are encoded once.

A tokenizer's pre-tokenizer cuts text into pieces and the model encodes each piece on its
own; two texts joined at a place where the pre-tokenizer always cuts therefore encode to the
ids of each text, one after the other.  Where those places are is a property of the
pre-tokenizer, so a :class:`TextCuts` is built per tokenizer and each of its two rules is
used only when probes encoded both ways agree (:func:`verified_cuts`):

- **space**: before a space that follows a character that is not whitespace.  Every
  GPT-style pre-tokenizer regex (Llama 3, Qwen2, o200k, tekken, GPT-2's) ends a letter,
  digit or punctuation match at a space and begins the next match with it, and the
  match that begins there reads only what follows;
- **line**: after a newline followed by spaces (maybe none) and a character that is neither
  whitespace nor ``/``.  The regexes end a match containing a newline at its last newline
  (``\\s*[\\r\\n]+``, punctuation with its trailing ``[\\r\\n]*``); o200k's and tekken's
  punctuation also takes a ``/`` after the newlines (``[\\r\\n/]*``), hence that exception.
  GPT-2's ``\\s+(?!\\S)`` keeps a newline with the spaces after it, so its probes fail
  and the rule is off there.

Text is cut into *lines* (the line rule), and a line not already known is cut into *words*
(the space rule); each piece's ids are remembered (:class:`PieceCache`), so a tool listing,
a system prompt's words or a JSON key shared by many conversations are encoded once, and
only text never seen goes to the tokenizer, joined back into as few, as long texts as the
rules allow.  The ids of a joined text are split back into its pieces by each token's length
in bytes (byte-level BPEs only, where every token is a fixed run of bytes); a piece that does
not end on a token boundary is a :class:`~pawlette.errors.TokenizerMismatch`, never silently
wrong ids.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..errors import TokenizerMismatch

__all__ = [
    "PIECE_CACHE_CHARACTERS",
    "PIECE_CACHE_ENTRIES",
    "PieceCache",
    "TextCuts",
    "verified_cuts",
]

PIECE_CACHE_ENTRIES = 65536
"""How many pieces a :class:`PieceCache` remembers before it starts again empty."""
PIECE_CACHE_CHARACTERS = 4_000_000
"""How many characters of pieces it remembers before it starts again empty (long lines)."""

Encode = Callable[[Sequence[str]], list[list[int]]]

# Probe texts: what can end the text before a cut, and what can begin the text after one.
_ENDS = (
    "a", "A", "1", "12345", ".", ",", "'", "'s", "n't", "é", "e\u0301", "日本", "😀",
    "\u200b", "-", "/", "\\", '"', "}", ",\n", "\n", "\n\n", "\r\n", "x\n", "x \n", " \n",
    "\t\n", ".\n", "\u00a0", "\u3000", "\x85", "\u2028", " ", "\t", "\x1c",
)  # fmt: skip
_STARTS = (
    " a", " A", " 1", " .", " '", " 's", " /", "  a", "   b", " \n", "   \n", " \t",
    " \u00a0", " 日", " 😀", " \u0301", "a", "A", "1", ".", "/", "'s", "日", "😀",
    "\u0301", "{", '"', '    "x"', "  /", "\n", "\t", "\u00a0x", "\r\n", "\u3000",
    "  ", " ", "",
)  # fmt: skip


# Python's \s is str.isspace(), which holds for every character a regex engine's Unicode \s
# takes (and for a few more, such as U+001C: no cut there, which is only a missed chance).
# A line: up to a newline followed by spaces and a character neither whitespace nor "/".
_LINES = re.compile(r"[^\n]*(?:\n(?! *[^\s/])[^\n]*)*\n?")
# A word: up to a space that follows a character that is not whitespace.
_WORDS = re.compile(r"(?:(?<=\S) )?[^ ]*(?:(?<!\S) [^ ]*)*")


class TextCuts:
    """Where text is cut: ``space`` and ``line`` say which rules hold (module docstring)."""

    __slots__ = ("line", "space")

    def __init__(self, *, space: bool, line: bool) -> None:
        self.space = space
        self.line = line

    def lines(self, text: str) -> list[str]:
        """``text`` cut by the line rule (the whole text when it is off)."""
        if not self.line or "\n" not in text:
            return [text]
        return _LINES.findall(text)[:-1]  # the last match is the empty one at the end

    def words(self, text: str) -> list[str]:
        """``text`` cut by the space rule (the whole text when it is off)."""
        if not self.space or " " not in text:
            return [text]
        return _WORDS.findall(text)[:-1]

    def pieces(self, text: str) -> list[str]:
        """``text`` cut by both rules."""
        return [word for line in self.lines(text) for word in self.words(line)]

    def joinable(self, before: str, after: str) -> bool:
        """Whether the place between ``before`` and ``after`` is a cut (both non-empty)."""
        if self.space and after[0] == " " and not before[-1].isspace():
            return True
        if self.line and before[-1] == "\n":
            first = after.lstrip(" ")[:1]
            return bool(first) and first != "/" and not first.isspace()
        return False


def _agrees(cuts: TextCuts, encode: Encode, texts: list[str]) -> bool:
    """Whether each text's pieces, encoded one by one, give the ids of the text encoded whole."""
    pieces = [cuts.pieces(text) for text in texts]
    flat = [piece for group in pieces for piece in group]
    whole = encode(texts)
    separate = iter(encode(flat))
    for ids, group in zip(whole, pieces, strict=True):
        joined: list[int] = []
        for _ in group:
            joined += next(separate)
        if joined != ids:
            return False
    return True


def verified_cuts(encode: Encode) -> TextCuts | None:
    """The rules that hold for the tokenizer behind ``encode`` (its plain text encoding),
    found by encoding probes whole and cut; None when neither holds."""
    probes = [f"x{end}{start} y" for end in _ENDS for start in _STARTS]
    probes += [
        '{"type": "function", "function": {"name": "get_weather", "parameters": {}}}\n',
        '{\n    "name": "a/b",\n    "items": [\n        1, 2\n    ]\n}\n\n/end\n  /x',
        "Don't stop: it's 12,345.67 km — 東京 😀😀 x\u0301 \r\n\r\n  \tnext\n\n\n end. ",
    ]
    space = _agrees(TextCuts(space=True, line=False), encode, probes)
    line = _agrees(TextCuts(space=False, line=True), encode, probes)
    if not (space or line):
        return None
    return TextCuts(space=space, line=line)


class PieceCache:
    """Encodes texts piece by piece (``cuts``), each piece's ids remembered.

    ``encode`` is the plain encoding (a batch call); ``token_lengths`` each id's length in
    bytes (a byte-level BPE's).  The cache starts again empty when it would hold more than
    :data:`PIECE_CACHE_ENTRIES` pieces or :data:`PIECE_CACHE_CHARACTERS` characters (cheaper
    than evicting one at a time; the pieces that matter come back on their next use).
    """

    def __init__(
        self, cuts: TextCuts, encode: Encode, token_lengths: Sequence[int], source: str
    ) -> None:
        self.cuts = cuts
        self._encode = encode
        self._token_lengths = token_lengths
        self._source = source
        self._known: dict[str, list[int]] = {}
        self._characters = 0

    def clear(self) -> None:
        self._known.clear()
        self._characters = 0

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """The ids of each text (as the plain encoding of the whole text gives them)."""
        known = self._known
        lines_of = self.cuts.lines
        words_of = self.cuts.words
        # Each text as its lines: a known line's ids, a line to encode (str), or a line not
        # known as its words (each a known word's ids or a word to encode).
        plans: list[list[list[int] | str | tuple[str, list[list[int] | str]]]] = []
        wanted: dict[str, None] = {}
        for text in texts:
            parts: list[list[int] | str | tuple[str, list[list[int] | str]]] = []
            for line in lines_of(text):
                found = known.get(line)
                if found is not None:
                    parts.append(found)
                    continue
                words = words_of(line)
                if len(words) == 1:
                    parts.append(line)
                    wanted[line] = None
                    continue
                pieces: list[list[int] | str] = []
                for word in words:
                    found = known.get(word)
                    if found is None:
                        wanted[word] = None
                        pieces.append(word)
                    else:
                        pieces.append(found)
                parts.append((line, pieces))
            plans.append(parts)
        fresh = self._encode_pieces(list(wanted)) if wanted else {}
        learned: list[tuple[str, list[int]]] = []
        results: list[list[int]] = []
        for parts in plans:
            ids: list[int] = []
            for part in parts:
                if isinstance(part, list):
                    ids += part
                elif isinstance(part, str):
                    ids += fresh[part]
                else:
                    line_ids: list[int] = []
                    for piece in part[1]:
                        line_ids += fresh[piece] if isinstance(piece, str) else piece
                    learned.append((part[0], line_ids))
                    ids += line_ids
            results.append(ids)
        # Remembered only now: a piece looked up above must still be there when assembled.
        added = sum(map(len, fresh)) + sum(len(line) for line, _ in learned)
        self._characters += added
        if (
            len(known) + len(fresh) + len(learned) > PIECE_CACHE_ENTRIES
            or self._characters > PIECE_CACHE_CHARACTERS
        ):
            known.clear()
            self._characters = added
        known.update(fresh)
        known.update(learned)
        return results

    def _encode_pieces(self, pieces: list[str]) -> dict[str, list[int]]:
        """The ids of each piece: pieces are joined where the rules cut (so the tokenizer
        gets few, long texts) and each joined text's ids are split back by byte lengths."""
        groups: list[list[str]] = [[pieces[0]]]
        joinable = self.cuts.joinable
        for piece in pieces[1:]:
            group = groups[-1]
            if joinable(group[-1], piece):
                group.append(piece)
            else:
                groups.append([piece])
        encoded = self._encode(["".join(group) for group in groups])
        lengths = self._token_lengths
        fresh: dict[str, list[int]] = {}
        for group, ids in zip(groups, encoded, strict=True):
            if len(group) == 1:
                fresh[group[0]] = ids
                continue
            token = 0
            consumed = 0
            target = 0
            for piece in group:
                target += len(piece.encode("utf-8"))
                start = token
                while consumed < target and token < len(ids):
                    consumed += lengths[ids[token]]
                    token += 1
                if consumed != target:
                    raise TokenizerMismatch(
                        f"{self._source}: a token spans the cut after {piece[-40:]!r} in"
                        f" {''.join(group)[:80]!r}; expected the pre-tokenizer to split there,"
                        " as its probes did. Build the backend with cuts=False"
                    )
                fresh[piece] = ids[start:token]
        return fresh
