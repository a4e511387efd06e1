"""Containers: every message in a headed container, marker spellings escaped in text.

The concept behind PCML's control schema, with all four of its interpreters here (writer,
parse table, Jinja, grammar); the shared interpreters hand a layout that has
``containers`` to this module.  What it adds to the other concepts of a :class:`Layout`:

- **Containers.**  Every message, the system turn and tool results included, is its frame's
  ``open`` + header + body + close, where the close is the frame's ``after`` when it has one
  (the assistant: ``end`` is what the model writes, ``after`` what the system writes after
  it, and the parser also takes ``after`` without ``end``), else its ``end``.  ``between``
  (layout text) separates two containers; nothing follows the last.
- **Headers** (:class:`Headers`): ``key="value"`` pairs after the open marker, each followed
  by the ``separator`` marker; the value is a JSON string.  Some keys are message fields
  (``name``, a result's ``id``), every other key is metadata, written in order.
- **Escaping.**  A marker spelled in text (content, reasoning, header values, call JSON) is
  written with a backslash before it (see :func:`pawlette.engine.lexer.escape_text`), so any
  text survives the round trip; a fence is written as *one* special segment, so the layout
  it carries (``</think>\\n``, ``\\n<call>``) is one marker of the lexer too, and the parser
  also reads the fence's markers without that layout.
- **Calls with ids** (``call_id``): a call is ``{"<call_id>": ID, "<name>": NAME,
  "<arguments>": ARGS}``; ids are written and read back (a call without one in model output
  gets a generated one), and results name the call they answer in their header.
- **Tools as one JSON array** of function objects, compact, after the system text (the
  block's ``separator`` + ``open`` is one marker there); with tools and no system message,
  a system container holding only the tools is written, and parsed to no message.

Reasoning, calls, results and the tools block are the layout's usual concepts
(:class:`~.layout.Reasoning`, :class:`~.layout.JsonCalls`, :class:`~.layout.Results`,
:class:`~.layout.ToolsBlock` with ``host="system"``); reasoning is written whenever a message
has it (``keep="all"``), and results are one container each.

Limits, refused with :class:`~pawlette.errors.FormatError` when the layout is declared: the
tools block is one compact array of function objects (no items, indent or OpenAI wrapping);
a call separator is a newline or nothing (text and the separator before a call are one
grammar lexeme, and llguidance's lexer is greedy); calls have an open fence.  The template
needs a tools block, reasoning and calls, and header keys that are identifiers.
"""

# ruff: noqa: E501  (Jinja source: one tag per line reads better than wrapped tags)

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from json.encoder import encode_basestring as string  # json_string of a str, without its steps
from typing import TYPE_CHECKING

from ..blocks.tool_choice import ForcedPrefixes
from ..engine.json_text import compact_json, json_string
from ..engine.lexer import escape_text, marker_pattern
from ..engine.machine import Action, Grammar, GrammarBuilder, Parser
from ..engine.readers import (
    CallEnvelope,
    ContentReader,
    JsonToolsReader,
    ReasoningReader,
    ScaffoldReader,
    header_reader,
    json_call_reader,
)
from ..engine.writer import MAX_CACHED_INDEX, Writer
from ..errors import FormatError, RequestError, UnsupportedFeature
from ..types import Message, Role, Segment, TextPart, Tool
from .layout import Fence, Frame, JsonCalls, Layout, Marker, fence
from .plain_containers import plain_renderer
from .table import joined, reasoning_text
from .write import WriteConversation, arguments_text, check_call_name

if TYPE_CHECKING:
    from ..export.grammar import ToolChoice, TurnGrammar
    from ..format import Format


@dataclass(frozen=True)
class Headers:
    """``key="value"`` pairs after a container's open marker, each ended by ``separator``.

    ``fields``: per role (``system``, ``user``, ``assistant``, ``tool``), the keys that are
    message fields (``{"name": "name", "id": "tool_call_id"}``), in the order they are
    written; metadata follows them.  ``key``: the keys the format can write (a regex).
    """

    separator: Marker
    fields: Mapping[str, Mapping[str, str]]
    key: str = r"[A-Za-z_][A-Za-z0-9_.\-]*"


@dataclass(frozen=True)
class Containers:
    """Headed containers with escaped text (see the module docstring)."""

    headers: Headers
    between: Fence = field(default_factory=lambda: fence("\n\n"))
    call_id: str = "id"
    """The key of a call's id in its JSON, which comes first; a result names the call it
    answers in its header (the ``tool`` field that is ``tool_call_id``)."""


ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


def json_calls(layout: Layout) -> JsonCalls | None:
    """The layout's calls: containers write JSON calls (their envelope keys, ids and
    verbatim arguments); other call concepts are refused when the layout is declared."""
    calls = layout.calls
    if calls is not None and not isinstance(calls, JsonCalls):
        raise FormatError(f"{layout.name}: containers write JSON calls, not {type(calls).__name__}")
    return calls


def _containers(layout: Layout) -> Containers:
    containers = layout.containers
    assert isinstance(containers, Containers)
    return containers


def frame_of(layout: Layout, role: str) -> Frame:
    """The frame of a role's container (``tool``: the results' frame)."""
    if role == "tool":
        if layout.results is None:
            raise FormatError(f"{layout.name}: containers need a results frame")
        return layout.results.frame
    return layout.frames[role]  # type: ignore[index]


def closing(frame: Frame) -> Fence:
    """What closes a container: the frame's ``after`` when it has one, else its ``end``."""
    return frame.after or frame.end


def bare(pieces: Fence) -> str:
    """A fence's markers without its layout text (the parser reads this spelling too)."""
    return "".join(piece.text for piece in pieces if isinstance(piece, Marker))


def _markers(pieces: Fence) -> list[str]:
    return [piece.text for piece in pieces if isinstance(piece, Marker)]


def special_markers(layout: Layout) -> tuple[str, ...]:
    """The markers in reading order: each container's open and close, the header separator,
    then a turn's reasoning, tools, calls and end; then any other marker the layout writes."""
    from . import markers_of

    found: dict[str, None] = {}
    for role in ROLES:
        frame = frame_of(layout, role)
        for text in _markers(frame.open) + _markers(closing(frame)):
            found.setdefault(text, None)
    found.setdefault(_containers(layout).headers.separator.text, None)
    groups: list[Fence] = []
    if layout.reasoning is not None:
        groups += [layout.reasoning.open, layout.reasoning.close]
    if layout.tools is not None:
        groups += [layout.tools.open, layout.tools.close]
    calls = json_calls(layout)
    if calls is not None:
        groups += [calls.open or (), calls.close]
    groups.append(layout.frames["assistant"].end)
    for pieces in groups:
        for text in _markers(pieces):
            found.setdefault(text, None)
    for text in markers_of(dataclasses.replace(layout, containers=None)):
        found.setdefault(text, None)
    return tuple(found)


def envelope(layout: Layout) -> CallEnvelope:
    calls = json_calls(layout)
    assert calls is not None
    return CallEnvelope(
        name=calls.name_key, arguments=calls.arguments_key, id=_containers(layout).call_id
    )


# ------------------------------------------------------------------ writer


Spelled = tuple[tuple[bool, str], ...]
"""A fence as the writer writes it: one (holds a marker, its text) pair; empty: an empty fence."""


def spelled(layout: Layout, pieces: Fence) -> Spelled:
    """One segment per fence: special when it holds a marker (its layout goes with it)."""
    if not pieces:
        return ()
    return ((any(isinstance(piece, Marker) for piece in pieces), joined(layout, pieces)),)


def _spellings(layout: Layout) -> dict[str, Spelled]:
    """Every fence the writer writes, spelled once per layout (rendering is on the serving
    path: a render writes dozens of fences)."""
    result: dict[str, Spelled] = {}
    for role in ROLES:
        frame = frame_of(layout, role)
        result[f"open:{role}"] = spelled(layout, frame.open)
        result[f"close:{role}"] = spelled(layout, closing(frame))
    # The assistant's end is written apart (the model writes it): only its after closes.
    result["close:assistant"] = spelled(layout, layout.frames["assistant"].after)
    result["between"] = spelled(layout, _containers(layout).between)
    result["end"] = spelled(layout, layout.frames["assistant"].end)
    result["prompt"] = spelled(layout, layout.generation_prompt)
    if layout.tools is not None:
        block = layout.tools
        result["tools"] = spelled(layout, block.open)
        result["tools_line"] = spelled(layout, (*block.separator, *block.open))
        result["tools_close"] = spelled(layout, block.close)
    if layout.reasoning is not None:
        result["think"] = spelled(layout, layout.reasoning.open)
        result["think_end"] = spelled(layout, layout.reasoning.close)
    calls = json_calls(layout)
    if calls is not None:
        result["call"] = spelled(layout, calls.open or ())
        result["call_line"] = spelled(layout, (*calls.separator, *(calls.open or ())))
        result["call_end"] = spelled(layout, calls.close)
    return result


# What the writer writes between caller texts, by step: the fences of each step, each with its
# kind and trainability ("{role}": the message's role).  A step's segments depend only on the
# message context (role and index), so each is built once per layout and context.
_STEPS: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "open": (("open:{role}", "header", False),),
    "lead": (("between", "separator", False), ("open:{role}", "header", False)),
    "close": (("close:{role}", "close", False),),
    "host_close": (("close:system", "header", False),),
    "between": (("between", "separator", False),),
    "tools": (("tools", "tools", False),),
    "tools_line": (("tools_line", "tools", False),),
    "tools_close": (("tools_close", "tools", False),),
    "think": (("think", "reasoning", True),),
    "think_end": (("think_end", "reasoning", True),),
    "call": (("call", "tool_call", True),),
    "call_line": (("call_line", "tool_call", True),),
    "call_end": (("call_end", "tool_call", True),),
    "end_close": (("end", "end", True), ("close:assistant", "close", False)),
    "prompt": (("between", "separator", False), ("prompt", "generation_prompt", False)),
    "prompt_only": (("prompt", "generation_prompt", False),),
}

Row = dict[str, tuple[Segment, ...]]


class _Plan:
    """A layout's steps as segments, per message context: each context's row is built whole
    on first use and kept (up to :data:`~pawlette.engine.writer.MAX_CACHED_INDEX` messages:
    longer conversations build the rest anew)."""

    def __init__(self, layout: Layout) -> None:
        self.spellings = _spellings(layout)
        self.rows: dict[tuple[Role | None, int], Row] = {}
        calls = json_calls(layout)
        # A call's JSON around its id, name and arguments: the keys are the layout's.
        self.call_keys = ("", "", "")
        if calls is not None:
            self.call_keys = (
                f"{{{json_string(_containers(layout).call_id)}: ",
                f", {json_string(calls.name_key)}: ",
                f", {json_string(calls.arguments_key)}: ",
            )

    def row(self, role: Role | None, index: int) -> Row:
        found = self.rows.get((role, index))
        if found is None:
            found = {}
            for step, fences in _STEPS.items():
                names = [name.format(role=role) for name, _, _ in fences]
                if all(name in self.spellings for name in names):  # (the layout has them)
                    found[step] = tuple(
                        Segment(text, special, role, index, kind, trainable)
                        for name, (_, kind, trainable) in zip(names, fences, strict=True)
                        for special, text in self.spellings[name]
                    )
            if index < MAX_CACHED_INDEX:
                self.rows[(role, index)] = found
        return found


class _Render:
    def __init__(
        self,
        layout: Layout,
        containers: Containers,
        plan: _Plan,
        writer: Writer,
    ) -> None:
        self.layout = layout
        self.containers = containers
        self.plan = plan
        self.writer = writer
        self.row: Row = {}

    def at(self, role: Role | None, index: int) -> None:
        """Following steps belong to this message (``-1``: outside any message)."""
        self.writer.at(role, index)
        self.row = self.plan.row(role, index)

    def put(self, step: str) -> None:
        """Write a step of :data:`_STEPS` in the current message context."""
        self.writer.extend(self.row[step])

    def text_parts(self, message: Message, index: int, trainable: bool) -> bool:
        """Write the text parts; True when any text was written."""
        written = False
        for number, part in enumerate(message.content or ()):
            if not isinstance(part, TextPart):
                raise UnsupportedFeature(
                    f"messages[{index}].content[{number}]",
                    f"a {type(part).__name__}",
                    f"text parts only: {self.layout.name} has no markup for other content",
                )
            if part.text:
                self.writer.text(part.text, "content", trainable=trainable)
                written = True
        return written

    def header(self, message: Message, index: int) -> None:
        headers = self.containers.headers
        taken = headers.fields.get(message.role, {})
        pairs: list[tuple[str, str]] = []
        for key, name in taken.items():
            value = getattr(message, name, None)
            if value is not None:
                pairs.append((key, value))
        for key, value in message.metadata:
            if key in taken or not re.fullmatch(headers.key, key):
                raise RequestError(
                    f"messages[{index}].metadata.{key}",
                    f"a key {self.layout.name} cannot write"
                    if key not in taken
                    else "a key that is a field",
                    "an identifier other than " + ", ".join(sorted(taken)),
                )
            pairs.append((key, value))
        for key, value in pairs:
            writer = self.writer
            writer.raw(f"{key}=", "metadata")
            writer.text(string(value), "metadata")
            writer.marker(headers.separator.text, "metadata")

    def tools(self, tools: tuple[Tool, ...], after_text: bool) -> None:
        block = self.layout.tools
        assert block is not None
        for number, tool in enumerate(tools):
            if tool.kind != "function":
                raise UnsupportedFeature(f"tools[{number}].type", f"{tool.kind!r}", "'function'")
        self.put("tools_line" if after_text else "tools")
        listing = [dict(tool.definition) for tool in tools]
        self.writer.text(compact_json(listing), "tools")
        self.put("tools_close")

    def assistant(self, message: Message, index: int) -> None:
        layout = self.layout
        if message.reasoning_steps is not None:
            raise UnsupportedFeature(
                f"messages[{index}].reasoning_steps", "structured thinking", "reasoning_content"
            )
        if message.reasoning is not None:
            if layout.reasoning is None:
                raise UnsupportedFeature(
                    f"messages[{index}].reasoning_content", "reasoning", f"none: {layout.name}"
                )
            self.put("think")
            self.writer.text(message.reasoning, "reasoning", trainable=True)
            self.put("think_end")
        after_block = self.text_parts(message, index, trainable=True)
        calls = json_calls(layout)
        if message.tool_calls and calls is None:
            raise UnsupportedFeature(
                f"messages[{index}].tool_calls", "tool calls", f"none: {layout.name}"
            )
        for number, call in enumerate(message.tool_calls):
            assert calls is not None
            self.put("call_line" if after_block else "call")
            check_call_name(call.name, index, number)
            where = f"messages[{index}].tool_calls[{number}].function.arguments"
            head, name_key, arguments_key = self.plan.call_keys
            body = (
                f"{head}{string(call.id)}{name_key}{string(call.name)}{arguments_key}"
                f"{arguments_text(layout, call.arguments, where)}}}"
            )
            self.writer.text(body, "tool_call", trainable=True)
            self.put("call_end")
            after_block = True

    def write(self, messages: tuple[Message, ...], tools: tuple[Tool, ...], prompt: bool) -> None:
        layout = self.layout
        if tools and layout.tools is None:
            raise UnsupportedFeature("tools", "tools", f"none: {layout.name} has no tools block")
        tools_pending = bool(tools)
        if tools_pending and (not messages or messages[0].role != "system"):
            self.at("system", -1)
            self.put("open")
            self.tools(tools, after_text=False)
            self.put("host_close")
            tools_pending = False
            if messages or prompt:
                self.put("between")
        writer = self.writer
        extend, text, at = writer.extend, writer.text, writer.at
        rows, row_of = self.plan.rows, self.plan.row
        for index, message in enumerate(messages):
            # (the steps inline: a render writes a few dozen, and every call costs)
            role = message.role
            at(role, index)
            row = self.row = rows.get((role, index)) or row_of(role, index)
            extend(row["lead" if index else "open"])
            if message.name is not None or message.metadata or message.tool_call_id is not None:
                self.header(message, index)  # (most messages have no header)
            if role == "assistant":
                self.assistant(message, index)
                extend(row["end_close"])
                continue
            content = message.content
            if content and len(content) == 1 and type(content[0]) is TextPart:
                wrote_text = bool(content[0].text)
                text(content[0].text, "content")
            else:
                wrote_text = self.text_parts(message, index, trainable=False)
            if role == "system" and tools_pending:
                self.tools(tools, after_text=wrote_text)
                tools_pending = False
            extend(row["close"])
        if prompt:
            self.at("assistant", len(messages))
            self.put("prompt" if messages else "prompt_only")


class _Write:
    """The render function of a layout with containers (a ``WriteConversation``), and its
    plain render (:mod:`.plain_containers`), which :meth:`pawlette.Format.render` tries first
    on OpenAI dicts; kept on the function so that the two are always of the same layout."""

    __slots__ = ("containers", "layout", "plain_render", "plan")

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.plan = _Plan(layout)
        self.containers = _containers(layout)
        self.plain_render = plain_renderer(layout, self.plan, compile_table(layout).markers)

    def __call__(
        self, writer: Writer, messages: tuple[Message, ...], tools: tuple[Tool, ...], prompt: bool
    ) -> None:
        _Render(self.layout, self.containers, self.plan, writer).write(messages, tools, prompt)


def writer_of(layout: Layout) -> WriteConversation:
    """The render function of a layout with containers."""
    return _Write(layout)


def escape_pattern(layout: Layout) -> re.Pattern[str]:
    """The writer's escaping: every marker of the lexer, spelled in text, is escaped."""
    return marker_pattern(compile_table(layout).markers)


# ------------------------------------------------------------------ parse table


def _begin(role: Role) -> Action:
    def action(parser: Parser, offset: int) -> None:
        parser.begin_message(role)

    return action


def _end(parser: Parser, offset: int) -> None:
    parser.end_message()


def spellings(layout: Layout, pieces: Fence) -> list[str]:
    """How the parser reads a fence: as written, and as its markers alone."""
    return sorted({joined(layout, pieces), bare(pieces)} - {""})


def compile_table(layout: Layout) -> Grammar:
    """The parse table of a layout with containers.  States (``→`` is a row)::

    outside            ROLE open                       → "ROLE.head" (header, then text)
    ROLE.head          header separator                → "ROLE.head"
    ROLE.head          ROLE close                      → outside
    system.head        [separator +] tools open        → "system.tools"
    system.tools       tools close                     → "system.after_tools" → close
    assistant.head     reasoning open                  → "assistant.reasoning"
    reasoning          reasoning close                 → "assistant.body"
    head, body         [separator +] call open         → "assistant.call" → close → body
    head, body         end                             → "assistant.ended" → close
    body               close (without end)             → outside
    """
    containers = _containers(layout)
    table = GrammarBuilder()
    headers = containers.headers
    table.fields.update({role: dict(keys) for role, keys in headers.fields.items()})  # type: ignore[misc]
    table.state("outside", ScaffoldReader)
    separator = headers.separator.text
    for role in ROLES:
        frame = frame_of(layout, role)
        head = table.state(f"{role}.head", header_reader(separator), role)
        table.on("outside", joined(layout, frame.open), head, _begin(role))
        table.on(head, separator, head)
        table.on(head, joined(layout, closing(frame)), "outside", _end)
    block = layout.tools
    if block is not None:
        if block.host != "system" or block.first or block.item_open or block.item_close:
            raise FormatError(
                f"{layout.name}: containers write the tools as one array last in the system turn"
            )
        if block.indent is not None or block.wrap != "function":
            raise FormatError(
                f"{layout.name}: containers write the tools array compact, of function objects"
            )
        system_close = joined(layout, closing(frame_of(layout, "system")))
        table.state("system.tools", JsonToolsReader, "system")
        table.state("system.after_tools", ContentReader, "system")
        openings = set(spellings(layout, block.open))
        openings |= set(spellings(layout, (*block.separator, *block.open)))
        for marker in sorted(openings):
            table.on("system.head", marker, "system.tools")
        table.on("system.tools", joined(layout, block.close), "system.after_tools")
        table.on("system.after_tools", system_close, "outside", _end)
    frame = layout.frames["assistant"]
    close = joined(layout, closing(frame))
    table.state("assistant.body", ContentReader, "assistant")
    texts = ("assistant.head", "assistant.body")
    if layout.reasoning is not None:
        table.state("assistant.reasoning", ReasoningReader, "assistant")
        for marker in spellings(layout, layout.reasoning.open):
            table.on("assistant.head", marker, "assistant.reasoning")
        for marker in spellings(layout, layout.reasoning.close):
            table.on("assistant.reasoning", marker, "assistant.body")
    calls = json_calls(layout)
    if calls is not None:
        if calls.open is None:
            raise FormatError(f"{layout.name}: calls in containers need an open fence")
        if joined(layout, calls.separator) not in ("", "\n"):
            # Text before the separator is one grammar lexeme with it: only a newline has one
            # (llguidance's lexer is greedy; see pawlette.legacy.grammar).
            raise FormatError(f"{layout.name}: a call separator is a newline or nothing")
        call_close = joined(layout, calls.close)
        table.state("assistant.call", json_call_reader(envelope(layout), call_close), "assistant")
        openings = set(spellings(layout, calls.open))
        openings |= set(spellings(layout, (*calls.separator, *calls.open)))
        for state in texts:
            for marker in sorted(openings):
                table.on(state, marker, "assistant.call")
        table.on("assistant.call", call_close, "assistant.body")
    if frame.after:
        table.state("assistant.ended", ScaffoldReader, "assistant")
        for state in texts:
            table.on(state, joined(layout, frame.end), "assistant.ended", _end)
        table.on("assistant.body", close, "outside", _end)
        table.on("assistant.ended", close, "outside")
    else:
        table.on("assistant.body", close, "outside", _end)
    return table.build(escape=True, conversation_start="outside", completion_start="assistant.head")


def call_prefix(layout: Layout, name: str | None) -> str:
    """What a forced call starts with (``name``: through the opening quote of the call's
    id, the first thing a call holds, which the model writes freely)."""
    calls = json_calls(layout)
    assert calls is not None
    text = joined(layout, calls.open or ())
    if name is None:
        return text
    return f'{text}{{{json_string(_containers(layout).call_id)}: "'


def forced_prefixes(layout: Layout) -> ForcedPrefixes | None:
    if json_calls(layout) is None:
        return None
    return ForcedPrefixes(
        required=call_prefix(layout, None),
        none="",
        named=lambda name: call_prefix(layout, name),
        only_with_tools=True,
    )


# ------------------------------------------------------------------ Jinja

_JINJA_HEADER = """{#- pawlette chat template: @NAME@ (@SUMMARY@)
    Generated by `pawlette export jinja -f @NAME@`; renders byte for byte what
    pawlette.get_format("@NAME@").render(messages, tools, add_generation_prompt=...) renders.
    - Markers inside text are escaped with a backslash, as pawlette does (the `escape` macro).
      For token ids equal to pawlette's, text containing a marker must be encoded with special
      tokens off; apply_chat_template(tokenize=True) encodes the rendered string as a whole.
    - Tool call `arguments` may be a JSON string (written verbatim, trimmed) or an object
      (written with tojson, as pawlette renders json.dumps(arguments, ensure_ascii=False)).
      Strings are not checked to be JSON objects: Jinja cannot parse JSON.
    - Raises on what @NAME@ cannot write: non-text content parts, unknown roles,
      reasoning_steps, non-function tools, metadata keys that are not identifiers.
    - Assistant turns from their reasoning (or their first text) through the end marker are
      wrapped in {% generation %}, matching pawlette's trainable segments.
-#}
"""

_HEADER_MACRO = r"""{%- macro header(message, index, role) -%}
@FIELDS@
{%- if message.metadata is defined and message.metadata is not none -%}
{%- for key, value in message.metadata|items -%}
{%- set check = namespace(ok=key is string and key|length > 0) -%}
{%- if check.ok -%}
{%- for i in range(key|length) -%}
{%- if key[i] not in (@KEY_CHARS@ if i else @KEY_START@) -%}{%- set check.ok = false -%}{%- endif -%}
{%- endfor -%}
{%- endif -%}
{%- if not check.ok or @TAKEN@ -%}
{{- raise_exception('messages[' ~ index ~ '].metadata.' ~ key ~ ': a key @NAME@ cannot write; expected an identifier other than ' ~ @TAKEN_NAMES@) -}}
{%- endif -%}
{%- if value is not string -%}
{{- raise_exception('messages[' ~ index ~ '].metadata.' ~ key ~ ': not a string; expected a string') -}}
{%- endif -%}
{{- key ~ '=' ~ escape(value|tojson, true) ~ @SEP@ -}}
{%- endfor -%}
{%- endif -%}
{%- endmacro -%}
"""

_BODY = r"""{%- macro tools_block(after_text) -%}
{%- set listing = namespace(text='') -%}
{%- for tool in tools -%}
{%- if tool.type is defined and tool.type != 'function' -%}
{{- raise_exception('tools[' ~ loop.index0 ~ '].type: ' ~ tool.type ~ '; @NAME@ writes function tools only') -}}
{%- endif -%}
@CHECK_FUNCTION_OBJECT@
{%- set listing.text = listing.text ~ (',' if loop.index0 else '') ~ @TOOL_JSON@ -%}
{%- endfor -%}
{{- (@TOOLS_LINE@ if after_text else @TOOLS@) ~ escape('[' ~ listing.text ~ ']', true) ~ @TOOLS_END@ -}}
{%- endmacro -%}
{%- macro call_body(call, index, number) -%}
{%- if call.function is not defined or call.function is not mapping -%}
{{- raise_exception('messages[' ~ index ~ '].tool_calls[' ~ number ~ '].function: missing; expected a function object') -}}
{%- endif -%}
{%- set fn = call.function -%}
{%- if fn.arguments is string -%}
{%- set arguments = fn.arguments|trim -%}
{%- elif fn.arguments is mapping -%}
{%- set arguments = fn.arguments|tojson -%}
{%- else -%}
{%- set arguments = raise_exception('messages[' ~ index ~ '].tool_calls[' ~ number ~ '].function.arguments: expected a JSON object as text') -%}
{%- endif -%}
{%- set call_id = call.id if call.id is defined and call.id is not none else '' -%}
{{- @CALL_HEAD@ ~ fn.name|tojson ~ @CALL_MIDDLE@ ~ arguments ~ '}' -}}
{%- endmacro -%}
{%- set turns = @TURNS@ -%}
{%- set state = namespace(tools_pending=false) -%}
{%- if tools is defined and tools -%}
{%- set state.tools_pending = true -%}
{%- if messages|length == 0 or messages[0].role not in ['system', 'developer'] -%}
{{- @SYSTEM@ ~ tools_block(false) ~ @SYSTEM_END@ -}}
{%- set state.tools_pending = false -%}
{%- if messages|length > 0 or add_generation_prompt -%}{{- @BETWEEN@ -}}{%- endif -%}
{%- endif -%}
{%- endif -%}
{%- for message in messages -%}
@MESSAGE_ROLE@
@CHECK_ROLE@
{%- if message.reasoning_steps is defined and message.reasoning_steps is not none -%}
{{- raise_exception('messages[' ~ index ~ '].reasoning_steps: structured thinking; @NAME@ writes reasoning_content') -}}
{%- endif -%}
@CHECK_CALLS_ON_ASSISTANT@
{%- if index -%}{{- @BETWEEN@ -}}{%- endif -%}
{%- set text = text_of(message, index, @NAME_STRING@) -%}
{%- if role == 'assistant' -%}
{{- @ASSISTANT@ ~ header(message, index, role) -}}
{%- generation -%}
{%- if message.reasoning_content is defined and message.reasoning_content is not none -%}
{{- @THINK@ ~ escape(message.reasoning_content, true) ~ @THINK_END@ -}}
{%- endif -%}
{{- escape(text, true) -}}
{%- if message.tool_calls is defined and message.tool_calls -%}
{%- for call in message.tool_calls -%}
{{- (@CALL_LINE@ if (text or loop.index0) else @CALL@) ~ escape(call_body(call, index, loop.index0), true) ~ @CALL_END@ -}}
{%- endfor -%}
{%- endif -%}
{{- @END@ -}}
{%- endgeneration -%}
{{- @ASSISTANT_END@ -}}
{%- else -%}
{%- set turn = turns[role] -%}
{{- turn[0] ~ header(message, index, role) ~ escape(text, true) -}}
{%- if role == 'system' and index == 0 and state.tools_pending -%}
{{- tools_block(text|length > 0) -}}
{%- endif -%}
{{- turn[1] -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
{%- if messages|length > 0 -%}{{- @BETWEEN@ -}}{%- endif -%}
{{- @ASSISTANT@ -}}
{%- endif -%}
"""

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
_KEY_PATTERN = r"[A-Za-z_][A-Za-z0-9_.\-]*"


def _role_condition(roles: list[str]) -> str:
    from ..export.templates._common import jinja_list, jinja_string

    if len(roles) == 1:
        return f"role == {jinja_string(roles[0])}"
    return f"role in {jinja_list(roles)}"


def _header_macro(layout: Layout, headers: Headers) -> str:
    """The ``header`` macro: the field pairs, then the metadata pairs (checked)."""
    from ..export.templates._common import fill, jinja_string

    name = jinja_string(layout.name)[1:-1]
    if headers.key != _KEY_PATTERN:
        raise FormatError(f"{layout.name}: header keys other than identifiers have no template")
    present = [role for role in ROLES if role in headers.fields]
    keys: dict[tuple[str, str], list[str]] = {}
    for role in present:
        for key, attribute in headers.fields[role].items():
            keys.setdefault((key, attribute), []).append(role)
    fields = []
    taken = []
    for (key, attribute), roles in keys.items():
        test = f"message.{attribute} is defined and message.{attribute} is not none"
        everywhere = len(roles) == len(ROLES)
        condition = test if everywhere else f"{_role_condition(roles)} and {test}"
        fields.append(f"{{%- if {condition} -%}}")
        fields.append(
            f"{{{{- {jinja_string(key + '=')} ~ escape(message.{attribute}|tojson, true) ~ @SEP@ -}}}}"
        )
        fields.append("{%- endif -%}")
        check = f"key == {jinja_string(key)}"
        taken.append(check if everywhere else f"({_role_condition(roles)} and {check})")
    names: dict[str, str] = {role: ", ".join(sorted(headers.fields[role])) for role in present}
    distinct = sorted(set(names.values()))
    if len(distinct) == 1:
        taken_names = jinja_string(distinct[0])
    else:
        common = max(distinct, key=list(names.values()).count)
        options = [
            f"{jinja_string(text)} if {_role_condition([r for r in present if names[r] == text])}"
            for text in distinct
            if text != common
        ]
        taken_names = "(" + " else ".join([*options, jinja_string(common)]) + ")"
    values = {
        "@FIELDS@": "\n".join(fields),
        "@TAKEN@": " or ".join(taken) if taken else "false",
        "@TAKEN_NAMES@": taken_names,
        "@KEY_START@": jinja_string(_LETTERS),
        "@KEY_CHARS@": jinja_string(_LETTERS + "0123456789.-"),
        "@SEP@": jinja_string(headers.separator.text),
        "@NAME@": name,
    }
    return fill(_HEADER_MACRO, values)


def chat_template(layout: Layout) -> str:
    """The chat template of a layout with containers (checked against the writer by the
    generated cross-artifact tests and the golden cases)."""
    from ..export.templates._common import (
        TEXT_MACRO,
        escape_macro,
        fill,
        jinja_list,
        jinja_mapping,
        jinja_string,
    )

    containers = _containers(layout)
    block, reasoning, calls = layout.tools, layout.reasoning, json_calls(layout)
    if block is None or reasoning is None or calls is None or calls.open is None:
        raise FormatError(f"{layout.name}: the containers template needs tools, reasoning, calls")
    system = frame_of(layout, "system")
    assistant = layout.frames["assistant"]

    def text(pieces: Fence) -> str:
        return jinja_string(joined(layout, pieces))

    name_key = jinja_string(f"{json_string(calls.name_key)}: ")
    opening = jinja_string(f"{{{json_string(containers.call_id)}: ")
    call_head = f"{opening} ~ call_id|tojson ~ ', ' ~ {name_key}"  # the id first
    tool_json = "tool.function|tojson(separators=(',', ':'))"
    turns = jinja_mapping(
        {
            role: jinja_list(
                [
                    joined(layout, frame_of(layout, role).open),
                    joined(layout, closing(frame_of(layout, role))),
                ]
            )
            for role in ROLES
            if role != "assistant"
        }
    )
    values = {
        "@NAME@": jinja_string(layout.name)[1:-1],
        "@NAME_STRING@": jinja_string(layout.name),
        "@TOOL_JSON@": tool_json,
        "@TOOLS@": text(block.open),
        "@TOOLS_LINE@": text((*block.separator, *block.open)),
        "@TOOLS_END@": text(block.close),
        "@SYSTEM@": text(system.open),
        "@SYSTEM_END@": text(closing(system)),
        "@ASSISTANT@": text(assistant.open),
        "@ASSISTANT_END@": text(assistant.after),
        "@THINK@": text(reasoning.open),
        "@THINK_END@": text(reasoning.close),
        "@CALL@": text(calls.open),
        "@CALL_LINE@": text((*calls.separator, *calls.open)),
        "@CALL_END@": text(calls.close),
        "@CALL_HEAD@": call_head,
        "@CALL_MIDDLE@": jinja_string(f", {json_string(calls.arguments_key)}: "),
        "@END@": text(assistant.end),
        "@BETWEEN@": text(containers.between),
        "@TURNS@": turns,
    }
    header = _JINJA_HEADER.replace("@NAME@", layout.name).replace("@SUMMARY@", layout.summary)
    markers = compile_table(layout).markers
    return (
        header
        + escape_macro(markers)
        + TEXT_MACRO
        + _header_macro(layout, containers.headers)
        + fill(_BODY, values)
    )


# ------------------------------------------------------------------ grammar

_ID_REST_REGEX = '/(\\\\(["\\\\\\x2F bfnrt]|u[a-fA-F0-9]{4})|[^"\\\\\\x00-\\x1F])*"/'.replace(
    " ", ""
)


def build_turn(
    fmt: Format,
    layout: Layout,
    tools: tuple[Tool, ...],
    choice: ToolChoice,
    parallel: bool,
) -> TurnGrammar:
    """One assistant turn of a layout with containers, as the writer writes it::

        [REASONING] ( [TEXT] | CALLS | TEXT SEPARATOR CALLS ) END-UP-TO-THE-STOP
        CALLS = CALL (SEPARATOR CALL)*
        CALL  = call open {"<id>": "ID", "<name>": "NAME", "<arguments>": ARGS} call close

    Text is the format's escaped text language.  ``required`` and a named choice leave no
    room for text before the first call: their turns begin with the forced prefix (the call
    open; a named one through the id's opening quote).  Header pairs an assistant turn may
    carry are not learned, so not in the grammar.  A marker spelled inside the call's JSON
    (which the writer would escape into text that is no longer JSON) is not accepted.
    """
    from ..export.grammar import TurnGrammar
    from ..export.grammar_ast import Lit as LitNode
    from ..export.grammar_ast import Node, Repeat, Rules, Terminal, alt, optional, seq
    from ..export.json_schema import BASE_RULES
    from ..export.text_language import TextLanguage, lark_without_markers, text_terminal
    from ..export.turns._common import function_tools_only, json_arguments, rules_for
    from .grammar import _end, drop_prefix, nodes

    calls = json_calls(layout)
    reasoning = layout.reasoning
    content, content_nl = text_terminal("TEXT", "NE"), text_terminal("TEXT", "NL")
    calls_possible = bool(tools) and choice.mode != "none" and calls is not None
    if calls_possible:
        function_tools_only(tools)
    only = choice.only
    end = _end(layout, fmt.stop)
    key = _containers(layout).call_id
    id_rest = Terminal(
        "JSON_ID_REST",
        lark=lark_without_markers(TextLanguage.of(fmt), _ID_REST_REGEX),
        gbnf="json-id-rest",
    )

    def escaped(text: str) -> str:
        if fmt.escape_pattern is None:
            return text
        return escape_text(text, fmt.escape_pattern, before_marker=False)

    def items(rules: Rules, number: int) -> list[Node]:
        assert calls is not None
        rules.gbnf_extra.update({k: v for k, v in BASE_RULES.items() if k not in rules.gbnf_extra})
        tool = tools[number]
        name = escaped(json.dumps(tool.name, ensure_ascii=False))
        named = f"{json_string(calls.name_key)}: {name}, {json_string(calls.arguments_key)}: "
        rules.gbnf_extra.setdefault("json-id-rest", 'json-char* "\\""')
        return [  # the id is free: a JSON string with no marker in it
            *nodes(layout, calls.open or ()),
            LitNode(f"{{{json_string(key)}: " + '"'),
            id_rest,
            LitNode(", " + named),
            json_arguments(rules, number, tool),
            LitNode("}"),
            *nodes(layout, calls.close),
        ]

    def define(rules: Rules) -> Node:
        options = [
            rules.add(f"call_{number}", seq(*items(rules, number)))
            for number, tool in enumerate(tools)
            if only is None or tool.name == only
        ]
        return rules.add("call", alt(*options))

    def many(rules: Rules) -> Node:
        assert calls is not None
        call = define(rules)
        if not (parallel and calls.parallel):
            return call
        return seq(call, Repeat(seq(*nodes(layout, calls.separator), call)))

    rules = rules_for(fmt)
    answer: Node
    if not calls_possible:
        answer = seq(optional(content), end)
    elif choice.mode == "auto":
        assert calls is not None
        separator = nodes(layout, calls.separator)
        if separator and isinstance(separator[0], LitNode) and separator[0].text == "\n":
            before: list[Node] = [content_nl, *separator[1:]]
        else:
            before = [content, *separator]
        calls_rule = many(rules)
        answer = alt(
            seq(optional(content), end), seq(calls_rule, end), seq(*before, calls_rule, end)
        )
    else:
        answer = seq(many(rules), end)
    markers: list[str] = []
    if reasoning is not None:
        close = nodes(layout, reasoning.close)
        block = seq(*nodes(layout, reasoning.open), optional(content), *close)
        rules.rules["start"] = seq(optional(rules.add("reasoning", block)), answer)
        markers += _markers(reasoning.open) + _markers(reasoning.close)
    else:
        rules.rules["start"] = answer
    if calls_possible:
        assert calls is not None
        markers += _markers(calls.open or ()) + _markers(calls.close)
    has_calls = calls is not None and bool(tools)
    turn = TurnGrammar(
        rules=rules,
        markers=tuple(markers),
        stop=fmt.stop,
        reasoning=reasoning_text(layout),
        forced_prefixes={
            "auto": "",
            "none": "",
            "required": call_prefix(layout, None) if has_calls else "",
        },
    )
    if has_calls:
        for tool in tools:
            turn.forced_prefixes[tool.name] = call_prefix(layout, tool.name)
    if not calls_possible:
        return turn
    assert calls is not None
    turn.trigger = next(iter(_markers(calls.open or ())), None)
    if choice.mode == "auto":
        lazy = rules_for(fmt)
        lazy.rules["start"] = seq(many(lazy), end)
        turn.lazy = lazy
        return turn
    after = rules_for(fmt)
    prefix = turn.forced_prefixes["required" if choice.mode == "required" else choice.key()]
    firsts = [
        seq(*drop_prefix(items(after, number), prefix))
        for number, tool in enumerate(tools)
        if only is None or tool.name == only
    ]
    rest: Node = LitNode("")
    if parallel and calls.parallel:
        rest = Repeat(seq(*nodes(layout, calls.separator), define(after)))
    after.rules["start"] = seq(alt(*firsts), rest, end)
    turn.after_prefix = after
    return turn
