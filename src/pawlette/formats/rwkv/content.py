"""RWKV World's answer text: written from after its last ``</think>``, then trimmed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import Trimmed
from pawlette.types import TextPart

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render

CLOSE = "</think>"


def kept_text(text: str) -> str:
    """What the template writes of an assistant's text: after its last ``</think>``,
    trimmed."""
    return text.rsplit(CLOSE, 1)[-1].strip()


@dataclass(frozen=True)
class ThinkTrimmed(Trimmed):
    """:class:`pawlette.declare.Trimmed`, where an assistant's text holding ``</think>`` is
    written from after the last one (the template takes the part before it for reasoning,
    and writes no reasoning): that part is a recorded loss, whether or not the message gives
    ``reasoning_content``."""

    def check(self, out: Render) -> None:
        roles = self.roles
        for index, message in enumerate(out.messages):
            role = message.role
            if role not in roles:
                continue
            content = message.content  # (message_text's common cases, without its call)
            if not content:
                continue  # no text: nothing trimmed, no </think>
            if len(content) == 1 and type(content[0]) is TextPart:
                text = content[0].text
            else:
                text = out.message_text(index)
            if role == "assistant" and CLOSE in text:
                out.lose(
                    f"messages[{index}].content",
                    f"its text up to its last {CLOSE!r} is not written",
                )
                text = text.rsplit(CLOSE, 1)[-1]
            if text != text.strip():
                out.lose(f"messages[{index}].content", "whitespace at its ends trimmed")

    def write_content(self, out: Render, index: int) -> bool:
        if index < 0 or out.role != "assistant" or "assistant" not in self.roles:
            return super().write_content(out, index)
        text = out.message_text(index)
        if CLOSE not in text:
            return super().write_content(out, index)
        out.writer.text(kept_text(text), "content", trainable=True)
        return True

    def content_text(self, role: str) -> Callable[[str], str] | None:
        # (write_content above, for a message of a role it trims: an assistant's text from
        # after its last </think> (all of it when there is none), trimmed)
        if type(self).write_content is not ThinkTrimmed.write_content or self.lead:
            return None
        if type(self).trims is not Trimmed.trims or role not in self.roles:
            return None
        return kept_text if role == "assistant" else str.strip

    def jinja_content(self, out: Template, role: str) -> bool:
        if role != "assistant" or role not in self.roles:
            return super().jinja_content(out, role)
        out.out(f"{{%- set kept = text_of(message, index, {out.layout.name!r}) -%}}")
        out.out(
            f"{{%- if {CLOSE!r} in kept -%}}{{%- set kept = kept.split({CLOSE!r})[-1] -%}}"
            "{%- endif -%}"
        )
        out.out("{{- kept | trim -}}")
        return True
