"""Harmony's assistant turn as a grammar (after the generation prompt ``<|start|>assistant``)::

    [ <|channel|>analysis<|message|> TEXT <|end|><|start|>assistant ]         the head
    ( <|channel|>final<|message|> TEXT                                         an answer
    | " to=functions.NAME" <|channel|> "commentary json" <|message|> ARGUMENTS  a call )

and the stop (``<|return|>`` after an answer, ``<|call|>`` after a call), which the engine
writes.  One call per turn, as gpt-oss's template writes them; where every call is written
(:attr:`~.turns.HarmonyTurns.every_call`), parallel calls follow the first, each after
``<|end|><|start|>assistant``; a constrained header (``constrained``) is ``commentary``
``<|constrain|>`` ``json``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...declare.grammar import TEXT, CallItems, Turn
from ...emit.grammar_ast import Lit, Marker, Node, Repeat, Rules, optional, seq

if TYPE_CHECKING:
    from .turns import HarmonyTurns


class HarmonyCalls(CallItems):
    """The call set of a harmony turn (:class:`pawlette.declare.grammar.CallSet`): one call,
    nothing before or after it."""

    with_content = False
    trigger: str | None = None

    def __init__(self, turns: HarmonyTurns) -> None:
        self.turns = turns

    def items(self, turn: Turn, rules: Rules, number: int) -> list[Node]:
        from ...emit.turn_rules import json_arguments

        turns = self.turns
        tool = turn.tools[number]
        if turns.constrained:
            kind: list[Node] = [Lit("commentary "), Marker(turns.constrain.text), Lit(" json")]
        else:
            kind = [Lit("commentary json")]
        return [
            Lit(" to=functions." + tool.name),
            Marker(turns.channel.text),
            *kind,
            Marker(turns.message.text),
            json_arguments(rules, number, tool),
        ]

    def rest(self, turn: Turn, rules: Rules, parallel: bool) -> list[Node]:
        turns = self.turns
        if not (parallel and turns.every_call):
            return []
        between = (Marker(turns.end.text), Marker(turns.start.text), Lit("assistant"))
        return [Repeat(seq(*between, self.call(turn, rules)))]

    def after_text(self, turn: Turn, rules: Rules) -> Node:
        raise NotImplementedError("harmony writes no text beside a call")

    def prefix(self, name: str | None) -> str:
        if name is None:
            return " to=functions."
        turns = self.turns
        kind = f"commentary {turns.constrain.text} json" if turns.constrained else "commentary json"
        return f" to=functions.{name}{turns.channel.text}{kind}{turns.message.text}"


def harmony_grammar(turns: HarmonyTurns, turn: Turn) -> None:
    channel, message = Marker(turns.channel.text), Marker(turns.message.text)
    turn.head = seq(
        channel,
        Lit("analysis"),
        message,
        optional(TEXT),
        Marker(turns.end.text),
        Marker(turns.start.text),
        Lit("assistant"),
    )
    turn.reasoning = (
        f"{turns.channel.text}analysis{turns.message.text}",
        f"{turns.end.text}{turns.start.text}assistant",
    )
    turn.content = seq(channel, Lit("final"), message, optional(TEXT))
    turn.calls = HarmonyCalls(turns)
