"""The grammar interpreter: a :class:`~.layout.Layout`'s assistant turn as a grammar.

One turn, after the generation prompt, through the end fence::

    [REASONING] ( [TEXT] END | CALLS END | TEXT SEPARATOR CALLS END )    tool_choice "auto"
    [REASONING] [TEXT] END                                              "none" (or no tools)
    [REASONING] CALLS END                                               "required" / named
    CALLS = CALL (SEPARATOR CALL)*      (one CALL when the layout or the request is serial)
    CALL  = call open  {"<name key>": "NAME", "<arguments key>": ARGS}  call close

Markers are special-token nodes and layout text literals, straight from the fences.  Text is
the format's text language (what its lexer reads back as text).  Where a fence's layout text
starts with a newline right after free text, the text and that newline are one lexeme (the
``_NL`` terminals), because llguidance's lexer is greedy.  A layout whose calls are bare JSON
objects (Llama 3) writes text whose first character other than whitespace is not ``{``
(the parser reads that as a call); GBNF is tighter: not ``<`` either.

The forced prefixes come from :func:`pawlette.legacy.table.call_prefix`, the function
:meth:`pawlette.Format.forced_prefix` reads too, so the two cannot disagree.  In a layout that
writes an empty reasoning block on a final turn without reasoning (Qwen3), a forced call
starts with that empty block: forcing a call turns thinking off, as Qwen3's own prompt with
thinking disabled does.
"""

from __future__ import annotations

import json
from typing import cast

from ..export.grammar import ToolChoice, TurnGrammar
from ..export.grammar_ast import (
    Lit,
    Marker,
    Node,
    Repeat,
    Rules,
    Terminal,
    alt,
    optional,
    seq,
)
from ..export.json_schema import BASE_RULES
from ..export.text_language import text_terminal
from ..export.turns._common import function_tools_only, json_arguments, rules_for
from ..format import Format
from ..types import Tool
from . import layout as declared
from . import python_calls
from .owners import owner
from .table import call_prefix, empty_reasoning, joined, reasoning_text

TEXT = text_terminal("TEXT")
TEXT_NE = text_terminal("TEXT", "NE")
TEXT_NL = text_terminal("TEXT", "NL")
BARE_TEXT = Terminal("BARE_TEXT", lark="(TEXT_NE) & ~/[ \\t\\r\\n]*\\{(?s:.*)/", gbnf="bare-text")
BARE_TEXT_NOTE = (
    "text of a turn whose calls are bare JSON objects may not start with '{' after "
    "whitespace (that is a call)"
)
BARE_TEXT_GBNF_NOTE = "nor, here, with '<' after whitespace (tighter than the parser)"


def nodes(layout: declared.Layout, pieces: declared.Fence) -> list[Node]:
    """A fence as grammar nodes (adjacent layout text merged into one literal)."""
    result: list[Node] = []
    for piece in pieces:
        if isinstance(piece, declared.Marker):
            result.append(Marker(piece.text))
            continue
        text = piece.text if isinstance(piece, declared.Lit) else joined(layout, (piece,))
        if not text:
            continue
        if result and isinstance(result[-1], Lit):
            result[-1] = Lit(result[-1].text + text)
        else:
            result.append(Lit(text))
    return result


def after_text(layout: declared.Layout, pieces: declared.Fence, *, empty: bool) -> Node:
    """Free text (``empty``: maybe none), then the fence."""
    items = nodes(layout, pieces)
    if items and isinstance(items[0], Lit) and items[0].text.startswith("\n"):
        rest = items[0].text[1:]
        tail = [Lit(rest), *items[1:]] if rest else items[1:]
        text: Node = alt(TEXT_NL, Lit("\n")) if empty else TEXT_NL
        return seq(text, *tail)
    return seq(optional(TEXT) if empty else TEXT_NE, *items)


def drop_prefix(items: list[Node], prefix: str) -> list[Node]:
    """``items`` without the text ``prefix`` they start with."""
    rest = list(items)
    while prefix:
        head = rest.pop(0)
        if isinstance(head, (Lit, Marker)) and prefix.startswith(head.text):
            prefix = prefix[len(head.text) :]
        elif isinstance(head, Lit) and head.text.startswith(prefix):
            rest.insert(0, Lit(head.text[len(prefix) :]))
            prefix = ""
        else:
            raise ValueError(f"the call does not start with the forced prefix {prefix!r}")
    return rest


class _Calls:
    def __init__(self, layout: declared.Layout, tools: tuple[Tool, ...], only: str | None):
        self.layout = layout
        calls = layout.calls
        assert isinstance(calls, declared.JsonCalls)
        self.calls = calls
        self.tools = [(number, tool) for number, tool in enumerate(tools)]
        self.only = only

    def items(self, rules: Rules, number: int, tool: Tool) -> list[Node]:
        calls = self.calls
        assert calls is not None
        rules.gbnf_extra.update({k: v for k, v in BASE_RULES.items() if k not in rules.gbnf_extra})
        head = (
            f"{{{json.dumps(calls.name_key)}: {json.dumps(tool.name, ensure_ascii=False)}, "
            f"{json.dumps(calls.arguments_key)}: "
        )
        return [
            *nodes(self.layout, calls.open or ()),
            Lit(head),
            json_arguments(rules, number, tool),
            *nodes(self.layout, (declared.Lit("}"), *calls.close)),
        ]

    def allowed(self) -> list[tuple[int, Tool]]:
        return [(n, tool) for n, tool in self.tools if self.only is None or tool.name == self.only]

    def call(self, rules: Rules) -> Node:
        options = [
            rules.add(f"call_{number}", seq(*self.items(rules, number, tool)))
            for number, tool in self.allowed()
        ]
        return rules.add("call", alt(*options))

    def many(self, rules: Rules, parallel: bool) -> Node:
        calls = self.calls
        assert calls is not None
        call = self.call(rules)
        if not (parallel and calls.parallel):
            return call
        return seq(call, Repeat(seq(*nodes(self.layout, calls.separator), call)))


def _end(layout: declared.Layout, stop: tuple[str, ...]) -> Node:
    """The end fence up to the format's stop marker: the grammar ends there and the engine's
    own stop takes over (see :data:`pawlette.export.turns._common.STOP`)."""
    frame = layout.frames["assistant"]
    options = []
    for pieces in (frame.end, *frame.also_end):
        items = nodes(layout, pieces)
        cut = next(
            (at for at, item in enumerate(items) if isinstance(item, Marker) and item.text in stop),
            len(items),
        )
        options.append(seq(*items[:cut]))
    return alt(*options)


def _bare_text(rules: Rules) -> None:
    rules.lark_extra["BARE_TEXT"] = BARE_TEXT.lark
    rules.gbnf_extra["bare-text"] = "[ \\t\\r\\n]+ | [ \\t\\r\\n]* [^{< \\t\\r\\n] text"
    if BARE_TEXT_NOTE not in rules.notes:
        rules.notes.append(BARE_TEXT_NOTE)
        rules.syntax_notes.setdefault("gbnf", []).append(BARE_TEXT_GBNF_NOTE)


def build_turn(
    fmt: Format,
    layout: declared.Layout,
    tools: tuple[Tool, ...],
    choice: ToolChoice,
    parallel: bool,
) -> TurnGrammar:
    """The turn grammar of a declared format under one tool choice."""
    if layout.decision is not None:  # a concept of its own module
        from .decision import build_turn as decision_turn

        return decision_turn(fmt, layout, tools, choice, parallel)
    concept = owner(layout, "build_turn")
    if concept is not None:
        return cast(TurnGrammar, concept(fmt, layout, tools, choice, parallel))
    calls = layout.calls
    calls_possible = bool(tools) and choice.mode != "none" and calls is not None
    if calls_possible:
        function_tools_only(tools)
    end = _end(layout, fmt.stop)
    bare = isinstance(calls, declared.JsonCalls) and calls.open is None
    rules = rules_for(fmt)
    if bare:
        _bare_text(rules)
    content: Node = optional(BARE_TEXT if bare else TEXT)
    if layout.parts is not None:  # a concept of its own module
        from .parts import grammar_content

        content = grammar_content(layout, rules, content)
    answer: Node
    call_set: _Calls | python_calls.PythonCallSet | None = None
    if calls_possible and python_calls.is_python(calls):  # a concept of its own module
        assert isinstance(calls, python_calls.PythonCalls)
        call_set = python_calls.PythonCallSet(
            calls, tools, choice.only, nodes(layout, calls.open), nodes(layout, calls.close)
        )
    elif calls_possible:
        call_set = _Calls(layout, tools, choice.only)
    if call_set is None:
        answer = seq(content, end)
    elif choice.mode == "auto":
        assert calls is not None
        many = call_set.many(rules, parallel)
        options = [seq(content, end), seq(many, end)]
        if calls.with_content and calls.open is not None:
            options.append(seq(after_text(layout, calls.separator, empty=False), many, end))
        answer = alt(*options)
    else:
        answer = seq(call_set.many(rules, parallel), end)
    reasoning = layout.reasoning
    if reasoning is not None:
        block = seq(*nodes(layout, reasoning.open), after_text(layout, reasoning.close, empty=True))
        rules.rules["start"] = seq(optional(rules.add("reasoning", block)), answer)
    else:
        rules.rules["start"] = answer

    markers = [*fmt.special_markers]
    turn = TurnGrammar(
        rules=rules,
        markers=tuple(markers),
        stop=fmt.stop,
        reasoning=reasoning_text(layout),
        forced_prefixes={"auto": "", "none": ""},
    )
    if calls is not None and tools:
        turn.forced_prefixes["required"] = fmt.forced_prefix("required", tools) or ""
        for tool in tools:
            turn.forced_prefixes[tool.name] = call_prefix(layout, tool.name)
    else:
        turn.forced_prefixes["required"] = ""
    if call_set is None:
        return turn
    assert calls is not None
    if calls.open is not None:
        turn.trigger = next(
            (piece.text for piece in calls.open if isinstance(piece, declared.Marker)), None
        )
    if choice.mode == "auto":
        if turn.trigger is not None:
            lazy = rules_for(fmt)
            lazy.rules["start"] = seq(call_set.many(lazy, parallel), end)
            turn.lazy = lazy
        return turn
    after = rules_for(fmt)
    prefix = turn.forced_prefixes["required" if choice.mode == "required" else choice.key()]
    prefix = prefix[len(empty_reasoning(layout)) :]  # the call's part of the prefix
    if isinstance(call_set, python_calls.PythonCallSet):
        after.rules["start"] = seq(call_set.after_prefix(after, prefix, parallel), end)
        turn.after_prefix = after
        return turn
    firsts = [
        seq(*drop_prefix(call_set.items(after, number, tool), prefix))
        for number, tool in call_set.allowed()
    ]
    rest: Node = Lit("")
    if parallel and calls.parallel:
        rest = Repeat(seq(*nodes(layout, calls.separator), call_set.call(after)))
    after.rules["start"] = seq(alt(*firsts), rest, end)
    turn.after_prefix = after
    return turn
