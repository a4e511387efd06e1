"""An answer's own fences: the text of an assistant turn without calls written between an open
and a close that a turn with calls does not write (Solar Open's ``<|content|>``, Command A's
``<|START_TEXT|>`` … ``<|END_TEXT|>``): the turn's opener is the same, what follows tells an
answer from a turn of calls.

>>> from pawlette.declare import AnswerFence, Marker, fence
>>> AnswerFence(open=fence(Marker("<|content|>"))).close
()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import FormatError
from .concept import Concept
from .pieces import Fence
from .readers import BetweenCallsReader

if TYPE_CHECKING:
    from .grammar import Turn
    from .jinja import Template
    from .layout import Layout
    from .table import Table
    from .write import Render

_CALLS = "message.tool_calls is defined and message.tool_calls"


@dataclass(frozen=True)
class AnswerFence(Concept):
    """An assistant turn without calls writes ``open``, its text, then ``close``; a turn with
    calls writes neither (its calls follow the frame's opener).  Reading drops both.

    - ``open``: written after the frame's opener (and after a reasoning block), before the
      text; the generation prompt does not write it: the model writes it to answer.
    - ``close``: written after the text, before the frame's end (empty: none).
    """

    open: Fence
    close: Fence = ()

    def validate(self, layout: Layout) -> None:
        if not self.open:
            raise FormatError(
                f"{layout.name}: AnswerFence.open: empty; expected the fence an answer's "
                "text starts with (without it, reading could not tell an answer from calls)"
            )

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    @staticmethod
    def _answers(out: Render, index: int) -> bool:
        return 0 <= index < len(out.messages) and not out.messages[index].tool_calls

    def write_opening(self, out: Render, index: int) -> None:
        if self._answers(out, index):
            out.fence(self.open, "content", trainable=True)

    def write_closing(self, out: Render, index: int) -> None:
        if self._answers(out, index):
            out.fence(self.close, "content", trainable=True)

    def rows(self, table: Table) -> None:
        opened = table.text(self.open)
        for state in ("assistant.head", "assistant.body"):
            table.on(state, opened, "assistant.body")
        if self.close:
            # After the close only the frame's end may come: stray text there is reported and
            # kept, as between calls.
            table.state("assistant.answered", BetweenCallsReader, "assistant", ends=True)
            table.on("assistant.body", table.text(self.close), "assistant.answered")

    def jinja_opening(self, out: Template, role: str) -> None:
        out.fence_if(f"not ({_CALLS})", self.open)

    def jinja_closing(self, out: Template, role: str) -> None:
        out.fence_if(f"not ({_CALLS})", self.close)

    def grammar(self, turn: Turn) -> None:
        from ..emit.grammar_ast import seq

        turn.content = seq(*turn.nodes(self.open), turn.content, *turn.nodes(self.close))
