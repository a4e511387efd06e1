"""The turn a conversation ends on, as the model writes it after Nemotron Nano 2's prompt.

The generation prompt opens a reasoning block (``<SPECIAL_11>Assistant\\n<think>\\n``) and the
model writes ``reasoning</think>answer``; past turns hold no block.  A conversation that ends
on an assistant message (a training render) writes that last turn after the same open
fence, closing the block at once (the template keeps no reasoning), so the generation
prompt's text begins the training render and the model's part is what it writes after it::

    <SPECIAL_11>Assistant\\n<think>\\n</think>answer\\n<SPECIAL_12>\\n

The open fence is the prompt's (not trainable), the close the model's.  Reading takes the
block as the reasoning block it is (empty: no reasoning).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import Concept
from pawlette.declare.pieces import Fence

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render

_FINAL = "{%- if index == (messages | length) - 1 and not add_generation_prompt -%}"


@dataclass(frozen=True)
class FinalTurnBlock(Concept):
    """``open`` then ``close`` at the start of the assistant turn that ends a conversation
    rendered without a generation prompt (see the module)."""

    open: Fence
    close: Fence

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    @staticmethod
    def final(out: Render, index: int) -> bool:
        """Whether ``messages[index]`` is the turn the conversation ends on."""
        return not out.prompt and index == len(out.messages) - 1

    def write_opening(self, out: Render, index: int) -> None:
        if out.role != "assistant" or index < 0 or not self.final(out, index):
            return
        out.fence(self.open, "reasoning")
        out.fence(self.close, "reasoning", trainable=True)

    def jinja_lead(self, out: Template, role: str) -> None:
        if role == "assistant":
            out.out(_FINAL)
            out.fence(self.open)
            out.out("{%- endif -%}")

    def jinja_opening(self, out: Template, role: str) -> None:
        if role == "assistant":
            out.out(_FINAL)
            out.fence(self.close)
            out.out("{%- endif -%}")
