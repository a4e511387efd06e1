"""The parse table of block turns (text escaped; a completion starts inside the assistant's
turn and ends at its end or at a call).

The frames' own rows open the system and user turns; these rows read their bodies, take the
assistant's turn over (its message begins lazily: a turn that closes right after an inline
result is no message) and install the assistant's states twice: for conversations (a call's
result follows inline, and the turn resumes after it) and for completions (the completion
ends at the call).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ...declare.readers import Described
from ...declare.table import begin, end
from ...engine.machine import Action, Parser, ReaderFactory
from ...engine.readers import ScaffoldReader
from ...openai import tool_from_openai
from ...types import ImageRequestPart, Tool, VoicePart
from . import thinking, tiling
from .json_blocks import HeadedText, definition_reader, json_part_reader
from .spans import EdgeNewlines, LazyMessage, text_reader

if TYPE_CHECKING:
    from ...declare.table import Table
    from .blocks import BlockTurns


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


class _Rows:
    def __init__(self, blocks: BlockTurns, table: Table) -> None:
        self.blocks = blocks
        self.table = table
        layout = table.layout
        self.marks = {
            (role, which): blocks.marker(layout, role, which)
            for role in ("system", "user", "assistant")
            for which in ("open", "end")
        }
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
        table.on(state, marks["system", "open"], "system.body", *before, begin("system"))
        table.on(state, marks["user", "open"], "user.body", *before, begin("user"))
        table.on(state, marks["assistant", "open"], "assistant.start", *before)
        if self.blocks.tiling is not None:
            output = self.blocks.tiling.output.text
            table.on(state, output, "image_output", *before, begin("assistant"))

    def assistant_states(self, prefix: str, ended: str, returned: str) -> None:
        """An assistant turn's states; ``ended``/``returned`` follow its end and a call's
        return.  Installed twice: for conversations (a call's result follows inline) and for
        completions (the completion ends at the call)."""
        table, blocks = self.table, self.blocks
        calls = blocks.calls
        close = self.marks["assistant", "end"]
        assert calls.result_end is not None
        lazy = LazyMessage(_begin_assistant, frozenset({(calls.result_end.text, close)}))
        start, body = f"{prefix}.start", f"{prefix}.body"
        table.state(start, text_reader(self.assistant_edges, lazy=lazy), "assistant")
        if body in table.states:  # the frame's own body state, read here
            table.reader(body, text_reader(self.assistant_edges), ends=False)
        else:
            table.state(body, text_reader(self.assistant_edges), "assistant")
        if blocks.thinking is not None:
            self.thinking_rows(prefix, start, body, close, ended)
        call_name = table.state(f"{prefix}.call", calls.name_reader(), "assistant")
        call_arguments = table.state(
            f"{prefix}.call.arguments", calls.arguments_reader(), "assistant"
        )
        table.on(call_name, calls.arguments.text, call_arguments)
        table.on(call_arguments, calls.close.text, returned, end)
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
            reader = Described(
                "JSON image request",
                json_part_reader(_image_request, requests.close.text),
                close=requests.close.text,
            )
            request = table.state(f"{prefix}.image_request", reader, "assistant")
            table.on(request, requests.close.text, body)
            entries.append((requests.open.text, request))
        for state in (start, body):
            for marker, target in entries:
                table.on(state, marker, target)
            table.on(state, close, ended, end)

    def thinking_rows(self, prefix: str, head: str, body: str, close: str, ended: str) -> None:
        """The thinking block's states, opened from ``head`` and closed into ``body``; the
        turn's end inside it is reported (the thinking is not closed) and ends the turn."""
        table, think = self.table, self.blocks.thinking
        assert think is not None
        states = {
            part: table.state(f"{prefix}.think.{part}", think.reader(part), "assistant")  # type: ignore[arg-type]
            for part in thinking.PARTS
        }
        table.on(head, think.start.text, states["preamble"])
        table.on(states["preamble"], think.step.text, states["title"])
        table.on(states["title"], think.reasoning.text, states["reasoning"])
        table.on(states["reasoning"], think.conclusion.text, states["conclusion"])
        table.on(states["conclusion"], think.step.text, states["title"])
        for part in ("preamble", "conclusion"):
            table.on(states[part], think.end.text, body)
        for state in states.values():
            table.on(state, close, ended, end)

    def build(self) -> None:
        table, blocks, marks = self.table, self.blocks, self.marks
        table.fields["tool"] = {"id": "tool_call_id"}
        table.on("outside", blocks.end.text, "outside")
        # The assistant's message begins lazily (not at its marker, as the frame's row would).
        table.steps[("outside", marks["assistant", "open"])] = ("assistant.start", ())
        if blocks.tiling is not None:
            table.on("outside", blocks.tiling.output.text, "image_output", begin("assistant"))

        definitions = blocks.definitions
        system_edges = EdgeNewlines(before=frozenset(b.open.text for b in definitions.values()))
        table.reader("system.body", text_reader(system_edges))
        for kind, block in definitions.items():
            reader = Described(
                "JSON tool definition",
                definition_reader(_definition(kind), block.close.text),
                close=block.close.text,
                kind=kind,
            )
            table.state(f"system.{kind}", reader)
        table.state("system.tools", ScaffoldReader, "system", ends=True)
        for state in ("system.body", "system.tools"):
            for kind, block in definitions.items():
                table.on(state, block.open.text, f"system.{kind}")
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
        table.on("tool.result", calls.result_end.text, "assistant.start", end)

        if blocks.tiling is not None:
            output = tiling.output_state(table, blocks.tiling)
            table.on(output, blocks.end.text, "outside", end)
            self.turn_starts(output, end)

        # A completion: the same assistant states, ending at the turn's end or at a call.
        table.state("completion.ended", ScaffoldReader, "assistant")
        table.state("completion.done", ScaffoldReader, "assistant")
        table.on("completion.ended", blocks.end.text, "completion.done")
        self.assistant_states("completion", ended="completion.ended", returned="completion.ended")
        table.completion_start = "completion.start"

    def user(self) -> None:
        """A user turn: text, voice parts, referenced images.  Its events wait from its first
        image reference until its tiles are read, so each image part comes back where its
        reference stands."""
        table, images, voice = self.table, self.blocks.tiling, self.voice
        close = self.marks["user", "end"]

        def held(reader: ReaderFactory) -> ReaderFactory:
            return reader if images is None else tiling.hold(images, reader)

        edges = EdgeNewlines()
        if voice is not None:
            edges = EdgeNewlines(
                after=frozenset((voice.end.text,)), before=frozenset((voice.start.text,))
            )
        table.reader("user.body", held(text_reader(edges)), ends=images is None)
        if voice is not None:
            table.state("user.voice", held(voice.header_reader()), "user")
            table.state("user.voice.text", held(voice.body_reader()), "user")
            table.on("user.body", voice.start.text, "user.voice")
            table.on("user.voice", voice.body.text, "user.voice.text")
            table.on("user.voice.text", voice.end.text, "user.body")
        if images is not None:
            tiling.user_rows(table, images, "user.body", close, end)


def rows(blocks: BlockTurns, table: Table) -> None:
    """The rows of block turns (see the module docstring)."""
    _Rows(blocks, table).build()
