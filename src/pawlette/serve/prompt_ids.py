"""Prompts as token ids (``pawlette serve --tokenizer tokenizer.json``).

A minimal encoder for the server, on the ``tokenizers`` library: every marker segment is
encoded by its id, every run of text with :func:`pawlette.tokenizers.encode_plain` (which skips
the added-token stage altogether), so no user, tool or system text can become a control token
whatever it contains.  Adjacent text segments are encoded as one piece (the text the model
sees at inference).  A marker segment that is not one token (PCML's ``\\n<call>`` is a newline
and the ``<call>`` token) is split into the format's special markers and text.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from ..engine.lexer import marker_pattern
from ..errors import PawletteError, TokenizerMismatch
from ..format import Format
from ..tokenizers import encode_plain
from ..types import Segment


class PromptEncoder:
    """Encodes a format's rendered segments with one tokenizer.

    Raises :class:`TokenizerMismatch` when a marker of the format is not one token.
    """

    def __init__(self, fmt: Format, path: str) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError as error:  # pragma: no cover - depends on the installation
            raise PawletteError(
                "--tokenizer: the 'tokenizers' package is not installed; expected it. "
                "pip install 'pawlette[tokenize]'"
            ) from error
        try:
            tokenizer: Any = Tokenizer.from_file(path)
        except Exception as error:
            raise PawletteError(
                f"--tokenizer {path}: cannot load ({error}); expected a tokenizer.json"
            ) from error
        self._tokenizer = tokenizer
        self._encode_text = partial(encode_plain, tokenizer)
        self._ids: dict[str, int] = {}
        for marker in fmt.special_markers:
            token = tokenizer.token_to_id(marker)
            if token is None:
                raise TokenizerMismatch(
                    f"--tokenizer {path}: marker {marker!r} of format {fmt.name!r} is not one "
                    "token; expected every marker of the format as a special token. "
                    "Add them with `pawlette tokenizer prepare`"
                )
            self._ids[marker] = token
        self._split = marker_pattern(fmt.special_markers)

    @property
    def marker_ids(self) -> dict[str, int]:
        """Each marker of the format and its token id."""
        return dict(self._ids)

    def _pieces(self, segments: Iterable[Segment]) -> list[tuple[bool, str]]:
        pieces: list[tuple[bool, str]] = []

        def add(special: bool, text: str) -> None:
            if not text:
                return
            if not special and pieces and not pieces[-1][0]:
                pieces[-1] = (False, pieces[-1][1] + text)
            else:
                pieces.append((special, text))

        for segment in segments:
            if not segment.special or segment.text in self._ids:
                add(segment.special, segment.text)
                continue
            position = 0
            for match in self._split.finditer(segment.text):
                add(False, segment.text[position : match.start()])
                add(True, match.group())
                position = match.end()
            if position == 0:
                raise TokenizerMismatch(
                    f"marker {segment.text!r}: not a token and holds no marker of the format; "
                    "expected a special token"
                )
            add(False, segment.text[position:])
        return pieces

    def encode(self, segments: Iterable[Segment]) -> list[int]:
        ids: list[int] = []
        for special, text in self._pieces(segments):
            if special:
                ids.append(self._ids[text])
            else:
                ids.extend(self._encode_text(text))
        return ids

    def segments(self, text: str) -> list[Segment]:
        """A string such as a forced prefix as segments: the format's markers, the rest text."""
        segments = []
        position = 0
        for match in self._split.finditer(text):
            segments.append(Segment(text[position : match.start()], False, None, -1, "text", False))
            segments.append(Segment(match.group(), True, None, -1, "marker", False))
            position = match.end()
        segments.append(Segment(text[position:], False, None, -1, "text", False))
        return segments
