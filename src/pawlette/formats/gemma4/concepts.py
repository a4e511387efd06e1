"""The concepts only Gemma 4 needs: its tools, calls and results in its value syntax, the
reasoning it keeps, and the end of a turn with calls."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ...declare import CallTurnEnd, NamedCalls, Reasoning, Results, ToolsBlock
from ...declare.calls import arguments_object
from ...declare.named_calls import NamedCallSet
from ...declare.pieces import Fence, Marker, fence
from ...declare.readers import Described, ResultReader
from ...declare.results import ResultNameReader
from ...declare.table import AFTER_CALL, begin, end
from ...emit.jinja_text import jinja_string
from ...engine.kept import MISSING, Kept, marshal_key
from ...errors import RequestError
from . import jinja as macros
from .declarations import declaration
from .grammar import arguments_node
from .reading import CALL_STATE, CallReader, TextAfterCallsReader
from .values import QUOTE, write_members

if TYPE_CHECKING:
    from ...declare.grammar import Turn
    from ...declare.jinja import Template
    from ...declare.table import Table
    from ...declare.write import Render
    from ...emit.grammar_ast import Node, Rules
    from ...types import Tool

Q = Marker(QUOTE)
NEWLINE = fence("\n")


HELD = "\ue000"
"""Stands for a ``<|"|>`` the request's own text spells while a value is written, so only the
quotes the syntax writes become the quote token (a private-use character; text holding it is
refused)."""


def held(value: Any, where: str) -> Any:
    """``value`` with every ``<|"|>`` its strings and keys spell replaced by :data:`HELD`."""
    if isinstance(value, str):
        if HELD in value:
            raise RequestError(where, "text holding U+E000", "text without U+E000")
        return value.replace(QUOTE, HELD)
    if isinstance(value, dict):
        return {held(key, where): held(item, where) for key, item in value.items()}
    if isinstance(value, list):
        return [held(item, where) for item in value]
    return value


def quoted(text: str) -> Fence:
    """Written ``text`` as pieces: each ``<|"|>`` in it the quote token, each :data:`HELD`
    the text ``<|"|>`` the request spelled."""
    pieces: list[str | Marker] = []
    for number, part in enumerate(text.split(QUOTE)):
        if number:
            pieces.append(Q)
        if part:
            pieces.append(part.replace(HELD, QUOTE))
    return fence(*pieces)


class _DeclarationsReader(ResultNameReader):
    """A tool's declaration: layout, not read back into a tool (its types are upper-cased,
    its keys unquoted: not the JSON schema it was written from)."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        self._parser.lose_tools("Gemma 4 declarations")


_DECLARATIONS: Kept[tuple[Fence, ...]] = Kept(limit=256, longest=1 << 14)
"""Each tool's declaration as written pieces, by the tools' content and the template (the
same tools come with every request: each list is written once)."""


@dataclass(frozen=True)
class GemmaTools(ToolsBlock):
    """Each tool as its declaration (:mod:`.declarations`) between the item fences, in the
    system turn.  ``interleaved``: as the interleaved-thinking template writes them."""

    interleaved: bool = False

    def check(self, out: Render) -> None:
        super().check(out)
        for number, tool in enumerate(out.tools):
            try:
                declaration(tool.definition, interleaved=self.interleaved)
            except (AttributeError, TypeError) as error:
                # A keyword of the wrong JSON type ("properties": [], "required": 5): the
                # template's macros would fail on it as the writer does.
                raise RequestError(
                    f"tools[{number}].function.parameters",
                    f"a schema Gemma 4's declaration cannot write ({error})",
                    "a JSON schema whose keywords have their JSON types (properties an "
                    "object of objects, required a list of names)",
                ) from error

    def declarations(self, tools: tuple[Tool, ...]) -> tuple[Fence, ...]:
        """Each tool's declaration as written pieces (kept: the same objects each time a
        list comes again, which the writer finds by identity)."""
        definitions = [tool.definition for tool in tools]
        key = marshal_key(definitions)
        return _DECLARATIONS.get(
            None if key is None else (b"i" if self.interleaved else b"-") + key,
            lambda: tuple(
                quoted(declaration(held(dict(d), f"tools[{n}]"), interleaved=self.interleaved))
                for n, d in enumerate(definitions)
            ),
        )

    def block(self, out: Render, *, separated: bool = False) -> None:
        out.fence(self.open, "tools")
        for pieces in self.declarations(out.tools):
            out.fence(self.item_open, "tools")
            out.fence(pieces, "tools")
            out.fence(self.item_close, "tools")
        out.fence(self.close, "tools")

    def rows(self, table: Table) -> None:
        # The declarations are read as layout: a request's tools are not a message.
        markers = (table.text(self.item_open), table.text(self.item_close), QUOTE)
        table.state("system.tools", _DeclarationsReader, "system", ends=True, inner=markers)
        table.on("system.body", table.text(self.item_open), "system.tools")

    def jinja_setup(self, out: Template) -> None:
        super().jinja_setup(out)
        macros.define(out, interleaved=self.interleaved)

    def jinja_block(self, out: Template, *, separated: bool = False) -> None:
        out.fence(self.open)
        out.out("{%- for tool in tools -%}")
        out.fence(self.item_open)
        out.out("{{- gemma_declaration(tool.function) -}}")
        out.fence(self.item_close)
        out.out("{%- endfor -%}")
        out.fence(self.close)


_ARGUMENTS: Kept[Fence] = Kept(limit=4096, longest=1 << 14)
"""Calls' arguments as written pieces, by their JSON text."""


@dataclass(frozen=True)
class GemmaCalls(NamedCalls):
    """``<|tool_call>call:NAME{ARGUMENTS}<tool_call|>``, the arguments' members in the value
    syntax (:mod:`.values`).

    ``text_after``: the text of a turn with calls is written after them, trimmed, in the same
    turn (the template writes ``message['content']`` after its ``tool_calls`` loop), and read
    there as the turn's content; otherwise it is written before them."""

    text_after: bool = False

    def hook_roles(self, hook: str) -> frozenset[str] | None:
        if hook == "write_content" and self.text_after:
            return self.turn_roles()
        return super().hook_roles(hook)

    def hook_needs(self, hook: str, role: str) -> str | None:
        # Both hooks act on a turn with calls alone (a turn without writes its text as ever).
        if self.text_after and hook in ("write_content", "write_closing"):
            return "tool_calls"
        return super().hook_needs(hook, role)

    def write_content(self, out: Render, index: int) -> bool:
        # A turn with calls: its text comes after them (write_closing).
        if self.text_after and 0 <= index < len(out.messages) and out.messages[index].tool_calls:
            return True
        return super().write_content(out, index)

    def write_closing(self, out: Render, index: int) -> None:
        super().write_closing(out, index)
        if self.text_after and 0 <= index < len(out.messages) and out.messages[index].tool_calls:
            text = out.message_text(index).strip()
            if text:
                out.writer.text(text, "content", trainable=True)

    def jinja_content(self, out: Template, role: str) -> bool:
        if not self.text_after:
            return super().jinja_content(out, role)
        with out.when("not (message.tool_calls is defined and message.tool_calls)"):
            out.later_content(self, role)
        return True

    def jinja_closing(self, out: Template, role: str) -> None:
        super().jinja_closing(out, role)
        if self.text_after:
            with out.when("message.tool_calls is defined and message.tool_calls"):
                out.out(f"{{{{- text_of(message, index, {out.layout.name!r}) | trim -}}}}")

    def write_arguments(self, out: Render, arguments: str, index: int, number: int) -> None:
        # (Kept by the text: a conversation's calls come again with each request; the same
        # fence object each time, which the writer finds by identity.)
        written = _ARGUMENTS.find(arguments)
        if written is MISSING:
            where = f"messages[{index}].tool_calls[{number}].function.arguments"
            written = quoted(write_members(held(arguments_object(arguments, index, number), where)))
            _ARGUMENTS.keep(arguments, written)
        out.fence(written, "tool_call", trainable=True)

    def rows(self, table: Table) -> None:
        # Only the call tokens are markers (see :mod:`.reading`).
        opening, closing = table.text(self.open[:1]), table.text(self.close[-1:])
        reader = Described(
            "Gemma call", lambda parser: CallReader(parser, closing), closing=closing
        )
        table.state(CALL_STATE, reader, "assistant", ends=True, inner=(QUOTE,))
        table.calls_open([opening], CALL_STATE)
        if not self.text_after:
            table.after_calls(CALL_STATE, [closing], reopen=[opening])
            return
        # The turn's text after its calls is content, and another call may follow it.
        table.state(AFTER_CALL, TextAfterCallsReader, "assistant", ends=True)
        table.on(CALL_STATE, closing, AFTER_CALL)
        table.on(AFTER_CALL, opening, CALL_STATE)

    def jinja_setup(self, out: Template) -> None:
        super().jinja_setup(out)
        macros.define_values(out)

    def jinja_arguments(self, out: Template) -> None:
        out.out("{{- gemma_members(call.function.arguments, false) -}}")

    def arguments_node(self, rules: Rules, number: int, tool: Tool) -> Node:
        return arguments_node(rules, number, tool)

    def grammar(self, turn: Turn) -> None:
        turn.calls = _TextAfterCallSet(self, turn) if self.text_after else NamedCallSet(self, turn)


class _TextAfterCallSet(NamedCallSet):
    """The calls' grammar, then the turn's text after them (``text_after``)."""

    def rest(self, turn: Turn, rules: Rules, parallel: bool) -> list[Node]:
        return [*super().rest(turn, rules, parallel), turn.content]


@dataclass(frozen=True)
class GemmaReasoning(Reasoning):
    """Reasoning written only on a turn after the last user message that holds calls (the
    template's rule); the rest is dropped, and the rendering says so."""

    def written(self, out: Render, index: int) -> bool:
        message = out.messages[index]
        return index > out.last_query and bool(message.reasoning) and bool(message.tool_calls)

    def check(self, out: Render) -> None:
        out.handles("reasoning")
        for index, message in enumerate(out.messages):
            if message.reasoning and message.role == "assistant" and not self.written(out, index):
                out.lose(
                    f"messages[{index}].reasoning_content",
                    "dropped (written only on a turn with calls after the last user message)",
                )

    def _condition(self, out: Template) -> str:
        given = "message.reasoning_content is defined and message.reasoning_content"
        calls = "message.tool_calls is defined and message.tool_calls"
        return f"index > {out.needs_last_query()} and ({given}) and ({calls})"


@dataclass(frozen=True)
class CallsAwaitResults(CallTurnEnd):
    """A turn with calls ends with ``end`` (``<|tool_response>``: the model asks for the
    results) and nothing after it; any other turn ends with its frame, then ``newline``."""

    newline: Fence = NEWLINE

    def write_after(self, out: Render, index: int) -> None:
        if 0 <= index < len(out.messages) and out.messages[index].tool_calls:
            return
        out.fence(self.newline, "separator")

    def jinja_after(self, out: Template, role: str) -> None:
        if role != "assistant":
            return
        out.fence_if("not (message.tool_calls is defined and message.tool_calls)", self.newline)

    def rows(self, table: Table) -> None:
        super().rows(table)
        # An answer right after another answer begins after this newline, with no opener
        # (the template opens none): the newline is layout, not the answer's text.
        table.begin_after(
            "assistant", "assistant", like="assistant.head", lead=table.text(self.newline)
        )


@dataclass(frozen=True)
class GemmaResults(Results):
    """Each result as ``response:NAME{value:<|"|>TEXT<|"|>}`` in the tool frame, NAME the
    called function's (found by ``tool_call_id``; else the tool message's ``name``; else
    ``unknown``, as the template does).  Read back, the name is layout (the call names the
    tool)."""

    head: str = "response:"
    value_open: str = "{value:"
    value_close: str = "}"

    @cached_property
    def _heads(self) -> Kept[Fence]:
        return Kept(limit=256, longest=1 << 10)

    @cached_property
    def _value_close(self) -> Fence:
        return fence(Q, self.value_close)

    @staticmethod
    def result_name(out: Render, index: int) -> str:
        wanted = out.messages[index].tool_call_id
        for earlier in range(index - 1, -1, -1):
            message = out.messages[earlier]
            if message.role == "tool":
                continue
            for call in message.tool_calls or ():
                if call.id == wanted:
                    return call.name
            break
        return out.messages[index].name or "unknown"

    def write_message(self, out: Render, index: int) -> None:
        frame = out.frame("tool")
        out.role, out.index = "tool", index
        out.at("tool", index)
        out.fence(frame.opener(out.previous), "header")
        name = self.result_name(out, index)
        # (One fence object per name, and one close: the writer finds them by identity.)
        heads = self._heads
        head = heads.find(name)
        if head is MISSING:
            head = fence(self.head + name + self.value_open, Q)
            heads.keep(name, head)
        out.fence(head, "tool_result")
        out.text(out.message_text(index), "tool_result")
        out.fence(self._value_close, "tool_result")
        out.fence(frame.end, "close")
        out.fence(frame.after, "separator")
        out.previous = "tool"

    def rows(self, table: Table) -> None:
        # A result begins with the frame's opener and ``response:`` as one marker: the first
        # result after a turn with calls follows the ``<|tool_response>`` that ended it (the
        # turn's states end there too), and ``response:`` alone stays text a model may write.
        opener = table.text(table.layout.frames["tool"].open)
        table.state("tool.name", ResultNameReader, "tool")
        table.state("tool.item", ResultReader, "tool")
        # The name and the braces are layout: only the quote tokens around the text are
        # read as markers (text fences around them would be read inside call arguments too).
        table.state("tool.between", ResultNameReader, "tool", ends=True)
        table.on("outside", opener + self.head, "tool.name", begin("tool"))
        for state in table.states_of("assistant"):
            table.on(state, opener + self.head, "tool.name", end, begin("tool"))
        table.on("tool.name", QUOTE, "tool.item")
        table.on("tool.item", QUOTE, "tool.between")

    def jinja_message(self, out: Template, role: str) -> None:
        frame = out.layout.frames["tool"]
        out.open_fence("tool")
        out.out("{%- set result = namespace(name=none) -%}")
        out.out(
            "{%- for earlier in range(index - 1, -1, -1) -%}"
            "{%- if result.name is none and messages[earlier].role != 'tool' -%}"
            "{%- set result.name = '' -%}"
            "{%- for call in messages[earlier].tool_calls or [] -%}"
            "{%- if result.name == '' and call.id == message.tool_call_id -%}"
            "{%- set result.name = call.function.name -%}{%- endif -%}{%- endfor -%}"
            "{%- endif -%}{%- endfor -%}"
        )
        out.out(
            "{%- if not result.name -%}{%- set result.name = message.name "
            "if message.name is defined and message.name else 'unknown' -%}{%- endif -%}"
        )
        out.out(f"{{{{- {jinja_string(self.head)} + result.name -}}}}")
        out.fence(fence(self.value_open, Q))
        out.text()
        out.fence(fence(Q, self.value_close))
        out.fence(frame.end)
        out.fence(frame.after)
        out.out('{%- set ns.previous = "tool" -%}')


__all__ = [
    "CallsAwaitResults",
    "GemmaCalls",
    "GemmaReasoning",
    "GemmaResults",
    "GemmaTools",
    "quoted",
]
