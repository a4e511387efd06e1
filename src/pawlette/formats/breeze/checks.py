"""MRPromptV3's checks of a conversation, as options: render refuses what it refuses.

``MRPromptV3.check_conversations`` (MediaTek's ``mtkresearch``) refuses role orders Breeze 2
was not trained on and calls that do not fit their functions; pawlette writes such
conversations unless asked to check them (:class:`~pawlette.formats.breeze.BreezeOptions`'
``check_roles`` and ``check_conversations``).  A chat template cannot check them (it is
exported for the default options).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...blocks.function_checks import check_conversation
from ...blocks.role_order import RoleOrder, check_role_order
from ...declare import Concept

if TYPE_CHECKING:
    from ...declare.write import Render

RULES = RoleOrder(
    system_only_at_start=True, assistant_after_user_or_tool=True, call_needs_answer=True
)
"""MRPromptV3's role order."""


@dataclass(frozen=True)
class ReferenceChecks(Concept):
    """``roles``: refuse MRPromptV3's role orders; ``conversations``: all of
    ``MRPromptV3.check_conversations`` (the role order, the functions, and every call's
    arguments and result: :mod:`pawlette.blocks.function_checks`)."""

    roles: bool = False
    conversations: bool = False

    def check(self, out: Render) -> None:
        if self.roles or self.conversations:
            check_role_order(out.messages, RULES)
        if self.conversations:
            check_conversation(out.messages, out.tools)
