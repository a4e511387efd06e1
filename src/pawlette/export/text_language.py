"""The free text a format allows between markers, as grammar terminals.

Text between two markers must read back as text: the format's lexer must find no marker in
it.  For a format without escaping that is "no marker anywhere".  For a format that escapes
(PCML), it is text made of marker-free pieces ``Q`` joined by escaped markers::

    TEXT = (Q "\\" L)* Q

where ``L`` is a marker's literal form (the shortest marker at its place, which is what an
escape consumes) and ``Q`` contains no marker and does not end in an odd run of backslashes
(a run before a real marker is doubled by the writer, so an odd run would escape the marker
that follows).  This is exactly what :func:`pawlette.engine.lexer.escape_text` produces, and
what the lexer reads back as plain text (tested against the lexer).

Lark gets this with llguidance's ``&``/``~``; GBNF, which has neither, gets rules built from
an automaton: Aho-Corasick over the markers, times the parity of the trailing backslash run.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ..format import Format
from .grammar_ast import Rules, Terminal, gbnf_class, gbnf_string, regex_escape


@dataclass(frozen=True)
class TextLanguage:
    markers: tuple[str, ...]
    escape: bool

    @classmethod
    def of(cls, fmt: Format) -> TextLanguage:
        markers = tuple(sorted(fmt.grammar.markers, key=lambda m: (-len(m), m)))
        return cls(markers, fmt.grammar.escape)

    @property
    def literals(self) -> tuple[str, ...]:
        """Markers no shorter marker is a prefix of: what an escape consumes."""
        return tuple(
            marker
            for marker in self.markers
            if not any(marker != other and marker.startswith(other) for other in self.markers)
        )


# ------------------------------------------------------------------ Lark terminals

_ANY = "/(?s:.*)/"


def lark_terminals(language: TextLanguage, rules: Rules, prefix: str = "TEXT") -> None:
    """Define ``{prefix}`` (possibly empty text), ``{prefix}_NE`` (non-empty),
    ``{prefix}_NL`` (non-empty text, then the newline that begins a ``\\n<marker>``), and
    ``{prefix}_ANY``/``{prefix}_ANY_NE``: text followed by plain text rather than a marker,
    so it may end in an odd run of backslashes (the writer doubles a run only before a
    marker), and ``{prefix}_ANY_NL``: such text (maybe empty) and the newline after it.

    Text and the newline that follows it are one lexeme because llguidance's lexer is greedy:
    text followed by a separate ``"\\n"`` would have taken the newline already."""
    alternation = "|".join(regex_escape(marker) for marker in language.markers)
    plain = f"{_ANY} & ~/(?s:.*)({alternation})(?s:.*)/"
    if language.escape:
        rules.lark_extra[f"{prefix}_PIECE"] = f"{plain} & ~/(?s:(.*[^\\\\])?\\\\(\\\\\\\\)*)/"
        literals = "|".join(regex_escape(marker) for marker in language.literals)
        rules.lark_extra[f"{prefix}_ESCAPED"] = f"/\\\\({literals})/"
        body = f"({prefix}_PIECE {prefix}_ESCAPED)* {prefix}_PIECE"
    else:
        body = f"({plain})"
    rules.lark_extra[prefix] = body
    rules.lark_extra[f"{prefix}_NE"] = f"({prefix}) & /(?s:.+)/"
    rules.lark_extra[f"{prefix}_NL"] = f'{prefix}_NE "\\n"'
    if language.escape:
        rules.lark_extra[f"{prefix}_ANY"] = f"{prefix} /\\\\?/"
        rules.lark_extra[f"{prefix}_ANY_NE"] = f"({prefix}_ANY) & /(?s:.+)/"
    else:
        rules.lark_extra[f"{prefix}_ANY"] = prefix
        rules.lark_extra[f"{prefix}_ANY_NE"] = f"{prefix}_NE"
    rules.lark_extra[f"{prefix}_ANY_NL"] = f'{prefix}_ANY "\\n"'


def text_terminal(prefix: str, variant: str = "") -> Terminal:
    """The terminal for a variant: ``""`` (may be empty), ``"NE"``, ``"NL"``, ``"ANY"``,
    ``"ANY_NE"`` or ``"ANY_NL"`` (see :func:`lark_terminals`)."""
    name = f"{prefix}_{variant}" if variant else prefix
    return Terminal(name, lark="", gbnf=gbnf_text_rule(prefix, variant))


# ------------------------------------------------------------------ GBNF rules


def gbnf_text_rule(prefix: str, variant: str = "") -> str:
    base = prefix.lower().replace("_", "-")
    return f"{base}-{variant.lower().replace('_', '-')}" if variant else base


@dataclass
class _Automaton:
    """States of "no marker so far" (trie nodes) and the trailing-backslash parity."""

    alphabet: str
    states: list[str]
    moves: dict[str, dict[str, str]]  # state -> character -> state (missing: rejected)
    accepting: set[str]


def _automaton(language: TextLanguage) -> _Automaton:
    markers = language.markers
    if language.escape and any("\\" in marker for marker in markers):
        raise ValueError("markers containing a backslash are not supported with escaping")
    alphabet = "".join(sorted({c for marker in markers for c in marker}))
    prefixes = {marker[:length] for marker in markers for length in range(1, len(marker))}

    def dead(text: str) -> bool:
        return any(text.endswith(marker) for marker in markers)

    def step(node: str, character: str) -> str | None:
        text = node + character
        if dead(text):
            return None
        while text and text not in prefixes:
            text = text[1:]
        return text

    root, odd = "", "\\"
    states: list[str] = [root]
    moves: dict[str, dict[str, str]] = {}
    queue = deque([root])
    seen = {root}
    if language.escape:
        states.append(odd)
        queue.append(odd)
        seen.add(odd)
    while queue:
        state = queue.popleft()
        node = "" if state == odd else state
        table: dict[str, str] = {}
        for character in alphabet:
            target = step(node, character)
            if target is not None:
                table[character] = target
        if language.escape:
            table["\\"] = root if state == odd else odd
        moves[state] = table
        for target in table.values():
            if target not in seen:
                seen.add(target)
                states.append(target)
                queue.append(target)
    accepting = {state for state in states if state != odd}
    return _Automaton(alphabet + ("\\" if language.escape else ""), states, moves, accepting)


def gbnf_rules(language: TextLanguage, rules: Rules, prefix: str = "TEXT") -> None:
    """Define the GBNF rules behind :func:`text_terminal` (same three variants)."""
    automaton = _automaton(language)
    base = gbnf_text_rule(prefix)
    names = {state: f"{base}-s{number}" for number, state in enumerate(automaton.states)}
    first = f"{base}-first"
    for state in [*automaton.states, first]:
        source = "" if state == first else state
        table = automaton.moves[source]
        by_target: dict[str, list[str]] = {}
        for character, target in table.items():
            by_target.setdefault(target, []).append(character)
        options = []
        for target, characters in by_target.items():
            chars = "".join(characters)
            piece = gbnf_string(chars) if len(chars) == 1 else gbnf_class(chars)
            options.append(f"{piece} {names[target]}")
        options.append(f"{gbnf_class(automaton.alphabet, negated=True)} {names['']}")
        if state != first and state in automaton.accepting:
            options.append('""')
        rules.gbnf_extra[names[state] if state != first else first] = " | ".join(options)
    piece, piece_ne = names[""], first
    if language.escape:
        literals = " | ".join(gbnf_string(marker) for marker in language.literals)
        rules.gbnf_extra[f"{base}-escaped"] = f'"\\\\" ({literals})'
        escaped = f"{base}-escaped"
        rules.gbnf_extra[base] = f"{piece} ({escaped} {piece})*"
        rules.gbnf_extra[f"{base}-ne"] = (
            f"{piece_ne} ({escaped} {piece})* | {escaped} {piece} ({escaped} {piece})*"
        )
    else:
        rules.gbnf_extra[base] = piece
        rules.gbnf_extra[f"{base}-ne"] = piece_ne
    rules.gbnf_extra[f"{base}-nl"] = f'{base}-ne "\\n"'
    if language.escape:
        rules.gbnf_extra[f"{base}-any"] = f'{base} "\\\\"?'
        rules.gbnf_extra[f"{base}-any-ne"] = f'{base}-ne "\\\\"? | "\\\\"'
    else:
        rules.gbnf_extra[f"{base}-any"] = base
        rules.gbnf_extra[f"{base}-any-ne"] = f"{base}-ne"
    rules.gbnf_extra[f"{base}-any-nl"] = f'{base}-any "\\n"'


def define(language: TextLanguage, rules: Rules, prefix: str = "TEXT") -> None:
    gbnf, lark = _defined(language, prefix)
    rules.gbnf_extra.update(gbnf)
    rules.lark_extra.update(lark)


@functools.lru_cache(maxsize=64)
def _defined(language: TextLanguage, prefix: str) -> tuple[Mapping[str, str], Mapping[str, str]]:
    """The text rules of one language, built once (a server builds a grammar per request;
    the automaton behind the GBNF rules is most of that work)."""
    rules = Rules()
    lark_terminals(language, rules, prefix)
    gbnf_rules(language, rules, prefix)
    return MappingProxyType(rules.gbnf_extra), MappingProxyType(rules.lark_extra)


def reads_as_text(language: TextLanguage, text: str, *, before_marker: bool = True) -> bool:
    """Whether ``text`` is plain text to the format's lexer, followed by a marker (or, not
    ``before_marker``, by other text): the reference the terminals are tested against."""
    from ..engine.lexer import Lexer

    lexer = Lexer(language.markers, escape=language.escape)
    tokens = lexer.feed(text) + lexer.finish()
    if any(marker is not None for marker, _, _ in tokens):
        return False
    if language.escape and before_marker:
        run = len(text) - len(text.rstrip("\\"))
        return run % 2 == 0
    return True


def all_markers(languages: Iterable[TextLanguage]) -> set[str]:
    return {marker for language in languages for marker in language.markers}
