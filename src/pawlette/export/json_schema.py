"""JSON Schema to GBNF rules (the subset tool parameters use), for the GBNF export.

The Lark export hands schemas to llguidance (``%json``), which implements far more of JSON
Schema; GBNF has no such hook, so the schema is walked here.  Enforced: ``type`` (one or a
list), ``properties`` in their declared order with ``required``, ``additionalProperties``
(``false``, a schema, or absent/``true``: any further keys after the declared ones),
``items``, ``prefixItems``, ``minItems``/``maxItems``, ``enum``, ``const``,
``minLength``/``maxLength``, ``anyOf``/``oneOf`` (as alternatives), a one-item ``allOf``,
local ``$ref`` (``#/$defs/...``, ``#/definitions/...``, ``#``), and ``true``/``{}``.

Not enforced (the value is constrained by the rest of its schema, and a note says so):
``pattern``, ``format``, numeric bounds, ``multipleOf``, ``patternProperties``, ``not``,
conditionals, ``uniqueItems``, ``contains``, several-item ``allOf``; extra keys allowed by
``additionalProperties`` are not checked against the declared names.  Properties come in
the declared order, as llguidance also requires, and an integer is written without a
fraction (``1``, not ``1.0``), as in llguidance.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .grammar_ast import Rules, gbnf_name, gbnf_string

_DESCRIPTIVE = frozenset(
    {
        "description",
        "title",
        "examples",
        "default",
        "$schema",
        "$id",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$defs",
        "definitions",
        "x-guidance",
        "nullable",
        "strict",
    }
)
_HANDLED = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "enum",
        "const",
        "minLength",
        "maxLength",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
    }
)

BASE_RULES = {
    "json-ws": "[ \\t\\n\\r]*",
    "json-char": '[^"\\\\\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    "json-string": '"\\"" json-char* "\\""',
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
_TYPES = {
    "string": "json-string",
    "number": "json-number",
    "integer": "json-integer",
    "boolean": "json-boolean",
    "null": "json-null",
    "array": "json-array",
    "object": "json-object",
}


class SchemaToGbnf:
    """Writes rules for one schema (and its ``$defs``) into ``rules.gbnf_extra``."""

    def __init__(self, rules: Rules, prefix: str, where: str) -> None:
        self.rules = rules
        self.prefix = gbnf_name(prefix)
        self.where = where
        self.root: Any = None
        self.counter = 0
        self.refs: dict[str, str] = {}
        for name, definition in BASE_RULES.items():
            rules.gbnf_extra.setdefault(name, definition)

    def convert(self, schema: Any) -> str:
        """The rule name for a value under ``schema``."""
        self.root = schema
        return self._rule(schema, self.where)

    # --------------------------------------------------------------------------------------

    def _note(self, where: str, what: str) -> None:
        note = f"{where}: {what} is not enforced in GBNF"
        if note not in self.rules.notes:
            self.rules.notes.append(note)

    def _new(self, body: str) -> str:
        name = f"{self.prefix}-{self.counter}"
        self.counter += 1
        self.rules.gbnf_extra[name] = body
        return name

    def _rule(self, schema: Any, where: str) -> str:
        if schema is True or schema == {}:
            return "json-value"
        if schema is False:
            raise ValueError(f"{where}: the schema false accepts no value")
        if not isinstance(schema, Mapping):
            raise ValueError(f"{where}: not a schema")
        return self._new(self._body(schema, where))

    def _body(self, schema: Mapping[str, Any], where: str) -> str:
        for key in schema:
            if key not in _HANDLED and key not in _DESCRIPTIVE:
                self._note(where, repr(key))
        if "$ref" in schema:
            return self._ref(schema["$ref"], where)
        if "const" in schema:
            return _literal(schema["const"])
        if "enum" in schema:
            return " | ".join(_literal(value) for value in schema["enum"])
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [
                    self._rule(_merged(schema, option, key), f"{where}.{key}[{number}]")
                    for number, option in enumerate(schema[key])
                ]
                return " | ".join(options)
        if "allOf" in schema:
            parts = schema["allOf"]
            if len(parts) == 1:
                return self._rule(_merged(schema, parts[0], "allOf"), f"{where}.allOf[0]")
            self._note(where, "allOf with several schemas")
            rest = {key: value for key, value in schema.items() if key != "allOf"}
            return self._body(rest, where) if rest else "json-value"
        kinds = schema.get("type")
        if kinds is None:
            kinds = _implied_type(schema)
        if isinstance(kinds, str):
            kinds = [kinds]
        if not kinds:
            return "json-value"
        return " | ".join(self._typed(kind, schema, where) for kind in kinds)

    def _ref(self, reference: Any, where: str) -> str:
        if not isinstance(reference, str) or not reference.startswith("#"):
            raise ValueError(f"{where}.$ref: {reference!r}; expected a local reference")
        if reference not in self.refs:
            name = f"{self.prefix}-ref{len(self.refs)}"
            self.refs[reference] = name
            target: Any = self.root
            for part in [p for p in reference[1:].split("/") if p]:
                part = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(target, Mapping) or part not in target:
                    raise ValueError(f"{where}.$ref: {reference!r} does not resolve")
                target = target[part]
            self.rules.gbnf_extra[name] = self._rule(target, f"{where}.$ref")
        return self.refs[reference]

    def _typed(self, kind: str, schema: Mapping[str, Any], where: str) -> str:
        if kind == "object":
            return self._object(schema, where)
        if kind == "array":
            return self._array(schema, where)
        if kind == "string":
            low, high = schema.get("minLength"), schema.get("maxLength")
            if low is None and high is None:
                return "json-string"
            return f'"\\"" json-char{_bounds(low or 0, high)} "\\""'
        if kind in _TYPES:
            return _TYPES[kind]
        raise ValueError(f"{where}.type: {kind!r}; expected a JSON Schema type")

    def _array(self, schema: Mapping[str, Any], where: str) -> str:
        fixed = [
            self._rule(item, f"{where}.prefixItems[{number}]")
            for number, item in enumerate(schema.get("prefixItems") or [])
        ]
        items = schema.get("items", True)
        item_rule = None if items is False else self._rule(items, f"{where}.items")
        low = int(schema.get("minItems", 0))
        high = None if schema.get("maxItems") is None else int(schema["maxItems"])
        if item_rule is None:
            high = len(fixed) if high is None else min(high, len(fixed))

        def element(position: int) -> str:
            return fixed[position] if position < len(fixed) else str(item_rule)

        def after(position: int) -> str:
            """Elements from ``position`` on, one already written (each starts with ",")."""
            if high is not None and position >= high:
                return ""
            if position >= len(fixed):
                if item_rule is None:
                    return ""
                remaining_high = None if high is None else high - position
                more = f'("," json-ws {item_rule} json-ws)'
                return more + _bounds(max(low - position, 0), remaining_high)
            body = f'"," json-ws {element(position)} json-ws {after(position + 1)}'.strip()
            return self._new(body if position < low else f"({body})?")

        if high == 0 or (item_rule is None and not fixed):
            return '"[" json-ws "]"'
        first = f"{element(0)} json-ws {after(1)}".strip()
        inside = first if low >= 1 else f"({first})?"
        return f'"[" json-ws {inside} "]"'

    def _object(self, schema: Mapping[str, Any], where: str) -> str:
        properties: Mapping[str, Any] = schema.get("properties") or {}
        required = [name for name in schema.get("required", []) if isinstance(name, str)]
        additional = schema.get("additionalProperties", True)
        names = list(properties) + [name for name in required if name not in properties]
        members = []
        for name in names:
            sub = properties.get(name, True if additional is False else additional)
            value = self._rule(sub, f"{where}.properties.{name}")
            key = gbnf_string(json.dumps(name, ensure_ascii=False))
            members.append((f'{key} json-ws ":" json-ws {value} json-ws', name in required))
        extra = None
        if additional is not False:
            value = "json-value" if additional is True else self._rule(additional, f"{where}.*")
            extra = self._new(f'json-string json-ws ":" json-ws {value} json-ws')
        # after: the members still to come once one was written (each starts with ",");
        # start: the members still to come when none was written yet.
        after = self._new(f'("," json-ws {extra})*' if extra else '""')
        start = self._new(f"({extra} {after})?" if extra else '""')
        for member, is_required in reversed(members):
            with_comma = f'"," json-ws {member} {after}'
            first = f"{member} {after}"
            after = self._new(with_comma if is_required else f"{with_comma} | {after}")
            start = self._new(first if is_required else f"{first} | {start}")
        return f'"{{" json-ws {start} "}}"'


def _merged(parent: Mapping[str, Any], child: Any, key: str) -> Any:
    """``child`` with the parent's other constraints (sibling keys apply to every branch)."""
    siblings = {k: v for k, v in parent.items() if k != key and k not in _DESCRIPTIVE}
    if not siblings or not isinstance(child, Mapping):
        return child
    return {**siblings, **child}


def _implied_type(schema: Mapping[str, Any]) -> list[str]:
    if any(key in schema for key in ("properties", "required", "additionalProperties")):
        return ["object"]
    if any(key in schema for key in ("items", "prefixItems", "minItems", "maxItems")):
        return ["array"]
    if any(key in schema for key in ("minLength", "maxLength")):
        return ["string"]
    return []


def _literal(value: Any) -> str:
    return gbnf_string(json.dumps(value, ensure_ascii=False))


def _bounds(low: int, high: int | None) -> str:
    if high is None:
        return {0: "*", 1: "+"}.get(low, f"{{{low},}}")
    if low == high:
        return f"{{{low}}}"
    return f"{{{low},{high}}}"
