"""Harmony's assistant turn as a grammar (after the generation prompt ``<|start|>assistant``)::

    [ <|channel|>analysis<|message|> TEXT <|end|><|start|>assistant ]         the head
    ( <|channel|>final<|message|> TEXT                                         an answer
    | " to=functions.NAME" <|channel|> "commentary json" <|message|> ARGUMENTS  a call )

and the stop (``<|return|>`` after an answer, ``<|call|>`` after a call), which the engine
writes.  One call per turn, as the template writes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...declare.grammar import TEXT, CallItems, Turn
from ...emit.grammar_ast import Lit, Marker, Node, Rules, optional, seq

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

        tool = turn.tools[number]
        return [
            Lit(" to=functions." + tool.name),
            Marker(self.turns.channel.text),
            Lit("commentary json"),
            Marker(self.turns.message.text),
            json_arguments(rules, number, tool),
        ]

    def after_text(self, turn: Turn, rules: Rules) -> Node:
        raise NotImplementedError("harmony writes no text beside a call")

    def prefix(self, name: str | None) -> str:
        if name is None:
            return " to=functions."
        turns = self.turns
        return f" to=functions.{name}{turns.channel.text}commentary json{turns.message.text}"


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
