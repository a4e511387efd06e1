"""Reka's calls: one after another with nothing between, after the text and a newline the
text does not already end with."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import JsonCalls

from .content import jinja_kept_text, kept_text

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render


@dataclass(frozen=True)
class RunOnCalls(JsonCalls):
    """:class:`~pawlette.declare.JsonCalls` whose ``separator`` comes only after the turn's
    text, and only when the text does not end with it (Reka Edge writes ``\\n`` after text
    not ending with a newline, and nothing between calls).  Reading takes ``separator`` +
    ``open`` after text as written (the text then loses one trailing newline: a recorded
    loss where it had one) and calls with or without it between them; a last call whose
    close never comes is a call when its object is whole (Hermes' reading)."""

    close_optional: bool = True

    def check(self, out: Render) -> None:
        super().check(out)
        separator = "".join(getattr(piece, "text", "") for piece in self.separator)
        for index, message in enumerate(out.messages):
            text = kept_text(out, index) if message.role == "assistant" else ""
            if message.tool_calls and separator and text.endswith(separator):
                out.lose(
                    f"messages[{index}].content",
                    f"its trailing {separator!r} reads back as the calls' separator",
                )

    def write_closing(self, out: Render, index: int) -> None:
        if out.role != "assistant" or index < 0:
            return
        separator = "".join(getattr(piece, "text", "") for piece in self.separator)
        text = kept_text(out, index)
        if out.messages[index].tool_calls and text and not text.endswith(separator):
            out.fence(self.separator, "tool_call", trainable=True)
        # The calls themselves, none separated (the base writes the separator after text
        # or another call: here it is written above, once, where the template writes it).
        plain = dataclasses.replace(self, separator=())
        plain.write_closing_calls(out, index)

    def write_closing_calls(self, out: Render, index: int) -> None:
        JsonCalls.write_closing(self, out, index)

    def jinja_closing(self, out: Template, role: str) -> None:
        if role != "assistant":
            return
        separator = "".join(getattr(piece, "text", "") for piece in self.separator)
        text = jinja_kept_text(out)  # the text as written (ThinkSplit sets it)
        out.out(
            "{%- if message.tool_calls is defined and message.tool_calls and "
            f"{text} and not {text}.endswith({separator!r}) -%}}"
        )
        out.fence(self.separator)
        out.out("{%- endif -%}")
        JsonCalls.jinja_closing(dataclasses.replace(self, separator=()), out, role)

    def grammar(self, turn: Turn) -> None:
        # Calls follow one another with nothing between; text before them ends with the
        # newline the template writes (free text may hold it).
        JsonCalls.grammar(dataclasses.replace(self, separator=()), turn)
