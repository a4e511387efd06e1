"""Reka Edge's answer text: where a turn gives no reasoning, the template takes the text up
to a ``</think>`` as reasoning (dropped with thinking off) and writes the rest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import Concept

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render

CLOSE = "</think>"


def kept_text(out: Render, index: int) -> str:
    """The text the template writes for ``messages[index]``: after the first ``</think>``,
    newlines stripped from its start, when the message gives no reasoning; else whole."""
    text = out.message_text(index)
    if out.messages[index].reasoning is None and CLOSE in text:
        return text.split(CLOSE, 1)[1].lstrip("\n")
    return text


def jinja_kept_text(out: Template) -> str:
    """``ns.kept``: :func:`kept_text` in the exported template (set by :class:`ThinkSplit`
    before the turn's content)."""
    return out.ns("kept", '""')


@dataclass(frozen=True)
class ThinkSplit(Concept):
    """An assistant text holding ``</think>``, in a message without reasoning, is written
    from after it (:func:`kept_text`); the part before it is a recorded loss."""

    def check(self, out: Render) -> None:
        for index, message in enumerate(out.messages):
            if message.role == "assistant" and kept_text(out, index) != out.message_text(index):
                out.lose(
                    f"messages[{index}].content",
                    f"its text up to {CLOSE!r} is reasoning, which the template drops",
                )

    def write_content(self, out: Render, index: int) -> bool:
        if out.role != "assistant" or index < 0:
            return False
        text = kept_text(out, index)
        if text == out.message_text(index):
            return False
        out.writer.text(text, "content", trainable=True)
        return True

    def jinja_content(self, out: Template, role: str) -> bool:
        if role != "assistant":
            return False
        kept = jinja_kept_text(out)
        name = out.layout.name
        out.out(f"{{%- set {kept} = text_of(message, index, {name!r}) -%}}")
        out.out(
            f"{{%- if message.reasoning_content is not string and {CLOSE!r} in {kept} -%}}"
            f"{{%- set {kept} = {kept}.split({CLOSE!r}, 1)[1].lstrip('\\n') -%}}"
            "{%- endif -%}"
        )
        out.value(kept)
        return True
