"""The turn grammar of headed turns (see :mod:`pawlette.legacy.headed`): ChatGLM3's assistant
turn, as the renderer writes it (after the ``<|assistant|>`` of the
generation prompt), through the role token that ends it::

    \\nTEXT <|user|>                                        a reply
    \\nTEXT (<|assistant|>CALL)+ <|observation|>            a reply, then calls
    CALL (<|assistant|>CALL)* <|observation|>               calls
    CALL = NAME\\n```python\\ntool_call(k=v, ...)\\n```

Arguments are keyword arguments whose values are Python literals (double-quoted strings)
under the tool's schema (:mod:`pawlette.export.python_schema`).  ``required`` and a named
choice allow no reply text before the calls; a named choice's forced prefix is the whole call
head, ``NAME\\n```python\\ntool_call(``, and so is ``required``'s when exactly one function
(not the code interpreter) is declared; with several, ``required`` has no prefix.  The code
interpreter (``interpreter`` turns) is allowed when a tool named ``code_interpreter`` is
declared, its program being any text.  A call turn has no marker of its own before the first
call, so there is no trigger for lazy grammars.
"""

from __future__ import annotations

from ...export.grammar import ToolChoice, TurnGrammar
from ...export.grammar_ast import Lit, Marker, Node, Ref, Repeat, Rules, alt, optional, seq
from ...export.python_schema import PythonValues, SchemaToPython
from ...export.text_language import text_terminal
from ...export.turns._common import STOP, function_tools_only, parameters, rules_for
from ...format import Format
from ...types import Tool
from ..layout import Layout
from . import headed_of, role_markers

TEXT_NE = text_terminal("TEXT", "NE")


def build_turn(
    fmt: Format, layout: Layout, tools: tuple[Tool, ...], choice: ToolChoice, parallel: bool
) -> TurnGrammar:
    """The turn grammar of a layout with headed turns under one tool choice."""
    calls = headed_of(layout)
    assistant = role_markers(layout)["assistant"]
    _head = calls.head
    function_tools_only(tools)
    only = choice.only
    calls_possible = bool(tools) and choice.mode != "none"

    # A tool's argument rules, per rule set (the grammar after a forced prefix has its own).
    arguments: dict[tuple[int, int], Node] = {}

    def call(rules: Rules, skip_head: bool = False) -> Node:
        rule = "call_rest" if skip_head else "call"
        if rule in rules.rules:  # once per grammar: its schema's rules are named, not redefined
            return Ref(rule)
        values = PythonValues(rules, calls.quote)
        options = []
        for number, tool in enumerate(tools):
            if only is not None and tool.name != only:
                continue
            if tool.name == calls.code_tool:
                body: Node = seq(
                    Lit(calls.code_metadata + "\n" + calls.opening),
                    optional(TEXT_NE),
                    Lit(calls.closing),
                )
            else:
                keywords = arguments.get((id(rules), number))
                if keywords is None:  # once per tool: the calls with and without a head share it
                    converter = SchemaToPython(
                        values, f"args_{number}", f"tools[{number}].parameters"
                    )
                    keywords = arguments[id(rules), number] = converter.keyword_arguments(
                        parameters(tool)
                    )
                head: Node = Lit("") if skip_head else Lit(_head(tool.name))
                body = seq(head, keywords, Lit(")" + calls.closing))
            options.append(rules.add(f"call_{number}" + ("_rest" if skip_head else ""), body))
        return rules.add(rule, alt(*options))

    def more(rules: Rules, first: Node) -> Node:
        if not parallel:
            return first
        return seq(first, Repeat(seq(Marker(assistant), call(rules))))

    rules = rules_for(fmt)
    reply = seq(Lit("\n"), optional(TEXT_NE))
    observation = STOP  # <|observation|>
    if not calls_possible:
        rules.rules["start"] = seq(reply, STOP)
    elif choice.mode == "auto":
        with_text = seq(
            Lit("\n"), TEXT_NE, Marker(assistant), more(rules, call(rules)), observation
        )
        rules.rules["start"] = alt(
            seq(reply, STOP), with_text, seq(more(rules, call(rules)), observation)
        )
    else:
        rules.rules["start"] = seq(more(rules, call(rules)), observation)

    markers = [assistant]
    turn = TurnGrammar(
        rules=rules,
        markers=tuple(markers),
        stop=fmt.stop,
        forced_prefixes={"auto": "", "none": "", "required": ""},
    )
    turn.rules.notes.append(
        f"calls begin right after the generation prompt or after {assistant}: no lazy trigger"
    )
    # The prefixes are the format's own (:func:`.table.forced_prefixes`): one source.  A call
    # begins with its function's name: ``required`` has a prefix when one function can be
    # called, none when several can (no prefix says "any of these names").
    for tool in tools:
        if tool.name != calls.code_tool:
            named = {"type": "function", "function": {"name": tool.name}}
            turn.forced_prefixes[tool.name] = fmt.forced_prefix(named, tools) or ""
    required = fmt.forced_prefix("required", tools) or ""
    turn.forced_prefixes["required"] = required
    if (only is not None and only != calls.code_tool) or (choice.mode == "required" and required):
        after = rules_for(fmt)
        first = call(after, skip_head=True)
        rest: Node = Repeat(seq(Marker(assistant), call(after))) if parallel else Lit("")
        after.rules["start"] = seq(first, rest, observation)
        turn.after_prefix = after
    return turn
