"""Phi-3.5's system messages: one with empty text is not written (its template skips it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...declare import SystemPrompt
from ...emit.jinja_text import jinja_string
from ...errors import FormatError

if TYPE_CHECKING:
    from ...declare.jinja import Template
    from ...declare.layout import Layout
    from ...declare.write import Render


@dataclass(frozen=True)
class SkipEmptySystem(SystemPrompt):
    """:class:`pawlette.declare.SystemPrompt` where a system message with empty text is not
    written, nor its turn; parsing then gives no message for it.  Placed ``"in_place"``
    only."""

    def validate(self, layout: Layout) -> None:
        super().validate(layout)
        if self.placement != "in_place":
            raise FormatError(
                f"{layout.name}: SkipEmptySystem with placement {self.placement!r}; "
                "expected placement 'in_place'"
            )

    def write_message(self, out: Render, index: int) -> None:
        if out.message_text(index):
            super().write_message(out, index)

    def jinja_message(self, out: Template, role: str) -> None:
        out.out(f"{{%- if text_of(message, index, {jinja_string(out.layout.name)}) -%}}")
        super().jinja_message(out, role)
        out.out("{%- endif -%}")
