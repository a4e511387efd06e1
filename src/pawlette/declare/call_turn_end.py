"""An assistant turn with calls that ends otherwise than its frame: Functionary's and Llama
3.1's ``<|eom_id|>``, Solar Open's ``<|calls|>``.

>>> from pawlette.declare import CallTurnEnd, Marker, fence
>>> CallTurnEnd(end=fence(Marker("<|calls|>"))).end
(Marker(text='<|calls|>'),)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import FormatError
from .concept import Concept
from .pieces import Fence

if TYPE_CHECKING:
    from .jinja import Template
    from .layout import Layout
    from .write import Render


@dataclass(frozen=True)
class CallTurnEnd(Concept):
    """An assistant turn holding calls ends with ``end`` instead of its frame's ``end``.

    - ``end``: the fence that ends a turn with calls; it must also be one of the assistant
      frame's ``also_end`` fences, so reading takes it as the turn's end.  Empty: the turn
      with calls ends where the next turn opens (Command R+'s).
    """

    end: Fence

    def validate(self, layout: Layout) -> None:
        # (an empty end: the turn with calls ends where the next turn opens, nothing to read)
        if self.end and self.end not in layout.frames["assistant"].also_end:
            raise FormatError(
                f"{layout.name}: CallTurnEnd.end: {self.end!r} is not one of the assistant "
                "frame's also_end fences; expected it there too (Frame(also_end=(end,))), so "
                "that reading takes it as the end of the turn"
            )

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    def turn_end(self, out: Render, index: int) -> Fence | None:
        if 0 <= index < len(out.messages) and out.messages[index].tool_calls:
            return self.end
        return None

    def jinja_end(self, out: Template, role: str) -> bool:
        out.fence_if(
            "message.tool_calls is defined and message.tool_calls",
            self.end,
            out.layout.frames["assistant"].end,
        )
        return True
