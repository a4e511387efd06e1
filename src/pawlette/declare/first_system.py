"""The first system message's text, where a template writes it otherwise than later ones.

>>> from pawlette.declare import FirstSystemText, fence
>>> FirstSystemText(lead=fence("\\n\\n")).rstrip
False
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..emit.jinja_text import jinja_string
from .concept import Concept
from .pieces import Fence
from .readers import lead_dropped, trail_dropped
from .system import SystemPrompt

if TYPE_CHECKING:
    from .concept import Render, Table, Template


@dataclass(frozen=True)
class FirstSystemText(Concept):
    """The first system message's text (the message at index 0).

    Fields:

    - ``lead``: written before that text when it is not empty, and before the
      :class:`SystemPrompt` default text where the conversation has no system message
      (Spark2.5 writes ``\\n\\n`` between its default text and tools and the caller's text;
      Poolside Laguna XS writes ``\\n`` after ``<system>\\n``).  Later system messages are
      written as they are.  Reading drops it where a system turn's text begins.
    - ``trail``: written after that text, empty or not, where the conversation has a first
      system message (Ling 3.0 writes ``\\ndetailed thinking on`` after the caller's text:
      its default text, with a newline before it).  Reading drops it where a system turn's
      text ends.
    - ``rstrip``: the text is written without the whitespace at its end (Python's
      ``rstrip()``: Poolside Laguna's templates); a text that changes is a recorded loss.

    Put it after the :class:`SystemPrompt` concept (which writes the default text and hands
    a message's text on) and, for ``lead`` to follow a tools block written first in the
    turn, after that :class:`~pawlette.declare.ToolsBlock`.
    """

    lead: Fence = ()
    rstrip: bool = False
    trail: Fence = ()

    acts_on: ClassVar[frozenset[str] | None] = frozenset({"system"})

    def check(self, out: Render) -> None:
        if self.rstrip and out.messages and out.messages[0].role == "system":
            text = out.message_text(0)
            if text != text.rstrip():
                out.lose("messages[0].content", "whitespace at its end trimmed")

    def _text(self, out: Render) -> str:
        text = out.message_text(0)
        return text.rstrip() if self.rstrip else text

    def _default_written(self, out: Render) -> bool:
        system = out.layout.concept(SystemPrompt)
        return (
            system is not None
            and bool(system.default_fence)
            and system.default_applies(bool(out.tools))
        )

    def write_opening(self, out: Render, index: int) -> None:
        if not self.lead or out.role != "system":
            return
        if (index == 0 and self._text(out)) or (index == -1 and self._default_written(out)):
            out.fence(self.lead, "header")

    def write_content(self, out: Render, index: int) -> bool:
        if out.role != "system" or index != 0:
            return False
        text = self._text(out)
        if text:
            out.text(text, "content")
        out.fence(self.trail, "content")
        return True

    def rows(self, table: Table) -> None:
        lead, trail = table.text(self.lead), table.text(self.trail)
        # Where a system turn's text begins: after the turn's open fence, or after a tools
        # block written first in the turn.
        for state in ("system.body", "system.after_tools"):
            if state in table.states and lead:
                table.reader(state, lead_dropped(table.states[state].reader, lead))
            if state in table.states and trail:
                table.reader(state, trail_dropped(table.states[state].reader, trail))

    # ------------------------------------------------------------------ the Jinja template

    def _jinja_text(self, out: Template) -> str:
        text = f"text_of(message, index, {jinja_string(out.layout.name)})"
        return f"{text}.rstrip()" if self.rstrip else text

    def jinja_opening(self, out: Template, role: str) -> None:
        if not self.lead or role != "system":
            return
        conditions = [f"(index == 0 and {self._jinja_text(out)})"]
        system = out.layout.concept(SystemPrompt)
        if system is not None and system.default_fence:
            conditions.append(f"(index == -1 and {system.jinja_default_applies()})")
        out.fence_if(" or ".join(conditions), self.lead)

    def jinja_content(self, out: Template, role: str) -> bool:
        if role != "system":
            return False
        with out.when("index == 0"):
            out.value(self._jinja_text(out))
            out.fence(self.trail)
            out.out("{%- else -%}")
            out.text()
        return True
