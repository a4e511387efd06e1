"""Breeze 2's assistant turn, as the renderer writes the last turn of a conversation (after
``<|start_header_id|>assistant<|end_header_id|>\\n\\n``)::

    with tools:     <|use_tool|>[f(a='x'), g(b=1)]<|eot_id|>   |   <|answer|>CONTENT<|eot_id|>
    without tools:  CONTENT<|eot_id|>
    CONTENT = text and <|start_bbox|>[[x1, y1, x2, y2], ...]<|end_bbox|> boxes (0..1000)

Arguments are keyword arguments whose values are Python literals (single-quoted strings)
under the tool's schema (:mod:`pawlette.export.python_schema`).  The decision token is the
trigger and the forced prefixes are the format's own (``<|use_tool|>`` for ``required``,
``<|answer|>`` for ``none``, ``<|use_tool|>[name(`` for a named function).  Earlier turns'
``<|python_tag|>...<|eom_id|>`` spelling, which the parser also reads, is not what the
renderer writes for a last turn, so it is not in the grammar.
"""

from __future__ import annotations

from ...declare.decision import decision_turn
from ...declare.python_calls import PythonCallSet
from ...format import Format
from ...formats import breeze
from ...types import Tool
from ..grammar import ToolChoice, TurnGrammar
from ..grammar_ast import Marker, Node, Repeat, Rules, optional, seq
from ..text_language import text_terminal
from ._common import STOP

TEXT_NE = text_terminal("TEXT", "NE")


def content(rules: Rules) -> Node:
    """Text and boxes (coordinates 0..1000 without leading zeros)."""
    block = breeze.BOXES.grammar(rules)
    return seq(Repeat(seq(optional(TEXT_NE), block)), optional(TEXT_NE))


def build(fmt: Format, tools: tuple[Tool, ...], choice: ToolChoice, parallel: bool) -> TurnGrammar:
    # The decision-token turn (declare/decision.py) with breeze's answer content; the list
    # after <|use_tool|> is the Python-calls building block's (MRPromptV3 writes "," between
    # calls; the seed writes ", ": both are read).
    calls = PythonCallSet(breeze.CALLS, tools, choice.only, [Marker(breeze.USE_TOOL)], [])
    markers = [breeze.ANSWER, breeze.BOX, breeze.BOX_END, breeze.END_OF_TURN]
    if tools and choice.mode != "none":
        markers.insert(0, breeze.USE_TOOL)
    return decision_turn(
        fmt,
        tools,
        choice,
        parallel,
        calls=calls,
        answer=[Marker(breeze.ANSWER)],
        content=content,
        end=STOP,
        markers=tuple(markers),
    )
