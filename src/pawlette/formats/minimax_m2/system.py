"""MiniMax-M2's system turn: always written, the first system message's text or the default
text, which also stands where that message's text is empty (the template tests the text, not
the message); later system messages are dropped (the template skips them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import SystemPrompt
from pawlette.emit.jinja_text import jinja_string

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render


@dataclass(frozen=True)
class EmptySystemDefault(SystemPrompt):
    """:class:`~pawlette.declare.SystemPrompt` whose first system message, when its text is
    empty, is written as the default text (a recorded loss), with the tools or without."""

    @staticmethod
    def empty(out: Render) -> bool:
        """Whether the first message is a system message with empty text."""
        return bool(out.messages) and out.messages[0].role == "system" and not out.message_text(0)

    def check(self, out: Render) -> None:
        super().check(out)
        if self.empty(out):
            out.lose("messages[0]", "a system message with empty text, written as the default")

    def write_content(self, out: Render, index: int) -> bool:
        if out.role == "system" and index == 0 and self.empty(out):
            out.fence(self.default_fence, "content")
            out.has_content = True
            return True
        return super().write_content(out, index)

    def jinja_content(self, out: Template, role: str) -> bool:
        if role != "system":
            return False
        name = jinja_string(out.layout.name)
        out.out(f"{{%- if index == 0 and not text_of(messages[0], 0, {name}) -%}}")
        self.jinja_default(out)
        out.out("{%- set ns.content = true -%}")
        out.out("{%- else -%}")
        super().jinja_content(out, role)
        out.out("{%- endif -%}")
        return True
