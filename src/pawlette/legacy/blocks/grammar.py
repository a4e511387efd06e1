"""The turn grammar of block turns, as the writer writes an assistant turn (after its
opening, or after a result when the turn resumes)::

    [thinking] (TEXT | voice | action | image request)*
    ( <end> | \\n<call start>NAME<call arguments>{...}<call close> )

One call at most: the model stops at the call's close for the result.  Actions are content,
so every tool choice allows the declared actions; ``none`` allows no call, ``required`` and a
named choice allow no thinking, text or blocks before the call: the turn is its forced
prefix ``\\n<call start>`` (and the name too for a named choice), then the call (a forced
choice turns reasoning off: :mod:`pawlette.export.forced`).  ``parallel_tool_calls`` changes
nothing.  Output images are another generation prompt and not covered.
"""

from __future__ import annotations

from ...export.grammar import ToolChoice, TurnGrammar
from ...export.grammar_ast import Lit, Node, Ref, Repeat, Rules, alt, optional, seq
from ...export.grammar_ast import Marker as MarkerNode
from ...export.text_language import text_terminal
from ...export.turns._common import STOP, rules_for
from ...format import Format
from ...types import Tool
from ..layout import Layout, Marker
from . import BlockTurns, blocks_of, inline_calls, json_blocks, thinking

TEXT_ANY_NL = text_terminal("TEXT", "ANY_NL")  # text (maybe none), then a newline
TEXT_NE = text_terminal("TEXT", "NE")  # text right before a marker


class _Pieces:
    def __init__(self, fmt: Format, blocks: BlockTurns, tools: tuple[Tool, ...]) -> None:
        self.fmt = fmt
        self.blocks = blocks
        self.functions = [(n, t) for n, t in enumerate(tools) if t.kind == "function"]
        self.actions = [(n, t) for n, t in enumerate(tools) if t.kind == "action"]

    def call_items(self, rules: Rules, number: int, tool: Tool) -> list[Node]:
        """The call after the newline that opens it (its close is the stop)."""
        return inline_calls.grammar_items(self.fmt, self.blocks.calls, rules, number, tool, STOP)

    def call(self, rules: Rules, only: str | None) -> Ref:
        options = [
            rules.add(f"call_{number}", seq(*self.call_items(rules, number, tool)))
            for number, tool in self.functions
            if only is None or tool.name == only
        ]
        return rules.add("call", alt(*options))

    def blocks_rule(self, rules: Rules) -> Ref | None:
        """The blocks a turn may hold between texts (None: the layout has none)."""
        blocks = self.blocks
        options: list[Node] = []
        if blocks.voice is not None:
            options.append(rules.add("voice", json_blocks.headed_grammar(blocks.voice, rules)))
        if blocks.image_requests is not None:
            request = json_blocks.json_block_grammar(blocks.image_requests, rules, "image-request")
            options.append(rules.add("image_request", request))
        actions = blocks.actions
        for number, tool in self.actions if actions is not None else []:
            assert actions is not None
            close = MarkerNode(actions.close.text)
            items = inline_calls.grammar_items(self.fmt, actions, rules, number, tool, close)
            options.append(rules.add(f"action_{number}", seq(*items, Lit("\n"))))
        if not options:
            return None
        return rules.add("block", alt(*options))  # after the newline that opens it


def build_turn(
    fmt: Format, layout: Layout, tools: tuple[Tool, ...], choice: ToolChoice, parallel: bool
) -> TurnGrammar:
    blocks = blocks_of(layout)
    pieces = _Pieces(fmt, blocks, tools)
    calls_possible = bool(pieces.functions) and choice.mode != "none"
    only = choice.only

    rules = rules_for(fmt)
    forced = calls_possible and choice.mode != "auto"
    if forced:  # the call right away, no thinking block (pawlette.export.forced says why)
        rules.rules["start"] = seq(Lit("\n"), pieces.call(rules, only))
    else:
        thought: Node | None = None
        if blocks.thinking is not None:
            thought = optional(rules.add("thinking", thinking.grammar(blocks.thinking)))
        inner = pieces.blocks_rule(rules)
        body: list[Node] = [] if inner is None else [Repeat(seq(TEXT_ANY_NL, inner))]
        answer = seq(*body, optional(TEXT_NE), STOP)  # the turn's end
        turn_body: Node = answer
        if calls_possible:  # auto
            ends_in_call = seq(*body, TEXT_ANY_NL, pieces.call(rules, None))
            turn_body = alt(answer, ends_in_call)
        rules.rules["start"] = turn_body if thought is None else seq(thought, turn_body)

    think, voice, request = blocks.thinking, blocks.voice, blocks.image_requests
    markers: list[Marker] = []
    if think is not None:
        markers += [think.start, think.step, think.reasoning, think.conclusion, think.end]
    if voice is not None:
        markers += [voice.start, voice.body, voice.end]
    if request is not None:
        markers += [request.open, request.close]
    if pieces.actions and blocks.actions is not None:
        markers += [blocks.actions.start, blocks.actions.arguments, blocks.actions.close]
    if calls_possible:
        markers += [blocks.calls.start, blocks.calls.arguments]
    opening = "\n" + blocks.calls.start.text
    turn = TurnGrammar(
        rules=rules,
        markers=tuple(marker.text for marker in markers),
        stop=fmt.stop,
        reasoning=None if forced or think is None else thinking.fences(think),
        forced_prefixes={
            "auto": "",
            "none": "",
            "required": opening if pieces.functions else "",
        },
    )
    for _, tool in pieces.functions:
        turn.forced_prefixes[tool.name] = (
            opening + inline_calls.escaped_name(fmt, tool.name) + blocks.calls.arguments.text
        )
    if not calls_possible:
        return turn
    turn.trigger = blocks.calls.start.text
    if choice.mode == "auto":
        lazy = rules_for(fmt)
        options = [seq(*pieces.call_items(lazy, number, tool)) for number, tool in pieces.functions]
        lazy.rules["start"] = alt(*options)
        turn.lazy = lazy
        return turn
    after = rules_for(fmt)
    skip = 1 if choice.mode == "required" else 3  # <call start> [NAME <call arguments>]
    rests = [
        seq(*pieces.call_items(after, number, tool)[skip:])
        for number, tool in pieces.functions
        if only is None or tool.name == only
    ]
    after.rules["start"] = alt(*rests)
    turn.after_prefix = after
    return turn
