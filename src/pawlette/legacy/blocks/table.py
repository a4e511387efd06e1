"""The parse table of block turns (text escaped; a completion starts inside the assistant's
turn and ends at its end or at a call)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...engine.machine import Action, Grammar, GrammarBuilder, Parser, ReaderFactory
from ...engine.readers import ScaffoldReader
from ...errors import FormatError
from ...openai import tool_from_openai
from ...types import ImageRequestPart, Role, Tool, VoicePart
from ..layout import Layout
from . import BlockTurns, blocks_of, check, special_markers, thinking, tiling
from .json_blocks import HeadedText, definition_reader, json_part_reader
from .spans import EdgeNewlines, LazyMessage, text_reader
from .write import _marker


def _begin(role: Role) -> Action:
    def action(parser: Parser, offset: int) -> None:
        parser.begin_message(role)

    return action


def _end(parser: Parser, offset: int) -> None:
    parser.end_message()


def _begin_assistant(parser: Parser) -> None:
    parser.begin_message("assistant")


def _definition(kind: str) -> Callable[[Mapping[str, Any]], Tool]:
    def make(value: Mapping[str, Any]) -> Tool:
        return tool_from_openai({"type": kind, kind: value}, f"{kind} definition")

    return make


def _image_request(value: dict[str, Any]) -> ImageRequestPart:
    return ImageRequestPart(value)


def _voice(prosody: dict[str, Any], text: str) -> VoicePart:
    return VoicePart(text=text, prosody=prosody)


class _Table:
    def __init__(self, layout: Layout) -> None:
        check(layout)
        self.layout = layout
        self.blocks: BlockTurns = blocks_of(layout)
        self.table = GrammarBuilder()
        self.marks = {
            (role, which): _marker(layout, role, which)
            for role in ("system", "user", "assistant")
            for which in ("open", "end")
        }
        blocks = self.blocks
        voice = blocks.voice
        self.voice = (
            None if voice is None else HeadedText(voice.start, voice.body, voice.end, _voice)
        )
        assert blocks.calls.result_end is not None  # the turn resumes after a result
        # Each block's opening marker owns the newline before it, its closing one the newline
        # after it (a result's end: the turn resumes after it).
        edges = [(blocks.calls.start, blocks.calls.result_end)]
        if blocks.thinking is not None:
            edges.append((blocks.thinking.start, blocks.thinking.end))
        if blocks.actions is not None:
            edges.append((blocks.actions.start, blocks.actions.close))
        if voice is not None:
            edges.append((voice.start, voice.end))
        if blocks.image_requests is not None:
            edges.append((blocks.image_requests.open, blocks.image_requests.close))
        self.assistant_edges = EdgeNewlines(
            after=frozenset(close.text for _, close in edges),
            before=frozenset(opening.text for opening, _ in edges),
        )

    def turn_starts(self, state: str, *before: Action) -> None:
        table, marks = self.table, self.marks
        table.on(state, marks["system", "open"], "system.body", *before, _begin("system"))
        table.on(state, marks["user", "open"], "user.body", *before, _begin("user"))
        table.on(state, marks["assistant", "open"], "assistant.start", *before)
        if self.blocks.tiling is not None:
            output = self.blocks.tiling.output.text
            table.on(state, output, "image_output", *before, _begin("assistant"))

    def assistant_states(self, prefix: str, ended: str, returned: str) -> None:
        """An assistant turn's states; ``ended``/``returned`` follow its end and a call's
        return.  Installed twice: for conversations (a call's result follows inline) and for
        completions (the completion ends at the call)."""
        table, blocks = self.table, self.blocks
        calls = blocks.calls
        end = self.marks["assistant", "end"]
        assert calls.result_end is not None
        lazy = LazyMessage(_begin_assistant, frozenset({(calls.result_end.text, end)}))
        start, body = f"{prefix}.start", f"{prefix}.body"
        table.state(start, text_reader(self.assistant_edges, lazy=lazy), "assistant")
        table.state(body, text_reader(self.assistant_edges), "assistant")
        if blocks.thinking is not None:
            thinking.table_rows(
                table, blocks.thinking, prefix, "assistant", start, body, end, ended, _end
            )
        call_name = table.state(f"{prefix}.call", calls.name_reader(), "assistant")
        call_arguments = table.state(
            f"{prefix}.call.arguments", calls.arguments_reader(), "assistant"
        )
        table.on(call_name, calls.arguments.text, call_arguments)
        table.on(call_arguments, calls.close.text, returned, _end)
        # Each block: (its opening marker, the state it enters); it closes into ``body``.
        entries = [(calls.start.text, call_name)]
        actions = blocks.actions
        if actions is not None:
            name = table.state(f"{prefix}.action", actions.name_reader(), "assistant")
            arguments = table.state(
                f"{prefix}.action.arguments", actions.arguments_reader(), "assistant"
            )
            table.on(name, actions.arguments.text, arguments)
            table.on(arguments, actions.close.text, body)
            entries.append((actions.start.text, name))
        if self.voice is not None:
            voice = table.state(f"{prefix}.voice", self.voice.header_reader(), "assistant")
            text = table.state(f"{prefix}.voice.text", self.voice.body_reader(), "assistant")
            table.on(voice, self.voice.body.text, text)
            table.on(text, self.voice.end.text, body)
            entries.append((self.voice.start.text, voice))
        requests = blocks.image_requests
        if requests is not None:
            reader = json_part_reader(_image_request, requests.close.text)
            request = table.state(f"{prefix}.image_request", reader, "assistant")
            table.on(request, requests.close.text, body)
            entries.append((requests.open.text, request))
        for state in (start, body):
            for marker, target in entries:
                table.on(state, marker, target)
            table.on(state, end, ended, _end)

    def build(self) -> Grammar:
        table, blocks, marks = self.table, self.blocks, self.marks
        table.fields["tool"] = {"id": "tool_call_id"}
        table.state("outside", ScaffoldReader)
        for piece in self.layout.begin:
            table.on("outside", piece.text, "outside")  # type: ignore[union-attr]
        table.on("outside", blocks.end.text, "outside")
        self.turn_starts("outside")

        definitions = blocks.definitions
        system_edges = EdgeNewlines(before=frozenset(b.open.text for b in definitions.values()))
        table.state("system.body", text_reader(system_edges), "system")
        for kind, block in definitions.items():
            reader = definition_reader(_definition(kind), block.close.text)
            table.state(f"system.{kind}", reader)
        table.state("system.tools", ScaffoldReader, "system")
        for state in ("system.body", "system.tools"):
            for kind, block in definitions.items():
                table.on(state, block.open.text, f"system.{kind}")
            table.on(state, marks["system", "end"], "outside", _end)
        for kind, block in definitions.items():
            table.on(f"system.{kind}", block.close.text, "system.tools")
        self.user()

        calls = blocks.calls
        assert calls.result_end is not None
        self.assistant_states("assistant", ended="outside", returned="tool.result")
        result_edges = EdgeNewlines(
            after=frozenset((calls.close.text,)), before=frozenset((calls.result_end.text,))
        )
        table.state("tool.result", calls.result_reader(result_edges), "tool")
        table.on("tool.result", calls.result_end.text, "assistant.start", _end)

        if blocks.tiling is not None:
            output = tiling.output_rows(table, blocks.tiling)
            table.on(output, blocks.end.text, "outside", _end)
            self.turn_starts(output, _end)

        # A completion: the same assistant states, ending at the turn's end or at a call.
        table.state("completion.ended", ScaffoldReader, "assistant")
        table.state("completion.done", ScaffoldReader, "assistant")
        table.on("completion.ended", blocks.end.text, "completion.done")
        self.assistant_states("completion", ended="completion.ended", returned="completion.ended")
        grammar = table.build(
            escape=True, conversation_start="outside", completion_start="completion.start"
        )
        # Escaping writes a backslash before every marker in text; the lexer must know each.
        missing = sorted(frozenset(special_markers(self.layout)) - grammar.markers)
        if missing:
            raise FormatError(f"{self.layout.name}: markers with no row: {missing}")
        return grammar

    def user(self) -> None:
        """A user turn: text, voice parts, referenced images.  Its events wait from its first
        image reference until its tiles are read, so each image part comes back where its
        reference stands."""
        table, images, voice = self.table, self.blocks.tiling, self.voice
        end = self.marks["user", "end"]

        def held(reader: ReaderFactory) -> ReaderFactory:
            return reader if images is None else tiling.hold(images, reader)

        if voice is None:
            table.state("user.body", held(text_reader(EdgeNewlines())), "user")
        else:
            edges = EdgeNewlines(
                after=frozenset((voice.end.text,)), before=frozenset((voice.start.text,))
            )
            table.state("user.body", held(text_reader(edges)), "user")
            table.state("user.voice", held(voice.header_reader()), "user")
            table.state("user.voice.text", held(voice.body_reader()), "user")
            table.on("user.body", voice.start.text, "user.voice")
            table.on("user.voice", voice.body.text, "user.voice.text")
            table.on("user.voice.text", voice.end.text, "user.body")
        if images is None:
            table.on("user.body", end, "outside", _end)
        else:
            tiling.user_rows(table, images, "user.body", end, _end)


def compile_table(layout: Layout) -> Grammar:
    return _Table(layout).build()
