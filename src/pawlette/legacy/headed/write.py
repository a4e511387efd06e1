"""The writer of headed turns (see :mod:`pawlette.legacy.headed`).

Segments, per turn: the role marker (``header``), the metadata line (``metadata``: the name,
or a call's name, and its newline), the body (``content``, ``tool_call``, or the tools
listing).  The model writes everything after the first assistant marker of its message (each
later assistant marker of it too) and the marker that ends its turn: the next user or result
marker right after its message, and, when a training render ends with an assistant message,
the stop it writes there at inference (the result marker after calls, the user marker after
text), learned: without it single-turn training data would never teach the model to stop.

Rendering is on the serving path: the fences (each role's marker, with the metadata line's
newline when the turn has no name; the call fences; the prompt and the final stop) are rows
built once per layout (:mod:`..rows`), and the tools listing is indented once per distinct
set of definitions and kept (:func:`~pawlette.engine.json_text.kept_indented_json`), as a
server gets the same tools with every request.
"""

from __future__ import annotations

import json
from typing import Any

from ...blocks.role_order import check_role_order
from ...codecs.python_literals import encode_call
from ...engine.json_text import kept_indented_json
from ...engine.writer import Writer
from ...errors import UnsupportedFeature
from ...types import Message, Role, TextPart, Tool, ToolCall
from .. import rows
from ..layout import Fence, Layout
from ..rows import Row
from ..write import WriteConversation
from . import TOOLS_OPEN, HeadedTurns, headed_of, role_markers, title


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


def _listing(tools: tuple[Tool, ...]) -> str:
    """The tools block's text, its JSON kept by the definitions' content
    (:func:`~pawlette.engine.json_text.kept_indented_json`)."""
    for number, tool in enumerate(tools):
        if tool.kind != "function":
            raise UnsupportedFeature(f"tools[{number}].type", f"{tool.kind!r}", "'function'")
    listing = [dict(tool.definition) for tool in tools]
    return TOOLS_OPEN + kept_indented_json(listing)


class _Rows:
    """A layout's fences as rows (:mod:`..rows`), derived once per layout: each turn's marker,
    with the metadata line's newline when the turn has no metadata, and the call fences."""

    def __init__(self, layout: Layout) -> None:
        self.calls = headed_of(layout)
        results = layout.results
        assert results is not None
        opens: dict[Role, Fence] = {
            "system": layout.frames["system"].open,
            "user": layout.frames["user"].open,
            "assistant": layout.frames["assistant"].open,
            "tool": results.frame.open,
        }

        def head(role: Role, kind: str, trainable: bool) -> rows.Pieces:
            return rows.pieces(layout, opens[role], kind, trainable)

        newline: rows.Piece = (False, "\n", "metadata", False)
        learned_newline: rows.Piece = (False, "\n", "metadata", True)
        self.begin = Row(rows.pieces(layout, layout.begin, "begin"))
        # [role][stop]: the marker alone (metadata follows), and with the newline after it.
        self.header = {
            role: (Row(head(role, "header", False)), Row(head(role, "header", True)))
            for role in opens
        }
        self.header_line = {
            role: (
                Row((*head(role, "header", False), newline)),
                Row((*head(role, "header", True), newline)),
            )
            for role in opens
        }
        self.text_turn = Row((*head("assistant", "header", False), learned_newline))
        self.call_head = (
            Row(head("assistant", "header", False)),
            Row(head("assistant", "header", True)),
        )
        self.call_open = Row((learned_newline, (False, self.calls.opening, "tool_call", True)))
        self.call_close = Row(((False, self.calls.closing, "tool_call", True),))
        self.prompt = Row(head("assistant", "generation_prompt", False))
        self.after_calls = Row(head("tool", "end", True))
        self.after_text = Row(head("user", "end", True))


_rows_of = rows.once_per(_Rows)


def _content(message: Message, index: int) -> str:
    content = message.content
    if content and len(content) == 1 and type(content[0]) is TextPart:
        return content[0].text  # the common case: one text part
    return _text(message, index)


def _assistant(writer: Writer, layout: Layout, found: _Rows, message: Message, index: int) -> None:
    calls = found.calls
    _metadata(layout, message, index)
    continuation = False
    if message.content or not message.tool_calls:
        found.text_turn.write(writer)
        writer.text(_content(message, index), "content", trainable=True)
        continuation = True
    for number, call in enumerate(message.tool_calls):
        path = f"messages[{index}].tool_calls[{number}].function"
        metadata, body = _call_turn(calls, call, path)
        found.call_head[continuation].write(writer)
        # The metadata line and the fenced body are apart, as the reference encodes them.
        writer.text(metadata, "metadata", trainable=True)
        found.call_open.write(writer)
        writer.text(body, "tool_call", trainable=True)
        found.call_close.write(writer)
        continuation = True


def _write(
    layout: Layout,
    writer: Writer,
    messages: tuple[Message, ...],
    tools: tuple[Tool, ...],
    prompt: bool,
) -> None:
    found = _rows_of(layout)
    calls = found.calls
    if calls.role_order is not None:
        check_role_order(messages, calls.role_order)
    found.begin.write(writer)
    tools_pending = bool(tools)
    if tools_pending and (not messages or messages[0].role != "system"):
        writer.at("system", -1)
        found.header_line["system"][False].write(writer)
        writer.text(_listing(tools), "tools")
        tools_pending = False
    previous: Role | None = None
    for index, message in enumerate(messages):
        role = message.role
        writer.at(role, index)
        if role == "assistant":
            _assistant(writer, layout, found, message, index)
        else:
            # The model ends its turn by writing the next role marker: learn that one.
            stop = previous == "assistant" and role != "system"
            metadata = _metadata(layout, message, index)
            if metadata:
                found.header[role][stop].write(writer)
                writer.text(metadata, "metadata")
                writer.raw("\n", "metadata")
            else:
                found.header_line[role][stop].write(writer)
            writer.text(_content(message, index), "content")
            if tools_pending and role == "system":
                writer.text(_listing(tools), "tools")
                tools_pending = False
        previous = role
    if prompt:
        writer.at("assistant", len(messages))
        found.prompt.write(writer)
    elif previous == "assistant":
        # A final assistant turn ends with the stop the model writes at inference.
        (found.after_calls if messages[-1].tool_calls else found.after_text).write(writer)


def writer_of(layout: Layout) -> WriteConversation:
    """The render function of a layout with headed turns."""
    role_markers(layout)  # checks the layout has every role's marker

    def write(
        writer: Writer, messages: tuple[Message, ...], tools: tuple[Tool, ...], prompt: bool
    ) -> None:
        _write(layout, writer, messages, tools, prompt)

    return write
