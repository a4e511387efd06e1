"""The writer interpreter: a :class:`~.layout.Layout` renders conversations into segments.

Every fence piece becomes one segment: a :class:`~.layout.Marker` a special segment, a
:class:`~.layout.Lit` or :class:`~.layout.Option` raw scaffolding; message text is written as
caller text.  The assistant's reasoning, content, calls and end fence are trainable; frames,
tools, results and what follows the end fence are not.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from json.encoder import encode_basestring_ascii as ascii_string  # json.dumps of a str
from typing import Any, cast

from ..engine.json_text import (
    json_string,  # json.dumps(ensure_ascii=False), encoder made once
    kept_json_string,
)
from ..engine.writer import ConstantSegments, Writer
from ..errors import RequestError, UnsupportedFeature
from ..types import Message, TextPart, Tool
from . import decision, python_calls, python_results, python_tools
from .layout import Fence, JsonCalls, Layout, Marker, Option
from .owners import owner

WriteConversation = Callable[[Writer, tuple[Message, ...], tuple[Tool, ...], bool], None]


def option_text(layout: Layout, piece: Option) -> str:
    value = getattr(layout.options, piece.name, None)
    if not isinstance(value, str):
        raise RequestError(
            f"options.{piece.name}", f"{value!r}", f"a string option of {layout.name}"
        )
    return value


def message_text(message: Message, index: int, format_name: str) -> str:
    """The text of a message; other content parts, names and metadata are refused."""
    if message.name is not None:
        raise UnsupportedFeature(
            f"messages[{index}].name", "a name", f"none: {format_name} has no names"
        )
    if message.metadata:
        raise UnsupportedFeature(
            f"messages[{index}].metadata", "metadata", f"none: {format_name} has no place"
        )
    content = message.content
    if content and len(content) == 1 and type(content[0]) is TextPart:
        return content[0].text  # the common case, without the general walk below
    for number, part in enumerate(message.content or ()):
        if not isinstance(part, TextPart):
            raise UnsupportedFeature(
                f"messages[{index}].content[{number}]",
                f"a {type(part).__name__}",
                f"text parts only: {format_name} has no markup for other content",
            )
    return message.text


@functools.lru_cache(maxsize=1024)
def _indented(compact: str, indent: int) -> str:
    # json.dumps with an indent runs the pure-Python encoder: tool listings repeat across
    # requests, so each is indented once (the compact dump, in C, is the key).
    return json.dumps(json.loads(compact), ensure_ascii=False, indent=indent)


def tool_json(layout: Layout, tool: Tool) -> str:
    """One tool as the block writes it (Jinja's ``tojson``: ``ensure_ascii=False``)."""
    block = layout.tools
    assert block is not None
    value: Any = dict(tool.definition)
    if block.wrap == "openai":
        value = {"type": "function", "function": value}
    if block.indent is None:
        return kept_json_string(value)
    return _indented(kept_json_string(value), block.indent)


def check_call_name(name: str, index: int, number: int) -> None:
    """A JSON call's name is written as given, but an empty one parses back as no call
    (README: Contracts, rule 2), so a render refuses it."""
    if not name:
        name_path = f"messages[{index}].tool_calls[{number}].function.name"
        raise RequestError(name_path, "an empty name", "a function name")


def arguments_text(layout: Layout, arguments: str, where: str) -> str:
    calls = layout.calls
    assert calls is not None
    stripped = arguments.strip()
    if calls.arguments == "verbatim":
        return stripped
    try:
        value = json.loads(stripped or "{}")
    except json.JSONDecodeError as error:
        raise RequestError(where, f"not valid JSON ({error.msg})", "a JSON object") from error
    return json_string(value)


def last_query_index(messages: tuple[Message, ...]) -> int:
    """The index of the last user message (-1: none)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            return index
    return -1


class _Render:
    """One rendering: the layout's concepts written in conversation order."""

    def __init__(
        self,
        layout: Layout,
        writer: Writer,
        tools: tuple[Tool, ...],
        cache: dict[int, tuple[Fence, tuple[tuple[bool, str], ...]]],
        constants: ConstantSegments | None = None,
    ) -> None:
        self.layout = layout
        self.writer = writer
        self.tools = tools
        self.cache = cache
        self.constants = ConstantSegments() if constants is None else constants
        self.messages: tuple[Message, ...] = ()
        for number, tool in enumerate(tools):
            if tool.kind != "function":
                raise UnsupportedFeature(f"tools[{number}].type", f"{tool.kind!r}", "'function'")
        if tools and layout.tools is None:
            raise UnsupportedFeature("tools", "tools", f"none: {layout.name} has no tools block")

    def fence(self, pieces: Fence, kind: str, *, trainable: bool = False) -> None:
        if not pieces:
            return
        # The fence's segments in this message context, from the layout's cache; keyed by the
        # fence's identity, which is safe: a fence is built into that cache only after
        # resolve() has kept it (alive) in ``cache``, so its id is never another's.
        writer = self.writer
        key = id(pieces)
        segments = self.constants.found.get(
            (key, kind, trainable, writer.role, writer.message_index)
        )
        if segments is None:
            found = self.cache.get(key)
            pairs = found[1] if found is not None and found[0] is pieces else self.resolve(pieces)
            segments = self.constants.build(writer, key, pairs, kind, trainable)
        if writer._unfinished is None:  # (Writer.extend's common case, without its call)
            writer._extend(segments)
        else:
            writer.extend(segments)

    def resolve(self, pieces: Fence) -> tuple[tuple[bool, str], ...]:
        """A fence as (is a marker, text) pairs, options read once per layout (cached by
        the fence's identity: the layout holds its fences for as long as it lives)."""
        pairs = tuple(
            (
                isinstance(piece, Marker),
                option_text(self.layout, piece) if isinstance(piece, Option) else piece.text,
            )
            for piece in pieces
        )
        self.cache[id(pieces)] = (pieces, pairs)
        return pairs

    def tools_block(self) -> None:
        block = self.layout.tools
        assert block is not None
        if isinstance(block, python_tools.PythonToolsBlock):  # a concept of its own module
            return python_tools.write_listing(self)
        self.fence(block.open, "tools")
        for tool in self.tools:
            self.fence(block.item_open, "tools")
            self.writer.text(tool_json(self.layout, tool), "tools")
            self.fence(block.item_close, "tools")
        self.fence(block.close, "tools")

    def host_body(self, text: str | None) -> None:
        """A host turn's text with the tools block where the layout puts it."""
        block = self.layout.tools
        assert block is not None
        if block.first:
            self.tools_block()
            if text:
                self.writer.text(text, "content")
            return
        if text is not None:
            self.writer.text(text, "content")
            self.fence(block.separator, "tools")
        self.tools_block()

    def system_turn(self, message: Message | None) -> None:
        layout = self.layout
        block = layout.tools
        tools_here = bool(self.tools) and block is not None and block.host == "system"
        text = message_text(message, 0, layout.name) if message is not None else None
        if text is None:
            text = layout.system.default
        if text is None and not tools_here and not layout.system.always:
            return
        frame = layout.frames["system"]
        self.writer.at("system", 0 if message is not None else -1)
        self.fence(frame.open, "header")
        if self.tools:
            self.fence(layout.system.preamble_with_tools, "header")
        else:
            self.fence(layout.system.preamble_without_tools, "header")
        self.fence(layout.system.preamble, "header")
        if tools_here:
            self.host_body(text)
        elif text:
            self.writer.text(text, "content")
        self.fence(frame.end, "close")
        self.fence(frame.after, "separator")

    def plain_turn(self, message: Message, index: int, *, with_tools: bool = False) -> None:
        frame = self.layout.frames[message.role]  # type: ignore[index]
        self.writer.at(message.role, index)
        self.fence(frame.open, "header")
        if self.layout.parts is not None and not with_tools:  # a concept of its own module
            from .parts import write_content

            write_content(self, message, index, trainable=False)
        else:
            text = message_text(message, index, self.layout.name)
            if with_tools:
                self.host_body(text)
            else:
                self.writer.text(text, "content")
        self.fence(frame.end, "close")
        self.fence(frame.after, "separator")

    def assistant_turn(self, message: Message, index: int, reasoning_written: bool) -> None:
        layout = self.layout
        frame = layout.frames["assistant"]
        self.writer.at("assistant", index)
        self.fence(frame.open, "header")
        if message.reasoning_steps is not None:
            raise UnsupportedFeature(
                f"messages[{index}].reasoning_steps", "structured thinking", "reasoning_content"
            )
        reasoning = layout.reasoning
        if message.reasoning is not None and reasoning is None:
            raise UnsupportedFeature(
                f"messages[{index}].reasoning_content",
                "reasoning",
                f"none: {layout.name} has no reasoning block",
            )
        if reasoning is not None and reasoning_written:
            self.fence(reasoning.open, "reasoning", trainable=True)
            self.writer.text(message.reasoning or "", "reasoning", trainable=True)
            self.fence(reasoning.close, "reasoning", trainable=True)
        if layout.parts is not None:  # a concept of its own module
            from .parts import write_content

            write_content(self, message, index, trainable=True)
            text = message.text
        else:
            text = message_text(message, index, layout.name)
            self.writer.text(text, "content", trainable=True)
        if message.tool_calls:
            self.calls(message, index, after_text=bool(text))
        self.fence(frame.end, "end", trainable=True)
        self.fence(frame.after, "separator")

    def calls(self, message: Message, index: int, *, after_text: bool) -> None:
        calls = self.layout.calls
        if calls is None:
            raise UnsupportedFeature(
                f"messages[{index}].tool_calls", "tool calls", f"none: {self.layout.name}"
            )
        if not isinstance(calls, JsonCalls):  # a concept of its own module
            python_calls.write_calls(self, message, index, after_text=after_text)
            return
        if after_text and not calls.with_content:
            raise UnsupportedFeature(
                f"messages[{index}].content",
                "text alongside tool calls",
                f"either text or calls: {self.layout.name} writes a call as the whole turn",
            )
        if len(message.tool_calls) > 1 and not calls.parallel:
            raise UnsupportedFeature(
                f"messages[{index}].tool_calls",
                f"{len(message.tool_calls)} calls",
                f"one call per turn: {self.layout.name} has no parallel calls",
            )
        for number, call in enumerate(message.tool_calls):
            if after_text or number:
                self.fence(calls.separator, "tool_call", trainable=True)
            self.fence(calls.open or (), "tool_call", trainable=True)
            check_call_name(call.name, index, number)
            where = f"messages[{index}].tool_calls[{number}].function.arguments"
            body = (
                f"{{{ascii_string(calls.name_key)}: {json_string(call.name)}, "
                f"{ascii_string(calls.arguments_key)}: "
                f"{arguments_text(self.layout, call.arguments, where)}}}"
            )
            self.writer.text(body, "tool_call", trainable=True)
            self.fence(calls.close, "tool_call", trainable=True)

    def results(self, run: list[tuple[int, Message]]) -> None:
        results = self.layout.results
        if isinstance(results, python_results.PythonResults):  # a concept of its own module
            return python_results.write_results(self, run)
        if results is None:
            index = run[0][0]
            raise UnsupportedFeature(
                f"messages[{index}]", "a tool result", f"none: {self.layout.name} has no results"
            )
        groups = [run] if results.grouped else [[item] for item in run]
        for group in groups:
            self.writer.at("tool", group[0][0])
            self.fence(results.frame.open, "header")
            for index, message in group:
                self.writer.at("tool", index)
                self.fence(results.item_open, "tool_result")
                self.writer.text(message_text(message, index, self.layout.name), "tool_result")
                self.fence(results.item_close, "tool_result")
            self.fence(results.frame.end, "close")
            self.fence(results.frame.after, "separator")


def reasoning_written(layout: Layout, messages: tuple[Message, ...], index: int) -> bool:
    """Whether the assistant message at ``index`` gets a reasoning block."""
    reasoning = layout.reasoning
    if reasoning is None:
        return False
    message = messages[index]
    if reasoning.keep == "all":
        return message.reasoning is not None
    if index <= last_query_index(messages):
        return False
    last = index == len(messages) - 1
    return bool(message.reasoning) or (last and reasoning.always_on_last)


def writer_of(layout: Layout) -> WriteConversation:
    """The render function of a layout (what :class:`pawlette.Format` calls)."""
    concept = owner(layout, "writer_of")
    if concept is not None:
        return cast(WriteConversation, concept(layout))

    cache: dict[int, tuple[Fence, tuple[tuple[bool, str], ...]]] = {}
    constants = ConstantSegments()

    def write(
        writer: Writer, messages: tuple[Message, ...], tools: tuple[Tool, ...], prompt: bool
    ) -> None:
        if layout.check is not None:  # the format's own checks (options)
            layout.check(messages, tools)
        render = _Render(layout, writer, tools, cache, constants)
        render.messages = messages
        writer.at(None, -1)
        render.fence(layout.begin, "begin")
        first = 0
        if messages and messages[0].role == "system":
            render.system_turn(messages[0])
            first = 1
        else:
            render.system_turn(None)
        block = layout.tools
        tools_in_user = bool(tools) and block is not None and block.host == "first_user"
        if tools_in_user and (first >= len(messages) or messages[first].role != "user"):
            raise RequestError(
                f"messages[{first}]",
                "no user message here" if first >= len(messages) else messages[first].role,
                f"a user message: {layout.name} writes the tools into the first user message",
            )
        index = first
        while index < len(messages):
            message = messages[index]
            role = message.role
            if role == "tool":
                run = []
                while index < len(messages) and messages[index].role == "tool":
                    run.append((index, messages[index]))
                    index += 1
                render.results(run)
                continue
            if role == "assistant" and layout.decision is not None:  # a concept of its own
                decide = not prompt and decision.decided(layout, tools, len(messages), index)
                decision.write_assistant(render, message, index, decide)
            elif role == "assistant":
                render.assistant_turn(message, index, reasoning_written(layout, messages, index))
            elif role in ("user", "system"):
                render.plain_turn(message, index, with_tools=tools_in_user and index == first)
            else:
                raise UnsupportedFeature(f"messages[{index}].role", repr(role), "a chat role")
            index += 1
        if prompt:
            writer.at("assistant", len(messages))
            render.fence(layout.generation_prompt, "generation_prompt")

    return write
