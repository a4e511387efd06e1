"""The parse table of headed turns (see :mod:`pawlette.legacy.headed`).

A turn runs from its role marker to the next one, so every state has a row for every role
marker and no turn has an end row::

    outside            begin                 → outside
    (any)              system marker         → system.turn     (message pending)
    (any)              user marker           → user.turn       (message pending)
    (any)              result marker         → tool.turn       (message pending)
    (not assistant)    assistant marker      → assistant.turn  (a new message)
    assistant.*        assistant marker      → assistant.more  (a call joins the message)

A role marker that ends the text opens no turn: it is the stop the model wrote (pending
messages that get no text vanish).  In a completion (parsed from ``assistant.turn``) the
next role marker ends it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...blocks.tool_choice import ForcedPrefixes
from ...engine.machine import Action, Grammar, GrammarBuilder, Parser
from ...engine.readers import ScaffoldReader
from ...types import Role, Tool
from ..layout import Layout
from . import headed_of, role_markers, text_of
from .readers import assistant_turn_reader, headed_text_reader


def _turn(role: Role) -> Action:
    def action(parser: Parser, offset: int) -> None:
        parser.end_message()
        if role == "assistant":
            parser.begin_message(role)
        elif parser.conversation:
            # Pending: a role token that ends the text opens no turn (it is the stop token
            # the training render writes after a final assistant turn).
            parser.begin_message(role, pending=True)
        else:  # a completion stops at the next role token
            parser.goto("ended")

    return action


def compile_table(layout: Layout) -> Grammar:
    """The parse table of a layout with headed turns."""
    calls = headed_of(layout)
    markers = role_markers(layout)
    table = GrammarBuilder()
    table.fields.update(
        {
            "system": {"name": "name"},
            "user": {"name": "name"},
            "tool": {"name": "name", "id": "tool_call_id"},
        }
    )
    table.state("outside", ScaffoldReader)
    table.state("ended", ScaffoldReader)
    table.state("system.turn", headed_text_reader(tools_block=True), "system")
    table.state("user.turn", headed_text_reader(), "user")
    table.state("tool.turn", headed_text_reader(results=True), "tool")
    table.state("assistant.turn", assistant_turn_reader(calls, continuation=False), "assistant")
    table.state("assistant.more", assistant_turn_reader(calls, continuation=True), "assistant")
    if layout.begin:
        table.on("outside", text_of(layout.begin), "outside")
    for state in (
        "outside",
        "system.turn",
        "user.turn",
        "tool.turn",
        "assistant.turn",
        "assistant.more",
    ):
        for role, marker in markers.items():
            if role == "assistant" and state.startswith("assistant."):
                table.on(state, marker, "assistant.more")
            else:
                table.on(state, marker, f"{role}.turn", _turn(role))
    return table.build(
        escape=False, conversation_start="outside", completion_start="assistant.turn"
    )


def forced_prefixes(layout: Layout) -> ForcedPrefixes:
    """The tool-choice prefixes: a forced call begins with its turn's head (the function's
    name, the fence, ``tool_call(``); ``required`` has one only when a single function (not
    the code interpreter, whose program has no head to force) can be called.  The grammar
    (:mod:`.grammar`) reports these."""
    calls = headed_of(layout)

    def named(name: str) -> str:
        return "" if name == calls.code_tool else calls.head(name)

    def required_for(tools: Sequence[Tool] | None) -> str | None:
        if tools is None:
            return None  # which function is unknown
        if len(tools) == 1 and tools[0].name != calls.code_tool:
            return calls.head(tools[0].name)
        return ""

    return ForcedPrefixes(required="", none="", named=named, required_for=required_for)
