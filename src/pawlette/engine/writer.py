"""The segment writer: what every renderer writes through.

Markers become special segments; format scaffolding is written raw; caller text is escaped
(when the format escapes) so the lexer reads it back as text whatever it contains.
"""

from __future__ import annotations

import re

from ..types import Rendering, Role, Segment
from .lexer import escape_text


class Writer:
    """Collects segments for one rendering, within the current message context."""

    def __init__(self, escape: re.Pattern[str] | None) -> None:
        self._escape = escape
        self._segments: list[Segment] = []
        self._escaped_source: str | None = None  # the caller text of the last segment
        self.role: Role | None = None
        self.message_index = -1

    def at(self, role: Role | None, message_index: int) -> None:
        """Following segments belong to this message (``-1``: outside any message)."""
        self.role = role
        self.message_index = message_index

    def marker(self, text: str, kind: str, *, trainable: bool = False) -> None:
        if self._escaped_source is not None and self._escape is not None:
            source = self._escaped_source
            if source.endswith("\\"):
                # A real marker follows: the trailing backslash run must not escape it.
                last = self._segments[-1]
                fixed = escape_text(source, self._escape, before_marker=True)
                self._segments[-1] = Segment(
                    fixed, False, last.role, last.message_index, last.kind, last.trainable
                )
        self._escaped_source = None
        self._segments.append(Segment(text, True, self.role, self.message_index, kind, trainable))

    def text(self, text: str, kind: str, *, trainable: bool = False) -> None:
        """Caller text (content, arguments, names): escaped when the format escapes."""
        if not text:
            return
        written = text
        if self._escape is not None:
            written = escape_text(text, self._escape, before_marker=False)
        self._segments.append(
            Segment(written, False, self.role, self.message_index, kind, trainable)
        )
        self._escaped_source = text

    def raw(self, text: str, kind: str, *, trainable: bool = False) -> None:
        """Scaffolding the format itself writes (separators, header keys): never escaped."""
        if not text:
            return
        self._escaped_source = None
        self._segments.append(Segment(text, False, self.role, self.message_index, kind, trainable))

    def rendering(self) -> Rendering:
        segments = tuple(self._segments)
        return Rendering("".join(segment.text for segment in segments), segments)
