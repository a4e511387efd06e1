"""A message's ``name`` written in its turn's opener.

>>> from pawlette.declare import Names, fence
>>> Names(at=1, replaces=1).roles
('system', 'user', 'assistant')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..errors import FormatError
from .concept import Concept
from .pieces import Fence, Lit

if TYPE_CHECKING:
    from .concept import Render, Template
    from .layout import Layout


@dataclass(frozen=True)
class Names(Concept):
    """A message's ``name`` written in its turn's open fence, in the turns of ``roles``; a
    message without one opens its turn as the frame does.

    Fields:

    - ``at``: how many of the open fence's pieces come before the name.
    - ``replaces``: how many pieces after those the name stands in for (Kimi K2 writes
      ``<|im_user|>alice<|im_middle|>`` where the frame writes
      ``<|im_user|>user<|im_middle|>``: ``at=1, replaces=1``); 0: the name is added.
    - ``lead`` / ``trail``: written before and after the name (Kimi K3's
      ``<|open|>message role="user" name="alice"<|sep|>``: ``at=2``, ``lead=fence(' name="')``,
      ``trail=fence('"')``).

    ``roles`` holds some of ``"system"``, ``"user"`` and ``"assistant"``, each a role with a
    frame.  The name of such a message whose role is not in ``roles`` is not written (a
    recorded loss); a tool result's is left to the results concept (``Results.name_close``
    writes the name of the call a result answers, after its id).  Reading
    takes the turns opened as the frames open them: a turn opened with a name is not read
    back (the warnings say so).
    """

    roles: tuple[str, ...] = ("system", "user", "assistant")
    at: int = 0
    replaces: int = 0
    lead: Fence = ()
    trail: Fence = ()

    handles: ClassVar[frozenset[str]] = frozenset({"name"})

    def validate(self, layout: Layout) -> None:
        for role in self.roles:
            if role not in _FRAMED:
                # (a result's name is the results concept's: Results.name_close writes it)
                raise FormatError(
                    f"{layout.name}: Names.roles: {role!r}; expected some of system, user, "
                    "assistant (a tool result's name is written by the results concept: "
                    "Results.name_close)"
                )
        for role in self.roles:
            frame = layout.frames.get(role)
            if frame is None:
                raise FormatError(
                    f"{layout.name}: Names.roles: {role!r}, a role with no frame; expected "
                    f"Layout.frames[{role!r}] (the name goes in its open fence), or {role!r} "
                    "left out of Names.roles"
                )
            if frame.open_after or len(frame.open) < self.at + self.replaces:
                raise FormatError(
                    f"{layout.name}: Names: the {role!r} frame {frame!r}; expected a frame "
                    f"whose open fence has {self.at + self.replaces} pieces or more (at + "
                    "replaces) and no open_after (the name goes in its one open fence)"
                )

    def turn_roles(self) -> frozenset[str]:
        return frozenset(self.roles)

    def check(self, out: Render) -> None:
        out.handles("name")
        if set(self.roles) >= _FRAMED:
            return  # (every framed role writes its names: nothing to walk for)
        for index, message in enumerate(out.messages):
            if message.name and message.role in _FRAMED and message.role not in self.roles:
                out.lose(f"messages[{index}].name", "not written")

    def turn_open(self, out: Render, index: int) -> Fence | None:
        if index < 0 or index >= len(out.messages):
            return None
        name = out.messages[index].name
        if not name:
            return None
        open_ = out.layout.frames[out.role or "user"].open
        after = self.at + self.replaces
        return (*open_[: self.at], *self.lead, Lit(name), *self.trail, *open_[after:])

    def jinja_open(self, out: Template, role: str) -> bool:
        if out.prompt or role not in self.roles:
            return False
        open_ = out.layout.frames[role].open
        out.out("{%- if message is not none and message.name is defined and message.name -%}")
        out.fence(open_[: self.at] + self.lead)
        out.out("{{- message.name -}}")
        out.fence(self.trail + open_[self.at + self.replaces :])
        out.out("{%- else -%}")
        out.fence(open_)
        out.out("{%- endif -%}")
        return True


_FRAMED = frozenset({"system", "user", "assistant"})
