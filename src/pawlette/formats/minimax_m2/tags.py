"""MiniMax-M3's calls: each argument a tag named by its key, objects and arrays nested as
tags, every tag after the namespace marker ``]<]minimax[>[`` (``NS`` below)::

    NS<invoke name="create_event">NS<title>StandupNS</title>NS<attendees>NS<item>ana
    NS</item>NS<item>boNS</item>NS</attendees>NS<location>NS<name>HQNS</name>
    NS</location>NS</invoke>

(one line in the turn: the breaks above are the page's).  A value is written as the template's
``to_xml`` macro writes it: an object as one tag per key, a list as one ``<item>`` tag per
element, a boolean as ``true``/``false``, a string as it is, a number as Python's ``str``; a
null is not written (the key is left out, an ``<item>`` left empty: a recorded loss).

Reading types each leaf by its schema, as :class:`~pawlette.declare.XmlCalls` types a
parameter (a string keeps its text, any other is read as JSON, text that is no JSON stays a
string where the schema allows one); a tag holding tags is an object, or an array where its
schema says array or every tag inside is ``<item>``; a key given twice in an object collects
its values into an array (vLLM's ``minimax_m3`` cases); a tag without content is the empty
object or array where its schema says one, else the empty string.

The grammar writes the declared parameters (an object's declared properties nested, an
array's items as ``<item>`` tags); a key the schema does not declare is not in it (an object
without declared properties is empty there), as the close tag repeats the key, which a
context-free grammar cannot match to a free name: the grammars are strict (OpenAI's strict
mode) whatever ``strict`` asks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pawlette.declare import XmlCalls
from pawlette.declare.pieces import Fence, markers_in
from pawlette.declare.readers import Described
from pawlette.declare.xml_calls import (
    Tags,
    XmlCallReader,
    XmlCallSet,
    schema_types,
    typed_value,
)
from pawlette.emit.grammar_ast import Lit, Node, Repeat, optional, seq
from pawlette.emit.jinja_text import jinja_string
from pawlette.emit.schema_walk import check_shapes
from pawlette.engine.call_arguments import arguments_problem

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.emit.grammar_ast import Rules
    from pawlette.engine.machine import Parser
    from pawlette.types import ToolCall

ITEM = "item"
"""The tag of an array's element."""


def leaf_text(value: Any) -> str:
    """A value that is no object or list as the template's ``to_xml`` writes it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def holds_null(value: Any) -> bool:
    """Whether a null stands anywhere in ``value`` (the template writes none)."""
    if isinstance(value, Mapping):
        return any(inner is None or holds_null(inner) for inner in value.values())
    if isinstance(value, list):
        return any(inner is None or holds_null(inner) for inner in value)
    return False


# ---------------------------------------------------------------------- reading

Element = tuple[str, "str | list[Element]"]
"""A tag and its content: text, or the tags inside it."""


class _Malformed(Exception):
    """Text that is not tags as the template writes them."""


def elements(text: str, prefix: str) -> str | list[Element]:
    """The tags in ``text`` (its text where it holds none); :class:`_Malformed` where a tag
    is not closed, or text stands between tags."""
    found, position = _elements(text, prefix, 0, None)
    if position != len(text):
        raise _Malformed(f"text {text[position:][:40]!r} after the tags")
    return found


def _elements(
    text: str, prefix: str, position: int, parent: str | None
) -> tuple[str | list[Element], int]:
    """The content of a tag (``parent``; None: the whole text) from ``position``, and where
    its close ends: its text, or the tags in it (only whitespace between them)."""
    opener = prefix + "<"
    found: list[Element] = []
    while True:
        at = text.find(opener, position)
        gap = text[position:] if at < 0 else text[position:at]
        if found and gap.strip():
            raise _Malformed(f"text {gap[:40]!r} beside tags")
        if at < 0:
            if parent is not None:
                raise _Malformed(f"tag {parent!r} not closed")
            return (found if found else gap), len(text)
        name_end = text.find(">", at + len(opener))
        if name_end < 0:
            raise _Malformed(f"a tag without its '>' at {text[at:][:40]!r}")
        name = text[at + len(opener) : name_end]
        if name.startswith("/"):
            if name[1:] != parent:
                raise _Malformed(f"close {name!r} where {parent!r} is open")
            return (found if found else gap), name_end + 1
        if not name or gap.strip():
            raise _Malformed(f"tag {name!r} after text {gap[:40]!r}")
        inner, position = _elements(text, prefix, name_end + 1, name)
        found.append((name, inner))


def typed(content: str | list[Element], schema: Any, where: str) -> Any:
    """A tag's content as its schema types it; :class:`_Malformed` where it cannot be."""
    kinds = schema_types(schema)
    if isinstance(content, str):
        if content == "" and kinds is not None and kinds & {"object", "array"}:
            return {} if "object" in kinds else []
        read, value = typed_value(content, kinds, python=False)
        if not read:
            raise _Malformed(f"{where}: {content[:40]!r} is not of its schema's type")
        return value
    as_array = "array" in kinds if kinds is not None else all(tag == ITEM for tag, _ in content)
    if as_array and all(tag == ITEM for tag, _ in content):
        items = schema.get("items") if isinstance(schema, Mapping) else None
        return [typed(inner, items, f"{where}[{n}]") for n, (_, inner) in enumerate(content)]
    if kinds is not None and "object" not in kinds:
        raise _Malformed(f"{where}: tags where its schema says {sorted(kinds)}")
    return object_of(content, schema, where)


def object_of(content: list[Element], schema: Any, where: str) -> dict[str, Any]:
    """Tags as an object's members, each typed by its property's schema; a key given twice
    collects its values into an array."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    extra = schema.get("additionalProperties") if isinstance(schema, Mapping) else None
    result: dict[str, Any] = {}
    repeated: set[str] = set()
    for key, inner in content:
        declared = properties.get(key) if isinstance(properties, Mapping) else None
        child = (
            declared if declared is not None else (extra if isinstance(extra, Mapping) else None)
        )
        value = typed(inner, child, f"{where}.{key}")
        if key not in result:
            result[key] = value
        elif key in repeated:
            result[key].append(value)
        else:
            result[key] = [result[key], value]
            repeated.add(key)
    return result


class TagCallReader(XmlCallReader):
    """One call whose arguments are tags named by their keys (see the module)."""

    __slots__ = ("_prefix",)

    def __init__(self, parser: Parser, tags: Tags, prefix: str) -> None:
        super().__init__(parser, tags)
        self._prefix = prefix

    def _read(self, text: str) -> tuple[str | None, str | None, dict[str, Any] | None]:
        name_close = self._tags.name_close[1]
        name_end = text.find(name_close)
        if name_end < 0:
            return "no end of the name", None, None
        problem, name, tool = self.named_tool(text[:name_end])
        if problem is not None:
            return problem, None, None
        schema = tool.parameters if tool is not None else None
        try:
            content = elements(text[name_end + len(name_close) :], self._prefix)
            if isinstance(content, str):
                if content.strip():
                    return f"text {content[:40]!r} where the parameters stand", None, None
                content = []
            arguments = object_of(content, schema, "arguments")
        except _Malformed as error:
            return str(error), None, None
        problem = arguments_problem(json.dumps(arguments, ensure_ascii=False))
        if problem is not None:
            return problem, None, None
        return None, name, arguments


# ---------------------------------------------------------------------- the concept


@dataclass(frozen=True)
class TagCalls(XmlCalls):
    """:class:`~pawlette.declare.XmlCalls` whose parameters are tags named by their keys,
    nested for objects and arrays (see the module): ``tag`` is the marker before every tag;
    ``key_open`` + KEY + ``key_close`` opens a parameter and ``value_close`` + KEY +
    ``key_close`` closes it."""

    tag: Fence = ()

    def write_call(self, out: Render, index: int, number: int, call: ToolCall) -> None:
        out.text(call.name, "tool_call", trainable=True)
        out.fence(self.name_close, "tool_call", trainable=True)
        arguments = json.loads(call.arguments.strip() or "{}")
        if holds_null(arguments):
            where = f"messages[{index}].tool_calls[{number}].function.arguments"
            out.lose(where, "a null value, not written (the template leaves it out)")
        self._write_value(out, arguments)  # an object: one tag per argument

    def _write_value(self, out: Render, value: Any) -> None:
        """A value's tags as fences (the marker a marker, the rest text), its leaves as
        text."""
        if isinstance(value, (Mapping, list)):
            pairs = (
                value.items() if isinstance(value, Mapping) else ((ITEM, item) for item in value)
            )
            for key, inner in pairs:
                if inner is None and isinstance(value, Mapping):
                    continue
                out.fence(self.key_open, "tool_call", trainable=True)
                out.text(key, "tool_call", trainable=True)
                out.fence(self.key_close, "tool_call", trainable=True)
                self._write_value(out, inner)
                out.fence(self.value_close, "tool_call", trainable=True)
                out.text(key, "tool_call", trainable=True)
                out.fence(self.key_close, "tool_call", trainable=True)
            return
        text = leaf_text(value)
        if text:
            out.text(text, "tool_call", trainable=True)

    def rows(self, table: Table) -> None:
        tags = self.tags(table)
        prefix = table.text(self.tag)
        inner = {text for pieces in (self.tag, self.name_close) for text in markers_in(pieces)}
        inner |= {text for text in markers_in(self.close) if text != table.text(self.close)}
        reader = Described(
            "tagged XML call", lambda parser: TagCallReader(parser, tags, prefix), prefix=prefix
        )
        table.state("call.xml", reader, "assistant", inner=inner)
        self.section_rows(table, "call.xml", "call.xml")

    def jinja_call(self, out: Template) -> None:
        prefix = jinja_string("".join(markers_in(self.tag)))
        out.macro("minimax_xml", MACRO.replace("PREFIX", prefix))
        out.out("{{- call.function.name -}}")
        out.fence(self.name_close)
        out.out("{%- for key, value in call.function.arguments.items() if value is not none -%}")
        out.out("{{- minimax_xml({key: value}) -}}")
        out.out("{%- endfor -%}")

    def grammar(self, turn: Turn) -> None:
        turn.calls = _TagCallSet(self, turn)


MACRO = r"""{%- macro minimax_xml(value) -%}
{%- if value is mapping -%}
{%- for key, inner in value.items() if inner is not none -%}
{{- PREFIX ~ '<' ~ key ~ '>' ~ minimax_xml(inner) ~ PREFIX ~ '</' ~ key ~ '>' -}}
{%- endfor -%}
{%- elif value is iterable and value is not string -%}
{%- for inner in value -%}
{{- PREFIX ~ '<item>' ~ minimax_xml(inner) ~ PREFIX ~ '</item>' -}}
{%- endfor -%}
{%- elif value is none -%}
{%- elif value is boolean -%}{{- value | tojson -}}
{%- else -%}{{- value | string -}}
{%- endif -%}
{%- endmacro -%}"""
"""The exported template's ``to_xml`` (``PREFIX``: the tags' marker as a Jinja string)."""


# ---------------------------------------------------------------------- the grammar


class _TagCallSet(XmlCallSet):
    """A call as the declared parameters' tags, nested by their schemas."""

    def __init__(self, calls: TagCalls, turn: Turn) -> None:
        super().__init__(calls, turn)
        self._positions = 0

    def _tag(self, turn: Turn, key: str, value: Node) -> Node:
        calls: TagCalls = self.calls
        return seq(
            *turn.nodes(calls.key_open),
            Lit(key),
            *turn.nodes(calls.key_close),
            value,
            Lit(key),
            *turn.nodes(calls.key_close),
        )

    def _tag_value(self, turn: Turn, rules: Rules, number: int, key: str, schema: Any) -> Node:
        """A value and the start of its close (``value_close``)."""
        calls: TagCalls = self.calls
        self._positions += 1
        kinds = schema_types(schema)
        close = turn.nodes(calls.value_close)
        if kinds == {"object"} and isinstance(schema, Mapping):
            where = f"tools[{number}].parameters: the object under {key!r}"
            return seq(self._members(turn, rules, number, schema, where), *close)
        if kinds == {"array"} and isinstance(schema, Mapping):
            items = schema.get("items", {})
            item = self._tag(turn, ITEM, self._tag_value(turn, rules, number, ITEM, items))
            return seq(Repeat(item), *close)
        return self._value(turn, rules, number, self._positions, key, schema)

    def _members(
        self, turn: Turn, rules: Rules, number: int, schema: Mapping[str, Any], where: str
    ) -> Node:
        """An object's declared properties, in order, those not required optional (``where``:
        the object's place, for a keyword of the wrong shape: the schema's error, the
        server's 400, never a crash)."""
        check_shapes(schema, where)
        required = {key for key in schema.get("required") or () if isinstance(key, str)}
        pieces: list[Node] = []
        for key, child in (schema.get("properties") or {}).items():
            member = self._tag(turn, key, self._tag_value(turn, rules, number, key, child))
            pieces.append(member if key in required else optional(member))
        return seq(*pieces)

    def items(self, turn: Turn, rules: Rules, number: int) -> list[Node]:
        calls: TagCalls = self.calls
        tool = turn.tools[number]
        parameters = tool.parameters if isinstance(tool.parameters, Mapping) else {}
        self._positions = 0  # the values' rule names, the same each time the call is built
        return [
            *turn.nodes(calls.open),
            Lit(tool.name),
            *turn.nodes(calls.name_close),
            self._members(turn, rules, number, parameters, f"tools[{number}].parameters"),
            *turn.nodes(calls.close),
        ]
