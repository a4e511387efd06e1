"""Markers inside text are escaped: no text, whatever it spells, becomes a marker.

A marker spelt in caller text (content, arguments, names, results, JSON) is written with a
backslash before it, and a run of ``k`` backslashes right before a real marker stands for
``k // 2`` (:func:`pawlette.engine.lexer.escape_text`), so every text round trips.  The
interpreters do it when a concept says the format escapes
(:meth:`pawlette.declare.Concept.escapes_markers`): the writer escapes caller text, the lexer
reads an escaped marker as text, the chat template defines ``escape(text, before_marker)``.
With token ids this never matters: text is encoded with special tokens off.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...declare import Concept


@dataclass(frozen=True)
class Escaped(Concept):
    """Caller text is escaped against every marker the parse table reads."""

    def escapes_markers(self) -> bool:
        return True
