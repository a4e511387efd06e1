"""Apriel 1.6's system turns: the reasoning instructions open every one (the frame's
opener), a system message's text follows them after ``lead`` (a newline), and the turn the
template writes when the conversation does not begin with a system message holds the
instructions alone (nothing after them but the tools, when the request has any).

So a message with empty text writes the lead alone and reads back as that message; a turn
without the lead is the one without a message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import SystemPrompt
from pawlette.declare.pieces import Fence
from pawlette.declare.readers import Described
from pawlette.engine.readers import WholeTextReader
from pawlette.types import TextDelta

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import Parser, ReaderFactory


@dataclass(frozen=True)
class LedSystem(SystemPrompt):
    """:class:`~pawlette.declare.SystemPrompt` whose messages' texts follow ``lead``;
    ``trail``: what the turn writes after its text, no text when the conversation ends on it
    (the next turn's opener holds it otherwise)."""

    lead: Fence = ()
    trail: Fence = ()

    def write_content(self, out: Render, index: int) -> bool:
        if out.role != "system" or index < 0:
            return super().write_content(out, index)
        out.fence(self.lead, "header")
        out.text(out.message_text(index), "content")
        return True

    def empty_read_as_none(self, out: Render) -> bool:
        # (the lead is written before an empty text too: the message reads back)
        return not self.lead and super().empty_read_as_none(out)

    def empty_turn_read_as_none(self, out: Render) -> bool:
        return not self.lead and super().empty_turn_read_as_none(out)

    def rows(self, table: Table) -> None:
        super().rows(table)
        lead, trail = table.text(self.lead), table.text(self.trail)
        make: ReaderFactory = lambda parser: LedTextReader(parser, lead, trail)  # noqa: E731
        table.reader(
            "system.body", Described("system text after its lead", make, lead=lead, trail=trail)
        )

    def jinja_content(self, out: Template, role: str) -> bool:
        if role != "system":
            return False
        out.out("{%- if index >= 0 -%}")
        out.fence(self.lead)
        out.text()
        out.out("{%- endif -%}")
        return True


class LedTextReader(WholeTextReader):
    """A system turn's text: none (the turn without a message), or ``lead`` and the
    message's text."""

    __slots__ = ("_lead", "_trail")

    def __init__(self, parser: Parser, lead: str, trail: str) -> None:
        super().__init__(parser)
        self._lead = lead
        self._trail = trail

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        if marker is None and self._trail and text.endswith(self._trail):
            text = text[: -len(self._trail)]
        if not text and self._parser.message_pending:
            return
        self._parser.confirm_message()
        if text.startswith(self._lead):
            text = text[len(self._lead) :]
        # (An empty text too: the message is there, even where the tools follow it.)
        self._parser.emit(TextDelta(text))
