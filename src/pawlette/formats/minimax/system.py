"""MiniMax M1's system turn: the first system message's text, trimmed; none at all when that
text is empty (the template writes no system turn then, and no default text either).  Later
system messages are dropped (the template skips them), and the tools turn that follows the
first system message is written where the second one stood."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import SystemPrompt
from pawlette.emit.jinja_text import jinja_string

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render


@dataclass(frozen=True)
class BlankSystemDropped(SystemPrompt):
    """:class:`~pawlette.declare.SystemPrompt` with ``placement="first_kept"`` whose first
    system message, blank once trimmed, is written as no turn (a recorded loss)."""

    @staticmethod
    def blank(out: Render) -> bool:
        """Whether the first message is a system message with blank text."""
        return (
            bool(out.messages)
            and out.messages[0].role == "system"
            and not out.message_text(0).strip()
        )

    def check(self, out: Render) -> None:
        super().check(out)
        if self.blank(out):
            out.lose("messages[0]", "a system message with blank text, written as none")

    def write_message(self, out: Render, index: int) -> None:
        if index == 0 and self.blank(out):
            return
        if index > 0:
            # Dropped, but what the format writes before a turn there is written (the tools
            # turn after the first system message).
            out.role, out.index = "system", index
            out.at("system", index)
            for hook in out.plan.turns["system"].before:
                hook(out, index)
            return
        super().write_message(out, index)

    def jinja_message(self, out: Template, role: str) -> None:
        text = f"text_of(messages[0], 0, {jinja_string(out.layout.name)}) | trim"
        out.out(f"{{%- if index == 0 and ({text}) -%}}")
        out.turn("system")
        out.out("{%- elif index > 0 -%}")
        for concept in out.acting("jinja_before", "system"):
            concept.jinja_before(out, "system")
        out.out("{%- endif -%}")
