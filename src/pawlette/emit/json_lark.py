"""JSON Schema to Lark rules (llguidance's dialect) whose strings spell no marker.

llguidance's ``%json`` writes a JSON string as one lexeme that takes any character, so a
format's marker could be spelt inside an argument (by ordinary tokens, or by one token that
the engine's vocabulary holds as text) and read back by the format's parser as structure.
The GBNF export refuses that with an automaton per string (:mod:`pawlette.emit.json_schema`);
here a string is one lexeme too, but intersected with the negation of every marker
(llguidance's ``&``/``~`` on a lexeme, which its lexer evaluates lazily by derivatives: no rule
per automaton state).  The structure is walked by :class:`~pawlette.emit.schema_walk.
SchemaWalker`, as for GBNF, so both syntaxes take the same values; the whitespace between
tokens is the bounded :data:`~pawlette.emit.grammar_ast.JSON_WHITESPACE` as a lexeme of its
own (llguidance's ``%json`` whitespace, in the older llguidance llama.cpp ships, repeats
without bound whatever pattern it is given).

A string, number or integer under a keyword llguidance enforces and the GBNF walk does not
(``pattern``, ``format``, numeric bounds, ``multipleOf``) stays llguidance's ``%json`` of that
value alone: held to the keyword, and a number cannot spell a marker; a string under
``pattern`` or ``format`` is noted, since its marker exclusion is then the pattern's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .grammar_ast import JSON_WHITESPACE, Rules, lark_json, lark_string
from .json_schema import json_literal
from .schema_walk import SchemaWalker, bounds
from .text_language import TextLanguage, lark_without_markers

LLGUIDANCE_ENFORCED = frozenset(
    {
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "patternProperties",
    }
)
"""Keywords the schema walk ignores that llguidance's %json enforces (its JSON-schema
README, and what the installed llguidance was seen to do; tested in
tests/export/test_grammar.py)."""

_SCALARS = frozenset({"string", "number", "integer"})
_COMPOSED = frozenset({"$ref", "anyOf", "oneOf", "allOf", "enum", "const"})

JSON_CHAR = r'([^"\\\x00-\x1F]|\\(["\\\x2Fbfnrt]|u[0-9a-fA-F]{4}))'
"""One character of a JSON string's inside, raw or escaped (the GBNF's ``json-char``)."""
WHITESPACE = "JSON_WS"
_BASE = {
    # The optional whitespace of JSON_WHITESPACE as a lexeme that is never empty.
    WHITESPACE: "/" + JSON_WHITESPACE.removeprefix("(?:").removesuffix(")?") + "/",
    "JSON_INTEGER": r"/-?(0|[1-9][0-9]*)/",
    "JSON_NUMBER": r"/-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/",
}
_ANY = {
    "json_value": (
        'json_object | json_array | JSON_STRING | JSON_NUMBER | "true" | "false" | "null"'
    ),
    "json_object": (f'"{{" {WHITESPACE}? (json_member ("," {WHITESPACE}? json_member)*)? "}}"'),
    "json_member": (f'JSON_STRING {WHITESPACE}? ":" {WHITESPACE}? json_value {WHITESPACE}?'),
    "json_array": (
        f'"[" {WHITESPACE}? (json_value {WHITESPACE}? '
        f'("," {WHITESPACE}? json_value {WHITESPACE}?)*)? "]"'
    ),
}
_WS = f"{WHITESPACE}?"

DELEGATED_STRING_NOTE = (
    "is llguidance's %json of the string alone (held to it, with no \\uXXXX escape of a "
    "character that is not a control character); no marker is kept out of it beyond what "
    "it allows"
)


def define_json_base(rules: Rules) -> None:
    """The rules every JSON value of ``rules`` shares (its strings spell none of
    ``rules.markers``)."""
    language = TextLanguage(rules.markers, escape=False)
    body = lark_without_markers(language, f"/{JSON_CHAR}*/")
    rules.lark_extra.setdefault("JSON_STRING", f'"\\"" ({body}) "\\""')
    for name, definition in _BASE.items():
        rules.lark_extra.setdefault(name, definition)


def define_json_any(rules: Rules) -> str:
    """The rule of any JSON value (defined once per ``rules``)."""
    define_json_base(rules)
    for name, definition in _ANY.items():
        rules.lark_extra.setdefault(name, definition)
    return "json_value"


def lark_rule_prefix(prefix: str) -> str:
    """A Lark rule name prefix for the rules of one schema (lowercase: rules, not lexemes)."""
    return "json_" + re.sub(r"[^a-z0-9_]+", "_", prefix.lower()).strip("_")


class SchemaToLark(SchemaWalker[str]):
    """Writes Lark rules for one schema (and its ``$defs``) into ``rules.lark_extra``."""

    unenforced = "is not enforced in Lark"
    extra_where = ".*"
    note_syntax = "lark"

    def __init__(self, rules: Rules, prefix: str, where: str) -> None:
        super().__init__(rules, lark_rule_prefix(prefix), where)
        self.language = TextLanguage(rules.markers, escape=False)
        define_json_base(rules)

    def convert(self, schema: Any) -> str:
        """The rule (or expression) for a value under ``schema``."""
        self.root = schema
        return self._schema_value(schema, self.where)

    def _schema_value(self, schema: Any, where: str) -> str:
        if schema is False:
            raise ValueError(f"{where}: the schema false accepts no value")
        return super()._schema_value(schema, where)

    def _body(self, schema: Mapping[str, Any], where: str) -> str:
        kinds = schema.get("type")
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if (
            set(schema) & LLGUIDANCE_ENFORCED
            and not set(schema) & _COMPOSED
            and isinstance(kinds, list)
            and kinds
            and set(kinds) <= _SCALARS
        ):
            if "string" in kinds and {"pattern", "format"} & set(schema):
                notes = self.rules.syntax_notes.setdefault("lark", [])
                note = f"{where}: a string under 'pattern' or 'format' {DELEGATED_STRING_NOTE}"
                if note not in notes:
                    notes.append(note)
            return lark_json(schema)
        return super()._body(schema, where)

    def _named(self, body: str) -> str:
        return self._new(body)

    def _any(self) -> str:
        return define_json_any(self.rules)

    def _literal(self, value: Any) -> str:
        return lark_string(json_literal(value, self.rules.markers))

    def _either(self, options: list[str]) -> str:
        return options[0] if len(options) == 1 else "(" + " | ".join(options) + ")"

    def _new(self, body: str) -> str:
        name = f"{self.prefix}_{self.counter}"
        self.counter += 1
        self.rules.lark_extra[name] = body or '""'
        return name

    def _reference_name(self, number: int) -> str:
        return f"{self.prefix}_ref{number}"

    def _define_reference(self, name: str, target: Any, where: str) -> None:
        self.rules.lark_extra[name] = '""'  # reserved: the schema may refer to itself
        self.rules.lark_extra[name] = self._schema_value(target, where)

    def _reference(self, name: str) -> str:
        return name

    def _string(self, low: Any, high: Any) -> str:
        if low is None and high is None:
            return "JSON_STRING"
        name = f"{self.prefix.upper()}_S{self.counter}"
        self.counter += 1
        body = lark_without_markers(
            self.language,
            f"/{JSON_CHAR}{bounds(int(low or 0), None if high is None else int(high))}/",
        )
        self.rules.lark_extra[name] = f'"\\"" ({body}) "\\""'
        return name

    def _scalar(self, kind: str) -> str | None:
        return {
            "number": "JSON_NUMBER",
            "integer": "JSON_INTEGER",
            "boolean": '("true" | "false")',
            "null": '"null"',
        }.get(kind)

    def _nothing(self) -> str:
        return ""

    def _element(self, value: str) -> str:
        return f"{value} {_WS}"

    def _then(self, first: str, rest: str) -> str:
        return _join(first, rest)

    def _comma_then(self, item: str, rest: str) -> str:
        return _join(f'"," {_WS}', item, rest)

    def _optional(self, body: str) -> str:
        return f"({body})?" if body else ""

    def _repeat(self, body: str, minimum: int, maximum: int | None) -> str:
        return f"({body})" + bounds(minimum, maximum) if body else ""

    def _array_of(self, inside: str | None) -> str:
        return f'"[" {_WS} "]"' if inside is None else f'"[" {_WS} {inside} "]"'

    def _object_of(self, members: str) -> str:
        return f'"{{" {_WS} {members} "}}"'

    def _member(self, name: str | None, value: str, keyword: bool) -> str:
        key = "JSON_STRING" if name is None else self._literal(name)
        return f'{key} {_WS} ":" {_WS} {value} {_WS}'

    def _open_tails(self, extra: str | None) -> tuple[str, str]:
        after = self._new(f'("," {_WS} {extra})*' if extra else '""')
        start = self._new(f"({extra} {after})?" if extra else '""')
        return after, start


def _join(*parts: str) -> str:
    return " ".join(part for part in parts if part)
