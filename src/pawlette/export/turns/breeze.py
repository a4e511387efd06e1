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

from ...format import Format
from ...formats import breeze
from ...types import Tool
from ..grammar import ToolChoice, TurnGrammar
from ..grammar_ast import Lit, Marker, Node, Ref, Repeat, Rules, Terminal, alt, optional, seq
from ..python_schema import PythonValues, SchemaToPython
from ..text_language import text_terminal
from ._common import STOP, function_tools_only, parameters, rules_for

TEXT_NE = text_terminal("TEXT", "NE")
# 0..1000 without leading zeros, as the parser reads them (it refuses ``03``).
COORDINATE = Terminal("BOX_COORDINATE", lark="/1000|[1-9][0-9]{0,2}|0/", gbnf="box-coordinate")
QUOTE = "repr"  # strings as Python's repr writes them (MRPromptV3), either quote


def build(fmt: Format, tools: tuple[Tool, ...], choice: ToolChoice, parallel: bool) -> TurnGrammar:
    function_tools_only(tools)
    only = choice.only

    def new_rules() -> Rules:
        rules = rules_for(fmt)
        rules.gbnf_extra["box-coordinate"] = '"1000" | [1-9] [0-9]? [0-9]? | "0"'
        return rules

    def content(rules: Rules) -> Node:
        box = seq(COORDINATE, *[item for _ in range(3) for item in (Lit(", "), COORDINATE)])
        box_list = seq(Lit("[["), box, Lit("]"), Repeat(seq(Lit(", ["), box, Lit("]"))), Lit("]"))
        block = rules.add("box", seq(Marker(breeze.BOX), box_list, Marker(breeze.BOX_END)))
        return seq(Repeat(seq(optional(TEXT_NE), block)), optional(TEXT_NE))

    # A tool's argument rules, per rule set (the grammar after a forced prefix has its own).
    arguments: dict[tuple[int, int], Node] = {}

    def call(rules: Rules, skip_head: bool = False) -> Node:
        rule = "call_rest" if skip_head else "call"
        if rule in rules.rules:  # once per grammar: its schema's rules are named, not redefined
            return Ref(rule)
        values = PythonValues(rules, QUOTE)
        options = []
        for number, tool in enumerate(tools):
            if only is not None and tool.name != only:
                continue
            keywords = arguments.get((id(rules), number))
            if keywords is None:  # once per tool: the calls with and without a head share it
                converter = SchemaToPython(values, f"args_{number}", f"tools[{number}].parameters")
                keywords = arguments[id(rules), number] = converter.keyword_arguments(
                    parameters(tool)
                )
            head: Node = Lit("") if skip_head else Lit(tool.name + "(")
            name = f"call_{number}" + ("_rest" if skip_head else "")
            options.append(rules.add(name, seq(head, keywords, Lit(")"))))
        return rules.add(rule, alt(*options))

    def call_list(rules: Rules, first: Node) -> Node:
        # MRPromptV3 writes "," between calls; the seed writes ", " (both are read).
        rest = Repeat(seq(Lit(","), optional(Lit(" ")), call(rules))) if parallel else Lit("")
        return seq(first, rest, Lit("]"), STOP)

    rules = new_rules()
    answer = seq(Marker(breeze.ANSWER), content(rules), STOP)
    use_tool = seq(Marker(breeze.USE_TOOL), Lit("["))
    if not tools:
        rules.rules["start"] = seq(content(rules), STOP)
    elif choice.mode == "none":
        rules.rules["start"] = answer
    elif choice.mode == "auto":
        rules.rules["start"] = alt(seq(use_tool, call_list(rules, call(rules))), answer)
    else:
        rules.rules["start"] = seq(use_tool, call_list(rules, call(rules)))

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
        lazy.rules["start"] = seq(use_tool, call_list(lazy, call(lazy)))
        turn.lazy = lazy
        return turn
    after = new_rules()
    if choice.mode == "required":
        after.rules["start"] = seq(Lit("["), call_list(after, call(after)))
    else:
        after.rules["start"] = call_list(after, call(after, skip_head=True))
    turn.after_prefix = after
    return turn
