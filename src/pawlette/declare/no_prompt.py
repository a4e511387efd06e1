"""Where a template writes no generation prompt, though one is asked for.

Many templates write the prompt only after a message of some roles (``{% if
add_generation_prompt and messages[-1].role != 'assistant' %}``), or only inside their
message loop, which the leading system message does not enter (GigaChat 3, Granite 3.3):
asked for the prompt there, they render the conversation as they do without it.
:class:`NoPromptAfter` says where, and every render asked for the prompt there is the
render without it (the writer and the exported template both read it so).

After such a render the model is prompted with no opener, and writes its turn's own: reading
a completion, an opener the model writes first is layout, dropped (``system_alone``).

>>> from pawlette.declare import NoPromptAfter
>>> NoPromptAfter(roles=("assistant",))
NoPromptAfter(roles=('assistant',), system_alone=False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..emit.jinja_text import jinja_string
from ..errors import FormatError
from .concept import Concept
from .layout import ROLES

if TYPE_CHECKING:
    from ..types import Message
    from .concept import Layout, Table

__all__ = ["NoPromptAfter"]


@dataclass(frozen=True)
class NoPromptAfter(Concept):
    """``roles``: the template writes no generation prompt after a last message of these
    roles (``("assistant",)``: none after an answer); ``system_alone``: none after a
    conversation that is one system message and nothing else (the template's loop, which
    writes the prompt, runs over the messages after it).  A render asked for the prompt there
    is the render without it.  With ``system_alone``, a completion read after that render
    may begin with the assistant's opener, which the model writes itself: read as layout."""

    roles: tuple[str, ...] = ("assistant",)
    system_alone: bool = False

    def validate(self, layout: Layout) -> None:
        for role in self.roles:
            if role not in ROLES:
                raise FormatError(
                    f"NoPromptAfter.roles: {role!r}; expected roles among "
                    + ", ".join(repr(name) for name in ROLES)
                )

    def writes_prompt(self, messages: tuple[Message, ...]) -> bool:
        if messages and messages[-1].role in self.roles:
            return False
        return not (self.system_alone and len(messages) == 1 and messages[0].role == "system")

    def jinja_writes_prompt(self) -> str:
        roles = ", ".join(jinja_string(role) for role in self.roles)
        tests = []
        if self.roles:
            tests.append(f"(messages | length == 0 or messages[-1].role not in [{roles}])")
        if self.system_alone:
            tests.append(
                "not (messages | length == 1 and messages[0].role in ['system', 'developer'])"
            )
        return " and ".join(tests) or "true"

    def rows(self, table: Table) -> None:
        if not self.system_alone:
            return
        # Prompted with no opener, the model writes its turn's: at the start of a completion
        # the opener is layout (the head reads it and stays the head).
        head = table.first_state["assistant"]
        for spelling in sorted(table.openers("assistant") - {""}):
            if (head, spelling) not in table.steps:
                table.on(head, spelling, head)
