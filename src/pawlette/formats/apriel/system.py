"""Apriel 1.5's system turns: each system message in place, and the default turn only when the
conversation has no system message at all (the template looks for one anywhere, not only
first), or the tools' own turn when it does not begin with one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import SystemPrompt

from .tools import JINJA_HAS_SYSTEM, ReprLineTools

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render


@dataclass(frozen=True)
class SystemAnywhere(SystemPrompt):
    """:class:`~pawlette.declare.SystemPrompt` (``always``, ``in_place``) whose turn without a
    message is written when the request has tools or no message of the conversation is a
    system message."""

    def _wanted(self, out: Render) -> bool:
        return bool(out.tools) or not ReprLineTools.has_system(out)

    def _jinja_wanted(self, out: Template, *, own: bool = True) -> str:
        return f"has_tools or not {JINJA_HAS_SYSTEM}"

    def empty_turn_read_as_none(self, out: Render) -> bool:
        # (with tools an empty system turn holds the tools listing after the default text,
        # which a turn without a message writes first: reading tells the two apart)
        return not out.tools and super().empty_turn_read_as_none(out)
