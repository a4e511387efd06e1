"""Gemma 3's system prompt: no turn of its own, its text leading the first turn after it.

The template takes a system message only when it comes first, and writes its text (as given,
not trimmed), then a blank line, at the start of the turn that follows it (a user turn: the
conversation alternates from a user message after it).  A system message with nothing after
it is not written (a recorded loss).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pawlette.declare import Concept
from pawlette.emit.jinja_text import jinja_string

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render


@dataclass(frozen=True)
class FirstTurnSystem(Concept):
    """A leading system message written at the start of the next message, then ``joiner``."""

    joiner: str = "\n\n"

    claims: ClassVar[frozenset[str]] = frozenset({"system"})

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"user"})

    def _leads(self, out: Render) -> bool:
        return bool(out.messages) and out.messages[0].role == "system"

    def check(self, out: Render) -> None:
        if self._leads(out) and len(out.messages) == 1:
            out.lose("messages[0]", "not written (no message follows it to hold its text)")

    def write_message(self, out: Render, index: int) -> None:
        """A system message has no turn: its text leads the next message's."""

    def write_opening(self, out: Render, index: int) -> None:
        if index == 1 and self._leads(out):
            out.text(out.message_text(0) + self.joiner, "content")

    # ------------------------------------------------------------------ the Jinja template

    def jinja_message(self, out: Template, role: str) -> None:
        """No turn (see :meth:`write_message`)."""

    def jinja_opening(self, out: Template, role: str) -> None:
        if role != "user":
            return
        out.out('{%- if index == 1 and messages[0].role in ["system", "developer"] -%}')
        out.value(f"text_of(messages[0], 0, {jinja_string(out.layout.name)})")
        out.literal(self.joiner)
        out.out("{%- endif -%}")
