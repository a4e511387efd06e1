"""omni's assistant turn, as the renderer writes it (after ``<|ASSISTANT_START|>``, or after a
tool result when the turn resumes)::

    [\\n<|THINK_START|>P (\\n<|THINK_STEP|>T\\n<|THINK_REASONING|>R\\n<|THINK_CONCLUSION|>C)*
       \\n<|THINK_END|>\\n]
    (TEXT | \\n<|VOICE_START|>\\n{...}\\n<|VOICE_CONTENT|>\\nTEXT\\n<|VOICE_END|>\\n
          | \\n<|ACTION_START|>NAME<|ACTION_ARGS|>{...}<|ACTION_END|>\\n
          | \\n<|IMAGE_PLACEHOLDER_START|>\\n{...}\\n<|IMAGE_PLACEHOLDER_END|>\\n)*
    ( <|ASSISTANT_END|> | \\n<|FUNCTION_START|>NAME<|FUNCTION_ARGS|>{...}<|FUNCTION_RETURN|> )

One function call at most: the model stops at ``<|FUNCTION_RETURN|>`` for the result.
Actions are content, so every tool choice allows the declared actions; ``none`` allows no
function call, ``required`` and a named choice allow no thinking, text or blocks before the
call: the turn is its forced prefix ``\\n<|FUNCTION_START|>`` (and the name too for a named
choice), then the call (a forced choice turns reasoning off: :mod:`pawlette.export.forced`).
``parallel_tool_calls`` changes nothing.  Output images (``<|IMAGE_OUTPUT_START|>`` turns) are
another generation prompt and not covered.
"""

from __future__ import annotations

from ...engine.lexer import escape_text
from ...format import Format
from ...formats import omni
from ...types import Tool
from ..grammar import ToolChoice, TurnGrammar
from ..grammar_ast import (
    JsonSchemaValue,
    Lit,
    Marker,
    Node,
    Ref,
    Repeat,
    Rules,
    alt,
    optional,
    seq,
)
from ..json_schema import SchemaToGbnf
from ..text_language import text_terminal
from ._common import ANY_OBJECT, STOP, json_arguments, rules_for

TEXT_ANY_NL = text_terminal("TEXT", "ANY_NL")  # text (maybe none), then a newline
TEXT_NE = text_terminal("TEXT", "NE")  # text right before a marker


def _name(fmt: Format, name: str) -> str:
    assert fmt.escape_pattern is not None
    return escape_text(name, fmt.escape_pattern, before_marker=True)


class _Pieces:
    def __init__(self, fmt: Format, tools: tuple[Tool, ...]) -> None:
        self.fmt = fmt
        self.functions = [(n, t) for n, t in enumerate(tools) if t.kind == "function"]
        self.actions = [(n, t) for n, t in enumerate(tools) if t.kind == "action"]

    def any_object(self, rules: Rules, name: str) -> JsonSchemaValue:
        return JsonSchemaValue(ANY_OBJECT, SchemaToGbnf(rules, name, name).convert(ANY_OBJECT))

    def call_items(self, rules: Rules, number: int, tool: Tool) -> list[Node]:
        """The call after the newline that opens it (text before it ends with that newline)."""
        return [
            Marker(omni.FUNCTION_START),
            Lit(_name(self.fmt, tool.name)),
            Marker(omni.FUNCTION_ARGS),
            json_arguments(rules, number, tool),
            STOP,  # <|FUNCTION_RETURN|>
        ]

    def call(self, rules: Rules, only: str | None) -> Ref:
        options = [
            rules.add(f"call_{number}", seq(*self.call_items(rules, number, tool)))
            for number, tool in self.functions
            if only is None or tool.name == only
        ]
        return rules.add("call", alt(*options))

    def blocks(self, rules: Rules) -> Ref:
        voice = seq(
            Marker(omni.VOICE_START),
            Lit("\n"),
            self.any_object(rules, "prosody"),
            Lit("\n"),
            Marker(omni.VOICE_CONTENT),
            Lit("\n"),
            TEXT_ANY_NL,
            Marker(omni.VOICE_END),
            Lit("\n"),
        )
        request = seq(
            Marker(omni.IMAGE_REQUEST_START),
            Lit("\n"),
            self.any_object(rules, "image-request"),
            Lit("\n"),
            Marker(omni.IMAGE_REQUEST_END),
            Lit("\n"),
        )
        options: list[Node] = [rules.add("voice", voice), rules.add("image_request", request)]
        for number, tool in self.actions:
            action = seq(
                Marker(omni.ACTION_START),
                Lit(_name(self.fmt, tool.name)),
                Marker(omni.ACTION_ARGS),
                json_arguments(rules, number, tool),
                Marker(omni.ACTION_END),
                Lit("\n"),
            )
            options.append(rules.add(f"action_{number}", action))
        return rules.add("block", alt(*options))  # after the newline that opens it


def _thinking() -> Node:
    step = seq(
        Marker(omni.THINK_STEP),
        TEXT_ANY_NL,
        Marker(omni.THINK_REASONING),
        TEXT_ANY_NL,
        Marker(omni.THINK_CONCLUSION),
        TEXT_ANY_NL,
    )
    return seq(
        Lit("\n"),
        Marker(omni.THINK_START),
        TEXT_ANY_NL,
        Repeat(step),
        Marker(omni.THINK_END),
        Lit("\n"),
    )


def build(fmt: Format, tools: tuple[Tool, ...], choice: ToolChoice, parallel: bool) -> TurnGrammar:
    pieces = _Pieces(fmt, tools)
    calls_possible = bool(pieces.functions) and choice.mode != "none"
    only = choice.only

    rules = rules_for(fmt)
    forced = calls_possible and choice.mode != "auto"
    if forced:  # the call right away, no thinking block (pawlette.export.forced says why)
        rules.rules["start"] = seq(Lit("\n"), pieces.call(rules, only))
    else:
        thinking = optional(rules.add("thinking", _thinking()))
        body = Repeat(seq(TEXT_ANY_NL, pieces.blocks(rules)))
        answer = seq(body, optional(TEXT_NE), STOP)  # <|ASSISTANT_END|>
        if calls_possible:  # auto
            ends_in_call = seq(body, TEXT_ANY_NL, pieces.call(rules, None))
            rules.rules["start"] = seq(thinking, alt(answer, ends_in_call))
        else:
            rules.rules["start"] = seq(thinking, answer)

    markers = [omni.THINK_START, omni.THINK_STEP, omni.THINK_REASONING, omni.THINK_CONCLUSION]
    markers += [omni.THINK_END, omni.VOICE_START, omni.VOICE_CONTENT, omni.VOICE_END]
    markers += [omni.IMAGE_REQUEST_START, omni.IMAGE_REQUEST_END]
    if pieces.actions:
        markers += [omni.ACTION_START, omni.ACTION_ARGS, omni.ACTION_END]
    if calls_possible:
        markers += [omni.FUNCTION_START, omni.FUNCTION_ARGS]
    opening = "\n" + omni.FUNCTION_START
    turn = TurnGrammar(
        rules=rules,
        markers=tuple(markers),
        stop=fmt.stop,
        reasoning=None if forced else ("\n" + omni.THINK_START, "\n" + omni.THINK_END + "\n"),
        forced_prefixes={
            "auto": "",
            "none": "",
            "required": opening if pieces.functions else "",
        },
    )
    for _, tool in pieces.functions:
        turn.forced_prefixes[tool.name] = opening + _name(fmt, tool.name) + omni.FUNCTION_ARGS
    if not calls_possible:
        return turn
    turn.trigger = omni.FUNCTION_START
    if choice.mode == "auto":
        lazy = rules_for(fmt)
        options = [seq(*pieces.call_items(lazy, number, tool)) for number, tool in pieces.functions]
        lazy.rules["start"] = alt(*options)
        turn.lazy = lazy
        return turn
    after = rules_for(fmt)
    skip = 1 if choice.mode == "required" else 3  # <|FUNCTION_START|> [NAME <|FUNCTION_ARGS|>]
    rests = [
        seq(*pieces.call_items(after, number, tool)[skip:])
        for number, tool in pieces.functions
        if only is None or tool.name == only
    ]
    after.rules["start"] = alt(*rests)
    turn.after_prefix = after
    return turn
