"""Calls written as tags, one per parameter, each value typed by the tool's schema
(:class:`XmlCalls`)."""

# ruff: noqa: E501  (the docstring shows the wire formats as they are)

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from ..emit.grammar_ast import Lit, Node, Repeat, Rules, alt, optional, seq
from ..emit.grammar_ast import Marker as MarkerNode
from ..emit.schema_walk import check_shapes
from ..engine.call_arguments import MAX_NESTING, arguments_problem, load_json
from ..engine.kept import MISSING, Kept
from ..engine.machine import Parser, ReaderFactory
from ..engine.readers import WholeTextReader
from ..errors import FormatError
from ..types import Tool, ToolCall
from .calls import SectionedCallConcept, arguments_object, closing_marker, name_problem
from .grammar import SectionedCalls, text_before
from .pieces import Fence, markers_in, text_of
from .readers import Described, OpenSection, give_back_call, schema_tools

if TYPE_CHECKING:
    from .grammar import Turn
    from .jinja import Template
    from .layout import Layout
    from .table import Table
    from .write import Render

Values = Literal["json", "python", "literal"]

Member = tuple[str, Fence, str]
"""An argument as written: its key, the fence after the key, its value's text."""


@dataclass(frozen=True)
class XmlCalls(SectionedCallConcept):
    """Calls as a name tag and one tag per parameter::

        Qwen3-Coder   <tool_call>\\n<function=get_weather>\\n<parameter=city>\\nParis\\n</parameter>\\n</function>\\n</tool_call>
        GLM-4.6       <tool_call>get_weather\\n<arg_key>city</arg_key>\\n<arg_value>Paris</arg_value>\\n</tool_call>
        MiniMax-M2    <minimax:tool_call>\\n<invoke name="get_weather">\\n<parameter name="city">Paris</parameter>\\n</invoke>\\n</minimax:tool_call>

    Fields: ``open`` / ``name_close`` around the name; ``key_open`` / ``key_close`` around a
    parameter's name; ``value_close`` after its value; ``close`` after the last parameter;
    ``section_open`` / ``section_close`` around all the calls of a turn, ``separator``
    between two calls, ``text_separator`` between text and the calls (a turn's text beside
    its calls is written before them as given, whitespace too; an empty text writes no
    separator; text written otherwise takes a concept that says so: ``Trimmed`` trims every
    turn of its roles, with calls or without); ``parallel``: several
    calls in one turn; ``loose``: the fences are also read without their whitespace (and
    the whitespace between two tags of one fence left out or added: GLM models write both
    ``</arg_key><arg_value>`` and ``</arg_key>\\n<arg_value>``); ``key_close_other``: where
    not empty, ``key_close`` is written only before a string and this before any other
    value, and reading follows the one written (DeepSeek-V3.2's ``string="true"`` /
    ``string="false"``); ``no_arguments``: written after the name's close for a call without
    arguments (DeepSeek V4's blank line), read as layout.

    ``values``: a string value is written as it is; any other as JSON (``"json"``), as
    Python's ``str`` of it for scalars (``"python"``: ``True``, ``None``, as templates that
    write ``value | string`` for scalars and ``tojson`` for containers do), or as Python's
    ``str`` of every value (``"literal"``: ``{'a': True}``).  Reading types each value by the
    tool's schema: a string parameter keeps its text; any other is read as JSON, or with
    ``"python"``/``"literal"`` ``True``/``False``/``None`` too, and with ``"literal"`` an
    object or array written as a Python literal; a value that reads as none of these stays a
    string where the schema allows one, else the call is malformed.
    """

    open: Fence
    name_close: Fence
    key_open: Fence
    key_close: Fence
    value_close: Fence
    close: Fence
    section_open: Fence = ()
    section_close: Fence = ()
    separator: Fence = ()
    text_separator: Fence = ()
    values: Values = "json"
    parallel: bool = True
    loose: bool = True
    key_close_other: Fence = ()
    no_arguments: Fence = ()

    def validate(self, layout: Layout) -> None:
        for name in ("open", "key_open", "key_close", "value_close", "close"):
            if not text_of(getattr(self, name), layout.options, layout.name).strip():
                raise FormatError(
                    f"{layout.name}: XmlCalls.{name}: {getattr(self, name)!r}; expected a fence "
                    "with a tag in it (the calls are read by their tags)"
                )

    def value_text(self, value: Any) -> str:
        """A value as written (see ``values``; ``str`` of ``True`` or ``None`` is Python's
        spelling, what ``value | string`` gives in a template).  With ``"literal"`` a
        private-use, unassigned or astral character inside a container is kept where
        ``str`` escapes it (``\\U0002ebe1``), as the grammar's Python literals take it."""
        if isinstance(value, str):
            return self.string_text(value)
        if self.values == "json" or (self.values == "python" and isinstance(value, (dict, list))):
            return json.dumps(value, ensure_ascii=False)
        if isinstance(value, (dict, list)):
            from ..codecs.python_literals import python_literal as literal

            return literal(value, quote="repr")
        return str(value)

    def string_text(self, value: str) -> str:
        """A string value as written: as it is (a family's subclass may wrap it, and then
        reads it through :attr:`Tags.unwrap` and writes it in Jinja by
        :meth:`jinja_string`)."""
        return value

    def jinja_string(self, out: Template) -> None:
        """The exported template's text for a string ``value`` (see :meth:`string_text`)."""
        out.out("{{- value -}}")

    # ------------------------------------------------------------------ the writer

    def check_call(self, call: ToolCall, index: int, number: int) -> None:
        self.members(call.arguments, index, number)  # (kept for the write that follows)

    def members(self, arguments: str, index: int, number: int) -> tuple[Member, ...]:
        """The arguments (JSON text) of ``messages[index].tool_calls[number]`` as written,
        each a key, the fence after it and the value's text; kept by their text (a
        conversation's calls come back in every later request)."""
        found = self._written.find(arguments)
        if found is MISSING:
            value = arguments_object(arguments, index, number)
            other = self.key_close_other  # (where given, the close says a value's kind)
            found = tuple(
                (
                    key,
                    other if other and not isinstance(i, str) else self.key_close,
                    self.value_text(i),
                )
                for key, i in value.items()
            )
            self._written.keep(arguments, found)
        return found

    @cached_property
    def _written(self) -> Kept[tuple[Member, ...]]:
        return Kept(limit=4096, longest=1 << 14)

    def write_call(self, out: Render, index: int, number: int, call: ToolCall) -> None:
        out.text(call.name, "tool_call", trainable=True)
        out.fence(self.name_close, "tool_call", trainable=True)
        members = self.members(call.arguments, index, number)
        for key, key_close, value in members:
            out.fence(self.key_open, "tool_call", trainable=True)
            out.text(key, "tool_call", trainable=True)
            out.fence(key_close, "tool_call", trainable=True)
            out.text(value, "tool_call", trainable=True)
            out.fence(self.value_close, "tool_call", trainable=True)
        if not members:
            out.fence(self.no_arguments, "tool_call", trainable=True)

    # ------------------------------------------------------------------ the parse table

    def tags(self, table: Table) -> Tags:
        def core(pieces: Fence) -> tuple[str, str, str]:
            text = table.text(pieces)
            stripped = text.strip()
            start = text.find(stripped)
            return text[:start], stripped, text[start + len(stripped) :]

        return Tags(
            name_close=core(self.name_close),
            key_open=core(self.key_open),
            key_close=core(self.key_close),
            key_close_other=core(self.key_close_other) if self.key_close_other else None,
            value_close=core(self.value_close),
            python=self.values in ("python", "literal"),
            loose=self.loose,
            literal=self.values == "literal",
        )

    def rows(self, table: Table) -> None:
        inner = {text for pieces in self.inner_fences() for text in markers_in(pieces)}
        # A close's special token the model writes without the text before it (Seed-OSS's
        # ``</seed:tool_call>`` without ``</function>\n``) is text inside the call, from ids
        # as from text (where the lexer knows only the whole close).
        inner |= {text for text in markers_in(self.close) if text != table.text(self.close)}
        table.state("call.xml", self.call_reader(table, self.tags(table)), "assistant", inner=inner)
        self.section_rows(table, "call.xml", "call.xml")

    def inner_fences(self) -> tuple[Fence, ...]:
        """The fences inside a call: its reader reads their markers as text."""
        return (
            self.name_close,
            self.key_open,
            self.key_close,
            self.key_close_other,
            self.value_close,
        )

    def call_reader(self, table: Table, tags: Tags) -> ReaderFactory:
        """The reader of a call's text, from its ``open`` to its ``close``."""
        return Described("XML call", lambda parser: XmlCallReader(parser, tags))

    # ------------------------------------------------------------------ the Jinja template

    def jinja_call(self, out: Template) -> None:
        out.out("{{- call.function.name -}}")
        out.fence(self.name_close)
        out.out("{%- for key, value in call.function.arguments.items() -%}")
        out.fence(self.key_open)
        out.out("{{- key -}}")
        if self.key_close_other:
            out.fence_if("value is string", self.key_close, self.key_close_other)
        else:
            out.fence(self.key_close)
        out.out("{%- if value is string -%}")
        self.jinja_string(out)
        if self.values == "json":
            out.out("{%- else -%}{{- value | tojson -}}")
        else:  # containers as value_text writes them, other values as Python's str
            container = "value | tojson"
            if self.values == "literal":
                from ..emit.jinja_text import PYTHON_LITERAL_MACROS

                out.macro("python_literal", PYTHON_LITERAL_MACROS)
                container = "python_literal(value, 'repr', 'arguments')"
            out.out("{%- elif value is mapping or (value is iterable and value is not string) -%}")
            out.out(f"{{{{- {container} -}}}}")
            out.out("{%- elif value is none -%}{{- 'None' -}}")
            out.out("{%- else -%}{{- value | string -}}")
        out.out("{%- endif -%}")
        out.fence(self.value_close)
        out.out("{%- endfor -%}")
        if self.no_arguments:
            out.fence_if("not call.function.arguments", self.no_arguments)

    # ------------------------------------------------------------------ the turn grammar

    def grammar(self, turn: Turn) -> None:
        turn.calls = XmlCallSet(self, turn)


# ---------------------------------------------------------------------- reading


@dataclass(frozen=True)
class Tags:
    """The inner fences of a call as (whitespace before, tag, whitespace after)."""

    name_close: tuple[str, str, str]
    key_open: tuple[str, str, str]
    key_close: tuple[str, str, str]
    value_close: tuple[str, str, str]
    python: bool
    loose: bool = False
    key_close_other: tuple[str, str, str] | None = None
    literal: bool = False
    unwrap: tuple[str, str] | None = None
    """A value written between these two is read as the text between them (a wrapper
    :meth:`XmlCalls.string_text` writes: MiniCPM's CDATA)."""

    def finder(self, tag: str) -> re.Pattern[str]:
        """A tag as read: with ``loose``, any whitespace between two of its tags (``>`` then
        ``<``), none included."""
        pattern = _FINDERS.get((tag, self.loose))
        if pattern is None:
            parts = _BETWEEN_TAGS.split(tag) if self.loose else [tag]
            pattern = re.compile(r">\s*<".join(re.escape(part) for part in parts))
            _FINDERS[(tag, self.loose)] = pattern
        return pattern


_BETWEEN_TAGS = re.compile(r">\s*<")
_FINDERS: dict[tuple[str, bool], re.Pattern[str]] = {}


def parameter_types(tool: Tool | None, key: str) -> set[str] | None:
    """The JSON types the schema of ``tool``'s parameter ``key`` allows (None: unknown, any):
    how a tagged parameter's text is read (here and in Kimi K3's untyped arguments)."""
    if tool is None or not isinstance(tool.parameters, Mapping):
        return None
    properties = tool.parameters.get("properties")
    schema = properties.get(key) if isinstance(properties, dict) else None
    return schema_types(schema)


def schema_types(schema: Any) -> set[str] | None:
    """The JSON types a value's schema allows by its ``type`` (an ``enum`` of strings only:
    string), None where it does not say: how a parameter's text is read, and so the value
    the grammar lets a model write."""
    if not isinstance(schema, Mapping):
        return None
    kinds = schema.get("type")
    if isinstance(kinds, str):
        return {kinds}
    if isinstance(kinds, list):
        return {kind for kind in kinds if isinstance(kind, str)}
    if _string_enum(schema) is not None:
        return {"string"}
    return None


def _string_enum(schema: Mapping[str, Any]) -> list[str] | None:
    """The values of an ``enum`` of strings (None: no enum, or one with other values)."""
    values = schema.get("enum")
    if isinstance(values, list) and values and all(isinstance(item, str) for item in values):
        return values
    return None


_PYTHON = {"True": True, "False": False, "None": None}
_JSON_STARTS = frozenset('{["-0123456789tfn')
"""The first characters of a JSON value (json's decoder refuses any other at once)."""


def typed_value(
    text: str, kinds: set[str] | None, python: bool, literal: bool = False
) -> tuple[bool, Any]:
    """``(read, value)``: a parameter's text as its schema types it (``literal``: an object
    or array may be a Python literal)."""
    if kinds is not None and kinds <= {"string"}:
        return True, text
    stripped = text.strip()
    if python and stripped in _PYTHON:
        return True, _PYTHON[stripped]
    # Read once, as a member's value of the arguments (one level in them); text that no
    # JSON value begins as (a word, a name: the usual string parameter) is not JSON, known
    # without the decoder's error.
    if stripped[:1] in _JSON_STARTS:
        value, problem = load_json(stripped, MAX_NESTING - 1)
    else:
        value, problem = None, "not JSON"
    if problem is None:
        return True, value
    if literal and stripped.startswith(("{", "[")):
        # An object or array as a Python literal ({'a': True}), read as the Python call codec
        # reads one (its nesting limit included).
        from ..codecs.python_calls import python_literal_or_none

        found = python_literal_or_none(stripped)
        if isinstance(found, (dict, list)):
            return True, found
    if kinds is None or "string" in kinds:
        return True, text
    return False, None


class XmlCallReader(WholeTextReader):
    """One call's name and parameters, read whole at its close."""

    __slots__ = ("_tags",)
    whole_kind = "whole call"  # see pawlette.engine.whole: read by whole_call when plain

    def __init__(self, parser: Parser, tags: Tags) -> None:
        super().__init__(parser)
        self._tags = tags

    def close(self, marker: str | None, offset: int) -> None:
        parser = self._parser
        text = self._text()
        opening = parser.context(OpenSection).take() + (parser.entered_by or "")
        closing = closing_marker(parser, marker)
        problem, name, arguments = self._read(text) if closing else ("not closed", None, None)
        if problem is not None or name is None or arguments is None:
            raw = opening + text + closing
            where = self._offset if self._chunks else offset
            give_back_call(parser, where, problem, "a name, its parameters, the close", raw)
            return
        written = json.dumps(arguments, ensure_ascii=False)
        parser.emit_call(parser.next_call_index(), parser.new_call_id(), name, written)

    def named_tool(self, written: str) -> tuple[str | None, str, Tool | None]:
        """The call's name (``written``, stripped) and the tool whose schema types its
        arguments; first a problem, when there is no name or the caller's tools have none of
        that name."""
        name = written.strip()
        problem = name_problem(self._parser, name)
        tools = schema_tools(self._parser) if problem is None else ()
        return problem, name, next((item for item in tools if item.name == name), None)

    def whole_call(self, text: str, tools: tuple[Tool, ...]) -> tuple[str, str] | None:
        """The name and arguments (JSON text) of a call whose whole text is ``text``, read
        as :meth:`close` reads it in a completion parsed with ``tools``; None when the
        text is no call (the machine then reads it and says why)."""

        def named(written: str) -> tuple[str | None, str, Tool | None]:
            name = written.strip()
            tool = next((item for item in tools if item.name == name), None)
            known = name and (tool is not None or not tools)
            return (None if known else "no call"), name, tool

        try:
            name, arguments = self._call(text, named)
        except _NoCall:
            return None
        return name, json.dumps(arguments, ensure_ascii=False)

    def _read(self, text: str) -> tuple[str | None, str | None, dict[str, Any] | None]:
        try:
            return None, *self._call(text, self.named_tool)
        except _NoCall as problem:
            return str(problem), None, None

    def _call(
        self, text: str, name_of: Callable[[str], tuple[str | None, str, Tool | None]]
    ) -> tuple[str, dict[str, Any]]:
        """The call's name and arguments (``name_of``: the name's problem, the name and its
        tool, from the name as written), or :class:`_NoCall` saying why it is none."""
        tags = self._tags
        key_open, key_close, value_close = (
            tags.finder(tag[1]) for tag in (tags.key_open, tags.key_close, tags.value_close)
        )
        other = tags.key_close_other
        if tags.name_close[1]:
            name_end = text.find(tags.name_close[1])
            if name_end < 0:
                raise _NoCall("no end of the name")
            position = name_end + len(tags.name_close[1])
        else:  # the name ends where the first parameter (or the call) does (GLM)
            first = key_open.search(text)
            name_end = position = first.start() if first is not None else len(text)
        problem, name, tool = name_of(text[:name_end])
        if problem is not None:
            raise _NoCall(problem)
        arguments: dict[str, Any] = {}
        while opened := key_open.search(text, position):
            if text[position : opened.start()].strip():
                raise _NoCall(f"text {text[position : opened.start()][:40]!r} between parameters")
            named = key_close.search(text, opened.end())
            json_close = False  # the close says the value's kind (string="false")
            if other is not None:
                found = tags.finder(other[1]).search(text, opened.end())
                if found is not None and (named is None or found.start() < named.start()):
                    named, json_close = found, True
            if named is None:
                raise _NoCall("a parameter name without its end")
            key = text[opened.end() : named.start()].strip()
            valued = value_close.search(text, named.end())
            if valued is None:
                raise _NoCall(f"parameter {key!r} without its end")
            after = (other or tags.key_close)[2] if json_close else tags.key_close[2]
            value = text[named.end() : valued.start()]
            value = value.removeprefix(after).removesuffix(tags.value_close[0])
            if tags.unwrap is not None:  # one pair around the whole value, nothing else
                opener, closer = tags.unwrap
                inside = value[len(opener) : len(value) - len(closer)]
                if len(value) >= len(opener + closer) and value == opener + inside + closer:
                    value = inside
            if not key or key in arguments:
                raise _NoCall(f"parameter {key!r} empty or given twice")
            kinds = parameter_types(tool, key)
            if other is not None and not json_close:
                kinds = {"string"}
            elif json_close and kinds is not None and kinds <= {"string"}:
                kinds = None  # the close says JSON: JSON where it is, else the text
            read, arguments[key] = typed_value(value, kinds, tags.python, tags.literal)
            if not read:
                raise _NoCall(f"parameter {key!r}: {value[:40]!r} is not of its schema's type")
            position = valued.end()
        if text[position:].strip():
            raise _NoCall(f"text {text[position:][:40]!r} after the parameters")
        # Each value was checked as read (a member's JSON by json's strict reading, or text,
        # or a word): only a Python literal, read by the Python codec, is checked again as
        # the JSON it becomes.
        if tags.literal:
            problem = arguments_problem(json.dumps(arguments, ensure_ascii=False))
            if problem is not None:
                raise _NoCall(problem)
        return name, arguments


class _NoCall(Exception):
    """What makes a call's text no call (:meth:`XmlCallReader._call`)."""


# ---------------------------------------------------------------------- the grammar


class XmlCallSet(SectionedCalls):
    """The grammar of :class:`XmlCalls`: one call's tags, each value by its schema
    (:meth:`_value`), for concepts whose calls nest such values too (MiniMax-M3's)."""

    def __init__(self, calls: XmlCalls, turn: Turn) -> None:
        super().__init__(calls, turn)
        layout = turn.layout
        self.name_close = text_of(calls.name_close, layout.options, layout.name)
        self._python_values: dict[int, Any] = {}  # a grammar's Python-literal rules, by id
        # A value's node, built once per grammar (its rules are defined once however many
        # places call the tool).
        self._literal_nodes: dict[tuple[int, int, int], Node] = {}

    def _value(
        self, turn: Turn, rules: Rules, number: int, position: int, key: str, schema: Any
    ) -> Node:
        """A parameter's value and the fence after it (a string runs to the first close
        tag: :meth:`_closed_text`)."""
        from ..emit.turn_rules import constrained_text, note_unenforced

        close = turn.nodes(self.calls.value_close)
        allowed = schema_types(schema)
        textual = self.textual(schema)
        enum = _string_enum(schema) if allowed == {"string"} else None
        # A string's keywords (pattern, lengths) hold a declared parameter that is only one.
        plain = allowed == {"string"} and isinstance(schema, Mapping) and position >= 0
        where = _where(number, position, key)
        if enum is not None:  # an enum of strings: one of them, as its text
            return seq(alt(*(Lit(value) for value in enum)), *close)
        if textual and close and isinstance(close[0], MarkerNode):
            # Closed by a special token (GLM's </arg_value>): any text that spells no marker
            # (in Lark under the string's pattern and lengths).
            name = f"XMLSTRING_{number}_{position}"
            constrained = constrained_text(rules, name, where, schema) if plain else None
            if constrained is not None:
                return seq(constrained, *close)
            return text_before(turn.layout, self.calls.value_close, empty=True)
        if textual and all(isinstance(item, Lit) for item in close):
            if plain:
                note_unenforced(rules, where, schema, ("lark", "gbnf"))
            return self._closed_text(turn, rules, self.calls.value_close, "value")
        if self.calls.values == "literal" and (allowed is None or {"object", "array"} & allowed):
            # An object or array as Python's str writes it ({'k': [1, True]}).
            return seq(self._literal_value(turn, rules, number, position, key, schema), *close)
        python = self._python_scalars(schema)
        if python is not None:  # True/False/None as Python writes them (values="python")
            spellings, rest = python
            options: list[Node] = [Lit(spelling) for spelling in spellings]
            if rest is not None:
                options.append(self._json_value(turn, rules, number, position, key, rest))
            return seq(alt(*options), *close)
        return seq(self._json_value(turn, rules, number, position, key, schema), *close)

    @staticmethod
    def textual(schema: Any) -> bool:
        """A value written as its text: a string is, whatever else the schema allows (a
        number or null as JSON): text of a parameter whose types include string reads back
        as the reader types it, so the grammar takes any text there; so is any value of a
        schema that allows any (``{}``)."""
        allowed = schema_types(schema)
        return (allowed is not None and "string" in allowed) or schema in ({}, True)

    def _closed_value(
        self,
        turn: Turn,
        rules: Rules,
        number: int,
        position: int,
        key: str,
        schema: Any,
        free_key: bool | None,
    ) -> Node:
        """The key's close and the value (``free_key``: the key is free text before its
        close).  With ``key_close_other``, a value that may be a string or another type is
        either a string after ``key_close`` or JSON after ``key_close_other``, as written."""
        calls: XmlCalls = self.calls

        def closed(fence: Fence, value_schema: Any) -> Node:
            head = turn.nodes(fence)
            if free_key and calls.key_close_other:
                # A key in an attribute (name="KEY"): no quote in it, so its lexeme ends
                # where the close begins (llguidance's lexer is greedy).
                from ..emit.grammar_ast import Terminal

                rules.lark_extra["XMLKEY"] = '/[^"]+/'
                rules.gbnf_extra["xml-key"] = '[^"]+'
                head = [Terminal("XMLKEY", lark="", gbnf="xml-key"), *head]
            elif free_key:
                head = [self._undeclared_key(turn, rules, fence)]
            return seq(*head, self._value(turn, rules, number, position, key, value_schema))

        allowed = schema_types(schema)
        others = None if allowed is None else allowed - {"string"}
        if calls.key_close_other and self.textual(schema) and (others is None or others):
            kinds = sorted(others or ("array", "boolean", "null", "number", "object"))
            as_json = {**(schema if others else {}), "type": kinds}
            return alt(closed(calls.key_close, schema), closed(calls.key_close_other, as_json))
        # The other close before a JSON value.
        json_value = calls.key_close_other and not self.textual(schema)
        return closed(calls.key_close_other if json_value else calls.key_close, schema)

    @staticmethod
    def _inside_markers(turn: Turn, rules: Rules, close: str) -> tuple[str, ...]:
        """What text inside a call closed by the text ``close`` may not spell: ``close`` and
        the markers the call's reader acts on.  A soft marker with no step out of the call
        is text to the reader, and a marker holding another is left out with the other (the
        same text): leaving those out keeps the terminal small (MiniMax-M2's tools
        instructions, long markers, made llguidance's lexer give up on values with many
        quotes and brackets)."""
        grammar = turn.fmt.grammar if turn.fmt is not None else None
        kept = [
            marker
            for marker in rules.markers
            if grammar is None
            or marker not in grammar.soft
            or ("call.xml", marker) in grammar.steps
        ]
        kept.append(close.strip())
        kept = [marker for marker in kept if not any(o != marker and o in marker for o in kept)]
        return tuple(sorted(set(kept), key=lambda marker: (-len(marker), marker)))

    def _undeclared_key(self, turn: Turn, rules: Rules, fence: Fence) -> Node:
        """An undeclared parameter's name and ``fence`` after it: closed by text (MiniMax-M2's
        ``">``, Qwen3-Coder's and Seed-OSS's ``>``) as :meth:`_closed_text`; closed by a
        marker (GLM's ``</arg_key>``): text, then the marker."""
        close = turn.nodes(fence)
        if not close or not all(isinstance(item, Lit) for item in close):
            return text_before(turn.layout, fence, empty=False)
        return self._closed_text(turn, rules, fence, "key")

    def _closed_text(self, turn: Turn, rules: Rules, fence: Fence, kind: str) -> Node:
        """Text (a ``"value"``, or a ``"key"``: not empty) and the plain-text ``fence`` that
        closes it: in Lark one lazy lexeme of text up to the close (llguidance's lexer is
        greedy, and the close is text the value could otherwise swallow), in GBNF text that
        holds no close, then the close."""
        from ..emit.grammar_ast import Terminal, gbnf_string
        from ..emit.text_language import TextLanguage, define, gbnf_text_rule

        text = text_of(fence, turn.layout.options, turn.layout.name)
        name, variant = f"XML{kind.upper()}", "NE" if kind == "key" else ""
        define(TextLanguage(self._inside_markers(turn, rules, text), escape=False), rules, name)
        closed = f"{name}_{variant} " if variant else f"{name} "
        rules.lark_extra[f"{name}_CLOSED"] = closed + gbnf_string(text)
        rules.lark_extra[f"xml_{kind}[lazy]"] = f"{name}_CLOSED"
        rules.gbnf_extra[f"xml-{kind}"] = f"{gbnf_text_rule(name, variant)} {gbnf_string(text)}"
        return Terminal(f"xml_{kind}", lark="", gbnf=f"xml-{kind}")

    def _literal_value(
        self, turn: Turn, rules: Rules, number: int, position: int, key: str, schema: Any
    ) -> Node:
        """A value as a Python literal under its parameter's schema (``values="literal"``:
        ``True``, ``None``, ``{'k': [1, 2]}``; strings inside in either quote, as the reader
        takes them), the tool's ``$defs`` with it."""
        from ..emit.python_schema import PythonValues, SchemaToPython

        built = self._literal_nodes.get((id(rules), number, position))
        if built is not None:
            return built
        values = self._python_values.get(id(rules))
        if values is None:
            values = self._python_values[id(rules)] = PythonValues(rules, "repr")
        root = turn.tools[number].parameters
        if isinstance(schema, Mapping) and isinstance(root, Mapping):
            carried = {
                key: root[key]
                for key in ("$defs", "definitions")
                if key in root and key not in schema
            }
            schema = {**schema, **carried} if carried else schema
        prefix = f"pyargs_{number}_" + (f"p{position}" if position >= 0 else "extra")
        built = SchemaToPython(values, prefix, _where(number, position, key)).value(schema)
        self._literal_nodes[(id(rules), number, position)] = built
        return built

    def _json_value(
        self, turn: Turn, rules: Rules, number: int, position: int, key: str, schema: Any
    ) -> Node:
        """A value as JSON under its parameter's schema (the tool's ``$defs`` with it)."""
        from ..emit.turn_rules import json_value

        prefix = f"args-{number}-" + (f"p{position}" if position >= 0 else "extra")
        return json_value(
            rules, prefix, _where(number, position, key), schema, turn.tools[number].parameters
        )

    def _python_scalars(self, schema: Any) -> tuple[list[str], Any] | None:
        """With ``values="python"``, a schema whose types include boolean or null: the
        Python spellings of those, and the schema of its other types (None: no other)."""
        if self.calls.values not in ("python", "literal") or not isinstance(schema, Mapping):
            return None
        kinds = schema.get("type")
        listed = [kinds] if isinstance(kinds, str) else kinds
        if not isinstance(listed, list):
            return None
        listed = [kind for kind in listed if isinstance(kind, str)]  # (a malformed one: [[..]])
        if not {"boolean", "null"} & set(listed):
            return None
        spellings = (["True", "False"] if "boolean" in listed else []) + (
            ["None"] if "null" in listed else []
        )
        others = [kind for kind in listed if kind not in ("boolean", "null")]
        return spellings, ({**schema, "type": others} if others else None)

    def items(self, turn: Turn, rules: Rules, number: int) -> list[Node]:
        calls = self.calls
        tool = turn.tools[number]
        parameters = tool.parameters if isinstance(tool.parameters, Mapping) else {}
        # A keyword of the wrong shape is the schema's error (the server's 400), as in the
        # JSON formats' grammars.
        check_shapes(parameters, f"tools[{number}].parameters")
        properties = parameters.get("properties") or {}
        required = {key for key in parameters.get("required") or () if isinstance(key, str)}
        pieces: list[Node] = [
            *turn.nodes(calls.open),
            Lit(tool.name),
            *turn.nodes(calls.name_close),
        ]
        for position, (key, schema) in enumerate(properties.items()):
            parameter = seq(
                *turn.nodes(calls.key_open),
                Lit(key),
                self._closed_value(turn, rules, number, position, key, schema, None),
            )
            pieces.append(parameter if key in required else optional(parameter))
        more = parameters.get("additionalProperties", True)
        if more is not False:  # undeclared parameters (JSON Schema's default), after these
            extra_schema = {} if more is True else more
            extra = seq(
                *turn.nodes(calls.key_open),
                self._closed_value(turn, rules, number, -1, "", extra_schema, True),
            )
            pieces.append(Repeat(extra))
        if calls.no_arguments:  # written for a call without arguments, read as layout
            pieces.append(optional(seq(*turn.nodes(calls.no_arguments))))
        pieces += turn.nodes(calls.close)
        return pieces

    def prefix(self, name: str | None) -> str:
        if name is None:
            return self.lead
        return self.lead + name + self.name_close


def _where(number: int, position: int, key: str) -> str:
    """The path of a parameter's schema (``position`` -1: the undeclared parameters')."""
    if position < 0:
        return f"tools[{number}].parameters.additionalProperties"
    return f"tools[{number}].parameters.properties.{key}"
