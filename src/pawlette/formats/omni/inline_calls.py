"""Calls written inline in a turn, and results written inside the same turn (omni).

A call is ``<start>name<arguments>{json}<close>``, on its own line (the newline before
``<start>`` is the call's).  A *function* call streams its arguments and stops the model at
``<close>``; in a conversation its result follows inline, ``\\n{result}\\n<result_end>\\n``,
as a tool message, and the same assistant turn resumes after it (an *in-turn result*).  An
*action* (``result_end`` None) is fire and forget: a content part, generation goes on.  When
the parser knows the tools, a name outside those of the call's kind is no call: the block,
as written, is content after a warning (strict: a ParseError), decided at ``<arguments>``,
before the call begins (streamed, it never begins).

Its share of each interpreter is here: the writer pieces (:func:`write_call`,
:func:`write_result`), the readers (name, arguments, inline result), the Jinja macros
(:data:`JINJA`) and the grammar items (:func:`grammar_items`).
"""

# ruff: noqa: E501  (Jinja source: one tag per line reads better than wrapped tags)

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Literal

from ...declare.pieces import Marker
from ...emit.grammar_ast import Lit, Node, Rules
from ...emit.grammar_ast import Marker as MarkerNode
from ...emit.turn_rules import json_arguments
from ...engine import rows
from ...engine.call_scanner import NO_TOOL_NAMED, offered_tools
from ...engine.call_text import ObjectText
from ...engine.lexer import escape_text
from ...engine.machine import Parser, ReaderFactory
from ...engine.rows import Row
from ...engine.writer import Writer
from ...errors import RequestError
from ...format import Format
from ...types import (
    ActionPart,
    MetadataItem,
    PartAdded,
    TextDelta,
    Tool,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from .spans import (
    EdgeNewlines,
    LazyMessage,
    OpenBlocks,
    continue_block,
    fail,
    json_object,
    open_block,
    text_reader,
)


@dataclass(frozen=True)
class InlineCall:
    """``<start>name<arguments>{json}<close>`` and, for functions in a conversation,
    ``result<result_end>``: one call whose result (if any) is written inline.

    ``kind`` is ``"function"`` (a tool call: the arguments stream; generation stops at
    ``close``) or ``"action"`` (fire and forget: an :class:`ActionPart` at ``close``).  When
    the parser knows the tools, a name outside those of this kind is no call (its text, with
    a warning: :func:`unknown_name`).
    """

    kind: Literal["function", "action"]
    start: Marker
    arguments: Marker
    close: Marker
    result_end: Marker | None = None

    @property
    def key(self) -> str:
        return f"call:{self.start.text}"

    def name_reader(self) -> ReaderFactory:
        return partial(_CallNameReader, call=self)

    def arguments_reader(self) -> ReaderFactory:
        return partial(_CallArgumentsReader, call=self)

    def result_reader(self, edges: EdgeNewlines) -> ReaderFactory:
        """The inline result: a tool message that answers the call (begun lazily)."""

        def start(parser: Parser) -> None:
            block = parser.context(OpenBlocks).by_key.get(self.key)
            parser.begin_message("tool")
            if block is not None and block.call_id is not None:
                parser.emit(MetadataItem("id", block.call_id))

        return text_reader(edges, lazy=LazyMessage(start))


class _CallNameReader:
    __slots__ = ("_block", "_call", "_parser")

    def __init__(self, parser: Parser, call: InlineCall) -> None:
        self._parser = parser
        self._call = call
        self._block = open_block(parser, call.key)

    def feed(self, text: str, offset: int) -> None:
        if not self._block.name and not self._block.offset:
            self._block.offset = offset
        self._block.name += text
        self._block.raw.append(text)

    def close(self, marker: str | None, offset: int) -> None:
        parser, call, block = self._parser, self._call, self._block
        if marker != call.arguments.text:
            found = f"{call.start.text!r} block ends at {marker or 'the end of the text'}"
            fail(parser, block, offset, found, f"a name then {call.arguments.text!r}")
            return
        if not block.name:
            fail(parser, block, offset, f"{call.start.text!r} with no name", f"a {call.kind} name")
            return
        refused = unknown_name(parser.tools, call.kind, block.name)
        if refused is not None:
            # No call (its text as written, after a warning), known before the call begins:
            # streamed, nothing of it was sent.
            fail(parser, block, offset, *refused)
            return
        if call.kind == "function":
            block.index = parser.next_call_index()
            block.call_id = parser.new_call_id()
            parser.emit(ToolCallStart(block.index, block.call_id, block.name))


def unknown_name(tools: tuple[Tool, ...], kind: str, name: str) -> tuple[str, str] | None:
    """What makes a call of ``kind`` to ``name`` no call (found, expected): none of the
    request's tools of that kind has the name (an action is no function, nor a function an
    action).  None: one has it, or the request has no tools (any name is then a call:
    nothing says which are offered)."""
    if not tools:
        return None
    offered = tuple(tool for tool in tools if tool.kind == kind)
    if any(tool.name == name for tool in offered):
        return None
    found = f"{NO_TOOL_NAMED}{name!r}" if kind == "function" else f"no action named {name!r}"
    if not offered:
        return found, f"no {kind} call: the request offers none"
    return found, offered_tools(offered)


class _CallArgumentsReader:
    """Arguments: streamed verbatim (function calls) with surrounding whitespace dropped.

    The text is kept once (:class:`ObjectText`: a big call's arguments in a memory map,
    checked as they come, never a decoded copy or a piece per feed).  With
    ``stream_arguments`` each piece is passed on at once; otherwise the parser's call gate
    would hold the pieces until the close anyway, so they are handed on there, in one
    ``ToolCallDelta`` (what the gate releases either way).
    """

    __slots__ = ("_block", "_call", "_kept", "_live", "_parser", "_space", "_started")

    def __init__(self, parser: Parser, call: InlineCall) -> None:
        self._parser = parser
        self._call = call
        self._block = continue_block(parser, call.key)
        self._kept = ObjectText()
        self._live = parser.stream_arguments
        self._space = ""  # whitespace not yet known to be inside the arguments
        self._started = False

    def feed(self, text: str, offset: int) -> None:
        block = self._block
        if block.failed:
            block.passes_on(self._parser, text)
            return
        self._kept.append(text)
        if block.index is None or not self._live:
            return
        if not self._started:
            text = text.lstrip()
            if not text:
                return
            self._started = True
        body = text.rstrip()
        out = self._space + body if body else ""
        self._space = text[len(body) :] if body else self._space + text
        if out:
            self._parser.emit(ToolCallDelta(block.index, out))

    def close(self, marker: str | None, offset: int) -> None:
        parser, call, block = self._parser, self._call, self._block
        if block.closes_as_text(parser, marker, call.close.text):
            return
        kept = self._kept
        # A big call, valid: closed, or ended by the end of the output (an engine stops at
        # the close when it is a stop string, and cuts it: omni's), as the whole read takes it.
        if marker in (call.close.text, None) and kept.checked_object():
            if call.kind == "action":
                parser.emit(PartAdded(ActionPart(block.name, kept.take_object())))
            elif block.index is not None:
                if self._live:
                    kept.clear()
                else:
                    parser.emit(ToolCallDelta(block.index, kept.late_object()))
                parser.emit(ToolCallEnd(block.index))
            return
        text = kept.take()
        block.raw.append(text)  # the raw block, as written, in case it is no call
        text = text.strip()
        value, problem = json_object(text)
        if marker is None and value is None:
            problem = f"unterminated {call.arguments.text!r}: the arguments end before a whole JSON object"
        elif marker is not None and marker != call.close.text:
            value, problem = None, f"the arguments end at {marker!r}"
        if call.kind == "action":
            if value is None:
                found = f"action {block.name!r}: {problem}"
                fail(
                    parser,
                    block,
                    offset,
                    found,
                    f"a JSON object then {call.close.text!r}",
                    marker or "",
                )
            else:
                parser.emit(PartAdded(ActionPart(block.name, text)))
            return
        if value is None:
            # No call: its text (markers included) comes back once, as content.
            expected = f"a JSON object then {call.close.text!r}"
            found = f"function {block.name!r}: {problem}"
            raw = "".join(block.raw) + (marker if marker == call.close.text else "")
            parser.malformed(block.offset or offset, found, expected, raw)
            if block.index is not None:
                parser.abandon_call(block.index)
                block.index = None
            block.failed = True
            parser.emit(TextDelta(raw))
            return
        if block.index is not None:
            if not self._live and text:
                parser.emit(ToolCallDelta(block.index, text))
            parser.emit(ToolCallEnd(block.index))


CallKind = Literal["tool_call", "action"]
"""The segment kind a call is written with (a function call's, an action's)."""


@dataclass(frozen=True)
class _CallRows:
    """A call's and a result's fences as rows (:mod:`..rows`), one set per call block."""

    start: dict[CallKind, Row]  # by kind ("tool_call", "action"): "\n<start>"
    arguments: dict[CallKind, Row]  # "<arguments>"
    close: dict[CallKind, Row]  # "<close>"
    result_start: Row  # "\n" before a result
    result_end: Row  # "\n<result_end>\n"


def _derive(call: InlineCall) -> _CallRows:
    kinds: tuple[CallKind, ...] = ("tool_call", "action")
    end = Row(())
    if call.result_end is not None:
        end = Row(
            (
                (False, "\n", "tool_result", False),
                (True, call.result_end.text, "tool_result", False),
                (False, "\n", "separator", False),
            )
        )
    return _CallRows(
        start={
            kind: Row(((False, "\n", kind, True), (True, call.start.text, kind, True)))
            for kind in kinds
        },
        arguments={kind: Row(((True, call.arguments.text, kind, True),)) for kind in kinds},
        close={kind: Row(((True, call.close.text, kind, True),)) for kind in kinds},
        result_start=Row(((False, "\n", "tool_result", False),)),
        result_end=end,
    )


_rows_of = rows.once_per(_derive)


def write_call(
    writer: Writer,
    call: InlineCall,
    name: str,
    arguments: str,
    kind: CallKind,
    where: str,
) -> None:
    """``\\n<start>name<arguments>ARGUMENTS<close>`` (trainable: the model writes it)."""
    if not name:
        raise RequestError(where, "an empty name", "a function or action name")
    derived = _rows_of(call)
    derived.start[kind].write(writer)
    writer.text(name, kind, trainable=True)
    derived.arguments[kind].write(writer)
    writer.text(arguments.strip(), kind, trainable=True)
    derived.close[kind].write(writer)


def write_result(writer: Writer, call: InlineCall, texts: list[str]) -> None:
    """An in-turn result, ``\\n{result}\\n<result_end>\\n``: written by the system (not
    trainable); the assistant turn resumes after it."""
    assert call.result_end is not None
    derived = _rows_of(call)
    derived.result_start.write(writer)
    for text in texts:
        writer.text(text, "tool_result")
    derived.result_end.write(writer)


JINJA = r"""{%- macro arguments_text(value, where) -%}
{%- if value is string -%}
{{- value|trim -}}
{%- elif value is mapping -%}
{{- value|tojson -}}
{%- else -%}
{{- raise_exception(where ~ ': expected a JSON object as text') -}}
{%- endif -%}
{%- endmacro -%}
{%- macro call_block(start, name, marker, arguments, close, where) -%}
{%- if not name -%}
{{- raise_exception(where ~ ': an empty name; expected a function or action name') -}}
{%- endif -%}
{{- '\n' ~ start ~ escape(name, true) ~ marker ~ escape(arguments, true) ~ close -}}
{%- endmacro -%}"""
"""``arguments_text`` (a string verbatim and trimmed, an object as ``tojson``) and
``call_block`` (one call after the newline that opens it)."""


def escaped_name(fmt: Format, name: str) -> str:
    assert fmt.escape_pattern is not None
    return escape_text(name, fmt.escape_pattern, before_marker=True)


def grammar_items(
    fmt: Format, call: InlineCall, rules: Rules, number: int, tool: Tool, close: Node
) -> list[Node]:
    """One call of ``tool`` after the newline that opens it (``close``: the closing marker's
    node, the stop for a function call)."""
    return [
        MarkerNode(call.start.text),
        Lit(escaped_name(fmt, tool.name)),
        MarkerNode(call.arguments.text),
        json_arguments(rules, number, tool),
        close,
    ]
