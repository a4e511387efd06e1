"""The turn grammar of block turns: the concept's share of :mod:`pawlette.declare.grammar`.

An assistant turn as the writer writes it (after its opening, or after a result when the turn
resumes)::

    [thinking] (TEXT | voice | action | image request)* <end>
    [thinking] (TEXT | voice | action | image request)* \\n<call start>NAME<call args>{...}<close>

One call at most: the model stops at the call's close for the result.  Actions are content,
so every tool choice allows the declared actions; ``none`` allows no call; under ``required``
and a named choice the turn is its forced prefix ``\\n<call start>`` (and the name too for a
named choice), then the call (a forced choice turns reasoning off:
:mod:`pawlette.export.forced`).  ``parallel_tool_calls`` changes nothing.  Output images are
another generation prompt and not covered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...engine.lexer import escape_text, marker_pattern
from ...export.grammar_ast import Lit, Node, Ref, Repeat, Rules, alt, optional, seq
from ...export.grammar_ast import Marker as MarkerNode
from ...export.text_language import text_terminal
from ...export.turns._common import STOP, json_arguments
from ...types import Tool
from . import json_blocks, thinking

if TYPE_CHECKING:
    from ...declare.grammar import Turn
    from .blocks import BlockTurns
    from .inline_calls import InlineCall

TEXT_ANY_NL = text_terminal("TEXT", "ANY_NL")  # text (maybe none), then a newline
TEXT_NE = text_terminal("TEXT", "NE")  # text right before a marker


def call_items(call: InlineCall, name: str, rules: Rules, number: int, tool: Tool) -> list[Node]:
    """One call of ``tool`` after the newline that opens it (``name``: its name as written)."""
    return [
        MarkerNode(call.start.text),
        Lit(name),
        MarkerNode(call.arguments.text),
        json_arguments(rules, number, tool),
    ]


def blocks_rule(blocks: BlockTurns, turn: Turn, rules: Rules) -> Ref | None:
    """The blocks a turn may hold between texts, each after the newline that opens it (None:
    the layout has none)."""
    options: list[Node] = []
    if blocks.voice is not None:
        options.append(rules.add("voice", json_blocks.headed_grammar(blocks.voice, rules)))
    if blocks.image_requests is not None:
        request = json_blocks.json_block_grammar(blocks.image_requests, rules, "image-request")
        options.append(rules.add("image_request", request))
    actions = blocks.actions
    for number, tool in enumerate(turn.tools):
        if actions is None or tool.kind != "action":
            continue
        items = call_items(actions, written_name(turn, tool.name), rules, number, tool)
        close = MarkerNode(actions.close.text)
        options.append(rules.add(f"action_{number}", seq(*items, close, Lit("\n"))))
    if not options:
        return None
    return rules.add("block", alt(*options))


def body(blocks: BlockTurns, turn: Turn, rules: Rules) -> list[Node]:
    """The text and blocks before the turn's end or its call."""
    inner = blocks_rule(blocks, turn, rules)
    return [] if inner is None else [Repeat(seq(TEXT_ANY_NL, inner))]


def written_name(turn: Turn, name: str) -> str:
    """A name as the writer writes it (escaped, before a marker)."""
    if not any(concept.escapes_markers() for concept in turn.layout.concepts):
        return name
    from ...declare.table import compile_table

    markers = compile_table(turn.layout).markers
    return escape_text(name, marker_pattern(markers), before_marker=True)


def contribute(blocks: BlockTurns, turn: Turn) -> None:
    """The blocks' share of the turn grammar."""
    if blocks.actions is not None:
        turn.tool_kinds = turn.tool_kinds | {"action"}
    think = blocks.thinking
    if think is not None:
        turn.head = thinking.grammar(think)
        turn.reasoning = thinking.fences(think)
    turn.content = seq(*body(blocks, turn, turn.rules), optional(TEXT_NE))
    functions = [tool for tool in turn.tools if tool.kind == "function"]
    if turn.tools and not functions:
        turn.calls = None  # actions only: no call to make
    else:
        turn.calls = InlineCallSet(blocks, turn)


class InlineCallSet:
    """One call at the end of the turn (see :class:`pawlette.declare.grammar.CallSet`)."""

    with_content = False  # the text and blocks before the call are the calls' own

    def __init__(self, blocks: BlockTurns, turn: Turn) -> None:
        self.blocks = blocks
        self.turn = turn
        self.trigger: str | None = blocks.calls.start.text
        self.opening = "\n" + blocks.calls.start.text

    def functions(self, turn: Turn) -> list[tuple[int, Tool]]:
        return [(n, tool) for n, tool in turn.allowed() if tool.kind == "function"]

    def call(self, turn: Turn, rules: Rules) -> Ref:
        """One call after the newline that opens it (its close is the stop)."""
        calls = self.blocks.calls
        options = [
            rules.add(
                f"call_{number}",
                seq(*call_items(calls, written_name(turn, tool.name), rules, number, tool), STOP),
            )
            for number, tool in self.functions(turn)
        ]
        return rules.add("call", alt(*options))

    def many(self, turn: Turn, rules: Rules, parallel: bool) -> Node:
        return seq(*body(self.blocks, turn, rules), TEXT_ANY_NL, self.call(turn, rules))

    def lazy(self, turn: Turn, rules: Rules, parallel: bool) -> Node:
        calls = self.blocks.calls
        return alt(
            *(
                seq(*call_items(calls, written_name(turn, tool.name), rules, number, tool), STOP)
                for number, tool in self.functions(turn)
            )
        )

    def after_text(self, turn: Turn, rules: Rules) -> Node:
        return TEXT_ANY_NL  # (never asked: with_content is False)

    def prefix(self, name: str | None) -> str:
        if name is None:
            return self.opening
        return self.opening + written_name(self.turn, name) + self.blocks.calls.arguments.text

    def after_prefix(self, turn: Turn, rules: Rules, prefix: str, parallel: bool) -> Node:
        skip = 1 if prefix == self.opening else 3  # <call start> [NAME <call arguments>]
        calls = self.blocks.calls
        rests = [
            seq(
                *call_items(calls, written_name(turn, tool.name), rules, number, tool)[skip:],
                STOP,
            )
            for number, tool in self.functions(turn)
        ]
        return alt(*rests)
