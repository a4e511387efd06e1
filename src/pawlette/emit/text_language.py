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
from .grammar_ast import Rules, Terminal, gbnf_char, gbnf_class, gbnf_string, regex_escape


@dataclass(frozen=True)
class TextLanguage:
    markers: tuple[str, ...]
    escape: bool

    @classmethod
    def of(cls, fmt: Format) -> TextLanguage:
        """The format's text: no marker its lexer reads, and (a format without escaping) no
        other special token of it either.

        A special token that is no marker of the lexer (ChatGLM3's ``[gMASK]``, which the
        lexer reads only as part of ``[gMASK]sop``; Qwen's ``<|im_start|>``) is still one the
        engine can sample, and llama.cpp's GBNF lets it stand for its text in character
        rules: free text would then carry a control token's spelling to the client.  A
        special token that is a plain word (ChatGLM3's ``sop``) stays allowed: refusing its
        spelling would refuse every word that contains it, and the lexer reads it as the
        text it is.  A format that escapes markers in text (PCML) keeps exactly its lexer's
        markers, which are the ones an escape can stand before."""
        markers = set(fmt.grammar.markers)
        if not fmt.grammar.escape:
            special: tuple[str, ...] = getattr(fmt, "special_markers", ())
            markers.update(marker for marker in special if marker and not marker.isalnum())
        ordered = tuple(sorted(markers, key=lambda m: (-len(m), m)))
        return cls(ordered, fmt.grammar.escape)

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
    # Without escaping, text is "no marker anywhere": see :func:`unabsorbed`.
    kept = unabsorbed(language.markers) if not language.escape else language.markers
    alternation = "|".join(regex_escape(marker) for marker in kept)
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


@functools.lru_cache(maxsize=32)
def _automaton(language: TextLanguage) -> _Automaton:
    """Built once per marker set (chatml's 30-odd markers take a third of a second); the
    result is shared, never changed."""
    markers = language.markers
    if language.escape and any("\\" in marker for marker in markers):
        raise ValueError("markers containing a backslash are not supported with escaping")
    alphabet = "".join(sorted({c for marker in markers for c in marker}))
    # Aho-Corasick over every prefix of a marker: a node's fallback is its longest proper
    # suffix that is a node, and a text has a marker in it when its node or a fallback is
    # one. Each answer is kept, so every node and character is worked out once (the plain
    # search, trying every marker's ending at every step, took seconds on 40-odd markers).
    nodes = {marker[:length] for marker in markers for length in range(1, len(marker) + 1)}
    ending = set(markers)
    fallbacks: dict[str, str] = {"": ""}
    moves_kept: dict[tuple[str, str], str] = {}

    def fallback(node: str) -> str:
        found = fallbacks.get(node)
        if found is None:
            found = "" if len(node) == 1 else move(fallback(node[:-1]), node[-1])
            fallbacks[node] = found
        return found

    def move(node: str, character: str) -> str:
        found = moves_kept.get((node, character))
        if found is None:
            text = node + character
            if text not in nodes:
                text = move(fallback(node), character) if node else ""
            found = text
            moves_kept[node, character] = found
        return found

    def holds_marker(node: str) -> bool:
        while node:
            if node in ending:
                return True
            node = fallback(node)
        return False

    def step(node: str, character: str) -> str | None:
        target = move(node, character)
        return None if holds_marker(target) else target

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


# ------------------------------------------------------------------ quoted strings


def _plain(character: str, excluded: str) -> bool:
    """Whether a marker's character may stand unescaped in a quoted string (a marker's
    newline may not: JSON and Python strings escape control characters)."""
    code = ord(character)
    return character not in excluded and code >= 0x20 and not 0x7F <= code <= 0x9F


def _class_body(characters: str) -> str:
    return "".join(gbnf_char(character, in_class=True) for character in characters)


@functools.lru_cache(maxsize=64)
def gbnf_string_rules(
    language: TextLanguage, base: str, excluded: str, ranges: str, escape: str, lead: str = ""
) -> Mapping[str, str]:
    """GBNF rules for the inside of a quoted string (JSON's, a Python literal's) in which no
    marker is spelled: ``{base}-body`` (any length) and ``{base}-char`` (one character that
    cannot begin a marker, for strings of bounded length).

    llama.cpp lets a special token stand for its text inside character rules, so a string
    rule that allows every character lets the model sample a marker inside an argument; the
    format's parser (reading text) then takes it as structure.  The body is an automaton over
    the markers' characters (Aho-Corasick, as for free text) that refuses every marker's
    spelling, which refuses the marker tokens too.  ``excluded`` (characters) and ``ranges``
    (GBNF class ranges such as ``\\x00-\\x1F``) are never plain characters of the string;
    ``escape`` is the GBNF of one escape sequence (it contains no marker character, so after
    one no marker is under way).  A string may still *mean* a marker through escapes
    (``\\u003c``), which no lexer reads as one.  ``lead`` (GBNF, optional) is a sequence
    like ``escape`` that a marker's first character may follow, beginning that marker's
    spelling (a raw string's ``'`` is followed by any character but a few).
    """
    automaton = _automaton(TextLanguage(language.markers, escape=False))
    alphabet = "".join(c for c in automaton.alphabet if _plain(c, excluded))
    names = {state: f"{base}-s{number}" for number, state in enumerate(automaton.states)}
    other = f"[^{_class_body(excluded + alphabet)}{ranges}]"
    result: dict[str, str] = {}
    for state in automaton.states:
        by_target: dict[str, list[str]] = {}
        for character, target in automaton.moves[state].items():
            if character in alphabet:
                by_target.setdefault(target, []).append(character)
        options = []
        for target, characters in by_target.items():
            chars = "".join(characters)
            piece = gbnf_string(chars) if len(chars) == 1 else gbnf_class(chars)
            options.append(f"{piece} {names[target]}")
        options += [f"{other} {names['']}", f"{escape} {names['']}"]
        if lead:
            for character, target in automaton.moves[""].items():
                if target and character in alphabet:
                    options.append(f"{lead} {gbnf_string(character)} {names[target]}")
        options.append('""')
        result[names[state]] = " | ".join(options)
    result[f"{base}-body"] = names[""]
    starts = "".join(sorted({marker[0] for marker in language.markers} - set(excluded)))
    result[f"{base}-char"] = f"[^{_class_body(excluded + starts)}{ranges}] | {escape}"
    return MappingProxyType(result)


def unabsorbed(markers: Iterable[str]) -> tuple[str, ...]:
    """The markers that hold no other one, in their order: a text that spells none of them
    spells none of ``markers`` (where a marker that holds another is spelt, the other is
    spelt too), so "no marker anywhere" is the same language with fewer alternatives.

    A format's markers include whole passages its parser reads as structure (Hermes 2 Pro's
    tools instructions, ~600 characters; DeepSeek V3.2's, ~1 KB), each holding a short
    marker (``<tool_call>``): left in, they make the grammar sent with every request a
    third larger (Hermes 2 Pro) and overlapping alternatives are costly to llguidance's
    lexer (DeepSeek V3.2's free text once was)."""
    markers = tuple(markers)
    return tuple(
        marker
        for marker in markers
        if not any(other != marker and other in marker for other in markers)
    )


def lark_without_markers(language: TextLanguage, regex: str) -> str:
    """A Lark terminal definition: ``regex`` (a ``/.../``) minus every text spelling a marker."""
    if not language.markers:
        return regex
    alternation = "|".join(regex_escape(marker) for marker in unabsorbed(language.markers))
    return f"{regex} & ~/(?s:.*)({alternation})(?s:.*)/"


_PRODUCT_LIMIT = 4000
"""The most rules a length-bounded string gets (marker states times counted characters)."""


@functools.lru_cache(maxsize=256)
def gbnf_bounded_string_rules(
    language: TextLanguage,
    base: str,
    excluded: str,
    ranges: str,
    escape: str,
    low: int,
    high: int | None,
) -> tuple[Mapping[str, str], str] | None:
    """Rules for the inside of a string of ``low`` to ``high`` characters (an escape counts
    one) spelling no marker: the automaton of :func:`gbnf_string_rules` times a counter that
    stops at ``high`` (or, unbounded, at ``low``).  Returns (rules, read-only and shared, the
    first rule's name), or None when that would exceed :data:`_PRODUCT_LIMIT` rules."""
    automaton = _automaton(TextLanguage(language.markers, escape=False))
    cap = high if high is not None else low
    if (cap + 1) * len(automaton.states) > _PRODUCT_LIMIT:
        return None
    alphabet = "".join(c for c in automaton.alphabet if _plain(c, excluded))
    other = f"[^{_class_body(excluded + alphabet)}{ranges}]"
    numbers = {state: number for number, state in enumerate(automaton.states)}

    def name(state: str, count: int) -> str:
        return f"{base}-s{numbers[state]}-n{count}"

    result: dict[str, str] = {}
    pending = [("", 0)]
    seen = {("", 0)}
    while pending:
        state, count = pending.pop()
        options = []
        if high is None or count < high:
            following = min(count + 1, cap)
            by_target: dict[str, list[str]] = {}
            for character, target in automaton.moves[state].items():
                if character in alphabet:
                    by_target.setdefault(target, []).append(character)
            for target, characters in by_target.items():
                chars = "".join(characters)
                piece = gbnf_string(chars) if len(chars) == 1 else gbnf_class(chars)
                options.append(f"{piece} {name(target, following)}")
            options += [f"{other} {name('', following)}", f"{escape} {name('', following)}"]
            for target in [*by_target, ""]:
                if (target, following) not in seen:
                    seen.add((target, following))
                    pending.append((target, following))
        if count >= low:
            options.append('""')
        result[name(state, count)] = " | ".join(options) or '""'
    return MappingProxyType(result), name("", 0)
