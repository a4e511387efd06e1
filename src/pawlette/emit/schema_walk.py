"""The JSON Schema subset the grammars enforce, walked once for both value syntaxes.

:class:`SchemaWalker` decides what a schema allows; a subclass only spells it:
:class:`~pawlette.emit.json_schema.SchemaToGbnf` as GBNF rules for JSON values,
:class:`~pawlette.emit.python_schema.SchemaToPython` as grammar nodes for Python literals.
So the JSON and the Python-call grammars cannot disagree about a schema.

Enforced: ``type`` (one or a list), ``properties`` in their declared order with ``required``,
``additionalProperties`` (``false``, a schema, or absent/``true``: any further keys after the
declared ones), ``items``, ``prefixItems``, ``minItems``/``maxItems``, ``enum``, ``const``,
``minLength``/``maxLength``, ``anyOf``/``oneOf`` (as alternatives), a one-item ``allOf``, local
``$ref`` (``#/$defs/...``, ``#/definitions/...``, ``#``), and ``true``/``{}``.

Not enforced (the value is constrained by the rest of its schema, and a note says so):
``pattern``, ``format``, numeric bounds, ``multipleOf``, ``patternProperties``, ``not``,
conditionals, ``uniqueItems``, ``contains``, several-item ``allOf``; extra keys allowed by
``additionalProperties`` are not checked against the declared names.  Properties come in the
declared order, as llguidance also requires.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from .grammar_ast import Lit, Node, Ref, Repeat, Rules, alt, optional, seq

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

Grammar = TypeVar("Grammar")
"""What a subclass writes for a value: GBNF text, or a grammar node."""


class SchemaWalker(ABC, Generic[Grammar]):
    """Grammar for the values of one schema (and its ``$defs``), named ``prefix`` + a number;
    ``where`` names the schema in errors and notes."""

    unenforced = "is not enforced"
    """How a note ends (what it says of a keyword the grammar ignores)."""
    extra_where = ".additionalProperties"
    """Where ``additionalProperties`` is, after the object's own place, in errors."""
    note_syntax: str | None = None
    """The grammar syntax the notes are true of (None: every syntax); they go to
    ``rules.syntax_notes[note_syntax]`` then, so a Lark grammar never says what GBNF lacks."""

    def __init__(self, rules: Rules, prefix: str, where: str) -> None:
        self.rules = rules
        self.prefix = prefix
        self.where = where
        self.root: Any = None
        self.counter = 0
        self.refs: dict[str, str] = {}

    # ----------------------------------------------------------------- what a subclass writes
    # _nothing: no text; _element: an array element with what may follow it before a
    # separator; _then / _comma_then: a piece (after a separator) then the rest (which may be
    # _nothing); _new: a body as a new named rule (a reference to it); _named: the value of
    # a whole schema (GBNF gives each a rule); _member: a key (None: any key) and its value,
    # as ``name=value`` when ``keyword``; _open_tails: the members that may follow the
    # declared ones given the rule for one extra member (None: none), as (after a member
    # was written, when none was).

    @abstractmethod
    def _any(self) -> Grammar: ...

    @abstractmethod
    def _literal(self, value: Any) -> Grammar: ...

    @abstractmethod
    def _either(self, options: list[Grammar]) -> Grammar: ...

    @abstractmethod
    def _new(self, body: Grammar) -> Grammar: ...

    def _named(self, body: Grammar) -> Grammar:
        return body

    @abstractmethod
    def _reference_name(self, number: int) -> str: ...  # the number-th distinct $ref's rule

    @abstractmethod
    def _define_reference(self, name: str, target: Any, where: str) -> None: ...

    @abstractmethod
    def _reference(self, name: str) -> Grammar: ...

    @abstractmethod
    def _string(self, low: Any, high: Any) -> Grammar: ...  # minLength, maxLength or None

    @abstractmethod
    def _scalar(self, kind: str) -> Grammar | None: ...  # None: not a type of this syntax

    @abstractmethod
    def _nothing(self) -> Grammar: ...

    @abstractmethod
    def _element(self, value: Grammar) -> Grammar: ...

    @abstractmethod
    def _then(self, first: Grammar, rest: Grammar) -> Grammar: ...

    @abstractmethod
    def _comma_then(self, item: Grammar, rest: Grammar) -> Grammar: ...

    @abstractmethod
    def _optional(self, body: Grammar) -> Grammar: ...

    @abstractmethod
    def _repeat(self, body: Grammar, minimum: int, maximum: int | None) -> Grammar: ...

    @abstractmethod
    def _array_of(self, inside: Grammar | None) -> Grammar: ...  # None: the empty array

    @abstractmethod
    def _object_of(self, members: Grammar) -> Grammar: ...

    @abstractmethod
    def _member(self, name: str | None, value: Grammar, keyword: bool) -> Grammar: ...

    @abstractmethod
    def _open_tails(self, extra: Grammar | None) -> tuple[Grammar, Grammar]: ...

    # ----------------------------------------------------------------- the walk

    def _note(self, where: str, what: str) -> None:
        note = f"{where}: {what} {self.unenforced}"
        notes = (
            self.rules.notes
            if self.note_syntax is None
            else self.rules.syntax_notes.setdefault(self.note_syntax, [])
        )
        if note not in notes:
            notes.append(note)

    def _schema_value(self, schema: Any, where: str) -> Grammar:
        """The grammar for a value under ``schema``."""
        if schema is True or schema == {}:
            return self._any()
        if not isinstance(schema, Mapping):
            raise ValueError(f"{where}: not a schema")
        return self._named(self._body(schema, where))

    def _body(self, schema: Mapping[str, Any], where: str) -> Grammar:
        for key in schema:
            if key not in _HANDLED and key not in _DESCRIPTIVE:
                self._note(where, repr(key))
        check_shapes(schema, where)
        if "$ref" in schema:
            return self._ref(schema["$ref"], where)
        if "const" in schema:
            return self._literal(schema["const"])
        if "enum" in schema:
            return self._either([self._literal(value) for value in schema["enum"]])
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self._either(
                    [
                        self._schema_value(_merged(schema, option, key), f"{where}.{key}[{number}]")
                        for number, option in enumerate(schema[key])
                    ]
                )
        if "allOf" in schema:
            parts = schema["allOf"]
            if len(parts) == 1:
                return self._schema_value(_merged(schema, parts[0], "allOf"), f"{where}.allOf[0]")
            self._note(where, "allOf with several schemas")
            rest = {key: value for key, value in schema.items() if key != "allOf"}
            return self._body(rest, where) if rest else self._any()
        kinds = self._kinds(schema)
        if isinstance(kinds, str):
            kinds = [kinds]
        if not kinds:
            return self._any()
        return self._either([self._typed(kind, schema, where) for kind in kinds])

    def _kinds(self, schema: Mapping[str, Any]) -> Any:
        """``type``, or the type the other keywords imply."""
        kinds = schema.get("type")
        return implied_type(schema) if kinds is None else kinds

    def _ref(self, reference: Any, where: str) -> Grammar:
        if not isinstance(reference, str) or not reference.startswith("#"):
            raise ValueError(f"{where}.$ref: {reference!r}; expected a local reference")
        if reference not in self.refs:
            name = self._reference_name(len(self.refs))
            self.refs[reference] = name
            target: Any = self.root
            for part in [p for p in reference[1:].split("/") if p]:
                part = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(target, Mapping) or part not in target:
                    raise ValueError(f"{where}.$ref: {reference!r} does not resolve")
                target = target[part]
            self._define_reference(name, target, f"{where}.$ref")
        return self._reference(self.refs[reference])

    def _typed(self, kind: str, schema: Mapping[str, Any], where: str) -> Grammar:
        if kind == "object":
            return self._object_of(self._members(schema, where, keyword=False))
        if kind == "array":
            return self._array(schema, where)
        if kind == "string":
            return self._string(schema.get("minLength"), schema.get("maxLength"))
        scalar = self._scalar(kind)
        if scalar is None:
            raise ValueError(f"{where}.type: {kind!r}; expected a JSON Schema type")
        return scalar

    def _array(self, schema: Mapping[str, Any], where: str) -> Grammar:
        fixed = [
            self._schema_value(item, f"{where}.prefixItems[{number}]")
            for number, item in enumerate(schema.get("prefixItems") or [])
        ]
        items = schema.get("items", True)
        item = None if items is False else self._schema_value(items, f"{where}.items")
        low = int(schema.get("minItems", 0))
        high = None if schema.get("maxItems") is None else int(schema["maxItems"])
        if item is None:
            high = len(fixed) if high is None else min(high, len(fixed))

        def element(position: int) -> Grammar:
            if position < len(fixed):
                return self._element(fixed[position])
            assert item is not None  # an array with no element past the fixed ones is empty
            return self._element(item)

        def after(position: int) -> Grammar:
            """Elements from ``position`` on, one already written (each after a separator)."""
            if high is not None and position >= high:
                return self._nothing()
            if position >= len(fixed):
                if item is None:
                    return self._nothing()
                remaining = None if high is None else high - position
                more = self._comma_then(self._element(item), self._nothing())
                return self._repeat(more, max(low - position, 0), remaining)
            body = self._comma_then(element(position), after(position + 1))
            return self._new(body if position < low else self._optional(body))

        if high == 0 or (item is None and not fixed):
            return self._array_of(None)
        first = self._then(element(0), after(1))
        return self._array_of(first if low >= 1 else self._optional(first))

    def _members(self, schema: Mapping[str, Any], where: str, *, keyword: bool) -> Grammar:
        """An object's members (no braces): the declared ones in order, then any extra."""
        check_shapes(schema, where)
        properties: Mapping[str, Any] = schema.get("properties") or {}
        required = [name for name in schema.get("required", []) if isinstance(name, str)]
        additional = schema.get("additionalProperties", True)
        names = list(properties) + [name for name in required if name not in properties]
        members = []
        for name in names:
            sub = properties.get(name, True if additional is False else additional)
            value = self._schema_value(sub, f"{where}.properties.{name}")
            members.append((self._member(name, value, keyword), name in required))
        extra = None
        if additional is not False:
            value = (
                self._any()
                if additional is True
                else self._schema_value(additional, where + self.extra_where)
            )
            extra = self._new(self._member(None, value, keyword))
        # after: the members still to come once one was written (each after a separator);
        # start: the members still to come when none was written yet.
        after, start = self._open_tails(extra)
        for member, is_required in reversed(members):
            with_comma = self._comma_then(member, after)
            first = self._then(member, after)
            after = self._new(with_comma if is_required else self._either([with_comma, after]))
            start = self._new(first if is_required else self._either([first, start]))
        return start


_LISTS = ("enum", "anyOf", "oneOf", "allOf", "prefixItems", "required")
_BOUNDS = ("minItems", "maxItems", "minLength", "maxLength")


def check_shapes(schema: Mapping[str, Any], where: str) -> None:
    """A keyword whose value has the wrong JSON type is the schema's error (a ValueError, as a
    wrong type name is), never a crash: ``"type": 5``, ``"enum": 5``, ``"properties": []``."""
    kinds = schema.get("type")
    if kinds is not None and not (
        isinstance(kinds, str)
        or (isinstance(kinds, list) and all(isinstance(kind, str) for kind in kinds))
    ):
        raise ValueError(f"{where}.type: {kinds!r}; expected a type name or a list of them")
    for key in _LISTS:
        if key in schema and not isinstance(schema[key], list):
            raise ValueError(f"{where}.{key}: {schema[key]!r}; expected an array")
    properties = schema.get("properties")
    if properties is not None and not isinstance(properties, Mapping):
        raise ValueError(f"{where}.properties: {properties!r}; expected an object")
    for key in _BOUNDS:
        if isinstance(schema.get(key), (list, Mapping)):
            raise ValueError(f"{where}.{key}: {schema[key]!r}; expected a number")


def _merged(parent: Mapping[str, Any], child: Any, key: str) -> Any:
    """``child`` with the parent's other constraints (sibling keys apply to every branch)."""
    siblings = {k: v for k, v in parent.items() if k != key and k not in _DESCRIPTIVE}
    if not siblings or not isinstance(child, Mapping):
        return child
    return {**siblings, **child}


def implied_type(schema: Mapping[str, Any]) -> list[str]:
    if any(key in schema for key in ("properties", "required", "additionalProperties")):
        return ["object"]
    if any(key in schema for key in ("items", "prefixItems", "minItems", "maxItems")):
        return ["array"]
    if any(key in schema for key in ("minLength", "maxLength")):
        return ["string"]
    return []


def bounds(low: int, high: int | None) -> str:
    """A repetition count in GBNF and regex syntax: ``*``, ``+``, ``{n}``, ``{n,}``, ``{n,m}``."""
    if high is None:
        return {0: "*", 1: "+"}.get(low, f"{{{low},}}")
    if low == high:
        return f"{{{low}}}"
    return f"{{{low},{high}}}"


_OPEN_KEYWORDS = ("additionalProperties", "patternProperties", "unevaluatedProperties")
_COMPOSED = ("allOf", "anyOf", "oneOf", "$ref", "not", "if")
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "prefixItems")
_SUBSCHEMAS = ("items", "additionalProperties", "contains", "not", "if", "then", "else")


def closed_objects(schema: Any) -> Any:
    """``schema`` with every object schema that says nothing of further properties closed
    (``additionalProperties: false``): the strict reading of a tool's parameters, as OpenAI's
    strict function calling and xgrammar's strict mode read them, where JSON Schema's default
    allows any undeclared property (a sampling model then writes keys nobody declared, and
    under a grammar it may write them until its length limit).

    Left open: an object that allows further properties itself (``additionalProperties``,
    ``patternProperties``, ``unevaluatedProperties``), and one whose properties come from a
    composition at its own level (``allOf``, ``anyOf``, ``oneOf``, ``$ref``, ``not``, ``if``:
    closing it would refuse the properties its parts declare); the parts are closed instead,
    except the members of an ``allOf`` of several schemas, whose properties add up.
    Returns a new value (``schema`` is not changed); anything not a schema is returned as is.
    """
    return _closed(schema, in_all_of=False)


def _closed(schema: Any, *, in_all_of: bool) -> Any:
    if not isinstance(schema, Mapping):
        return schema
    result = dict(schema)
    for key in _SUBSCHEMA_MAPS:
        value = result.get(key)
        if isinstance(value, Mapping):
            result[key] = {name: _closed(part, in_all_of=False) for name, part in value.items()}
    for key in _SUBSCHEMA_LISTS:
        value = result.get(key)
        if isinstance(value, list):
            result[key] = [_closed(part, in_all_of=False) for part in value]
    all_of = result.get("allOf")
    if isinstance(all_of, list):
        several = len(all_of) > 1
        result["allOf"] = [_closed(part, in_all_of=several) for part in all_of]
    for key in _SUBSCHEMAS:
        value = result.get(key)
        if isinstance(value, Mapping):
            result[key] = _closed(value, in_all_of=False)
        elif key == "items" and isinstance(value, list):  # the older tuple form of items
            result[key] = [_closed(part, in_all_of=False) for part in value]
    kinds = result.get("type")
    typed = kinds == "object" or (isinstance(kinds, list) and "object" in kinds)
    if (
        not in_all_of
        and (typed or (kinds is None and implied_type(result) == ["object"]))
        and not any(key in result for key in _OPEN_KEYWORDS)
        and not any(key in result for key in _COMPOSED)
    ):
        result["additionalProperties"] = False
    return result


class NodeSchemaWalker(SchemaWalker[Node]):
    """A walker that spells values as grammar nodes: the pieces of sequence, repetition,
    arrays and objects every such walker writes alike (``item_separator`` between the items
    of an array or the members of an object)."""

    item_separator = ","

    def _kinds(self, schema: Mapping[str, Any]) -> Any:
        # An empty ``type`` ("" or []) reads as absent here (the GBNF walk takes it as given).
        return schema.get("type") or implied_type(schema)

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

    def _nothing(self) -> Node:
        return Lit("")

    def _element(self, value: Node) -> Node:
        return value

    def _then(self, first: Node, rest: Node) -> Node:
        return seq(first, rest)

    def _comma_then(self, item: Node, rest: Node) -> Node:
        return seq(Lit(self.item_separator), item, rest)

    def _optional(self, body: Node) -> Node:
        return optional(body)

    def _repeat(self, body: Node, minimum: int, maximum: int | None) -> Node:
        return Repeat(body, minimum, maximum)

    def _array_of(self, inside: Node | None) -> Node:
        return Lit("[]") if inside is None else self._new(seq(Lit("["), inside, Lit("]")))

    def _object_of(self, members: Node) -> Node:
        return self._new(seq(Lit("{"), members, Lit("}")))


class TextSchemaWalker(SchemaWalker[str]):
    """A walker that writes a grammar syntax's text (GBNF or Lark): rules go into ``extra``
    (the syntax's extra rules of ``rules``), named ``prefix`` + ``joiner`` + a number, with
    ``whitespace`` between tokens and ``string_rule`` for a key of any name.  The two
    syntaxes write arrays, objects, members and sequences alike."""

    joiner = "-"
    whitespace = ""
    string_rule = ""
    empty = ""  # the body of a rule that takes nothing (Lark cannot leave it blank)

    @property
    @abstractmethod
    def extra(self) -> dict[str, str]: ...

    def convert(self, schema: Any) -> str:
        """The rule (or expression) for a value under ``schema``."""
        self.root = schema
        return self._schema_value(schema, self.where)

    def _schema_value(self, schema: Any, where: str) -> str:
        if schema is False:
            raise ValueError(f"{where}: the schema false accepts no value")
        return super()._schema_value(schema, where)

    def _named(self, body: str) -> str:
        return self._new(body)

    def _new(self, body: str) -> str:
        name = f"{self.prefix}{self.joiner}{self.counter}"
        self.counter += 1
        self.extra[name] = body or self.empty
        return name

    def _reference_name(self, number: int) -> str:
        return f"{self.prefix}{self.joiner}ref{number}"

    def _reference(self, name: str) -> str:
        return name

    def _nothing(self) -> str:
        return ""

    def _element(self, value: str) -> str:
        return f"{value} {self.whitespace}"

    def _then(self, first: str, rest: str) -> str:
        return _join(first, rest)

    def _comma_then(self, item: str, rest: str) -> str:
        return _join(f'"," {self.whitespace}', item, rest)

    def _array_of(self, inside: str | None) -> str:
        space = self.whitespace
        return f'"[" {space} "]"' if inside is None else f'"[" {space} {inside} "]"'

    def _object_of(self, members: str) -> str:
        return f'"{{" {self.whitespace} {members} "}}"'

    def _member(self, name: str | None, value: str, keyword: bool) -> str:
        key = self.string_rule if name is None else self._literal(name)
        space = self.whitespace
        return f'{key} {space} ":" {space} {value} {space}'

    def _open_tails(self, extra: str | None) -> tuple[str, str]:
        space = self.whitespace
        after = self._new(f'("," {space} {extra})*' if extra else '""')
        start = self._new(f"({extra} {after})?" if extra else '""')
        return after, start


def _join(*parts: str) -> str:
    """Grammar pieces in sequence (empty ones left out)."""
    return " ".join(part for part in parts if part)
