"""GLM's own concepts: the ``/nothink`` switch on user turns, and the markers that stop a turn
that has no end marker of its own.

- :class:`NoThink`: with thinking off, GLM-4.5/4.6 append ``/nothink`` to every user message's
  text (unless it already ends so); reading takes it as layout, never as the user's text.
- :class:`NextTurnStop`: GLM's assistant turn ends where the next turn opens; the model ends it
  by writing that turn's opener (``<|user|>``, ``<|observation|>``) or ``<|endoftext|>``, the
  ``eos_token_id`` list of GLM-4.5's generation config.  They are the format's stop set;
  a stop marker that opens no turn (``<|endoftext|>``, and ``<|user|>`` where the user turn
  opens with ``<|user|>\\n``) also ends the turn when read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import Concept, Fence, Marker
from pawlette.emit.jinja_text import jinja_string
from pawlette.engine.readers import ScaffoldReader

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render


@dataclass(frozen=True)
class NoThink(Concept):
    """``marker`` after each user message's text that does not already end with its text."""

    marker: Marker

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"user"})

    def write_closing(self, out: Render, index: int) -> None:
        text = out.message_text(index) if out.role == "user" and index >= 0 else None
        if text is not None and not text.endswith(self.marker.text):
            out.fence((self.marker,), "content")

    def rows(self, table: Table) -> None:
        # The switch ends the user's text: what follows it before the next turn is layout.
        table.state("user.switch", ScaffoldReader, "user", ends=True)
        table.on("user.body", self.marker.text, "user.switch")

    def jinja_closing(self, out: Template, role: str) -> None:
        if role != "user":
            return
        text = f"text_of(message, index, {jinja_string(out.layout.name)})"
        size = len(self.marker.text)
        out.fence_if(f"({text})[-{size}:] != {jinja_string(self.marker.text)}", (self.marker,))


@dataclass(frozen=True)
class NextTurnStop(Concept):
    """``stop``: what the model writes to end its turn (the format's stop set)."""

    stop: tuple[Marker, ...]

    def stops(self) -> tuple[Fence, ...]:
        return tuple((marker,) for marker in self.stop)

    def check_is_local(self) -> bool:
        # (the messages, whether the prompt follows, and the layout's options)
        return self.inherits(NextTurnStop, "check")

    def check(self, out: Render) -> None:
        # The prompt without thinking closes an empty block, as an empty last answer's turn
        # (with no end) writes it: the same text.
        last = out.empty_last_answer()
        if last >= 0 and not out.options.thinking:
            out.lose(
                f"messages[{last}]",
                "an empty last answer, written as the generation prompt: read back as that prompt",
            )

    def rows(self, table: Table) -> None:
        # A stop that opens a turn is read as that opener (the turn ends where it opens); one
        # that opens none ends the turn where it is read.  (After the calls concept's rows.)
        opening = {marker for (state, marker) in table.steps if state == "outside"}
        stops = [marker.text for marker in self.stop if marker.text not in opening]
        if not stops:
            return
        states = table.states_of("assistant")
        table.state("assistant.stopped", ScaffoldReader, "assistant", ends=True)
        for state in states:
            for stop in stops:
                if (state, stop) not in table.steps:
                    table.on(state, stop, "assistant.stopped")
