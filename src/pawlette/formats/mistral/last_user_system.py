"""Mistral Nemo's system prompt: no turn of its own, its text glued into the last user turn.

The template takes only a system message that comes first, and writes its text, then a
blank line, inside the ``[INST]`` of the user message that is the last message of the
conversation.  A conversation that ends otherwise (an answer, a tool result) has no place
for it: the text is not written (a recorded loss).  A later system message is refused, as
the template refuses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pawlette.declare import Concept
from pawlette.emit.jinja_text import jinja_string
from pawlette.errors import UnsupportedFeature

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render


@dataclass(frozen=True)
class LastUserSystem(Concept):
    """A leading system message written at the start of the last message when that is a user
    message, followed by ``joiner``."""

    joiner: str = "\n\n"

    claims: ClassVar[frozenset[str]] = frozenset({"system"})

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"user"})

    def _system(self, out: Render) -> bool:
        return bool(out.messages) and out.messages[0].role == "system"

    def _hosts(self, out: Render) -> bool:
        """Whether the last message is a user message that holds the system text."""
        return len(out.messages) > 1 and out.messages[-1].role == "user"

    def check(self, out: Render) -> None:
        for index, message in enumerate(out.messages):
            if index and message.role == "system":
                raise UnsupportedFeature(
                    f"messages[{index}]",
                    "a system message after the first message",
                    f"one system message, first: {out.layout.name} has no later ones",
                )
        if self._system(out) and not self._hosts(out):
            out.lose(
                "messages[0]",
                "not written (the system text goes into the last message only when it is a "
                "user message)",
            )

    def write_message(self, out: Render, index: int) -> None:
        """A system message has no turn: its text is written with the last user message."""

    def write_opening(self, out: Render, index: int) -> None:
        if index == len(out.messages) - 1 and self._system(out) and self._hosts(out):
            out.text(out.message_text(0) + self.joiner, "content")

    # ------------------------------------------------------------------ the Jinja template

    def jinja_setup(self, out: Template) -> None:
        out.macro(
            "system_first_only",
            "{%- for message in messages -%}"
            '{%- if loop.index0 > 0 and message.role in ["system", "developer"] -%}'
            + "{{- raise_exception("
            + jinja_string(f"a system message after the first: {out.layout.name} has no later ones")
            + ") -}}{%- endif -%}{%- endfor -%}",
        )

    def jinja_message(self, out: Template, role: str) -> None:
        """No turn (see :meth:`write_message`)."""

    def jinja_opening(self, out: Template, role: str) -> None:
        if role != "user":
            return
        out.out(
            "{%- if index == messages | length - 1 and index > 0"
            ' and messages[0].role in ["system", "developer"] -%}'
        )
        out.value(f"text_of(messages[0], 0, {jinja_string(out.layout.name)})")
        out.literal(self.joiner)
        out.out("{%- endif -%}")
