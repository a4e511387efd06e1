"""A generation prompt that stops short of the assistant's opener.

Some templates open a past assistant turn with ``assistant: `` but prompt the model with
``assistant:``: the model writes the rest of the opener (the space) before its text.  Read
after such a prompt, that rest is layout, not the answer's text; read after the whole
opener (a conversation), the text is as written.  :class:`PromptRest` gives the parse table
a state for each: the prompt's row leads to a copy of the assistant's first state whose
reader drops the rest where the text begins, and a completion starts there.  With
``trainable``, a past turn's rest is trainable, written after an opener cut short by it:
the model writes it after the prompt, so its tokens (the rest joined to the text after it,
where the tokenizer joins them) are the model's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, ClassVar

from ..emit.grammar_ast import Lit as GrammarLit
from ..errors import FormatError
from .concept import Concept
from .pieces import Fence, Lit, fence
from .readers import lead_dropped

if TYPE_CHECKING:
    from .concept import Layout, Render, Table, Template, Turn

__all__ = ["PromptRest"]

HEAD = "assistant.head"
ASSISTANT = frozenset({"assistant"})
PROMPTED = "assistant.prompted"


@dataclass(frozen=True)
class PromptRest(Concept):
    """``prompt``: the generation prompt; ``rest``: what the assistant's opener writes after
    it (whitespace).  The frame writes both; the turn's grammar lets the model write the
    rest first, and a forced call starts with it.  ``trainable``: a past turn's opener is
    written without the rest, and the rest as the first trainable text of the turn (the
    model writes it; the assistant's opener must end with it and have no ``open_after``).
    Put last in a layout's concepts (it copies the rows the others gave the assistant's
    first state)."""

    prompt: str
    rest: str
    trainable: bool = False

    def hook_is_local(self, hook: str, role: str) -> bool:
        # (for a message's turn, index is within the messages: the cut opener and the rest,
        # the same for every message)
        return hook in ("turn_open", "write_opening")

    def validate(self, layout: Layout) -> None:
        if not self.trainable:
            return
        frame = layout.frames["assistant"]
        last = frame.open[-1] if frame.open else None
        if frame.open_after or not (isinstance(last, Lit) and last.text.endswith(self.rest)):
            raise FormatError(
                f"PromptRest(trainable=True): the assistant's opener {frame.open!r} with "
                f"open_after {dict(frame.open_after)!r}; expected one opener ending with "
                f"{self.rest!r}"
            )

    def _cut_opener(self, layout: Layout) -> Fence:
        """The assistant's opener without its rest (``validate`` checked it ends with it),
        the same object for every turn (:func:`_cut` keeps it): the writer finds a fence's
        segments by its identity."""
        return _cut(layout.frames["assistant"].open, self.rest)

    @cached_property
    def _rest(self) -> Fence:
        return fence(self.rest)

    acts_on: ClassVar[frozenset[str] | None] = ASSISTANT

    def turn_open(self, out: Render, index: int) -> Fence | None:
        if not self.trainable or not 0 <= index < len(out.messages):
            return None
        return self._cut_opener(out.layout)

    def write_opening(self, out: Render, index: int) -> None:
        if self.trainable and 0 <= index < len(out.messages):
            out.fence(self._rest, "header", trainable=True)

    def jinja_open(self, out: Template, role: str) -> bool:
        if not self.trainable or role != "assistant" or out.prompt:
            return False
        out.fence(self._cut_opener(out.layout))
        return True

    def jinja_opening(self, out: Template, role: str) -> None:
        if self.trainable and role == "assistant":
            out.fence(self._rest)

    def rows(self, table: Table) -> None:
        head = table.states[HEAD]
        table.state(PROMPTED, lead_dropped(head.reader, self.rest), "assistant", ends=head.ends)
        for (state, marker), step in list(table.steps.items()):
            if state == HEAD:
                table.steps[(PROMPTED, marker)] = step
        opening = table.steps.get(("outside", self.prompt))
        if opening is not None and opening[0] == HEAD:
            table.steps[("outside", self.prompt)] = (PROMPTED, opening[1])
        if table.completion_start == HEAD:
            table.completion_start = PROMPTED

    def grammar(self, turn: Turn) -> None:
        # The model may write the rest of the opener before anything else (reading drops
        # it; a reasoning block before it would be a head of its own: no layout has both).
        turn.head = GrammarLit(self.rest)
        turn.head_name = "prompt_rest"
        turn.call_lead = self.rest + turn.call_lead  # a forced call writes it first


@lru_cache(maxsize=64)
def _cut(opener: Fence, rest: str) -> Fence:
    """``opener`` without ``rest`` at its end (the concept's layouts are few: kept)."""
    *head, last = opener
    assert isinstance(last, Lit)
    kept = last.text[: len(last.text) - len(rest)]
    return (*head, Lit(kept)) if kept else tuple(head)
