"""Apriel's calls: :class:`~pawlette.declare.JsonCallList` with each call's id, except in a
conversation's last message (the template leaves the ids out of the turn it ends on, which is
the turn as the model writes it)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from pawlette.declare import JsonCallList
from pawlette.declare.call_list import CallListSet
from pawlette.declare.grammar import text_then
from pawlette.declare.pieces import text_of
from pawlette.emit.grammar_ast import Node, Rules, seq

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render


@dataclass(frozen=True)
class IdsBeforeLast(JsonCallList):
    """The call list with ``keys``' id in every message but the conversation's last."""

    @cached_property
    def without_ids(self) -> JsonCallList:
        """The same list, written without the ids."""
        keys = tuple((role, key) for role, key in self.keys if role != "id")
        return dataclasses.replace(self, keys=keys)

    def write_closing(self, out: Render, index: int) -> None:
        if index == len(out.messages) - 1:
            JsonCallList.write_closing(self.without_ids, out, index)
        else:
            super().write_closing(out, index)

    def grammar(self, turn: Turn) -> None:
        # A grammar is for the turn the model writes: the conversation's last, without ids.
        turn.calls = TextThenCalls(self.without_ids, turn)

    def jinja_closing(self, out: Template, role: str) -> None:
        if role != "assistant":
            return
        out.out("{%- if index == messages | length - 1 -%}")
        JsonCallList.jinja_closing(self.without_ids, out, role)
        out.out("{%- else -%}")
        super().jinja_closing(out, role)
        out.out("{%- endif -%}")


class TextThenCalls(CallListSet):
    """The calls' grammar: text and the open fence (``\\n<tool_calls>``) are one lexeme
    (llguidance's lexer is greedy: text would take the fence's characters)."""

    def text_and_calls(self, turn: Turn, rules: Rules, parallel: bool) -> Node | None:
        lead = text_of(self.calls.open or (), turn.layout.options, turn.layout.name)
        return seq(text_then(rules, lead), self.after_prefix(turn, rules, lead, parallel))
