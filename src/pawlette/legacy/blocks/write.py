"""The writer of block turns: one conversation, the assistant turn left open by calls.

A call ends the model's writing (the turn is left at the call's close); its result, the next
tool message, is written inside the same turn and the turn resumes: the next assistant
message continues it, any other message closes it with the assistant frame's ``end``.  The
injected result is not trainable; the rest of the turn is.
"""

from __future__ import annotations

from typing import Literal

from ...engine.writer import Writer
from ...errors import RequestError, UnsupportedFeature
from ...types import (
    ActionPart,
    ImagePart,
    ImageRequestPart,
    Message,
    Role,
    TextPart,
    Tool,
    ToolCall,
    VoicePart,
)
from .. import rows
from ..layout import Layout, Marker
from ..rows import Row
from ..write import WriteConversation
from . import BlockTurns, blocks_of, inline_calls, json_blocks, thinking, tiling

Prompt = Literal["assistant", "image"] | None


def _marker(layout: Layout, role: Role, which: Literal["open", "end"]) -> str:
    pieces = getattr(layout.frames[role], which)  # type: ignore[index]
    (piece,) = pieces
    assert isinstance(piece, Marker), f"{layout.name}: a block turn's frame is one marker"
    return piece.text


class _Rows:
    """What the writer derives from a layout once (:func:`..rows.once_per`): its blocks, and
    its scaffolding as rows (:mod:`..rows`)."""

    __slots__ = (
        "begin",
        "blocks",
        "closes",
        "end",
        "ended",
        "known",
        "markers",
        "opens",
        "tools_end",
    )

    def __init__(self, layout: Layout) -> None:
        self.blocks: BlockTurns = blocks_of(layout)
        self.markers: dict[tuple[Role, str], str] = {
            (role, which): _marker(layout, role, which)
            for role in layout.frames
            for which in ("open", "end")
        }
        self.begin = Row(
            tuple(
                (True, piece.text, "begin", False)  # type: ignore[union-attr]
                for piece in layout.begin  # every piece a marker, as block layouts declare it
            )
        )
        self.end = Row(
            ((False, "\n", "separator", False), (True, self.blocks.end.text, "end", False))
        )
        self.known: dict[tuple[str, str, bool], Row] = {}
        roles: list[Role] = [
            role for role in ("system", "user", "assistant") if role in layout.frames
        ]
        # A turn's opening after another turn, and first in the text (indexed by "first").
        self.opens = {
            role: (
                self.turn(self.markers[role, "open"], "header", False),
                self.turn(self.markers[role, "open"], "header", True),
            )
            for role in roles
        }
        self.closes = {
            role: Row(((True, self.markers[role, "end"], "close", False),)) for role in roles
        }
        # The system turn's end after the tool definitions, and the assistant's own end.
        self.tools_end = Row(
            (
                (False, "\n", "separator", False),
                (True, self.markers["system", "end"], "close", False),
            )
        )
        self.ended = Row(((True, self.markers["assistant", "end"], "end", True),))

    def turn(self, marker: str, kind: str, first: bool) -> Row:
        """A turn's opening: the separator before it (``\\n`` first, else ``\\n\\n``) and
        its marker."""
        key = (marker, kind, first)
        found = self.known.get(key)
        if found is None:
            separator = "\n" if first else "\n\n"
            found = Row(((False, separator, "separator", False), (True, marker, kind, False)))
            self.known[key] = found
        return found


_rows_of = rows.once_per(_Rows)
_ACTION_EDGE = Row(((False, "\n", "action", True),))


class Render:
    """Writes one conversation; tracks an assistant turn left open by calls and results."""

    def __init__(self, layout: Layout, writer: Writer, tools: tuple[Tool, ...]) -> None:
        self.layout = layout
        self.derived = derived = _rows_of(layout)
        self.blocks: BlockTurns = derived.blocks
        self.writer = writer
        self.tools = tools
        for number, tool in enumerate(tools):
            if tool.kind not in self.blocks.definitions:
                raise UnsupportedFeature(
                    f"tools[{number}].type",
                    f"{tool.kind!r}",
                    " or ".join(repr(kind) for kind in self.blocks.definitions),
                )
        self.turns = 0
        self.open_turn: int | None = None  # the tool message after which the turn goes on
        self.pending: tuple[int, ToolCall] | None = None  # a call waiting for its result

    # turns ------------------------------------------------------------------------------

    def run(self, messages: tuple[Message, ...], prompt: Prompt) -> None:
        writer, layout = self.writer, self.layout
        writer.at(None, -1)
        derived = self.derived
        derived.begin.write(writer)
        if self.tools and (not messages or messages[0].role != "system"):
            self.open_turn_of("system", -1)
            self.definitions()
            derived.closes["system"].write(writer)
        for index, message in enumerate(messages):
            self.message(message, index)
        if self.pending is not None:
            if prompt is not None:
                raise RequestError(
                    f"messages[{self.pending[0]}].tool_calls",
                    "a call whose result is missing",
                    "a tool message with its result before the generation prompt",
                )
            return  # the text ends where the model stopped, at the call's close
        if prompt == "assistant":
            if self.open_turn is None:  # else the turn resumes after the result
                opening = self.derived.markers["assistant", "open"]
                self.begin_turn("assistant", len(messages), opening, "generation_prompt")
            return
        self.close_open_turn()
        if prompt == "image":
            if self.blocks.tiling is None:
                raise UnsupportedFeature("prompt", "an output image", f"none: {layout.name}")
            output = self.blocks.tiling.output.text
            self.begin_turn("assistant", len(messages), output, "generation_prompt")
            return
        writer.at(None, -1)
        self.derived.end.write(writer)

    def begin_turn(self, role: Role, index: int, marker: str, kind: str = "header") -> None:
        self.writer.at(role, index)
        self.derived.turn(marker, kind, not self.turns).write(self.writer)
        self.turns += 1

    def open_turn_of(self, role: Role, index: int) -> None:
        """:meth:`begin_turn` with the role's own opening marker."""
        self.writer.at(role, index)
        self.derived.opens[role][not self.turns].write(self.writer)
        self.turns += 1

    def close_open_turn(self) -> None:
        if self.open_turn is not None:
            self.writer.at("tool", self.open_turn)
            self.derived.closes["assistant"].write(self.writer)
            self.open_turn = None

    def message(self, message: Message, index: int) -> None:
        layout = self.layout
        if message.name is not None or message.metadata:
            what = "name" if message.name is not None else "metadata"
            raise UnsupportedFeature(
                f"messages[{index}].{what}",
                f"a {what}",
                f"no names or metadata: {layout.name} has no place for them",
            )
        role = message.role
        if role == "tool":
            self.result(message, index)
            return
        if self.pending is not None:
            raise RequestError(
                f"messages[{index}]",
                f"a {role} message right after a function call",
                "the call's result (a tool message) first",
            )
        image = None
        if role == "assistant" and self.blocks.tiling is not None:
            image = tiling.output_image(message, index, layout.name)
        if role == "assistant" and self.open_turn is not None and image is None:
            self.open_turn = None
            self.writer.at("assistant", index)
            self.assistant_body(message, index)
            return
        self.close_open_turn()
        writer = self.writer
        if role == "system":
            self.open_turn_of("system", index)
            self.text_only(message, index, "content", trainable=False)
            if index == 0 and self.tools:
                self.definitions()
                self.derived.tools_end.write(writer)
            else:
                self.derived.closes["system"].write(writer)
        elif role == "user":
            self.open_turn_of("user", index)
            self.user_body(message, index)
            self.derived.closes["user"].write(writer)
        elif image is not None and self.blocks.tiling is not None:
            self.begin_turn("assistant", index, self.blocks.tiling.output.text)
            tiling.write_output(writer, self.blocks.tiling, layout.options, image, index)
        else:
            self.open_turn_of("assistant", index)
            self.assistant_body(message, index)

    # pieces ------------------------------------------------------------------------------

    def definitions(self) -> None:
        for tool in self.tools:
            block = self.blocks.definitions[tool.kind]
            json_blocks.write_json_block(
                self.writer,
                block,
                tool.definition,
                "tools",
                trainable=False,
                edge_after=False,
                recurring=True,
            )

    def texts(self, message: Message, index: int) -> list[str]:
        """A message's text parts (any other part is refused)."""
        texts = []
        for number, part in enumerate(message.content or ()):
            if not isinstance(part, TextPart):
                raise UnsupportedFeature(
                    f"messages[{index}].content[{number}]",
                    f"a {type(part).__name__} in a {message.role} message",
                    "text only",
                )
            texts.append(part.text)
        return texts

    def text_only(self, message: Message, index: int, kind: str, *, trainable: bool) -> None:
        for text in self.texts(message, index):
            self.writer.text(text, kind, trainable=trainable)

    def user_body(self, message: Message, index: int) -> None:
        writer, blocks = self.writer, self.blocks
        images: list[tuple[int, ImagePart]] = []
        for number, part in enumerate(message.content or ()):
            if isinstance(part, TextPart):
                writer.text(part.text, "content")  # a reference spelt in text is escaped text
            elif isinstance(part, VoicePart) and blocks.voice is not None:
                json_blocks.write_headed(
                    writer, blocks.voice, part.prosody, part.text, trainable=False
                )
            elif isinstance(part, ImagePart) and blocks.tiling is not None:
                where = f"messages[{index}].content[{number}]"
                tiling.write_reference(writer, blocks.tiling, len(images), where)
                images.append((number, part))
            else:
                raise UnsupportedFeature(
                    f"messages[{index}].content[{number}]",
                    f"a {type(part).__name__} in a user message",
                    self.parts("text", voice="voice", tiling="image_url") + " parts",
                )
        if blocks.tiling is not None:
            tiling.write_tiles(writer, blocks.tiling, self.layout.options, images, index)

    def parts(self, *always: str, **optional: str) -> str:
        """The part types this layout writes (``optional``: block field -> part type)."""
        names = [*always]
        names += [name for field, name in optional.items() if getattr(self.blocks, field)]
        return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]

    def assistant_body(self, message: Message, index: int) -> None:
        writer, blocks = self.writer, self.blocks
        if message.reasoning is not None or message.reasoning_steps is not None:
            if blocks.thinking is None:
                raise UnsupportedFeature(
                    f"messages[{index}].reasoning_content",
                    "reasoning",
                    f"none: {self.layout.name} has no thinking block",
                )
            thinking.write(writer, blocks.thinking, message, index)
        for number, part in enumerate(message.content or ()):
            where = f"messages[{index}].content[{number}]"
            if isinstance(part, TextPart):
                writer.text(part.text, "content", trainable=True)
            elif isinstance(part, VoicePart) and blocks.voice is not None:
                json_blocks.write_headed(
                    writer, blocks.voice, part.prosody, part.text, trainable=True
                )
            elif isinstance(part, ActionPart) and blocks.actions is not None:
                where = f"{where}.action.name"
                inline_calls.write_call(
                    writer, blocks.actions, part.name, part.arguments, "action", where
                )
                _ACTION_EDGE.write(writer)
            elif isinstance(part, ImageRequestPart) and blocks.image_requests is not None:
                json_blocks.write_json_block(
                    writer, blocks.image_requests, part.request, "image_request", trainable=True
                )
            else:
                raise UnsupportedFeature(
                    where,
                    f"a {type(part).__name__} in an assistant message with other content",
                    self.parts(
                        "text", voice="voice", actions="action", image_requests="image_request"
                    )
                    + " parts"
                    + (" (an output image stands alone)" if blocks.tiling is not None else ""),
                )
        if len(message.tool_calls) > 1:
            raise UnsupportedFeature(
                f"messages[{index}].tool_calls",
                f"{len(message.tool_calls)} calls in one message",
                "one call per assistant message: the model stops at each call for its result",
                "Split parallel calls into assistant, tool, assistant, tool, ...",
            )
        if message.tool_calls:
            call = message.tool_calls[0]
            where = f"messages[{index}].tool_calls[0].function.name"
            inline_calls.write_call(
                writer, blocks.calls, call.name, call.arguments, "tool_call", where
            )
            self.pending = (index, call)
        else:
            self.derived.ended.write(writer)

    def result(self, message: Message, index: int) -> None:
        if self.pending is None:
            raise UnsupportedFeature(
                f"messages[{index}]",
                "a tool message that answers no call just before it",
                "each tool message right after the assistant message whose call it answers",
            )
        call_index, call = self.pending
        if message.tool_call_id is not None and call.id and message.tool_call_id != call.id:
            raise RequestError(
                f"messages[{index}].tool_call_id",
                f"{message.tool_call_id!r}",
                f"{call.id!r}, the id of the call in messages[{call_index}]",
            )
        texts = self.texts(message, index)
        self.writer.at("tool", index)
        inline_calls.write_result(self.writer, self.blocks.calls, texts)
        self.pending = None
        self.open_turn = index


def render(
    layout: Layout,
    writer: Writer,
    messages: tuple[Message, ...],
    tools: tuple[Tool, ...],
    prompt: Prompt,
) -> None:
    """Write a conversation; ``prompt``: end at the assistant's or an output image's start."""
    Render(layout, writer, tools).run(messages, prompt)


def writer_of(layout: Layout) -> WriteConversation:
    def write(
        writer: Writer, messages: tuple[Message, ...], tools: tuple[Tool, ...], prompt: bool
    ) -> None:
        Render(layout, writer, tools).run(messages, "assistant" if prompt else None)

    return write
