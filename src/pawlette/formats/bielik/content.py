"""Bielik's assistant text: written without the whitespace at its start."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pawlette.declare import Trimmed
from pawlette.types import TextPart

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render


class LeadTrimmed(Trimmed):
    """The text of the ``roles`` given is written without the whitespace at its start
    (the template's ``content.lstrip()``); a text that changes is a recorded loss.  The
    whitespace at its end is kept."""

    def trims(self, out: Render, index: int) -> bool:
        return out.messages[index].role in self.roles

    def check(self, out: Render) -> None:
        roles = self.roles
        for index, message in enumerate(out.messages):
            if message.role in roles:
                content = message.content  # (message_text's common case, without its call)
                if content and len(content) == 1 and type(content[0]) is TextPart:
                    text = content[0].text
                else:
                    text = out.message_text(index)
                if text != text.lstrip():
                    out.lose(f"messages[{index}].content", "whitespace at its start trimmed")

    def write_content(self, out: Render, index: int) -> bool:
        if index < 0 or out.role not in self.roles or not self.trims(out, index):
            return False
        trainable = out.role == "assistant"
        out.writer.text(out.message_text(index).lstrip(), "content", trainable=trainable)
        return True

    def content_text(self, role: str) -> Callable[[str], str] | None:
        # (write_content above, for a message of a role it trims: its text left-stripped)
        kind = type(self)
        own = kind.write_content is LeadTrimmed.write_content and kind.trims is LeadTrimmed.trims
        return str.lstrip if own and role in self.roles else None

    def jinja_content(self, out: Template, role: str) -> bool:
        if role not in self.roles:
            return False
        out.out(f"{{{{- (text_of(message, index, {out.layout.name!r})).lstrip() -}}}}")
        return True
