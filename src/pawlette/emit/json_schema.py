"""JSON Schema to GBNF rules (the subset tool parameters use), for the GBNF export.

The Lark export hands schemas to llguidance (``%json``), which implements far more of JSON
Schema; GBNF has no such hook, so the schema is walked here: :mod:`pawlette.emit.schema_walk`
decides what it allows (the subset, and what is only noted), :class:`SchemaToGbnf` writes it as
GBNF rules.  An integer is written without a fraction (``1``, not ``1.0``), as in llguidance.
"""

from __future__ import annotations

import json
from typing import Any

from .grammar_ast import Rules, gbnf_name, gbnf_string
from .schema_walk import TextSchemaWalker, bounds

BASE_RULES = {
    # JSON_WHITESPACE: what json.dumps and indenting writers write, bounded: a sampler given
    # unbounded (or any 16-character) whitespace can spend its whole output budget there.
    "json-ws": '(" " | "\\n" "\\n"? [ \\t]{0,20})?',
    "json-char": '[^"\\\\\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    "json-string": '"\\"" json-char* "\\""',
    # Digits unbounded: a grammar takes every turn the renderer writes, and JSON has no
    # limit on a number's digits (llama.cpp's grammars cut the integer part at 16).
    "json-integer": '"-"? ("0" | [1-9] [0-9]*)',
    "json-number": 'json-integer ("." [0-9]+)? ([eE] [-+]? [0-9]+)?',
    "json-boolean": '"true" | "false"',
    "json-null": '"null"',
    "json-array": '"[" json-ws (json-value json-ws ("," json-ws json-value json-ws)*)? "]"',
    "json-member": 'json-string json-ws ":" json-ws json-value json-ws',
    "json-object": '"{" json-ws (json-member ("," json-ws json-member)*)? "}"',
    "json-value": (
        "json-object | json-array | json-string | json-number | json-boolean | json-null"
    ),
}
JSON_ESCAPE = '"\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})'
"""One JSON escape sequence, in GBNF."""

_TYPES = {
    "string": "json-string",
    "number": "json-number",
    "integer": "json-integer",
    "boolean": "json-boolean",
    "null": "json-null",
    "array": "json-array",
    "object": "json-object",
}


class SchemaToGbnf(TextSchemaWalker):
    """Writes rules for one schema (and its ``$defs``) into ``rules.gbnf_extra``."""

    whitespace = "json-ws"
    string_rule = "json-string"

    unenforced = "is not enforced in GBNF"
    extra_where = ".*"

    def __init__(self, rules: Rules, prefix: str, where: str) -> None:
        super().__init__(rules, gbnf_name(prefix), where)
        for name, definition in BASE_RULES.items():
            rules.gbnf_extra.setdefault(name, definition)

    @property
    def extra(self) -> dict[str, str]:
        return self.rules.gbnf_extra

    def _any(self) -> str:
        return "json-value"

    def _literal(self, value: Any) -> str:
        return gbnf_string(json_literal(value, self.rules.markers))

    def _either(self, options: list[str]) -> str:
        return " | ".join(options)

    def _define_reference(self, name: str, target: Any, where: str) -> None:
        self.rules.gbnf_extra[name] = self._schema_value(target, where)

    def _string(self, low: Any, high: Any) -> str:
        if low is None and high is None:
            return "json-string"
        if self.rules.markers:
            from .text_language import TextLanguage, gbnf_bounded_string_rules

            base = f"{self.prefix}-s{self.counter}"
            self.counter += 1
            built = gbnf_bounded_string_rules(
                TextLanguage(self.rules.markers, escape=False),
                base,
                '"\\',
                "\\x00-\\x1F",
                JSON_ESCAPE,
                int(low or 0),
                None if high is None else int(high),
            )
            if built is not None:
                strings, first = built
                self.rules.gbnf_extra.update(strings)
                return f'"\\"" {first} "\\""'
        return f'"\\"" json-char{bounds(low or 0, high)} "\\""'

    def _scalar(self, kind: str) -> str | None:
        return _TYPES.get(kind)

    def _optional(self, body: str) -> str:
        return f"({body})?"

    def _repeat(self, body: str, minimum: int, maximum: int | None) -> str:
        return f"({body})" + bounds(minimum, maximum)


def json_literal(value: Any, markers: tuple[str, ...] = ()) -> str:
    """``json.dumps(value, ensure_ascii=False)`` with every marker spelt inside a string
    broken by a ``\\u`` escape of its first character: the same value, in text that neither
    the engine's stop strings nor the format's lexer read as the marker (a ``const`` or
    ``enum`` value, or a property name, of ``"</call>"`` would otherwise end the call that the
    grammar forces the model to write).  Values that spell no marker are dumped unchanged."""
    text = json.dumps(value, ensure_ascii=False)
    if not any(marker and marker in text for marker in markers):
        return text
    if isinstance(value, str):
        return _break_markers(text, markers)
    if isinstance(value, list):
        return "[" + ", ".join(json_literal(item, markers) for item in value) + "]"
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        members = (
            f"{json_literal(k, markers)}: {json_literal(v, markers)}" for k, v in value.items()
        )
        return "{" + ", ".join(members) + "}"
    return text  # (a marker outside any string cannot be broken: JSON has no escape there)


def _break_markers(text: str, markers: tuple[str, ...]) -> str:
    """A JSON string's text with the first character of each marker in it escaped."""
    while True:
        found = [(text.find(marker), marker) for marker in markers if marker and marker in text]
        if not found:
            return text
        position = min(found)[0]
        code = ord(text[position])
        if code > 0xFFFF:  # a surrogate pair, as JSON spells a character beyond the BMP
            code -= 0x10000
            escape = f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
        else:
            escape = f"\\u{code:04x}"
        text = text[:position] + escape + text[position + 1 :]
