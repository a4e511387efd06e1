"""Meta's Llama 3 templates write the tools into the message right after the first system
message (the first message when there is none), whatever its role, as a user turn.  A system
message there loses its role (a recorded loss); any other role is refused."""

from __future__ import annotations

from dataclasses import dataclass

from pawlette.declare import Fence, ToolsBlock
from pawlette.declare.jinja import Template
from pawlette.declare.layout import Layout
from pawlette.declare.write import Render
from pawlette.errors import FormatError, RequestError


@dataclass(frozen=True)
class ToolsAfterSystem(ToolsBlock):
    """A :class:`~pawlette.declare.ToolsBlock` with ``place="first_user"`` whose host is the
    message after the first system message (see the module)."""

    def validate(self, layout: Layout) -> None:
        super().validate(layout)
        if self.place != "first_user":
            raise FormatError(
                f"{layout.name}: ToolsAfterSystem with place={self.place!r}; "
                "expected place='first_user'"
            )

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"user", "system"})

    def check(self, out: Render) -> None:
        super().check(out)
        if not out.tools:
            return
        host = self.host_index(out)
        role = out.messages[host].role
        if role == "system":
            out.lose(f"messages[{host}].role", "written as the user turn holding the tools")
        elif role != "user":
            raise RequestError(
                f"messages[{host}].role",
                repr(role),
                f"a user message: {out.layout.name} writes the tools into the message "
                "after the first system message",
            )

    def hook_roles(self, hook: str) -> frozenset[str] | None:
        # (its turn_open changes a system turn alone: no call in a user turn)
        return frozenset({"system"}) if hook == "turn_open" else super().hook_roles(hook)

    def write_opening(self, out: Render, index: int) -> None:
        if index <= 1:  # (the host is the first message or the one after it: most turns are not)
            super().write_opening(out, index)

    def host_index(self, out: Render) -> int:
        first = 1 if out.messages and out.messages[0].role == "system" else 0
        return first if first < len(out.messages) else -1

    def turn_open(self, out: Render, index: int) -> Fence | None:
        if out.role == "system" and self._hosts(out, index):
            return out.layout.frames["user"].opener(out.previous)
        return None

    def jinja_host(self, out: Template, role: str) -> str | None:
        if role not in ("user", "system"):
            return None
        out.macro(
            "first_user",
            "{%- set first_user = namespace(index=-1) -%}{%- if messages -%}"
            '{%- set first_user.index = 1 if messages[0].role in ["system", "developer"] '
            "else 0 -%}{%- endif -%}",
        )
        return "has_tools and index == first_user.index"

    def jinja_open(self, out: Template, role: str) -> bool:
        if role != "system":
            return False
        out.fence_if(
            f"{self.jinja_host(out, role)}",
            out.layout.frames["user"].open,
            out.layout.frames["system"].open,
        )
        return True
