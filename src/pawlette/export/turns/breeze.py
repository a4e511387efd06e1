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

from ...declare.python_calls import PythonCallSet
from ...format import Format
from ...formats import breeze
from ...types import Tool
from ..grammar import ToolChoice, TurnGrammar
from ..grammar_ast import Marker, Node, Repeat, Rules, alt, optional, seq
from ..text_language import text_terminal
from ._common import STOP, function_tools_only, rules_for

TEXT_NE = text_terminal("TEXT", "NE")


def build(fmt: Format, tools: tuple[Tool, ...], choice: ToolChoice, parallel: bool) -> TurnGrammar:
    function_tools_only(tools)
    only = choice.only

    def new_rules() -> Rules:
        return rules_for(fmt)

    def content(rules: Rules) -> Node:
        block = breeze.BOXES.grammar(rules)  # coordinates 0..1000 without leading zeros
        return seq(Repeat(seq(optional(TEXT_NE), block)), optional(TEXT_NE))

    # The list after <|use_tool|>, from the Python-calls building block (MRPromptV3 writes
    # "," between calls; the seed writes ", ": both are read).
    calls = PythonCallSet(breeze.CALLS, tools, only, [Marker(breeze.USE_TOOL)], [])

    rules = new_rules()
    answer = seq(Marker(breeze.ANSWER), content(rules), STOP)
    if not tools:
        rules.rules["start"] = seq(content(rules), STOP)
    elif choice.mode == "none":
        rules.rules["start"] = answer
    elif choice.mode == "auto":
        rules.rules["start"] = alt(seq(calls.many(rules, parallel), STOP), answer)
    else:
        rules.rules["start"] = seq(calls.many(rules, parallel), STOP)

    markers = [breeze.ANSWER, breeze.BOX, breeze.BOX_END, breeze.END_OF_TURN]
    if tools and choice.mode != "none":
        markers.insert(0, breeze.USE_TOOL)
    forced = fmt.forced_prefixes
    turn = TurnGrammar(
        rules=rules,
        markers=tuple(markers),
        stop=fmt.stop,
        forced_prefixes={"auto": "", "none": "", "required": ""},
    )
    if tools and forced is not None:
        turn.forced_prefixes["none"] = fmt.forced_prefix("none", tools) or ""
        turn.forced_prefixes["required"] = fmt.forced_prefix("required", tools) or ""
        for tool in tools:
            named = {"type": "function", "function": {"name": tool.name}}
            turn.forced_prefixes[tool.name] = fmt.forced_prefix(named, tools) or ""
    if not tools:
        return turn
    if choice.mode == "none":
        after = new_rules()
        after.rules["start"] = seq(content(after), STOP)
        turn.after_prefix = after
        return turn
    turn.trigger = breeze.USE_TOOL
    if choice.mode == "auto":
        lazy = new_rules()
        lazy.rules["start"] = seq(calls.many(lazy, parallel), STOP)
        turn.lazy = lazy
        return turn
    after = new_rules()
    prefix = turn.forced_prefixes["required" if choice.mode == "required" else choice.key()]
    after.rules["start"] = seq(calls.after_prefix(after, prefix, parallel), STOP)
    turn.after_prefix = after
    return turn
