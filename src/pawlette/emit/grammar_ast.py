"""A small grammar tree with two writers: Lark (llguidance's dialect) and GBNF (llama.cpp).

A format's turn grammar is built as :class:`Rules` (named rule bodies made of the nodes below)
and written out by :func:`to_lark` or :func:`to_gbnf`.  The nodes that are languages rather
than structure (free text between markers, a JSON value under a schema) are written per syntax:
Lark gets llguidance's regex intersection/negation and ``%json``; GBNF gets rules generated
from an automaton and from the schema (:mod:`pawlette.emit.text_language`,
:mod:`pawlette.emit.json_schema`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ..errors import UnsupportedFeature

Syntax: TypeAlias = Literal["lark", "gbnf"]


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    options: tuple[Node, ...]


@dataclass(frozen=True)
class Repeat:
    item: Node
    minimum: int = 0
    maximum: int | None = None  # None: unbounded


@dataclass(frozen=True)
class Lit:
    """Literal text (bytes the model writes as ordinary tokens)."""

    text: str


@dataclass(frozen=True)
class Marker:
    """A marker the tokenizer has as one special token."""

    text: str


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class CharClass:
    """One character from ``chars`` (or, ``negated``, any character not in them)."""

    chars: str
    negated: bool = False


@dataclass(frozen=True)
class Terminal:
    """A named lexeme: ``lark`` is its Lark definition (regex algebra allowed; empty when the
    caller puts it in :attr:`Rules.lark_extra`), ``gbnf`` the name of a GBNF rule the caller
    defines in :attr:`Rules.gbnf_extra`."""

    name: str
    lark: str
    gbnf: str


@dataclass(frozen=True)
class JsonSchemaValue:
    """A JSON value valid under ``schema``: in GBNF the rule ``gbnf``, in Lark the rule or
    expression ``lark`` (both defined by the caller, see :mod:`pawlette.emit.json_schema` and
    :mod:`pawlette.emit.json_lark`), or llguidance's ``%json`` of the schema when ``lark`` is
    empty (a value that no marker can be spelt in)."""

    schema: Mapping[str, Any]
    gbnf: str
    """The GBNF rule the caller defines for it (see :mod:`pawlette.emit.json_schema`)."""
    lark: str = ""


@dataclass(frozen=True)
class Lexeme:
    """``parts`` (free text, then the layout text that follows it) read as one lexeme: in
    Lark the terminal ``name`` defined as ``lark``, in GBNF the parts as they are.

    llguidance's lexer is greedy and does not go back: free text followed by a separate
    layout text takes that text's first characters (as much of a text-spelled fence as the
    text may hold, all of it but its last character), and the turn cannot go on.  As one
    lexeme the text ends where the layout text begins.  llama.cpp's GBNF has no lexer (its
    rules are matched a character at a time), so it keeps the parts apart."""

    name: str
    lark: str
    parts: Node


Node: TypeAlias = (
    Seq | Alt | Repeat | Lit | Marker | Ref | CharClass | Terminal | JsonSchemaValue | Lexeme
)


def seq(*items: Node) -> Node:
    flat: list[Node] = []
    for item in items:
        if isinstance(item, Seq):
            flat.extend(item.items)
        elif not (isinstance(item, Lit) and not item.text):
            flat.append(item)
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def alt(*options: Node) -> Node:
    return options[0] if len(options) == 1 else Alt(tuple(options))


def optional(item: Node) -> Node:
    return Repeat(item, 0, 1)


@dataclass
class Rules:
    """Named rule bodies; ``start`` is the root.  ``gbnf_extra`` holds GBNF rules written as
    text by the language helpers (automata, schemas); ``notes`` become header comments, and
    ``syntax_notes[syntax]`` too in that syntax only (what one syntax's spelling leaves out)."""

    rules: dict[str, Node] = field(default_factory=dict)
    gbnf_extra: dict[str, str] = field(default_factory=dict)
    lark_extra: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    syntax_notes: dict[str, list[str]] = field(default_factory=dict)
    markers: tuple[str, ...] = ()
    """The format's markers, which no quoted string in the grammar may spell (see
    :func:`pawlette.emit.text_language.gbnf_string_rules`)."""

    def notes_for(self, syntax: str) -> list[str]:
        """The notes true of the grammar written in ``syntax``."""
        return [*self.notes, *self.syntax_notes.get(syntax, [])]

    def add(self, name: str, body: Node) -> Ref:
        if name in self.rules and self.rules[name] != body:
            raise ValueError(f"rule {name!r} defined twice")
        self.rules[name] = body
        return Ref(name)


@dataclass(frozen=True)
class MarkerSpelling:
    """How markers are written: as special-token references (by text, or by id when
    ``token_ids`` has the marker), or as plain text when ``as_text``.

    ``text_markers``: markers without an id that are written as plain text even so, since
    the engine's vocabulary holds them as ordinary tokens, not special ones (llama.cpp's
    ``<|channel|>``: see :data:`pawlette.serve.engines.LLAMA_CPP_TEXT_MARKERS`).  A string
    matches such a token by its text, where a special-token reference would name a special
    token the engine does not have."""

    token_ids: Mapping[str, int] = field(default_factory=dict)
    as_text: bool = False
    text_markers: frozenset[str] = frozenset()


# ------------------------------------------------------------------ Lark


def lark_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


_REGEX_META = set("\\.+*?()|[]{}^$#&-~")


def regex_escape(text: str) -> str:
    """``text`` as a literal inside llguidance's ``/.../`` (Rust regex syntax)."""
    pieces = []
    for character in text:
        if character in _REGEX_META:
            pieces.append("\\" + character)
        elif character == "/":
            pieces.append("\\x2F")
        elif character == "\n":
            pieces.append("\\n")
        elif character == "\r":
            pieces.append("\\r")
        elif character == "\t":
            pieces.append("\\t")
        elif ord(character) < 0x20 or ord(character) == 0x7F:
            pieces.append(f"\\x{ord(character):02X}")
        else:
            pieces.append(character)
    return "".join(pieces)


def _token_syntax_ok(text: str) -> bool:
    """``<...>`` refers to the token spelled ``text`` in both llguidance and llama.cpp."""
    return (
        len(text) > 2
        and text[0] == "<"
        and text[-1] == ">"
        and ">" not in text[1:-1]
        and not text.startswith("<[")
        and not text[1:-1].isspace()
    )


JSON_WHITESPACE = r"(?: |\n\n?[ \t]{0,20})?"
"""Whitespace between JSON tokens in a call's arguments, in both syntaxes: nothing, a space,
or one or two newlines and an indentation of up to 20 spaces or tabs (llama.cpp's JSON
grammars allow the same)."""


def lark_json(schema: Mapping[str, Any]) -> str:
    """llguidance's ``%json`` of ``schema``, lenient and with the bounded whitespace."""
    return "%json " + json.dumps(_lenient(schema), ensure_ascii=False)


def _lenient(schema: Mapping[str, Any]) -> dict[str, Any]:
    # llguidance refuses unknown formats and keywords unless lenient; pawlette keeps a
    # tool's schema usable rather than failing on an annotation it cannot enforce.
    result = dict(schema)
    guidance = dict(result.get("x-guidance", {}))
    guidance.setdefault("lenient", True)
    # The GBNF rules' json-ws: llguidance's default whitespace is unbounded, and a sampler
    # (a small model, a hot temperature) can spend a whole answer in it.
    guidance.setdefault("whitespace_pattern", JSON_WHITESPACE)
    # Not "json_allow_general_unicode_escapes": llguidance before 1.x (llama.cpp b11549's)
    # refuses the whole grammar for that key, and llama.cpp then samples unconstrained.
    result["x-guidance"] = guidance
    return result


def _regex_class(node: CharClass) -> str:
    body = "".join(regex_escape(character) for character in node.chars)
    return "[" + ("^" if node.negated else "") + body + "]"


def _repeat_suffix(node: Repeat) -> str:
    if (node.minimum, node.maximum) == (0, None):
        return "*"
    if (node.minimum, node.maximum) == (1, None):
        return "+"
    if (node.minimum, node.maximum) == (0, 1):
        return "?"
    if node.maximum is None:
        return f"{{{node.minimum},}}"
    if node.minimum == node.maximum:
        return f"{{{node.minimum}}}"
    return f"{{{node.minimum},{node.maximum}}}"


def _terminals(rules: Rules) -> dict[str, str]:
    """The Lark definitions the rules' terminals and lexemes carry, by name."""
    found: dict[str, str] = {}

    def define(name: str, definition: str) -> None:
        if found.setdefault(name, definition) != definition:
            raise ValueError(
                f"terminal {name!r}: defined as {found[name]!r} and as {definition!r}; "
                "expected one definition per name"
            )

    def walk(node: Node) -> None:
        if isinstance(node, Terminal):
            if node.lark:
                define(node.name, node.lark)
        elif isinstance(node, Lexeme):
            define(node.name, node.lark)
            walk(node.parts)  # (the definitions the lexeme's own may name)
        elif isinstance(node, Seq):
            for item in node.items:
                walk(item)
        elif isinstance(node, Alt):
            for option in node.options:
                walk(option)
        elif isinstance(node, Repeat):
            walk(node.item)

    for body in rules.rules.values():
        walk(body)
    return found


def _comment_lines(prefix: str, header: Sequence[str], notes: Sequence[str]) -> list[str]:
    lines = [f"{prefix} {line}".rstrip() for line in header]
    for note in notes:
        lines.append(f"{prefix} note: {note}")
    return lines


def to_lark(rules: Rules, header: Sequence[str], spelling: MarkerSpelling) -> str:
    lines = ["%llguidance {}", *_comment_lines("//", header, rules.notes_for("lark")), ""]
    for name, body in rules.rules.items():
        lines.append(f"{name}: {_LARK.node(body, spelling, top=True)}")
    definitions = dict(rules.lark_extra)
    for name, definition in _terminals(rules).items():
        definitions.setdefault(name, definition)
    if definitions:
        lines.append("")
    for name, definition in definitions.items():
        lines.append(f"{name}: {definition}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ GBNF


def gbnf_char(character: str, in_class: bool) -> str:
    """One character inside a GBNF literal (``in_class=False``) or character class."""
    code = ord(character)
    if character == "\\":
        return "\\\\"
    if character == '"' and not in_class:
        return '\\"'
    if in_class and character in "[]-^":
        return "\\" + character if character != "^" else "\\x5E"
    if character == "\n":
        return "\\n"
    if character == "\r":
        return "\\r"
    if character == "\t":
        return "\\t"
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02X}"
    if 0xD800 <= code <= 0xDFFF:
        raise ValueError("a lone surrogate cannot be written in GBNF")
    return character


def gbnf_string(text: str) -> str:
    return '"' + "".join(gbnf_char(character, in_class=False) for character in text) + '"'


def gbnf_class(chars: str, negated: bool = False) -> str:
    return "[" + ("^" if negated else "") + "".join(gbnf_char(c, True) for c in chars) + "]"


_GBNF_NAME = re.compile(r"[^A-Za-z0-9-]+")


def gbnf_name(name: str) -> str:
    """A rule name GBNF accepts (letters, digits, dashes)."""
    return _GBNF_NAME.sub("-", name).strip("-") or "rule"


# ------------------------------------------------------------------ both


@dataclass(frozen=True)
class _Writer:
    """How one syntax spells the leaves of the tree; the structure is spelt alike."""

    string: Callable[[str], str]
    token: str  # what a marker is written as, for errors
    ref: Callable[[str], str]
    char_class: Callable[[CharClass], str]
    terminal: Callable[[Terminal], str]
    schema: Callable[[JsonSchemaValue], str]
    lexemes: bool
    """Whether a :class:`Lexeme` is written as its terminal (else as its parts)."""

    def marker(self, text: str, spelling: MarkerSpelling) -> str:
        if spelling.as_text:
            return self.string(text)
        if text in spelling.token_ids:
            return f"<[{spelling.token_ids[text]}]>"
        if text in spelling.text_markers:
            return self.string(text)
        if _token_syntax_ok(text):
            return text
        raise UnsupportedFeature(
            "markers",
            f"{text!r} cannot be written as {self.token} without its id",
            "token_ids with an id for it, or markers written as text",
        )

    def node(self, node: Node, spelling: MarkerSpelling, top: bool = False) -> str:
        if isinstance(node, Seq):
            text = " ".join(self._item(item, spelling) for item in node.items) or '""'
            return text if top else f"({text})"
        if isinstance(node, Alt):
            text = " | ".join(self.node(option, spelling, top=True) for option in node.options)
            return text if top else f"({text})"
        if isinstance(node, Repeat):
            return self.node(node.item, spelling) + _repeat_suffix(node)
        if isinstance(node, Lit):
            return self.string(node.text)
        if isinstance(node, Marker):
            return self.marker(node.text, spelling)
        if isinstance(node, Ref):
            return self.ref(node.name)
        if isinstance(node, CharClass):
            return self.char_class(node)
        if isinstance(node, Terminal):
            return self.terminal(node)
        if isinstance(node, Lexeme):
            return node.name if self.lexemes else self.node(node.parts, spelling, top)
        return self.schema(node)

    def _item(self, item: Node, spelling: MarkerSpelling) -> str:
        """An item of a sequence: a lexeme's parts that are a sequence too are written in
        it, as they were before they were joined (no parentheses)."""
        spliced = isinstance(item, Lexeme) and isinstance(item.parts, Seq)
        return self.node(item, spelling, top=spliced)


_LARK = _Writer(
    string=lark_string,
    token="a special-token reference",
    ref=lambda name: name,
    char_class=lambda node: "/" + _regex_class(node) + "/",
    terminal=lambda terminal: terminal.name,
    schema=lambda value: value.lark or lark_json(value.schema),
    lexemes=True,
)
_GBNF = _Writer(
    string=gbnf_string,
    token="a GBNF token",
    ref=gbnf_name,
    char_class=lambda node: gbnf_class(node.chars, node.negated),
    terminal=lambda terminal: terminal.gbnf,
    schema=lambda value: value.gbnf,
    lexemes=False,
)


def to_gbnf(rules: Rules, header: Sequence[str], spelling: MarkerSpelling) -> str:
    """The rules in GBNF, those the root cannot reach left out (a forced call's grammar does
    not reach the free-text automata of the turn's other paths, hundreds of rules that
    llama.cpp would parse on every request)."""
    definitions: dict[str, str] = {}
    for name, body in rules.rules.items():
        rule_name = "root" if name == "start" else gbnf_name(name)
        definitions[rule_name] = _GBNF.node(body, spelling, top=True)
    definitions.update(rules.gbnf_extra)
    reached = _gbnf_reached(definitions, "root")
    lines = [*_comment_lines("#", header, rules.notes_for("gbnf")), ""]
    lines += [f"{name} ::= {text}" for name, text in definitions.items() if name in reached]
    return "\n".join(lines) + "\n"


_GBNF_LEAVES = re.compile(r'<[^\s<>]+>|"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]')
"""What in a GBNF body is no rule name: token references (``<[7]>``, or a token's text such
as ``<|"|>``, which may hold a quote), strings, character classes."""
_GBNF_WORD = re.compile(r"[A-Za-z0-9-]+")


def _gbnf_reached(definitions: Mapping[str, str], root: str) -> set[str]:
    """The rules ``root`` refers to, directly or not (itself included)."""
    reached = {root}
    waiting = [root]
    while waiting:
        body = _GBNF_LEAVES.sub(" ", definitions.get(waiting.pop(), ""))
        for word in _GBNF_WORD.findall(body):
            if word in definitions and word not in reached:
                reached.add(word)
                waiting.append(word)
    return reached
