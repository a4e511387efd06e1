"""A generation prompt the template writes after every render.

Some templates ignore ``add_generation_prompt`` and always end with the assistant's opener
(Firefunction v2), or with the whole generation prompt (Cohere's Command R7B:
``<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_THINKING|><|END_THINKING|>``).
:class:`PromptAlways` writes the generation prompt, as the writer writes it when asked (the
assistant frame's prompt, then every concept's ``write_prompt``), after the last message of a
render that did not ask for it; it is never trainable.

Reading a conversation, an assistant turn begins pending: the prompt a conversation ends with
gives no message.

>>> from pawlette.declare import PromptAlways
>>> PromptAlways()
PromptAlways()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .concept import Concept
from .table import begin

if TYPE_CHECKING:
    from .concept import Render, Table, Template


@dataclass(frozen=True)
class PromptAlways(Concept):
    """The generation prompt, written after the last message whether or not it was asked
    for (see the module).  Where the prompt goes past the assistant's opener (a reasoning
    concept's empty block, ``Reasoning(prompt="empty")``), the whole prompt is one spelling
    of the parse table that begins a pending assistant turn."""

    def write_finish(self, out: Render) -> None:
        if not out.prompt:
            out.generation_prompt()

    def rows(self, table: Table) -> None:
        head = table.first_state["assistant"]
        # The head's reader, whichever concept gives it, makes the turn real once it reads
        # anything (the table wraps it after every concept's rows).
        table.opened[head] = frozenset(table.ends("assistant"))
        from .reasoning import Reasoning

        reasoning = table.layout.concept(Reasoning)
        empty = reasoning is not None and reasoning.prompt == "empty"
        block = table.text(reasoning.open, reasoning.close) if empty else ""
        for (state, marker), (target, actions) in list(table.steps.items()):
            if state != "outside" or target != head:
                continue
            pending = tuple(
                begin("assistant", pending=True)
                if getattr(action, "__name__", "") == "begin assistant"
                else action
                for action in actions
            )
            table.steps[(state, marker)] = (target, pending)
            if empty and (state, marker + block) not in table.steps:
                table.on(state, marker + block, head, *pending)

    def jinja_finish(self, out: Template) -> None:
        with out.when("not add_generation_prompt"):
            out.generation_prompt()
