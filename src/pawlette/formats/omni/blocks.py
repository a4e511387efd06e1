"""Block turns: turns whose bodies are text and blocks on their own lines (omni, seed 000).

The layout's frames give the turns' markers (``begin`` the BOS); :class:`BlockTurns` writes
the layout between them (``\\n`` before the first turn, ``\\n\\n`` between turns, ``\\n`` and
``end`` after the last) and the turns' bodies, made of blocks each declared by a piece of its
own module:

- :mod:`.inline_calls`: calls written in the turn, a function's result written *inside* the
  same assistant turn (the model stops at the call; the system writes the result and the turn
  resumes), actions (fire and forget, content parts);
- :mod:`.thinking`: structured thinking (a preamble, then steps of title, reasoning and
  conclusion);
- :mod:`.json_blocks`: JSON blocks (tool definitions, image requests) and a JSON header
  before text (voice parts);
- :mod:`.tiling`: images referenced by position in the text, their tiles of tokens after
  it, and output images;
- :mod:`.spans`: what they share (text between blocks, whose edge newlines belong to them).

The concept's share of each interpreter: the writer here, the parse table in :mod:`.table`,
the chat template in :mod:`.jinja`, the turn grammar in :mod:`.grammar`.  Text is escaped
(:class:`.escaping.Escaped`).  The tools are definition blocks after the first system
message's text (a system turn holding only them when there is none).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ...declare import Concept, Marker
from ...declare.pieces import Fence
from ...engine.rows import Row, once_per
from ...errors import FormatError, RequestError, UnsupportedFeature
from ...types import (
    ActionPart,
    ImagePart,
    ImageRequestPart,
    Message,
    TextPart,
    ToolCall,
    VoicePart,
)
from . import inline_calls, json_blocks, thinking, tiling
from .inline_calls import InlineCall
from .json_blocks import HeadedText, JsonBlock
from .thinking import StructuredThinking
from .tiling import ImageTiling

if TYPE_CHECKING:
    from ...declare.grammar import Turn
    from ...declare.jinja import Template
    from ...declare.layout import Layout
    from ...declare.table import Table
    from ...declare.write import Render

ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class BlockTurns(Concept):
    """Block turns (see the module docstring).

    Fields:

    - ``end``: written after the last turn (an EOS marker).
    - ``definitions``: the tools block, one :class:`JsonBlock` per tool kind (``"function"``,
      and ``"action"`` when the layout has ``actions``).
    - ``calls``: function calls, their results in the turn (``result_end``); ``actions``:
      action calls (no result).
    - ``thinking``, ``voice``, ``image_requests``, ``tiling``: optional blocks (a layout
      without one refuses the content it would write).
    - ``image_prompt``: the generation prompt opens an output image instead of an assistant
      turn (the second-stage prompt, :func:`pawlette.formats.omni.image_output_prompt`).
    """

    end: Marker
    definitions: Mapping[str, JsonBlock]
    calls: InlineCall
    actions: InlineCall | None = None
    thinking: StructuredThinking | None = None
    voice: HeadedText | None = None
    image_requests: JsonBlock | None = None
    tiling: ImageTiling | None = None
    image_prompt: bool = False

    claims: ClassVar[frozenset[str]] = frozenset({"system", "user", "assistant", "tool"})
    handles: ClassVar[frozenset[str]] = frozenset(
        {"tools", "name", "tool_name", "metadata", "reasoning", "calls", "parts", "steps"}
    )
    """Everything a request holds: the writer refuses what omni cannot write where it is."""

    def markers(self) -> Iterator[Marker]:
        """Every marker, in declaration order (the end, then each block's)."""
        yield self.end
        for block in self.definitions.values():
            yield from (block.open, block.close)
        calls = self.calls
        yield from (calls.start, calls.arguments, calls.close)
        if calls.result_end is not None:
            yield calls.result_end
        if self.actions is not None:
            yield from (self.actions.start, self.actions.arguments, self.actions.close)
        think = self.thinking
        if think is not None:
            yield from (think.start, think.step, think.reasoning, think.conclusion, think.end)
        if self.voice is not None:
            yield from (self.voice.start, self.voice.body, self.voice.end)
        if self.image_requests is not None:
            yield from (self.image_requests.open, self.image_requests.close)
        images = self.tiling
        if images is not None:
            yield from (images.start, images.token, images.end, images.output, *images.references)

    def validate(self, layout: Layout) -> None:
        """Refuse, when declared, what the interpreters cannot write."""
        kinds = {"function", "action"} if self.actions is not None else {"function"}
        if set(self.definitions) != kinds:
            raise FormatError(
                f"{layout.name}: definitions for {sorted(self.definitions)}; expected one block "
                f"for each of {sorted(kinds)} (actions need their definitions and the reverse)"
            )
        if self.calls.kind != "function" or self.calls.result_end is None:
            raise FormatError(f"{layout.name}: calls must be function calls with a result_end")
        if self.actions is not None and (
            self.actions.kind != "action" or self.actions.result_end is not None
        ):
            raise FormatError(f"{layout.name}: actions are action calls with no result_end")
        for role in ROLES:
            frame = layout.frames.get(role)
            if frame is None or any(
                len(pieces) != 1 or not isinstance(pieces[0], Marker)
                for pieces in (frame.open, frame.end)
            ):
                raise FormatError(f"{layout.name}: a block turn's frame is one marker ({role})")

    def marker(self, layout: Layout, role: str, which: str) -> str:
        """The marker that opens (``which`` ``"open"``) or ends (``"end"``) a role's turn."""
        (piece,) = getattr(layout.frames[role], which)
        assert isinstance(piece, Marker)
        return piece.text

    # ------------------------------------------------------------------ the writer

    def hook_roles(self, hook: str) -> frozenset[str] | None:
        return _HOOK_ROLES.get(hook)

    def check(self, out: Render) -> None:
        out.handled.update(self.handles)
        out.states[WriteState] = WriteState(_pieces(out.layout))
        definitions = self.definitions
        for number, tool in enumerate(out.tools):
            if tool.kind not in definitions:
                raise UnsupportedFeature(
                    f"tools[{number}].type",
                    f"{tool.kind!r}",
                    " or ".join(repr(kind) for kind in self.definitions),
                )
        messages = out.messages
        if out.tools and messages and messages[0].role == "system" and not out.message_text(0):
            # (its turn holds the definitions alone, as the turn written without it does)
            out.lose("messages[0]", "a system message with empty text, read back as none")

    def write_start(self, out: Render) -> None:
        messages = out.messages
        if out.tools and (not messages or messages[0].role != "system"):
            state = out.states[WriteState]
            pieces = state.pieces
            self.open_turn_of(out, state, pieces, "system", -1)
            self.definitions_of(out)
            pieces.closes["system"].write(out.writer)

    def write_message(self, out: Render, index: int) -> None:
        """One message: a turn of its own, or (an assistant message after a result, a tool
        message) part of the assistant turn left open."""
        message = out.messages[index]
        if message.name is not None or message.metadata:
            names(message, index, out.layout.name)
        state = out.states[WriteState]
        role = message.role
        if role == "tool":
            self.result(out, state, message, index)
            return
        if state.pending is not None:
            raise RequestError(
                f"messages[{index}]",
                f"a {role} message right after a function call",
                "the call's result (a tool message) first",
            )
        image = None
        if role == "assistant" and self.tiling is not None:
            image = tiling.output_image(message, index, out.layout.name)
        writer = out.writer
        if role == "assistant" and state.open_turn is not None and image is None:
            state.open_turn = None
            writer.at("assistant", index)
            self.assistant_body(out, state, message, index)
            return
        if state.open_turn is not None:
            self.close_open_turn(out, state)
        pieces = state.pieces
        if role == "system":
            self.open_turn_of(out, state, pieces, "system", index)
            for text in texts(message, index):
                writer.text(text, "content")
            if index == 0 and out.tools:
                self.definitions_of(out)
                pieces.tools_end.write(writer)
            else:
                pieces.closes["system"].write(writer)
        elif role == "user":
            self.open_turn_of(out, state, pieces, "user", index)
            self.user_body(out, message, index)
            pieces.closes["user"].write(writer)
        elif image is not None and self.tiling is not None:
            self.begin_turn(out, state, index, pieces.output)
            tiling.write_output(writer, self.tiling, out.layout.options, image, index)
        else:
            self.open_turn_of(out, state, pieces, "assistant", index)
            self.assistant_body(out, state, message, index)

    def open_turn_of(
        self, out: Render, state: WriteState, pieces: _Pieces, role: str, index: int
    ) -> None:
        """A turn's opening: ``\\n`` before the first turn, ``\\n\\n`` before the others, and
        the role's marker."""
        out.writer.at(role, index)  # type: ignore[arg-type]
        pieces.opens[role][not state.turns].write(out.writer)
        state.turns += 1

    def begin_turn(
        self, out: Render, state: WriteState, index: int, opening: tuple[Row, Row]
    ) -> None:
        """A turn opened by another marker (an output image's, the generation prompt's)."""
        out.writer.at("assistant", index)
        opening[not state.turns].write(out.writer)
        state.turns += 1

    def close_open_turn(self, out: Render, state: WriteState) -> None:
        if state.open_turn is not None:
            out.writer.at("tool", state.open_turn)
            state.pieces.closes["assistant"].write(out.writer)
            state.open_turn = None

    def definitions_of(self, out: Render) -> None:
        for tool in out.tools:
            block = self.definitions[tool.kind]
            json_blocks.write_json_block(
                out.writer,
                block,
                tool.definition,
                "tools",
                trainable=False,
                edge_after=False,
                recurring=True,
            )

    def user_body(self, out: Render, message: Message, index: int) -> None:
        writer = out.writer
        images: list[tuple[int, ImagePart]] = []
        for number, part in enumerate(message.content or ()):
            if isinstance(part, TextPart):
                writer.text(part.text, "content")  # a reference spelt in text is escaped text
            elif isinstance(part, VoicePart) and self.voice is not None:
                json_blocks.write_headed(
                    writer, self.voice, part.prosody, part.text, trainable=False
                )
            elif isinstance(part, ImagePart) and self.tiling is not None:
                where = f"messages[{index}].content[{number}]"
                tiling.write_reference(writer, self.tiling, len(images), where)
                images.append((number, part))
            else:
                raise UnsupportedFeature(
                    f"messages[{index}].content[{number}]",
                    f"a {type(part).__name__} in a user message",
                    self.parts("text", voice="voice", tiling="image_url") + " parts",
                )
        if self.tiling is not None:
            tiling.write_tiles(writer, self.tiling, out.layout.options, images, index)

    def parts(self, *always: str, **optional: str) -> str:
        """The part types this layout writes (``optional``: block field -> part type)."""
        names = [*always]
        names += [name for field, name in optional.items() if getattr(self, field)]
        return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]

    def assistant_body(self, out: Render, state: WriteState, message: Message, index: int) -> None:
        """Thinking, the content's parts, then the call (the turn is left open) or the end."""
        writer = out.writer
        if message.reasoning is not None or message.reasoning_steps is not None:
            if self.thinking is None:
                raise UnsupportedFeature(
                    f"messages[{index}].reasoning_content",
                    "reasoning",
                    f"none: {out.layout.name} has no thinking block",
                )
            thinking.write(writer, self.thinking, message, index)
        for number, part in enumerate(message.content or ()):
            where = f"messages[{index}].content[{number}]"
            if isinstance(part, TextPart):
                writer.text(part.text, "content", trainable=True)
            elif isinstance(part, VoicePart) and self.voice is not None:
                json_blocks.write_headed(
                    writer, self.voice, part.prosody, part.text, trainable=True
                )
            elif isinstance(part, ActionPart) and self.actions is not None:
                where = f"{where}.action.name"
                inline_calls.write_call(
                    writer, self.actions, part.name, part.arguments, "action", where
                )
                _ACTION_EDGE.write(writer)
            elif isinstance(part, ImageRequestPart) and self.image_requests is not None:
                json_blocks.write_json_block(
                    writer, self.image_requests, part.request, "image_request", trainable=True
                )
            else:
                raise UnsupportedFeature(
                    where,
                    f"a {type(part).__name__} in an assistant message with other content",
                    self.parts(
                        "text", voice="voice", actions="action", image_requests="image_request"
                    )
                    + " parts"
                    + (" (an output image stands alone)" if self.tiling is not None else ""),
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
                writer, self.calls, call.name, call.arguments, "tool_call", where
            )
            state.pending = (index, call)
        else:
            state.pieces.ended.write(writer)

    def result(self, out: Render, state: WriteState, message: Message, index: int) -> None:
        """A tool message: the result of the call just before it, inside the same turn."""
        if state.pending is None:
            raise UnsupportedFeature(
                f"messages[{index}]",
                "a tool message that answers no call just before it",
                "each tool message right after the assistant message whose call it answers",
            )
        call_index, call = state.pending
        if message.tool_call_id is not None and call.id and message.tool_call_id != call.id:
            raise RequestError(
                f"messages[{index}].tool_call_id",
                f"{message.tool_call_id!r}",
                f"{call.id!r}, the id of the call in messages[{call_index}]",
            )
        written = texts(message, index)
        out.writer.at("tool", index)
        inline_calls.write_result(out.writer, self.calls, written)
        state.pending = None
        state.open_turn = index

    def turn_open(self, out: Render, index: int) -> Fence | None:
        return ()  # the generation prompt: written by write_prompt

    def write_prompt(self, out: Render) -> None:
        state = out.states[WriteState]
        if state.pending is not None:
            raise RequestError(
                f"messages[{state.pending[0]}].tool_calls",
                "a call whose result is missing",
                "a tool message with its result before the generation prompt",
            )
        index = len(out.messages)
        pieces = state.pieces
        if self.image_prompt:
            self.close_open_turn(out, state)
            if self.tiling is None:
                raise UnsupportedFeature("prompt", "an output image", f"none: {out.layout.name}")
            self.begin_turn(out, state, index, pieces.image_prompt)
        elif state.open_turn is None:  # else the turn resumes after the result
            self.begin_turn(out, state, index, pieces.prompt)

    def write_finish(self, out: Render) -> None:
        state = out.states[WriteState]
        if out.prompt or state.pending is not None:
            return  # a prompt ends where the model goes on; a call, where the model stopped
        self.close_open_turn(out, state)
        out.writer.at(None, -1)
        state.pieces.end.write(out.writer)

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        from .table import rows

        rows(self, table)

    # ------------------------------------------------------------------ the Jinja template

    def jinja_setup(self, out: Template) -> None:
        from .jinja import setup

        setup(self, out)

    def jinja_start(self, out: Template) -> None:
        from .jinja import start

        start(self, out)

    def jinja_open(self, out: Template, role: str) -> bool:
        from .jinja import prompt

        prompt(self, out)
        return True

    def jinja_message(self, out: Template, role: str) -> None:
        from .jinja import message

        message(self, out, role)

    def jinja_finish(self, out: Template) -> None:
        from .jinja import finish

        finish(self, out)

    # ------------------------------------------------------------------ the turn grammar

    def grammar(self, turn: Turn) -> None:
        from .grammar import contribute

        contribute(self, turn)


class WriteState:
    """One rendering's turns: how many are written, the assistant turn left open by a result
    (the tool message after which it goes on), a call waiting for its result, and the
    layout's pieces."""

    __slots__ = ("open_turn", "pending", "pieces", "turns")

    def __init__(self, pieces: _Pieces) -> None:
        self.turns = 0
        self.open_turn: int | None = None
        self.pending: tuple[int, ToolCall] | None = None
        self.pieces = pieces


def names(message: Message, index: int, format_name: str) -> None:
    """Refuse a message's name or metadata (omni has no place for them)."""
    if message.name is not None or message.metadata:
        what = "name" if message.name is not None else "metadata"
        raise UnsupportedFeature(
            f"messages[{index}].{what}",
            f"a {what}",
            f"no names or metadata: {format_name} has no place for them",
        )


def texts(message: Message, index: int) -> list[str]:
    """A message's text parts (any other part is refused)."""
    found = []
    for number, part in enumerate(message.content or ()):
        if not isinstance(part, TextPart):
            raise UnsupportedFeature(
                f"messages[{index}].content[{number}]",
                f"a {type(part).__name__} in a {message.role} message",
                "text only",
            )
        found.append(part.text)
    return found


_ACTION_EDGE = Row(((False, "\n", "action", True),))
_ASSISTANT = frozenset({"assistant"})
_HOOK_ROLES: dict[str, frozenset[str] | None] = {
    "turn_open": _ASSISTANT,
    "jinja_open": _ASSISTANT,
}
"""The roles each turn hook acts on (the generation prompt's opening; every message is this
concept's own: :attr:`BlockTurns.claims`)."""


class _Pieces:
    """What the writer derives from a layout once: its scaffolding as rows (a turn's opening
    first in the text and after another turn, its close, ...)."""

    __slots__ = ("closes", "end", "ended", "image_prompt", "opens", "output", "prompt", "tools_end")

    def __init__(self, layout: Layout) -> None:
        blocks = layout.concept(BlockTurns)
        assert isinstance(blocks, BlockTurns)

        def opening(marker: str, kind: str) -> tuple[Row, Row]:
            """After another turn, and first in the text."""
            return (
                Row(((False, "\n\n", "separator", False), (True, marker, kind, False))),
                Row(((False, "\n", "separator", False), (True, marker, kind, False))),
            )

        self.opens = {
            role: opening(blocks.marker(layout, role, "open"), "header") for role in ROLES
        }
        self.closes = {
            role: Row(((True, blocks.marker(layout, role, "end"), "close", False),))
            for role in ROLES
        }
        system_end = blocks.marker(layout, "system", "end")
        self.tools_end = Row(
            ((False, "\n", "separator", False), (True, system_end, "close", False))
        )
        self.ended = Row(((True, blocks.marker(layout, "assistant", "end"), "end", True),))
        output = blocks.tiling.output.text if blocks.tiling is not None else ""
        self.output = opening(output, "header")
        self.prompt = opening(blocks.marker(layout, "assistant", "open"), "generation_prompt")
        self.image_prompt = opening(output, "generation_prompt")
        self.end = Row(((False, "\n", "separator", False), (True, blocks.end.text, "end", False)))


_pieces = once_per(_Pieces)
"""The pieces of a layout with block turns, derived once."""
