"""Text cut at its special tokens: what inference compares, splits and declares.

A template's scaffolding is compared piece by piece, never across a special token: the
common end of ``</s>[INST]`` and ``<s>[INST]`` is ``[INST]``, not ``s>[INST]``.  The special
tokens come from the model's tokenizer when the directory has one (its added tokens), else
from their shape (:data:`SHAPES`: ``<|...|>``, ``<｜...｜>``, ``[UPPER_CASE]``, and the
``bos``/``eos`` tokens).  Tags such as ``<think>`` are cut at too (:data:`TAGS`), but are only
declared special tokens when the tokenizer says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..declare.pieces import Fence, Lit, Marker, Piece

__all__ = ["Atoms", "Tokens", "common_prefix", "common_suffix", "excerpt"]

SHAPES = re.compile(
    r"<\|[^|<>\s]{1,48}\|>"  # <|im_start|>
    r"|<｜[^｜<>]{1,48}｜>"  # <｜User｜>
    r"|〈\|[^|〉\s]{1,24}\|〉"  # 〈|EOS|〉
    r"|\[/?[A-Z][A-Z0-9_]{1,30}\]"  # [INST], [/INST]
    r"|<SPECIAL_\d+>"
)
"""Special tokens recognised by their shape when no tokenizer says which they are."""

TAGS = re.compile(r"</?[A-Za-z][A-Za-z0-9_:.\-]{0,40}>|\]~!?b\[|\[e~\[|\]~b\]")
"""Tag-like text cut at as a unit (never declared special by shape alone)."""


@dataclass(frozen=True)
class Tokens:
    """What is a special token: ``special`` texts (the tokenizer's added tokens, bos/eos)
    and, when ``by_shape``, whatever matches :data:`SHAPES`."""

    special: frozenset[str] = frozenset()
    by_shape: bool = True
    _pattern: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    def pattern(self) -> re.Pattern[str]:
        if self._pattern is None:
            alternatives = [re.escape(text) for text in sorted(self.special, key=len, reverse=True)]
            alternatives += [SHAPES.pattern, TAGS.pattern]
            object.__setattr__(self, "_pattern", re.compile("|".join(alternatives)))
        assert self._pattern is not None
        return self._pattern

    def is_special(self, text: str) -> bool:
        if text in self.special:
            return True
        return self.by_shape and SHAPES.fullmatch(text) is not None

    def atoms(self, text: str) -> list[str]:
        """``text`` as atoms: each token or tag whole, every other character alone."""
        atoms: list[str] = []
        position = 0
        for match in self.pattern().finditer(text):
            atoms.extend(text[position : match.start()])
            atoms.append(match.group())
            position = match.end()
        atoms.extend(text[position:])
        return atoms

    def fence(self, text: str) -> Fence:
        """``text`` as a fence: its special tokens as :class:`Marker`, the rest :class:`Lit`."""
        pieces: list[Piece] = []
        run: list[str] = []
        for atom in self.atoms(text):
            if len(atom) > 1 and self.is_special(atom):
                if run:
                    pieces.append(Lit("".join(run)))
                    run = []
                pieces.append(Marker(atom))
            else:
                run.append(atom)
        if run:
            pieces.append(Lit("".join(run)))
        return tuple(pieces)

    def markers_in(self, texts: Iterable[str]) -> set[str]:
        return {atom for text in texts for atom in self.atoms(text) if len(atom) > 1}


Atoms = Sequence[str]


def common_prefix(tokens: Tokens, *texts: str) -> str:
    """The longest start the texts share, never ending inside a token."""
    if not texts:
        return ""
    cut = [tokens.atoms(text) for text in texts]
    shared: list[str] = []
    for column in zip(*cut, strict=False):
        if any(atom != column[0] for atom in column):
            break
        shared.append(column[0])
    return "".join(shared)


def common_suffix(tokens: Tokens, *texts: str) -> str:
    """The longest end the texts share, never starting inside a token."""
    if not texts:
        return ""
    cut = [tokens.atoms(text)[::-1] for text in texts]
    shared: list[str] = []
    for column in zip(*cut, strict=False):
        if any(atom != column[0] for atom in column):
            break
        shared.append(column[0])
    return "".join(reversed(shared))


def excerpt(tokens: Tokens, text: str, limit: int = 120, *, last: bool = False) -> str:
    """``text`` quoted for a message (``repr``), at most about ``limit`` characters of its
    start (``last``: of its end), cut between atoms so that no token is quoted in part; a cut
    is shown as ``…`` outside the quotes."""
    if len(text) <= limit:
        return repr(text)
    atoms = tokens.atoms(text)
    if last:
        atoms.reverse()
    kept: list[str] = []
    size = 0
    for atom in atoms:
        if size + len(atom) > limit and kept:
            break
        kept.append(atom)
        size += len(atom)
    if last:
        return "…" + repr("".join(reversed(kept)))
    return repr("".join(kept)) + "…"
