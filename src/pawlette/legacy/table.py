"""The table interpreter: a :class:`~.layout.Layout` compiled into parse-table rows.

Each fence's joined text is one lexer marker, so the layout a marker carries (``<think>\\n``,
``<|start_header_id|>user<|end_header_id|>\\n\\n``) is read together with it and never
reaches a reader as text.  The rows, per concept (``→`` is a row; states in quotes)::

    outside      begin                                  → outside
    outside      system open [+ preamble]               → "system.body"   (message pending)
    outside      system open [+ preamble] + tools open  → "system.tools"  (tools first, or no text)
    system.body  separator + tools open                 → "system.tools"  (tools after the text)
    system.tools tools close                            → "system.after_tools"
    outside      user open [+ tools open]               → "user.body" ["user.tools"]
    outside      assistant open                         → "assistant.head"
    head         reasoning open                         → "assistant.reasoning"
    reasoning    reasoning close                        → "assistant.body"
    head, body   [separator +] call open                → "assistant.call"
    call         call close                             → "assistant.after_call"
    head, body   also_open (e.g. <|python_tag|>)        → "assistant.tagged_call"
    (any)        end, also_end                          → outside (message ends)
    outside      results open + item open               → "tool.item"
    tool.item    item close                             → "tool.between"
    tool.between item open                              → "tool.item"     (grouped results)

A completion is parsed from ``assistant.head``; a conversation from ``outside``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import cast

from ..blocks.tool_choice import ForcedPrefixes
from ..engine.machine import Action, Grammar, GrammarBuilder, Parser, ReaderFactory
from ..engine.readers import CallEnvelope, ContentReader, ReasoningReader, ScaffoldReader
from ..errors import FormatError
from ..types import Role
from . import decision, python_calls, python_results, python_tools
from .layout import Fence, JsonCalls, Layout, Lit, Marker
from .owners import owner
from .readers import (
    BetweenCallsReader,
    OptionalReasoningReader,
    ResultReader,
    bare_call_reader,
    host_text_reader,
    positional_call_reader,
    tool_items_reader,
)
from .write import option_text


def joined(layout: Layout, pieces: Fence) -> str:
    """A fence's text (what the lexer reads as one marker)."""
    parts = []
    for piece in pieces:
        if isinstance(piece, (Marker, Lit)):
            parts.append(piece.text)
        else:
            parts.append(option_text(layout, piece))
    return "".join(parts)


def reasoning_text(layout: Layout) -> tuple[str, str] | None:
    """The reasoning block's opening and closing fences as text (None: no reasoning)."""
    reasoning = layout.reasoning
    if reasoning is None:
        return None
    return joined(layout, reasoning.open), joined(layout, reasoning.close)


def _begin(role: Role, *, pending: bool = False) -> Action:
    def action(parser: Parser, offset: int) -> None:
        parser.begin_message(role, pending=pending)

    return action


def _end(parser: Parser, offset: int) -> None:
    parser.end_message()


def envelope(layout: Layout) -> CallEnvelope:
    calls = layout.calls
    assert isinstance(calls, JsonCalls)
    return CallEnvelope(
        name=calls.name_key,
        arguments=calls.arguments_key,
        id=None,
        also_arguments=calls.also_arguments_keys,
        ignored=calls.ignored_members,
    )


def loose_spellings(spellings: set[str]) -> set[str]:
    """What ``JsonCalls.loose_fences`` also reads for some fences' texts: each without the
    whitespace around its markers, at either end or both (``\n<tool_call>\n`` is also read
    as ``<tool_call>``, ``\n<tool_call>`` and ``<tool_call>\n``).  A spelling that leaves
    no text is none (a fence of whitespace alone is no marker)."""
    found = set()
    for text in spellings:
        for loose in (text.strip(), text.lstrip(), text.rstrip()):
            if loose:
                found.add(loose)
    return found - spellings


class _Table:
    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.builder = GrammarBuilder()
        self.builder.fields["tool"] = {"tool_call_id": "tool_call_id"}

    def text(self, *fences: Fence) -> str:
        return "".join(joined(self.layout, pieces) for pieces in fences)

    def on(self, state: str, marker: str, target: str, *actions: Action) -> None:
        if not marker:
            raise FormatError(f"{self.layout.name}: an empty fence in state {state!r}")
        if (state, marker) in self.builder.steps:
            return  # two concepts spelled alike (e.g. a frame reused): one row serves both
        self.builder.on(state, marker, target, *actions)

    def ends(self, state: str, role_frame: str) -> None:
        frame = self.layout.frames[role_frame]  # type: ignore[index]
        for pieces in (frame.end, *frame.also_end):
            self.on(state, self.text(pieces), "outside", _end)

    def build(self) -> Grammar:
        layout = self.layout
        builder = self.builder
        builder.state("outside", ScaffoldReader)
        for name, frame in layout.frames.items():
            if joined(layout, frame.after).strip():
                raise FormatError(f"{layout.name}: frames[{name!r}].after must be whitespace")
        if layout.begin:
            self.on("outside", self.text(layout.begin), "outside")
        self.system()
        self.user()
        self.assistant()
        self.results()
        if layout.parts is not None:  # a concept of its own module
            from .parts import table_rows

            table_rows(self)
        if layout.turn_reading is not None:  # a concept of its own module (after the rest)
            from .turn_reading import table_rows as reading_rows

            reading_rows(self)
        return builder.build(
            escape=False, conversation_start="outside", completion_start="assistant.head"
        )

    def system(self) -> None:
        layout = self.layout
        frame = layout.frames["system"]
        system = layout.system
        default = system.default or ""
        self.builder.state("system.body", host_text_reader(default), "system")
        openings = {self.text(frame.open), self.text(frame.open, system.preamble)}
        openings.add(self.text(frame.open, system.preamble_without_tools, system.preamble))
        with_tools = self.text(frame.open, system.preamble_with_tools, system.preamble)
        for opening in sorted(openings | {with_tools}):
            self.on("outside", opening, "system.body", _begin("system", pending=True))
        self.ends("system.body", "system")
        block = layout.tools
        if block is None or block.host != "system":
            return
        reader = tool_items_reader(
            self.text(block.item_open),
            self.text(block.item_close),
            block.wrap,
            text_after=block.first and not block.close,
        )
        if isinstance(block, python_tools.PythonToolsBlock):  # a concept of its own module
            reader = python_tools.tools_reader(text_after=block.first and not block.close)
        self.builder.state("system.tools", reader, "system")
        self.on("outside", with_tools + self.text(block.open), "system.tools", _begin("system"))
        if not block.first:
            self.on("system.body", self.text(block.separator, block.open), "system.tools")
        if block.close:
            # A block before the text: the system text follows its close.
            after: ReaderFactory = ContentReader if block.first else ScaffoldReader
            if isinstance(block, python_tools.PythonToolsBlock) and block.first:
                after = python_tools.after_block_reader(layout.system.default or "")
            self.builder.state("system.after_tools", after, "system")
            self.on("system.tools", self.text(block.close), "system.after_tools")
            self.ends("system.after_tools", "system")
        else:
            self.ends("system.tools", "system")

    def user(self) -> None:
        layout = self.layout
        frame = layout.frames["user"]
        self.builder.state("user.body", ContentReader, "user")
        self.on("outside", self.text(frame.open), "user.body", _begin("user"))
        self.ends("user.body", "user")
        block = layout.tools
        if block is None or block.host != "first_user":
            return
        if not block.first:
            raise FormatError(
                f"{layout.name}: a tools block after the user's text is not a concept"
            )
        reader = tool_items_reader(
            self.text(block.item_open), self.text(block.item_close), block.wrap, text_after=True
        )
        self.builder.state("user.tools", reader, "user")
        opening = self.text(frame.open, block.open)
        self.on("outside", opening, "user.tools", _begin("user"))
        if block.close:
            raise FormatError(f"{layout.name}: a closed tools block before text is not a concept")
        self.ends("user.tools", "user")

    def assistant(self) -> None:
        layout = self.layout
        if layout.decision is not None:
            decision.check(layout)  # refused when declared, not when first written
        frame = layout.frames["assistant"]
        calls = layout.calls
        body: ReaderFactory = ContentReader
        if isinstance(calls, JsonCalls) and calls.open is None:
            body = bare_call_reader(envelope(layout))
        self.builder.state("assistant.head", body, "assistant")
        self.builder.state("assistant.body", body, "assistant")
        self.on("outside", self.text(frame.open), "assistant.head", _begin("assistant"))
        texts = ("assistant.head", "assistant.body")
        for state in texts:
            self.ends(state, "assistant")
        reasoning = layout.reasoning
        if reasoning is not None:
            # A layout that writes an empty block for "no reasoning" reads one back as none.
            thinking: ReaderFactory = (
                OptionalReasoningReader if reasoning.always_on_last else ReasoningReader
            )
            self.builder.state("assistant.reasoning", thinking, "assistant")
            self.on("assistant.head", self.text(reasoning.open), "assistant.reasoning")
            self.on("assistant.reasoning", self.text(reasoning.close), "assistant.body")
        if calls is None:
            return
        if not isinstance(calls, JsonCalls):  # a concept of its own module
            python_calls.table_rows(self, texts)
            if layout.decision is not None:
                decision.table_rows(self, texts)
            return
        if calls.also_open:
            reader = positional_call_reader(envelope(layout), "the end", ends_turn=True)
            self.builder.state("assistant.tagged_call", reader, "assistant")
            self.ends("assistant.tagged_call", "assistant")
            for pieces in calls.also_open:
                for state in texts:
                    self.on(state, self.text(pieces), "assistant.tagged_call")
        if calls.open is None:
            return
        close = self.text(calls.close)
        openings = {self.text(calls.open), self.text(calls.separator, calls.open)}
        closes = {close} if close else set()
        if calls.loose_fences:  # read, never written: the declared spelling stays the one
            openings |= loose_spellings(openings)
            closes |= loose_spellings(closes)
        reader = positional_call_reader(
            envelope(layout), close, ends_turn=not close, also_close=frozenset(closes)
        )
        self.builder.state("assistant.call", reader, "assistant")
        for opening in sorted(openings):
            for state in texts:
                self.on(state, opening, "assistant.call")
        if not close:
            self.ends("assistant.call", "assistant")
            return
        self.builder.state("assistant.after_call", BetweenCallsReader, "assistant")
        for spelling in sorted(closes):
            self.on("assistant.call", spelling, "assistant.after_call")
        for opening in sorted(openings):
            self.on("assistant.after_call", opening, "assistant.call")
        self.ends("assistant.after_call", "assistant")

    def results(self) -> None:
        layout = self.layout
        results = layout.results
        if results is None:
            return
        if isinstance(results, python_results.PythonResults):  # a concept of its own module
            return python_results.table_rows(self)
        self.builder.state("tool.item", ResultReader, "tool")
        frame = results.frame
        self.on("outside", self.text(frame.open, results.item_open), "tool.item")
        if not results.item_close:
            for pieces in (frame.end, *frame.also_end):
                self.on("tool.item", self.text(pieces), "outside")
            return
        self.builder.state("tool.between", ScaffoldReader)
        self.on("tool.item", self.text(results.item_close), "tool.between")
        if results.grouped:
            self.on("tool.between", self.text(results.item_open), "tool.item")
        for pieces in (frame.end, *frame.also_end):
            self.on("tool.between", self.text(pieces), "outside")


def compile_table(layout: Layout) -> Grammar:
    """The parse table of a layout."""
    concept = owner(layout, "compile_table")
    if concept is not None:
        return cast(Grammar, concept(layout))
    return _Table(layout).build()


def empty_reasoning(layout: Layout) -> str:
    """The empty reasoning block a forced call starts with, in a layout that writes one on
    a final turn without reasoning (Qwen3: as its prompt with thinking disabled ends)."""
    reasoning = layout.reasoning
    if reasoning is None or not reasoning.always_on_last:
        return ""
    return joined(layout, reasoning.open) + joined(layout, reasoning.close)


def call_prefix(layout: Layout, name: str | None) -> str:
    """What a forced call starts with (``name``: up to the arguments of a call to it)."""
    calls = layout.calls
    assert calls is not None
    text = empty_reasoning(layout) + joined(layout, calls.open or ())
    if not isinstance(calls, JsonCalls):  # a concept of its own module
        return python_calls.call_prefix(calls, text, name)
    if name is None:
        return text
    return (
        f"{text}{{{json.dumps(calls.name_key)}: {json.dumps(name, ensure_ascii=False)}, "
        f"{json.dumps(calls.arguments_key)}: "
    )


def forced_prefixes(layout: Layout) -> ForcedPrefixes | None:
    """The tool-choice prefixes (the grammar bundle reports the same ones)."""
    concept = owner(layout, "forced_prefixes")
    if concept is not None:
        return cast("ForcedPrefixes | None", concept(layout))
    if layout.calls is None:
        return None
    if layout.decision is not None:  # a concept of its own module
        return decision.forced_prefixes(layout)
    key = layout.calls.name_key if isinstance(layout.calls, JsonCalls) else ""
    required = call_prefix(layout, None) or '{"' + key + '": '
    named: Callable[[str], str] = lambda name: call_prefix(layout, name)  # noqa: E731
    return ForcedPrefixes(required=required, none="", named=named, only_with_tools=True)
