"""The grammar of a Gemma 4 call's arguments: the members of :mod:`.values` under the tool's
schema.

The schema subset is :class:`~pawlette.emit.schema_walk.SchemaWalker`'s (the JSON and
Python-literal grammars walk the same); here each value is spelt as the writer writes it:
strings between two ``<|"|>`` quote tokens around text that spells no marker, ``true`` /
``false``, ``None`` or ``null`` for null, numbers as Python prints them, ``[a,b]``, ``{k:v}``
with bare keys.  Members come in the order the writer writes them (the template sorts keys as
Jinja's ``dictsort``), so the schema's properties are sorted so before the walk.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...emit.grammar_ast import Lit, Marker, Node, Ref, Repeat, Rules, Terminal, alt, optional, seq
from ...emit.schema_walk import NodeSchemaWalker
from ...emit.text_language import TextLanguage, gbnf_string_rules, lark_without_markers
from ...types import Tool
from .values import QUOTE, sorted_items, write_value

_INTEGER = "-?(0|[1-9][0-9]{0,199})"
_NUMBER = _INTEGER + r"(\.[0-9]+)?(e[+-]?[0-9]{1,2})?"
INTEGER = Terminal("GEMMA_INTEGER", lark=f"/{_INTEGER}/", gbnf="gemma-integer")
NUMBER = Terminal("GEMMA_NUMBER", lark=f"/{_NUMBER}/", gbnf="gemma-number")
KEY = Terminal("GEMMA_KEY", lark="/[A-Za-z_][A-Za-z0-9_]*/", gbnf="gemma-key")
_GBNF = {
    "gemma-integer": '"-"? ("0" | [1-9] [0-9]{0,199})',
    "gemma-number": 'gemma-integer ("." [0-9]+)? ("e" [-+]? [0-9]{1,2})?',
    "gemma-key": "[A-Za-z_] [A-Za-z0-9_]*",
}


def spelt(text: str) -> Node:
    """Text the writer writes, each ``<|"|>`` in it the quote token."""
    pieces: list[Node] = []
    for number, part in enumerate(text.split(QUOTE)):
        if number:
            pieces.append(Marker(QUOTE))
        pieces.append(Lit(part))
    return seq(*pieces)


def sorted_schema(schema: Any) -> Any:
    """``schema`` with every ``properties`` in the writer's key order."""
    if isinstance(schema, Mapping):
        found = {key: sorted_schema(value) for key, value in schema.items()}
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            found["properties"] = {
                key: sorted_schema(value) for key, value in sorted_items(properties)
            }
        return found
    if isinstance(schema, list):
        return [sorted_schema(item) for item in schema]
    return schema


class GemmaValues(NodeSchemaWalker):
    """Rules for one schema's values in Gemma 4's value syntax."""

    unenforced = "is not enforced (Gemma 4's value syntax: Lark and GBNF alike)"

    def __init__(self, rules: Rules, prefix: str, where: str) -> None:
        super().__init__(rules, prefix, where)
        for name, body in _GBNF.items():
            rules.gbnf_extra.setdefault(name, body)
        # The text between the quotes spells no marker (a quote token would end it early).
        language = TextLanguage(rules.markers, escape=False)
        for name, body in gbnf_string_rules(language, "gemma-str", "", "", '"\\x00"').items():
            rules.gbnf_extra.setdefault(name, body)
        text = Terminal(
            "GEMMA_STRING_TEXT",
            lark=lark_without_markers(language, "/(?s:.+)/"),
            gbnf="gemma-str-body",
        )
        self.string = seq(Marker(QUOTE), optional(text), Marker(QUOTE))
        self.any_value = Ref("gemma_any")
        if "gemma_any" not in rules.rules:
            item = self.any_value
            member = seq(KEY, Lit(":"), item)
            rules.add(
                "gemma_any",
                alt(
                    self.string,
                    NUMBER,
                    Lit("true"),
                    Lit("false"),
                    Lit("None"),
                    Lit("null"),
                    seq(Lit("["), optional(seq(item, Repeat(seq(Lit(","), item)))), Lit("]")),
                    seq(Lit("{"), optional(seq(member, Repeat(seq(Lit(","), member)))), Lit("}")),
                ),
            )

    def members(self, schema: Any) -> Node:
        """An arguments object's members, without the braces."""
        schema = sorted_schema(schema)
        self.root = schema
        if not isinstance(schema, Mapping):
            return Lit("")
        return self._members(schema, self.where, keyword=True)

    def _members(self, schema: Mapping[str, Any], where: str, *, keyword: bool) -> Node:
        additional = schema.get("additionalProperties", True)
        properties = schema.get("properties") or {}
        if additional is False or not isinstance(properties, Mapping):
            return super()._members(schema, where, keyword=keyword)
        # Extra members sort among the declared ones (the writer sorts every key), so any
        # member may come in any place: the declared names are offered, not required.
        options = [
            self._member(name, self._schema_value(sub, f"{where}.properties.{name}"), keyword)
            for name, sub in properties.items()
        ]
        extra = (
            self._any()
            if additional is True
            else self._schema_value(additional, where + self.extra_where)
        )
        options.append(self._member(None, extra, keyword))
        if schema.get("required"):
            self._note(where, "'required' (beside additionalProperties)")
        member = self._new(self._either(options))
        return optional(seq(member, Repeat(seq(Lit(","), member))))

    def _kinds(self, schema: Mapping[str, Any]) -> Any:
        from ...emit.schema_walk import implied_type

        return schema.get("type") or implied_type(schema)

    def _any(self) -> Node:
        return self.any_value

    def _literal(self, value: Any) -> Node:
        return spelt(write_value(value, quote_keys=False))

    def _either(self, options: list[Node]) -> Node:
        return alt(*options)

    def _new(self, body: Node) -> Ref:
        name = f"{self.prefix}_{self.counter}"
        self.counter += 1
        return self.rules.add(name, body)

    def _reference_name(self, number: int) -> str:
        return f"{self.prefix}_ref{number}"

    def _define_reference(self, name: str, target: Any, where: str) -> None:
        self.rules.add(name, Lit(""))  # reserve the name: the schema may refer to itself
        self.rules.rules[name] = self._schema_value(target, where)

    def _reference(self, name: str) -> Node:
        return Ref(name)

    def _string(self, low: Any, high: Any) -> Node:
        return self.string  # (lengths are not enforced: the text is free between the quotes)

    def _scalar(self, kind: str) -> Node | None:
        if kind == "integer":
            return INTEGER
        if kind == "number":
            return NUMBER
        if kind == "boolean":
            return alt(Lit("true"), Lit("false"))
        if kind == "null":
            return alt(Lit("None"), Lit("null"))
        return None

    def _member(self, name: str | None, value: Node, keyword: bool) -> Node:
        return seq(KEY if name is None else Lit(name), Lit(":"), value)

    def _open_tails(self, extra: Node | None) -> tuple[Node, Node]:
        after: Node = Repeat(seq(Lit(","), extra)) if extra is not None else Lit("")
        start: Node = optional(seq(extra, after)) if extra is not None else Lit("")
        return self._new(after), self._new(start)


def arguments_node(rules: Rules, number: int, tool: Tool) -> Node:
    """The members of a call to ``tools[number]`` under its schema (rules in ``rules``)."""
    from ...emit.turn_rules import parameters

    name = f"gemma_args_{number}"
    if name in rules.rules:  # walked already for another part of the turn (a forced call)
        return Ref(name)
    walker = GemmaValues(rules, name, f"tools[{number}].parameters")
    return rules.add(name, walker.members(parameters(tool)))
