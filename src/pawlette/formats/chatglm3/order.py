"""Role order: rules the seed states for ChatGLM3's conversations, checked before rendering
when asked (``with_options(check_roles=True)``): no system message after others, no two user
messages in a row, no assistant before any user, no observation that answers no call
(:mod:`pawlette.blocks.role_order`, which names the message that breaks one)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...blocks.role_order import RoleOrder, check_role_order
from ...declare import Concept

if TYPE_CHECKING:
    from ...declare.write import Render


@dataclass(frozen=True)
class RoleOrderCheck(Concept):
    """``rules``: the rules refused before rendering (None: any order)."""

    rules: RoleOrder | None = None

    def check(self, out: Render) -> None:
        if self.rules is not None:
            check_role_order(out.messages, self.rules)
