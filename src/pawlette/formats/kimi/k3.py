"""Kimi K3's layout and its own concepts: tagged turns (``<|open|>TAG attr="value"<|sep|>`` …
``<|close|>TAG<|sep|>``), tools as key-sorted JSON in a turn of their own, a thinking-effort
system turn, reasoning and response channels, calls with one typed tag per argument, and
results named by the call they answer and numbered in their run.

The layout (every ``<|…|>`` a special token; tags and attributes plain text) is described in
:mod:`pawlette.formats.kimi`; this module builds it for :func:`pawlette.formats.kimi.layout`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pawlette.declare import (
    CallTurnEnd,
    Concept,
    Fence,
    Frame,
    Ignored,
    Marker,
    Reasoning,
    Results,
    ToolsBlock,
    fence,
)
from pawlette.declare.calls import arguments_object, check_call_name
from pawlette.declare.grammar import SectionedCalls, text_before
from pawlette.declare.readers import (
    BetweenCallsReader,
    OpenSection,
    ResultReader,
    SectionReader,
    give_back_call,
    schema_tools,
)
from pawlette.declare.results import ResultNameReader
from pawlette.declare.table import begin
from pawlette.declare.xml_calls import parameter_types, schema_types, typed_value
from pawlette.emit.grammar_ast import (
    CharClass,
    JsonSchemaValue,
    Lit,
    Node,
    Repeat,
    Rules,
    alt,
    optional,
    seq,
)
from pawlette.emit.schema_walk import check_shapes
from pawlette.emit.turn_rules import json_value
from pawlette.engine.call_arguments import arguments_problem, load_json
from pawlette.engine.readers import WholeTextReader
from pawlette.errors import FormatError, RequestError
from pawlette.types import MetadataItem, Tool, ToolCallDelta, ToolCallEnd, ToolCallStart

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.layout import Layout
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render

OPEN, SEP, CLOSE = Marker("<|open|>"), Marker("<|sep|>"), Marker("<|close|>")
END_OF_MESSAGE = Marker("<|end_of_msg|>")
IMAGE = "<|kimi_image_placeholder|>"  # the template's image stand-in, never written here

EFFORTS = ("low", "high", "max")  # what the template accepts (its text also names medium)


def escaped(value: str) -> str:
    """An attribute's value as the template's ``escape_attr`` writes it."""
    return value.replace("&", "&amp;").replace('"', "&quot;")


def unescaped(value: str) -> str:
    return value.replace("&quot;", '"').replace("&amp;", "&")


def opening(tag: str, *attributes: tuple[str, str]) -> Fence:
    """``<|open|>TAG key="value"…<|sep|>`` (the template's ``open_tag``)."""
    text = tag + "".join(f' {key}="{escaped(value)}"' for key, value in attributes)
    return fence(OPEN, text, SEP)


def closing(tag: str) -> Fence:
    """``<|close|>TAG<|sep|>`` (the template's ``close_tag``)."""
    return fence(CLOSE, tag, SEP)


MESSAGE_END = fence(*closing("message"), END_OF_MESSAGE)


def sorted_json(value: Any) -> str:
    """JSON as the template's ``json_sorted`` writes it: every mapping's keys in Jinja's
    ``dictsort`` order (case-insensitive, stable), no spaces after ``,`` and ``:``, arrays
    in order, non-ASCII kept."""
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda item: _dictsort_key(item[0]))
        inner = ",".join(
            json.dumps(key, ensure_ascii=False) + ":" + sorted_json(item) for key, item in items
        )
        return "{" + inner + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(sorted_json(item) for item in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _dictsort_key(key: Any) -> Any:
    return key.lower() if isinstance(key, str) else key


def value_type(value: Any) -> str:
    """The template's ``xtml_type``: boolean before number (a bool is a number in Python)."""
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    return "array"


# ---------------------------------------------------------------------- tools and effort


@dataclass(frozen=True)
class SortedToolsBlock(ToolsBlock):
    """:class:`pawlette.declare.ToolsBlock` whose JSON is the template's ``json_sorted``."""

    def dump(self, value: Any) -> str:
        return sorted_json(value)

    def jinja_block(self, out: Template, *, separated: bool = False) -> None:
        out.macro("json_sorted", _JSON_SORTED)
        out.fence(self.open)
        out.out("{{- json_sorted(tools) -}}")
        out.fence(self.close)


_JSON_SORTED = """
{%- macro json_sorted(value) -%}
{%- if value is mapping -%}{{- '{' -}}
{%- for key, item in value | dictsort -%}{%- if not loop.first -%}{{- ',' -}}{%- endif -%}
{{- key | tojson -}}{{- ':' -}}{{- json_sorted(item) -}}{%- endfor -%}{{- '}' -}}
{%- elif value is string or value is number or value is boolean or value is none -%}
{{- value | tojson -}}
{%- else -%}{{- '[' -}}{%- for item in value -%}{%- if not loop.first -%}{{- ',' -}}{%- endif -%}
{{- json_sorted(item) -}}{%- endfor -%}{{- ']' -}}
{%- endif -%}
{%- endmacro -%}
"""
_ESCAPE = " | string | replace('&', '&amp;') | replace('\"', '&quot;')"
"""The template's ``escape_attr``, as a Jinja filter chain."""


@dataclass(frozen=True)
class FixedSystemTurn(Concept):
    """A system turn the template writes at the start of every conversation, after the
    tools (K3's ``thinking-effort`` turn): written as layout, read as layout (no message)."""

    text: Fence

    def write_start(self, out: Render) -> None:
        out.at(None, -1)
        out.fence(self.text, "header")

    def rows(self, table: Table) -> None:
        table.on("outside", table.text(self.text), "outside")

    def jinja_start(self, out: Template) -> None:
        out.fence(self.text)


# ---------------------------------------------------------------------- names


_NAMED = frozenset({"system", "user", "assistant"})


@dataclass(frozen=True)
class NameAttributes(Concept):
    """A message's ``name`` as an attribute of its turn's tag:
    ``<|open|>message role="user" name="alice"<|sep|>`` (system, user and assistant turns;
    the template's ``escape_attr`` applied), read back as the message's ``name``."""

    handles: ClassVar[frozenset[str]] = frozenset({"name"})

    def turn_roles(self) -> frozenset[str]:
        return _NAMED

    def check(self, out: Render) -> None:
        out.handles("name")

    def turn_open(self, out: Render, index: int) -> Fence | None:
        role = out.role
        if index < 0 or index >= len(out.messages) or role not in _NAMED:
            return None
        name = out.messages[index].name
        if not name:
            return None
        # The frame's open fence is the message tag (3 pieces), then what follows it (the
        # response channel's tag with thinking off).
        rest = out.layout.frames[role].open[3:]
        return fence(*opening("message", ("role", role), ("name", name)), *rest)

    def rows(self, table: Table) -> None:
        for role in sorted(_NAMED & set(table.layout.frames)):
            table.fields.setdefault(role, {})["name"] = "name"
            state = table.state(f"{role}.name", NameReader, role)
            head = fence(OPEN, f'message role="{role}" name="')
            table.on("outside", table.text(head), state, begin(role))
            rest = table.layout.frames[role].open[3:]
            # The quote stays the name reader's: ``"<|sep|>`` as one marker would be read
            # everywhere, inside the calls' tags too.
            table.on(state, table.text(fence(SEP, *rest)), table.first_state[role])

    def jinja_open(self, out: Template, role: str) -> bool:
        if out.prompt or role not in _NAMED:
            return False
        frame = out.layout.frames[role].open
        out.out("{%- if message is not none and message.name is defined and message.name -%}")
        out.literal(f'<|open|>message role="{role}" name="')
        out.out("{{- message.name" + _ESCAPE + " -}}")
        out.fence(fence('"', SEP, *frame[3:]))
        out.out("{%- else -%}")
        out.fence(frame)
        out.out("{%- endif -%}")
        return True


class NameReader(WholeTextReader):
    """A turn's ``name`` attribute and its closing quote (the name is what precedes it)."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        if not text.endswith('"'):
            self._parser.malformed(
                self._offset, f"name attribute {text[:40]!r}", "a name, then '\"'", text
            )
        self._parser.emit(MetadataItem("name", unescaped(text.removesuffix('"'))))


# ---------------------------------------------------------------------- reasoning


@dataclass(frozen=True)
class BlankReasoning(Reasoning):
    """:class:`pawlette.declare.Reasoning` whose text is written only when it is not blank
    (the template's ``reasoning_content|trim`` test); blank reasoning gets the ``absent``
    block, a recorded loss."""

    def written(self, out: Render, index: int) -> bool:
        reasoning = out.messages[index].reasoning
        return bool(reasoning and reasoning.strip())

    def check(self, out: Render) -> None:
        # Every turn keeps its reasoning (``keep="all"``): a blank text is the only loss.
        out.handles("reasoning")
        for index, message in enumerate(out.messages):
            reasoning = message.reasoning
            if message.role == "assistant" and reasoning and not reasoning.strip():
                out.lose(f"messages[{index}].reasoning_content", "blank: not written")

    def _condition(self, out: Template) -> str:
        given = "message.reasoning_content is defined and message.reasoning_content is not none"
        return f"({given} and message.reasoning_content | trim)"


# ---------------------------------------------------------------------- calls


CALL_OPEN = fence(OPEN, "call")
CALL_CLOSE = closing("call")
CALL_TOOL = fence(OPEN, 'call tool="')
_ATTRIBUTE = re.compile(r'\s*([A-Za-z_][\w-]*)\s*=\s*"([^"]*)"')


@dataclass(frozen=True)
class TaggedCalls(Concept):
    """K3's calls, after the response channel::

        <|close|>response<|sep|><|open|>tools<|sep|>
        <|open|>call tool="NAME" index="1"<|sep|>
        <|open|>argument key="KEY" type="TYPE"<|sep|>VALUE<|close|>argument<|sep|>
        <|close|>call<|sep|><|close|>tools<|sep|>

    TYPE is the value's JSON type (``boolean``, ``null``, ``number``, ``string``,
    ``object``, ``array``); a string is written as it is, any other value as JSON.  Reading
    types each value by its ``type`` attribute (without one, by the tool's schema), takes a
    ``<|open|>json type="object"<|sep|>{...}<|close|>json<|sep|>`` block as the whole
    arguments, and unescapes the attributes' ``&quot;`` and ``&amp;``.
    """

    section_open: Fence
    section_close: Fence

    handles: ClassVar[frozenset[str]] = frozenset({"calls"})

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    def check(self, out: Render) -> None:
        out.handles("calls")
        for index, message in enumerate(out.messages):
            if message.role != "assistant" or not message.tool_calls:
                continue
            for number, call in enumerate(message.tool_calls):
                check_call_name(call.name, index, number)
                arguments_object(call.arguments, index, number)

    def write_closing(self, out: Render, index: int) -> None:
        if out.role != "assistant" or index < 0 or not out.messages[index].tool_calls:
            return
        out.fence(self.section_open, "tool_call", trainable=True)
        for number, call in enumerate(out.messages[index].tool_calls):
            head = opening("call", ("tool", call.name), ("index", str(number + 1)))
            out.fence(head, "tool_call", trainable=True)
            for key, value in arguments_object(call.arguments, index, number).items():
                tag = opening("argument", ("key", key), ("type", value_type(value)))
                out.fence(tag, "tool_call", trainable=True)
                text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                out.text(text, "tool_call", trainable=True)
                out.fence(closing("argument"), "tool_call", trainable=True)
            out.fence(CALL_CLOSE, "tool_call", trainable=True)
        out.fence(self.section_close, "tool_call", trainable=True)

    def jinja_setup(self, out: Template) -> None:
        out.object_arguments = True

    def jinja_closing(self, out: Template, role: str) -> None:
        if role != "assistant":
            return
        out.out("{%- if message.tool_calls is defined and message.tool_calls -%}")
        out.fence(self.section_open)
        out.out("{%- for call in message.tool_calls -%}")
        out.literal('<|open|>call tool="')
        out.out("{{- call.function.name" + _ESCAPE + " -}}")
        out.literal('" index="')
        out.out("{{- loop.index | string -}}")
        out.literal('"<|sep|>')
        out.out("{%- for key, value in call.function.arguments.items() -%}")
        out.literal('<|open|>argument key="')
        out.out("{{- key" + _ESCAPE + " -}}")
        out.literal('" type="')
        out.out(
            "{%- if value is boolean -%}{{- 'boolean' -}}{%- elif value is none -%}{{- 'null' -}}"
            "{%- elif value is number -%}{{- 'number' -}}{%- elif value is string -%}"
            "{{- 'string' -}}{%- elif value is mapping -%}{{- 'object' -}}"
            "{%- else -%}{{- 'array' -}}{%- endif -%}"
        )
        out.literal('"<|sep|>')
        out.out("{%- if value is string -%}{{- value -}}{%- else -%}{{- value | tojson -}}")
        out.out("{%- endif -%}")
        out.fence(closing("argument"))
        out.out("{%- endfor -%}")
        out.fence(CALL_CLOSE)
        out.out("{%- endfor -%}")
        out.fence(self.section_close)
        out.out("{%- endif -%}")

    def grammar(self, turn: Turn) -> None:
        turn.calls = _TaggedCallSet(self, turn)

    def rows(self, table: Table) -> None:
        inner = {OPEN.text, SEP.text, CLOSE.text}
        table.state("call.tagged", TaggedCallReader, "assistant", inner=inner)
        between = "assistant.after_call"
        table.state(between, BetweenCallsReader, "assistant")
        table.calls_open([table.text(self.section_open)], "assistant.calls")
        table.state("assistant.calls", SectionReader, "assistant")
        table.on("assistant.calls", table.text(CALL_OPEN), "call.tagged")
        table.on("call.tagged", table.text(CALL_CLOSE), between)
        table.on(between, table.text(CALL_OPEN), "call.tagged")
        table.state("assistant.after_calls", BetweenCallsReader, "assistant", ends=True)
        table.on(between, table.text(self.section_close), "assistant.after_calls")


@dataclass(frozen=True)
class _Shape:
    """The calls' fences as :class:`pawlette.declare.grammar.SectionedCalls` reads them."""

    section_open: Fence
    section_close: Fence
    open: Fence = CALL_TOOL
    separator: Fence = ()
    text_separator: Fence = ()
    parallel: bool = True
    content: str = "written"


# A value's type attribute by the JSON Schema type its parameter declares.
_ATTRIBUTE_TYPES = {
    "integer": "number",
    "number": "number",
    "boolean": "boolean",
    "null": "null",
    "object": "object",
    "array": "array",
}


class _TaggedCallSet(SectionedCalls):
    """The turn grammar of :class:`TaggedCalls`: per call the tool's name, its number, and
    its declared parameters in order (the required ones always), each with the type
    attribute its schema gives and a value of that type.  The call's number is any number
    (the grammar does not count); the forced prefix of a named choice ends before it."""

    def __init__(self, calls: TaggedCalls, turn: Turn) -> None:
        super().__init__(_Shape(calls.section_open, calls.section_close), turn)
        # The calls' section opens with <|close|>, which also begins a turn's plain end: no
        # lazy trigger (a lazy grammar would force calls on every end).
        self.trigger = None

    def _value(self, turn: Turn, rules: Rules, number: int, key: str, schema: Any) -> Node:
        close = turn.nodes(closing("argument"))
        separator = turn.nodes(fence(SEP))
        kinds = schema_types(schema)
        enum = schema.get("enum") if isinstance(schema, dict) else None
        options: list[Node] = []
        if kinds is None or "string" in kinds:
            if kinds == {"string"} and isinstance(enum, list) and enum:
                text: Node = alt(*(Lit(value) for value in enum if isinstance(value, str)))
                options.append(seq(Lit('string"'), *separator, text, *close))
            else:
                body = text_before(turn.layout, closing("argument"), empty=True)
                options.append(seq(Lit('string"'), *separator, body))
        root = turn.tools[number].parameters
        for kind in sorted((kinds or set()) - {"string"}):
            attribute = _ATTRIBUTE_TYPES.get(kind)
            if attribute is None:
                continue
            typed = {**schema, "type": kind} if isinstance(schema, dict) else schema
            where = f"tools[{number}].parameters.properties.{key}"
            value = json_value(rules, f"args-{number}-{key}-{kind}", where, typed, root)
            options.append(
                seq(
                    Lit(attribute + '"'),
                    *separator,
                    JsonSchemaValue(value.schema, value.gbnf),
                    *close,
                )
            )
        return alt(*options)

    def items(self, turn: Turn, rules: Rules, number: int) -> list[Node]:
        tool = turn.tools[number]
        parameters = tool.parameters if isinstance(tool.parameters, dict) else {}
        # A keyword of the wrong shape is the schema's error (the server's 400), never a crash.
        check_shapes(parameters, f"tools[{number}].parameters")
        properties = parameters.get("properties") or {}
        listed = parameters.get("required") or []
        required = {key for key in listed if isinstance(key, str)}
        digits = Repeat(CharClass("0123456789"), 1, None)
        pieces: list[Node] = [
            *turn.nodes(self.calls.open),
            Lit(escaped(tool.name) + '" index="'),
            digits,
            Lit('"'),
            *turn.nodes(fence(SEP)),
        ]
        for key, schema in properties.items():
            argument = seq(
                *turn.nodes(fence(OPEN, f'argument key="{escaped(key)}" type="')),
                self._value(turn, rules, number, key, schema),
            )
            pieces.append(argument if key in required else optional(argument))
        pieces += turn.nodes(CALL_CLOSE)
        return pieces

    def prefix(self, name: str | None) -> str:
        if name is None:
            return self.lead
        return self.lead + escaped(name) + '" index="'


def _attributes(text: str) -> dict[str, str] | None:
    """``key="value"`` pairs (unescaped); None where ``text`` holds anything else."""
    found: dict[str, str] = {}
    position = 0
    while position < len(text):
        match = _ATTRIBUTE.match(text, position)
        if match is None:
            return None if text[position:].strip() else found
        found[match.group(1)] = unescaped(match.group(2))
        position = match.end()
    return found


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "boolean": (bool,),
    "null": (type(None),),
    "number": (int, float),
    "object": (dict,),
    "array": (list,),
}


def read_call(
    text: str, tools: Sequence[Tool], schemas: Sequence[Tool]
) -> tuple[str | None, str | None, dict[str, Any] | None]:
    """``(problem, name, arguments)`` of a call's text after ``<|open|>call``."""
    sep, close = SEP.text, CLOSE.text
    head, found, rest = text.partition(sep)
    attributes = _attributes(head) if found else None
    if attributes is None or not attributes.get("tool", "").strip():
        return "no tool attribute in the call's tag", None, None
    name = attributes["tool"].strip()
    if tools and all(tool.name != name for tool in tools):
        return f"no tool named {name!r}", None, None
    tool = next((item for item in schemas if item.name == name), None)
    arguments: dict[str, Any] = {}
    position = 0
    while rest[position:].strip():
        position += len(rest[position:]) - len(rest[position:].lstrip())
        tag = next(
            (word for word in ("argument", "json") if rest.startswith(OPEN.text + word, position)),
            None,
        )
        if tag is None:
            return f"text {rest[position:][:40]!r} where an argument opens", None, None
        start = position + len(OPEN.text + tag)
        head_end = rest.find(sep, start)
        end_tag = close + tag + sep
        value_end = rest.find(end_tag, head_end + 1) if head_end >= 0 else -1
        found_attributes = _attributes(rest[start:head_end]) if head_end >= 0 else None
        if found_attributes is None or value_end < 0:
            return f"an {tag} tag without its end", None, None
        value = rest[head_end + len(sep) : value_end]
        position = value_end + len(end_tag)
        if tag == "json":
            problem = arguments_problem(value.strip() or "{}")
            if problem is not None or arguments:
                return problem or "a json block beside arguments", None, None
            arguments = json.loads(value.strip() or "{}")
            continue
        key = found_attributes.get("key", "")
        if not key or key in arguments:
            return f"argument {key!r} empty or given twice", None, None
        kind = found_attributes.get("type")
        if kind == "string":
            arguments[key] = value
        elif kind in _JSON_TYPES:
            typed, problem = load_json(value)  # (strict and nested at most 100 deep)
            if problem is not None:
                return f"argument {key!r}: {value[:40]!r} is not JSON of type {kind}", None, None
            if not isinstance(typed, _JSON_TYPES[kind]) or (
                kind == "number" and isinstance(typed, bool)
            ):
                return f"argument {key!r}: {value[:40]!r} is not of type {kind}", None, None
            arguments[key] = typed
        else:  # no type (or an unknown one): the schema types it, as other tagged calls
            read, typed = typed_value(value, parameter_types(tool, key), False)
            if not read:
                return f"argument {key!r}: {value[:40]!r} is not of its schema's type", None, None
            arguments[key] = typed
    problem = arguments_problem(json.dumps(arguments, ensure_ascii=False))
    if problem is not None:
        return problem, None, None
    return None, name, arguments


class TaggedCallReader(WholeTextReader):
    """One call, read whole at its ``<|close|>call<|sep|>``."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        parser = self._parser
        text = self._text()
        opening_text = parser.context(OpenSection).take() + (parser.entered_by or "")
        closes = parser.grammar.steps.get((parser.state.name, marker or ""))
        closed = closes is not None and closes.target == "assistant.after_call"
        problem, name, arguments = (
            read_call(text, parser.tools, schema_tools(parser))
            if closed
            else ("not closed", None, None)
        )
        if problem is not None or name is None or arguments is None:
            raw = opening_text + text + (marker if closed and marker else "")
            where = self._offset if self._chunks else offset
            give_back_call(parser, where, problem, "a tool, its arguments, the close", raw)
            return
        index = parser.next_call_index()
        parser.emit(ToolCallStart(index, parser.new_call_id(), name))
        parser.emit(ToolCallDelta(index, json.dumps(arguments, ensure_ascii=False)))
        parser.emit(ToolCallEnd(index))


# ---------------------------------------------------------------------- results


@dataclass(frozen=True)
class NamedResults(Results):
    """Each tool message a turn ``<|open|>message role="tool" tool="NAME" index="K"<|sep|>``
    + text + the frame's end, as the template writes a run of results after an assistant
    turn: when every result's ``tool_call_id`` is the id of a call of the last assistant
    turn, in the calls' order, each named by its call; otherwise in the messages' order,
    named by the message's ``name``, else by the call at the same position.  K counts the
    results from 1 after each assistant turn.  Reading skips the name and the number (the
    calls name the tools; the fold pairs results with calls by position)."""

    head_open: Fence = ()

    handles: ClassVar[frozenset[str]] = frozenset({"tool_name"})

    def validate(self, layout: Layout) -> None:
        if not self.head_open:
            raise FormatError(f"{layout.name}: NamedResults.head_open: empty; expected a fence")

    def check(self, out: Render) -> None:
        out.handles("tool_name")
        for index, message in enumerate(out.messages):
            if message.role != "tool" or index != _run_start(out, index):
                continue
            order, names = _run(out, index)
            if any(name is None for name in names):
                where = next(n for n, name in zip(order, names, strict=True) if name is None)
                raise RequestError(
                    f"messages[{where}].name",
                    "no name and no call answered by position or id",
                    "a tool name: the template names each result",
                )
            if order != sorted(order):
                out.lose(f"messages[{index}]", "results written in the order of their calls")

    def write_message(self, out: Render, index: int) -> None:
        if index != _run_start(out, index):
            return  # written with the first of its run
        order, names = _run(out, index)
        frame = out.frame("tool")
        base = sum(
            1
            for number in range(_last_assistant(out, index) + 1, index)
            if out.messages[number].role == "tool"
        )
        for number, (position, name) in enumerate(zip(order, names, strict=True)):
            out.role, out.index = "tool", position
            out.at("tool", position)
            head = opening(
                "message", ("role", "tool"), ("tool", name or ""), ("index", str(base + number + 1))
            )
            out.fence(head, "header")
            out.text(out.message_text(position), "tool_result")
            out.fence(frame.end, "close")
        out.previous = "tool"

    def rows(self, table: Table) -> None:
        table.state("tool.name", ResultNameReader, "tool")
        table.on("outside", table.text(self.head_open), "tool.name", begin("tool"))
        table.state("tool.item", ResultReader, "tool", ends=True)
        table.on("tool.name", table.text(fence(SEP)), "tool.item")

    def jinja_message(self, out: Template, role: str) -> None:
        end = out.layout.frames["tool"].end
        out.out('{%- if index == 0 or messages[index - 1].role != "tool" -%}')
        out.out("{%- set run = namespace(indexes=[], open=true, calls=[], before=0, ids=[]) -%}")
        out.out("{%- set run.matched = true -%}{%- set run.seen = [] -%}")
        out.out("{%- for earlier in messages[:index] -%}")
        out.out('{%- if earlier.role == "assistant" -%}{%- set run.before = 0 -%}')
        out.out(
            "{%- set run.calls = earlier.tool_calls if earlier.tool_calls is defined and "
            "earlier.tool_calls else [] -%}"
        )
        out.out('{%- elif earlier.role == "tool" -%}{%- set run.before = run.before + 1 -%}')
        out.out("{%- endif -%}{%- endfor -%}")
        out.out("{%- for candidate in messages[index:] -%}")
        out.out('{%- if run.open and candidate.role == "tool" -%}')
        out.out("{%- set run.indexes = run.indexes + [index + loop.index0] -%}")
        out.out("{%- else -%}{%- set run.open = false -%}{%- endif -%}{%- endfor -%}")
        out.out("{%- for call in run.calls -%}")
        out.out("{%- if call.id is defined and call.id is not none -%}")
        out.out("{%- set run.ids = run.ids + [call.id] -%}{%- endif -%}{%- endfor -%}")
        out.out("{%- set run.matched = run.calls | length > 0 -%}")
        out.out("{%- for number in run.indexes -%}")
        out.out(
            "{%- if not (messages[number].tool_call_id is defined and "
            "messages[number].tool_call_id in run.ids) -%}"
        )
        out.out("{%- set run.matched = false -%}{%- endif -%}{%- endfor -%}")
        out.out("{%- set run.number = run.before -%}")
        out.out("{%- if run.matched -%}")
        out.out("{%- for call in run.calls -%}")
        out.out("{%- if call.id is defined and call.id is not none and call.id not in run.seen -%}")
        out.out("{%- set run.seen = run.seen + [call.id] -%}")
        out.out("{%- for number in run.indexes -%}")
        out.out("{%- if messages[number].tool_call_id == call.id -%}")
        self._jinja_result(out, "call.function.name", end)
        out.out("{%- endif -%}{%- endfor -%}{%- endif -%}{%- endfor -%}")
        out.out("{%- else -%}")
        out.out("{%- for number in run.indexes -%}")
        out.out("{%- set position = run.before + loop.index0 -%}")
        out.out(
            "{%- if messages[number].name is defined and messages[number].name is not none -%}"
            "{%- set result_name = messages[number].name -%}"
            "{%- elif position < run.calls | length -%}"
            "{%- set result_name = run.calls[position].function.name -%}"
            "{%- else -%}{%- set result_name = none -%}{%- endif -%}"
        )
        out.raise_if(
            "result_name is none",
            "messages: a tool result with no name and no call answered by position or id;"
            " expected a tool name: the template names each result",
        )
        self._jinja_result(out, "result_name", end)
        out.out("{%- endfor -%}")
        out.out("{%- endif -%}")
        out.out("{%- endif -%}")
        out.out('{%- set ns.previous = "tool" -%}')

    @staticmethod
    def _jinja_result(out: Template, name: str, end: Fence) -> None:
        out.literal('<|open|>message role="tool" tool="')
        out.out("{{- " + name + _ESCAPE + " -}}")
        out.literal('" index="')
        out.out("{{- (run.number + 1) | string -}}{%- set run.number = run.number + 1 -%}")
        out.literal('"<|sep|>')
        out.text("messages[number]", "number")
        out.fence(end)


def _run_start(out: Render, index: int) -> int:
    start = index
    while start > 0 and out.messages[start - 1].role == "tool":
        start -= 1
    return start


def _last_assistant(out: Render, index: int) -> int:
    for number in range(index - 1, -1, -1):
        if out.messages[number].role == "assistant":
            return number
    return -1


def _run(out: Render, start: int) -> tuple[list[int], list[str | None]]:
    """The run of tool messages from ``start``: their indices in written order, and the
    name each is written with (None: none the template finds)."""
    end = start
    while end < len(out.messages) and out.messages[end].role == "tool":
        end += 1
    run = list(range(start, end))
    assistant = _last_assistant(out, start)
    calls = list(out.messages[assistant].tool_calls or ()) if assistant >= 0 else []
    ids = {call.id for call in calls if call.id is not None}
    if run and calls and all(out.messages[n].tool_call_id in ids for n in run):
        order: list[int] = []
        names: list[str | None] = []
        seen: set[str] = set()
        for call in calls:
            if call.id is None or call.id in seen:
                continue
            seen.add(call.id)
            for number in run:
                if out.messages[number].tool_call_id == call.id:
                    order.append(number)
                    names.append(call.name)
        return order, names
    # Each result counts its position from the first after the assistant turn (the
    # template's tool_index is not reset by other turns between).
    first = sum(1 for n in range(assistant + 1, start) if out.messages[n].role == "tool")
    found: list[str | None] = []
    for offset, number in enumerate(run):
        name = out.messages[number].name
        if name is None and first + offset < len(calls):
            name = calls[first + offset].name
        found.append(name)
    return run, found


# ---------------------------------------------------------------------- the layout


def effort_turn(effort: str) -> Fence:
    body = (
        "`thinking_effort` guides on how much to think in your thinking channel (not including"
        " the response channel), supported values include `low`, `medium`, `high`, and `max`."
        f"\nNow the system is invoked with `thinking_effort={effort}`."
    )
    return fence(
        *opening("message", ("role", "system"), ("type", "thinking-effort")), body, *MESSAGE_END
    )


TOOLS_INTRO = "# Tools\nHere are the available tools, described in JSONSchema.\n\n```json\n"


def parts(thinking: bool, effort: str | None) -> tuple[dict[str, Frame], list[Concept]]:
    """K3's frames and concepts, with thinking on or off and the thinking effort."""
    if effort is not None and effort not in EFFORTS:
        raise FormatError(
            f"kimi: KimiOptions.thinking_effort: {effort!r}; expected one of "
            + ", ".join(EFFORTS)
            + " or None"
        )
    response = opening("response")
    content_end = fence(*closing("response"), *MESSAGE_END)
    assistant_open = opening("message", ("role", "assistant"))
    frames = {
        "system": Frame(open=opening("message", ("role", "system")), end=MESSAGE_END),
        "user": Frame(open=opening("message", ("role", "user")), end=MESSAGE_END),
        "assistant": Frame(
            open=assistant_open if thinking else fence(*assistant_open, *response),
            end=content_end,
            also_end=(MESSAGE_END,),
        ),
        "tool": Frame(open=opening("message", ("role", "tool")), end=MESSAGE_END),
    }
    concepts: list[Concept] = [
        SortedToolsBlock(
            place="own_turn",
            open=fence(
                *opening("message", ("role", "system"), ("type", "tool-declare")), TOOLS_INTRO
            ),
            close=fence("\n```", *MESSAGE_END),
            array=True,
        ),
    ]
    if thinking and effort is not None:
        concepts.append(FixedSystemTurn(effort_turn(effort)))
    concepts.append(NameAttributes())
    think = opening("think")
    think_end = fence(*closing("think"), *response)
    if thinking:
        concepts.append(
            BlankReasoning(
                open=think, close=think_end, absent=fence(*think, *think_end), prompt="open"
            )
        )
    else:
        concepts.append(Ignored(("reasoning",)))
    concepts += [
        TaggedCalls(
            section_open=fence(*closing("response"), *opening("tools")),
            section_close=closing("tools"),
        ),
        CallTurnEnd(end=MESSAGE_END),
        NamedResults(head_open=fence(OPEN, 'message role="tool" tool="')),
    ]
    return frames, concepts


__all__ = [
    "BlankReasoning",
    "FixedSystemTurn",
    "NameAttributes",
    "NamedResults",
    "SortedToolsBlock",
    "TaggedCalls",
    "parts",
    "read_call",
    "sorted_json",
]
