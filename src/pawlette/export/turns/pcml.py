"""PCML's assistant turn, as the renderer writes it::

    [<think>REASONING</think>\\n] ( [CONTENT] | CALLS | CONTENT\\n CALLS ) [<end>]
    CALLS = <call>{"id": "ID", "name": "NAME", "arguments": ARGS}</call> (\\n<call>...</call>)*

Text is escaped PCML text (see :mod:`pawlette.export.text_language`).  ``required`` and a
named ``tool_choice`` allow no content before the first call, so their turns begin with the
forced prefix ``<call>`` (``<call>{"id": "`` for a named function).  Not covered: the header
pairs (``name="..."[SEP]``) an assistant turn can carry, which are not learned.  Inside the
call's JSON, ids and arguments are JSON as the schema says; a marker spelled inside them,
which PCML would escape into text that is no longer JSON, is not accepted.
"""

from __future__ import annotations

import json

from ...engine.lexer import escape_text
from ...format import Format
from ...formats import pcml
from ...types import Tool
from ..grammar import ToolChoice, TurnGrammar
from ..grammar_ast import (
    Lit,
    Marker,
    Node,
    Ref,
    Repeat,
    Rules,
    Terminal,
    alt,
    optional,
    seq,
)
from ..json_schema import BASE_RULES
from ..text_language import TextLanguage, lark_without_markers, text_terminal
from ._common import STOP, function_tools_only, json_arguments, rules_for

_ID_REST_REGEX = '/(\\\\(["\\\\\\x2F bfnrt]|u[a-fA-F0-9]{4})|[^"\\\\\\x00-\\x1F])*"/'.replace(
    " ", ""
)


def _id_rest(fmt: Format) -> Terminal:
    """The call id after its opening quote, through the closing quote (no marker in it)."""
    lark = lark_without_markers(TextLanguage.of(fmt), _ID_REST_REGEX)
    return Terminal("JSON_ID_REST", lark=lark, gbnf="json-id-rest")


CONTENT = text_terminal("TEXT", "NE")
CONTENT_NL = text_terminal("TEXT", "NL")


def _escaped(fmt: Format, text: str) -> str:
    if fmt.escape_pattern is None:
        return text
    return escape_text(text, fmt.escape_pattern, before_marker=False)


class _Calls:
    """The call rules of one tool set, defined in every :class:`Rules` that needs them."""

    def __init__(self, fmt: Format, tools: tuple[Tool, ...]) -> None:
        self.fmt = fmt
        self.tools = tools
        function_tools_only(tools)

    def items(self, rules: Rules, number: int) -> list[Node]:
        """The pieces of a call to ``tools[number]``, markers included."""
        rules.gbnf_extra.update({k: v for k, v in BASE_RULES.items() if k not in rules.gbnf_extra})
        rules.gbnf_extra.setdefault("json-id-rest", 'json-char* "\\""')
        tool = self.tools[number]
        arguments = json_arguments(rules, number, tool)
        name = _escaped(self.fmt, json.dumps(tool.name, ensure_ascii=False))
        return [
            Marker(pcml.CALL),
            Lit('{"id": "'),
            _id_rest(self.fmt),
            Lit(f', "name": {name}, "arguments": '),
            arguments,
            Lit("}"),
            Marker(pcml.CALL_END),
        ]

    def define(self, rules: Rules, only: str | None) -> Ref:
        """Define ``call`` (any allowed tool) in ``rules``."""
        options = []
        for number, tool in enumerate(self.tools):
            if only is not None and tool.name != only:
                continue
            options.append(rules.add(f"call_{number}", seq(*self.items(rules, number))))
        return rules.add("call", alt(*options))


def build(fmt: Format, tools: tuple[Tool, ...], choice: ToolChoice, parallel: bool) -> TurnGrammar:
    calls_possible = bool(tools) and choice.mode != "none"
    only = choice.only
    end = STOP
    reasoning = seq(Marker(pcml.THINK), optional(CONTENT), Marker(pcml.THINK_END), Lit("\n"))
    call_set = _Calls(fmt, tools) if calls_possible else None

    def calls(rules: Rules) -> Node:
        assert call_set is not None
        call = call_set.define(rules, only)
        return seq(call, Repeat(seq(Lit("\n"), call))) if parallel else call

    rules = rules_for(fmt)
    answer: Node
    if not calls_possible:
        answer = seq(optional(CONTENT), end)
    elif choice.mode == "auto":
        many = calls(rules)
        answer = alt(seq(optional(CONTENT), end), seq(many, end), seq(CONTENT_NL, many, end))
    else:
        answer = seq(calls(rules), end)
    rules.rules["start"] = seq(optional(rules.add("reasoning", reasoning)), answer)

    markers = [pcml.THINK, pcml.THINK_END]
    if calls_possible:
        markers += [pcml.CALL, pcml.CALL_END]
    turn = TurnGrammar(
        rules=rules,
        markers=tuple(markers),
        stop=fmt.stop,
        reasoning=(pcml.THINK, pcml.THINK_END_LINE),
        forced_prefixes={"auto": "", "none": "", "required": pcml.CALL if tools else ""},
    )
    for tool in tools:
        turn.forced_prefixes[tool.name] = pcml.CALL + '{"id": "'
    if not calls_possible:
        return turn
    assert call_set is not None
    turn.trigger = pcml.CALL
    if choice.mode == "auto":
        lazy = rules_for(fmt)
        lazy.rules["start"] = seq(calls(lazy), end)
        turn.lazy = lazy
        return turn
    after = rules_for(fmt)
    skip = 1 if choice.mode == "required" else 2
    firsts = [
        seq(*call_set.items(after, number)[skip:])
        for number, tool in enumerate(tools)
        if only is None or tool.name == only
    ]
    rest: Node = Repeat(seq(Lit("\n"), call_set.define(after, only))) if parallel else Lit("")
    after.rules["start"] = seq(alt(*firsts), rest, end)
    turn.after_prefix = after
    return turn
