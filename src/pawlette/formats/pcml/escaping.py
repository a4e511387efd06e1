"""Escaped text: a backslash before every marker spelled inside caller text.

PCML writes markers as control tokens, yet a message may spell one (``[SYS]`` in a user's
question about PCML).  So that any text reads back as text, every caller text (content,
reasoning, header values, a call's JSON, the tools listing) is written with a backslash before
each marker spelling: ``\\[SYS]`` is the literal text ``[SYS]``.  A run of ``k`` backslashes
right before a marker stands for ``k // 2`` backslashes, so text ending in a backslash before a
real marker has its run doubled (``a\\`` then ``[/USR]`` is written ``a\\\\[/USR]``);
backslashes anywhere else are untouched.  With token ids it never matters: markers are special
tokens, and text is encoded with special tokens off.

The rule is :func:`pawlette.engine.lexer.escape_text`; this concept only says the format uses
it (:meth:`~pawlette.declare.Concept.escapes_markers`), and each interpreter applies it: the
writer to caller text (and a fence is then one segment, as the lexer reads it as one marker),
the lexer by reading escapes, the chat template through its ``escape`` macro, the grammars by
keeping unescaped markers out of text.
"""

from __future__ import annotations

from dataclasses import dataclass

from pawlette.declare import Concept


@dataclass(frozen=True)
class EscapedText(Concept):
    """Markers spelled in caller text are escaped with a backslash (see the module)."""

    def escapes_markers(self) -> bool:
        return True
