"""The headed-turns writer as it was before rows and kept listings (commit df27d14), kept
unchanged as the reference of :mod:`tests.declare.headed.test_write`'s differential test."""

from __future__ import annotations

import json
from typing import Any

from pawlette.blocks.role_order import check_role_order
from pawlette.codecs.python_calls import encode_call
from pawlette.declare.headed import TOOLS_OPEN, HeadedTurns, headed_of, role_markers, title
from pawlette.declare.layout import Fence, Layout, Marker
from pawlette.declare.write import WriteConversation
from pawlette.engine.json_text import indented_json
from pawlette.engine.writer import Writer
from pawlette.errors import UnsupportedFeature
from pawlette.types import Message, Role, TextPart, Tool, ToolCall


def _fence(writer: Writer, pieces: Fence, kind: str, *, trainable: bool = False) -> None:
    for piece in pieces:
        if isinstance(piece, Marker):
            writer.marker(piece.text, kind, trainable=trainable)
        else:
            writer.raw(piece.text, kind, trainable=trainable)  # type: ignore[union-attr]


def _text(message: Message, index: int) -> str:
    for number, part in enumerate(message.content or ()):
        if not isinstance(part, TextPart):
            raise UnsupportedFeature(
                f"messages[{index}].content[{number}]",
                f"a {type(part).__name__}",
                "text parts only",
            )
    return message.text


def _metadata(layout: Layout, message: Message, index: int) -> str:
    if message.reasoning is not None or message.reasoning_steps is not None:
        raise UnsupportedFeature(
            f"messages[{index}].reasoning_content",
            "reasoning",
            f"none: {title(layout)} has no reasoning block",
        )
    if message.metadata:
        raise UnsupportedFeature(
            f"messages[{index}].metadata",
            "metadata pairs",
            "none: the metadata line holds the name",
        )
    name = message.name or ""
    if name and message.role == "assistant":
        raise UnsupportedFeature(
            f"messages[{index}].name",
            "a name on an assistant message",
            "none: its metadata line names its call",
        )
    if "\n" in name:
        raise UnsupportedFeature(f"messages[{index}].name", f"{name!r}", "a name on one line")
    return name if message.role != "tool" else ""


def _call_turn(calls: HeadedTurns, call: ToolCall, path: str) -> tuple[str, str]:
    """The metadata line and the fenced body of one call."""
    if call.name == calls.code_tool:
        arguments: Any = json.loads(call.arguments)
        code = arguments.get(calls.code_argument) if isinstance(arguments, dict) else None
        if not isinstance(code, str) or len(arguments) != 1:
            raise UnsupportedFeature(
                f"{path}.arguments",
                f"{call.arguments[:60]!r}",
                f'{{"{calls.code_argument}": "<program>"}}',
            )
        return calls.code_metadata, code
    if (
        call.name == calls.code_metadata
        or not call.name.strip()
        or call.name != call.name.strip()
        or "\n" in call.name
    ):
        raise UnsupportedFeature(
            f"{path}.name",
            f"{call.name!r}",
            f"a one-line name other than {calls.code_metadata!r}",
            f"To run code, call {calls.code_tool!r}",
        )
    return call.name, encode_call(calls.callee, call.arguments, quote=calls.quote, path=path)


def _write_tools(writer: Writer, tools: tuple[Tool, ...]) -> None:
    for number, tool in enumerate(tools):
        if tool.kind != "function":
            raise UnsupportedFeature(f"tools[{number}].type", f"{tool.kind!r}", "'function'")
    listing = [dict(tool.definition) for tool in tools]
    writer.text(TOOLS_OPEN + indented_json(listing), "tools")


class _Render:
    def __init__(self, layout: Layout, writer: Writer) -> None:
        self.layout = layout
        self.calls = headed_of(layout)
        self.writer = writer
        results = layout.results
        assert results is not None
        self.opens: dict[Role, Fence] = {
            "system": layout.frames["system"].open,
            "user": layout.frames["user"].open,
            "assistant": layout.frames["assistant"].open,
            "tool": results.frame.open,
        }

    def assistant(self, message: Message, index: int) -> None:
        writer, calls = self.writer, self.calls
        _metadata(self.layout, message, index)
        continuation = False
        if message.content or not message.tool_calls:
            _fence(writer, self.opens["assistant"], "header")
            writer.raw("\n", "metadata", trainable=True)
            writer.text(_text(message, index), "content", trainable=True)
            continuation = True
        for number, call in enumerate(message.tool_calls):
            path = f"messages[{index}].tool_calls[{number}].function"
            metadata, body = _call_turn(calls, call, path)
            _fence(writer, self.opens["assistant"], "header", trainable=continuation)
            # The metadata line and the fenced body are apart, as the reference encodes them.
            writer.text(metadata, "metadata", trainable=True)
            writer.raw("\n", "metadata", trainable=True)
            writer.raw(calls.opening, "tool_call", trainable=True)
            writer.text(body, "tool_call", trainable=True)
            writer.raw(calls.closing, "tool_call", trainable=True)
            continuation = True

    def write(self, messages: tuple[Message, ...], tools: tuple[Tool, ...], prompt: bool) -> None:
        writer, layout = self.writer, self.layout
        if self.calls.role_order is not None:
            check_role_order(messages, self.calls.role_order)
        _fence(writer, layout.begin, "begin")
        tools_pending = bool(tools)
        if tools_pending and (not messages or messages[0].role != "system"):
            writer.at("system", -1)
            _fence(writer, self.opens["system"], "header")
            writer.raw("\n", "metadata")
            _write_tools(writer, tools)
            tools_pending = False
        previous: Role | None = None
        for index, message in enumerate(messages):
            writer.at(message.role, index)
            if message.role == "assistant":
                self.assistant(message, index)
            else:
                # The model ends its turn by writing the next role marker: learn that one.
                stop = previous == "assistant" and message.role in ("user", "tool")
                _fence(writer, self.opens[message.role], "header", trainable=stop)
                writer.text(_metadata(layout, message, index), "metadata")
                writer.raw("\n", "metadata")
                writer.text(_text(message, index), "content")
                if message.role == "system" and tools_pending:
                    _write_tools(writer, tools)
                    tools_pending = False
            previous = message.role
        if prompt:
            writer.at("assistant", len(messages))
            _fence(writer, self.opens["assistant"], "generation_prompt")
        elif previous == "assistant":
            # A final assistant turn ends with the stop the model writes at inference.
            end = self.opens["tool" if messages[-1].tool_calls else "user"]
            _fence(writer, end, "end", trainable=True)


def writer_of(layout: Layout) -> WriteConversation:
    """The render function of a layout with headed turns."""
    role_markers(layout)  # checks the layout has every role's marker

    def write(
        writer: Writer, messages: tuple[Message, ...], tools: tuple[Tool, ...], prompt: bool
    ) -> None:
        _Render(layout, writer).write(messages, tools, prompt)

    return write
