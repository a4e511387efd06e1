"""JSON Schema to grammar rules for values written as Python literals (chatglm3, breeze).

Python-call formats write a call's arguments as keyword arguments, each value as
:func:`pawlette.codecs.python_calls.python_literal` writes it: strings in one quote style
with ``\\\\``, the quote, ``\\n`` ``\\r`` ``\\t``, ``\\xhh`` and ``\\uhhhh`` escapes; ``True``,
``False``, ``None``; numbers as Python prints them; ``[a, b]`` and ``{'k': v}`` with ``, ``
and ``: ``.  The rules built here accept exactly that layout for values valid under the
schema (the same subset as :mod:`pawlette.export.json_schema`, whose notes apply; keys in
the declared order).  They are syntax-free :class:`~pawlette.export.grammar_ast.Node` trees,
so both the Lark and the GBNF writer print them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..codecs.python_calls import python_literal
from .grammar_ast import Lit, Node, Ref, Repeat, Rules, Terminal, alt, optional, seq
from .json_schema import _DESCRIPTIVE, _HANDLED, _implied_type, _merged


def _string_char(quote: str) -> tuple[str, str]:
    """(regex, GBNF) for one character of a string in ``quote``."""
    plain = f"[^{quote}\\\\\\x00-\\x1F\\x7F-\\x9F]"
    escaped = f"\\\\([{quote}\\\\nrt]|x[0-9a-f]{{2}}|u[0-9a-f]{{4}})"
    regex = f"({plain}|{escaped})"
    gbnf_quote = '\\"' if quote == '"' else quote
    gbnf = (
        f'[^{gbnf_quote}\\\\\\x00-\\x1F\\x7F-\\x9F] | "\\\\" ([{gbnf_quote}\\\\nrt] '
        f'| "x" [0-9a-f]{{2}} | "u" [0-9a-f]{{4}})'
    )
    return regex, gbnf


class PythonValues:
    """Rules for Python-literal values in one quote style, shared by all schemas of a grammar."""

    def __init__(self, rules: Rules, quote: str) -> None:
        self.rules = rules
        self.quote = quote
        suffix = "DQ" if quote == '"' else "SQ"
        char_regex, char_gbnf = _string_char(quote)
        q = quote
        self.char_gbnf = f"py-char-{suffix.lower()}"
        rules.gbnf_extra[self.char_gbnf] = char_gbnf
        gbnf_q = '"\\""' if quote == '"' else f'"{quote}"'
        rules.gbnf_extra[f"py-string-{suffix.lower()}"] = f"{gbnf_q} {self.char_gbnf}* {gbnf_q}"
        self.char_regex = char_regex
        self.string = Terminal(
            f"PY_STRING_{suffix}", lark=f"/{q}{char_regex}*{q}/", gbnf=f"py-string-{suffix.lower()}"
        )
        self.integer = Terminal("PY_INTEGER", lark="/-?(0|[1-9][0-9]*)/", gbnf="py-integer")
        self.number = Terminal(
            "PY_NUMBER",
            lark="/-?(0|[1-9][0-9]*)(\\.[0-9]+)?(e[+-]?[0-9]+)?/",
            gbnf="py-number",
        )
        self.identifier = Terminal(
            "PY_IDENTIFIER", lark="/[A-Za-z_][A-Za-z0-9_]*/", gbnf="py-identifier"
        )
        rules.gbnf_extra["py-integer"] = '"-"? ("0" | [1-9] [0-9]*)'
        rules.gbnf_extra["py-number"] = 'py-integer ("." [0-9]+)? ("e" [-+]? [0-9]+)?'
        rules.gbnf_extra["py-identifier"] = "[A-Za-z_] [A-Za-z0-9_]*"
        any_name = f"py_any_{suffix.lower()}"
        item = Ref(any_name)
        self.any = Ref(any_name)
        if any_name not in rules.rules:
            rules.add(
                any_name,
                alt(
                    self.string,
                    self.number,
                    Lit("True"),
                    Lit("False"),
                    Lit("None"),
                    seq(Lit("["), optional(seq(item, Repeat(seq(Lit(", "), item)))), Lit("]")),
                    seq(
                        Lit("{"),
                        optional(
                            seq(
                                self.string,
                                Lit(": "),
                                item,
                                Repeat(seq(Lit(", "), self.string, Lit(": "), item)),
                            )
                        ),
                        Lit("}"),
                    ),
                ),
            )

    def literal(self, value: Any) -> Lit:
        return Lit(python_literal(value, quote=self.quote))  # type: ignore[arg-type]


class SchemaToPython:
    """Rules for one schema's values (and its ``$defs``), as Python literals."""

    def __init__(self, values: PythonValues, prefix: str, where: str) -> None:
        self.values = values
        self.rules = values.rules
        self.prefix = prefix
        self.where = where
        self.root: Any = None
        self.counter = 0
        self.refs: dict[str, str] = {}

    def keyword_arguments(self, schema: Any) -> Node:
        """``k=v, ...`` for an arguments object (identifiers, in the declared order)."""
        self.root = schema
        if not isinstance(schema, Mapping):
            return Lit("")
        return self._members(schema, self.where, keyword=True)

    def value(self, schema: Any) -> Node:
        self.root = schema
        return self._node(schema, self.where)

    # --------------------------------------------------------------------------------------

    def _note(self, where: str, what: str) -> None:
        note = f"{where}: {what} is not enforced"
        if note not in self.rules.notes:
            self.rules.notes.append(note)

    def _new(self, body: Node) -> Ref:
        name = f"{self.prefix}_{self.counter}"
        self.counter += 1
        return self.rules.add(name, body)

    def _node(self, schema: Any, where: str) -> Node:
        if schema is True or schema == {}:
            return self.values.any
        if not isinstance(schema, Mapping):
            raise ValueError(f"{where}: not a schema")
        for key in schema:
            if key not in _HANDLED and key not in _DESCRIPTIVE:
                self._note(where, repr(key))
        if "$ref" in schema:
            return self._ref(schema["$ref"], where)
        if "const" in schema:
            return self.values.literal(schema["const"])
        if "enum" in schema:
            return alt(*(self.values.literal(value) for value in schema["enum"]))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return alt(
                    *(
                        self._node(_merged(schema, option, key), f"{where}.{key}[{number}]")
                        for number, option in enumerate(schema[key])
                    )
                )
        if "allOf" in schema:
            parts = schema["allOf"]
            if len(parts) == 1:
                return self._node(_merged(schema, parts[0], "allOf"), f"{where}.allOf[0]")
            self._note(where, "allOf with several schemas")
            rest = {key: value for key, value in schema.items() if key != "allOf"}
            return self._node(rest, where) if rest else self.values.any
        kinds = schema.get("type") or _implied_type(schema)
        if isinstance(kinds, str):
            kinds = [kinds]
        if not kinds:
            return self.values.any
        return alt(*(self._typed(kind, schema, where) for kind in kinds))

    def _ref(self, reference: Any, where: str) -> Node:
        if not isinstance(reference, str) or not reference.startswith("#"):
            raise ValueError(f"{where}.$ref: {reference!r}; expected a local reference")
        if reference not in self.refs:
            name = f"{self.prefix}_ref{len(self.refs)}"
            self.refs[reference] = name
            target: Any = self.root
            for part in [p for p in reference[1:].split("/") if p]:
                part = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(target, Mapping) or part not in target:
                    raise ValueError(f"{where}.$ref: {reference!r} does not resolve")
                target = target[part]
            self.rules.add(name, Lit(""))  # reserve the name: the schema may refer to itself
            self.rules.rules[name] = self._node(target, f"{where}.$ref")
        return Ref(self.refs[reference])

    def _typed(self, kind: str, schema: Mapping[str, Any], where: str) -> Node:
        values = self.values
        if kind == "object":
            inside = self._members(schema, where, keyword=False)
            return self._new(seq(Lit("{"), inside, Lit("}")))
        if kind == "array":
            return self._array(schema, where)
        if kind == "string":
            low, high = schema.get("minLength"), schema.get("maxLength")
            if low is None and high is None:
                return values.string
            quote = values.quote
            q = quote
            regex = f"/{q}{values.char_regex}{_bounds(int(low or 0), high)}{q}/"
            name = f"PY_STRING_{self.prefix.upper()}_{self.counter}"
            self.counter += 1
            gbnf_q = '"\\""' if quote == '"' else f'"{quote}"'
            rule = name.lower().replace("_", "-")
            bounds = _bounds(int(low or 0), high)
            self.rules.gbnf_extra[rule] = f"{gbnf_q} {values.char_gbnf}{bounds} {gbnf_q}"
            return Terminal(name, lark=regex, gbnf=rule)
        if kind == "integer":
            return values.integer
        if kind == "number":
            return values.number
        if kind == "boolean":
            return alt(Lit("True"), Lit("False"))
        if kind == "null":
            return Lit("None")
        raise ValueError(f"{where}.type: {kind!r}; expected a JSON Schema type")

    def _array(self, schema: Mapping[str, Any], where: str) -> Node:
        fixed = [
            self._node(item, f"{where}.prefixItems[{number}]")
            for number, item in enumerate(schema.get("prefixItems") or [])
        ]
        items = schema.get("items", True)
        item = None if items is False else self._node(items, f"{where}.items")
        low = int(schema.get("minItems", 0))
        high = None if schema.get("maxItems") is None else int(schema["maxItems"])
        if item is None:
            high = len(fixed) if high is None else min(high, len(fixed))

        def element(position: int) -> Node:
            return fixed[position] if position < len(fixed) else item  # type: ignore[return-value]

        def after(position: int) -> Node:
            if high is not None and position >= high:
                return Lit("")
            if position >= len(fixed):
                if item is None:
                    return Lit("")
                remaining = None if high is None else high - position
                return Repeat(seq(Lit(", "), item), max(low - position, 0), remaining)
            body = seq(Lit(", "), element(position), after(position + 1))
            return self._new(body if position < low else optional(body))

        if high == 0 or (item is None and not fixed):
            return Lit("[]")
        first = seq(element(0), after(1))
        return self._new(seq(Lit("["), first if low >= 1 else optional(first), Lit("]")))

    def _members(self, schema: Mapping[str, Any], where: str, *, keyword: bool) -> Node:
        values = self.values
        properties: Mapping[str, Any] = schema.get("properties") or {}
        required = [name for name in schema.get("required", []) if isinstance(name, str)]
        additional = schema.get("additionalProperties", True)
        names = list(properties) + [name for name in required if name not in properties]
        separator = Lit("=") if keyword else Lit(": ")
        members = []
        for name in names:
            sub = properties.get(name, True if additional is False else additional)
            key: Node = Lit(name) if keyword else values.literal(name)
            value = self._node(sub, f"{where}.properties.{name}")
            members.append((seq(key, separator, value), name in required))
        extra: Node | None = None
        if additional is not False:
            value = (
                values.any
                if additional is True
                else self._node(additional, f"{where}.additionalProperties")
            )
            extra_key: Node = values.identifier if keyword else values.string
            extra = self._new(seq(extra_key, separator, value))
        after: Node = Repeat(seq(Lit(", "), extra)) if extra is not None else Lit("")
        start: Node = optional(seq(extra, after)) if extra is not None else Lit("")
        after, start = self._new(after), self._new(start)
        for member, is_required in reversed(members):
            with_comma = seq(Lit(", "), member, after)
            first = seq(member, after)
            after = self._new(with_comma if is_required else alt(with_comma, after))
            start = self._new(first if is_required else alt(first, start))
        return start


def _bounds(low: int, high: int | None) -> str:
    if high is None:
        return {0: "*", 1: "+"}.get(low, f"{{{low},}}")
    if low == high:
        return f"{{{low}}}"
    return f"{{{low},{high}}}"
