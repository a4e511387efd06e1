"""A system prompt with no turn of its own: its text opens another message's turn.

>>> from pawlette.declare import SystemInTurn
>>> SystemInTurn(host="last_user").joiner
'\\n\\n'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from ..emit.jinja_text import jinja_string
from .concept import Concept
from .system import jinja_refuse_later_system, refuse_later_system

if TYPE_CHECKING:
    from .concept import Render, Template

Host = Literal["next", "last_user"]


@dataclass(frozen=True)
class SystemInTurn(Concept):
    """A system message that comes first has no turn: its text, then ``joiner``, opens the
    text of the user turn that holds it.

    Fields:

    - ``host``: which user message holds it: ``"next"``, the message right after it (Gemma
      3; the conversation goes on from a user message, as :class:`Alternation` checks);
      ``"last_user"``, the last message of the conversation when that is a user message
      (Mistral Nemo, whose text moves with every new question).
    - ``joiner``: written between the system text and the user's.

    A conversation with no such message has no place for the text: it is not written (a
    recorded loss).  A system message after the first is refused.  Reading a conversation
    gives the text back as the start of the host's (nothing marks where it ends): the system
    role is a recorded loss.
    """

    host: Host = "next"
    joiner: str = "\n\n"

    claims: ClassVar[frozenset[str]] = frozenset({"system"})

    acts_on: ClassVar[frozenset[str] | None] = frozenset({"user"})

    def _host(self, out: Render) -> int:
        """The index of the message that holds the system text (-1: none)."""
        messages = out.messages
        if len(messages) < 2 or messages[0].role != "system":
            return -1
        index = 1 if self.host == "next" else len(messages) - 1
        return index if messages[index].role == "user" else -1

    def check(self, out: Render) -> None:
        refuse_later_system(out)
        if not out.messages or out.messages[0].role != "system":
            return
        host = self._host(out)
        if host < 0:
            where = "the next message" if self.host == "next" else "the last message"
            out.lose(
                "messages[0]",
                f"not written (its text goes into {where} only when that is a user message)",
            )
        elif not out.message_text(0):
            # (read back, the joiner alone opens the host's text: nothing of the message)
            out.lose(
                "messages[0]",
                f"a system message with empty text, read back as none (messages[{host}]'s text "
                "then starts with the joiner written after it)",
            )
        else:
            # (the text is written, the role is not: nothing marks where the text ends)
            out.lose(
                "messages[0].role",
                f"written at the start of messages[{host}]'s user turn, read back as the start "
                "of that message",
            )

    def write_message(self, out: Render, index: int) -> None:
        """A system message has no turn: its text opens its host's."""

    def write_opening(self, out: Render, index: int) -> None:
        if index > 0 and index == self._host(out):
            out.text(out.message_text(0) + self.joiner, "content")

    # ------------------------------------------------------------------ the Jinja template

    def jinja_setup(self, out: Template) -> None:
        jinja_refuse_later_system(out)

    def jinja_message(self, out: Template, role: str) -> None:
        """No turn (see :meth:`write_message`)."""

    def jinja_opening(self, out: Template, role: str) -> None:
        if role != "user":
            return
        host = "1" if self.host == "next" else "messages | length - 1"
        with out.when(
            f'index == {host} and index > 0 and messages[0].role in ["system", "developer"]'
        ):
            out.value(f"text_of(messages[0], 0, {jinja_string(out.layout.name)})")
            out.literal(self.joiner)
