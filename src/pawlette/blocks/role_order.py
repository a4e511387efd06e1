"""Role order: which roles may follow which, checked before rendering in a strict mode.

Some formats document rules their models were trained under (ChatGLM3: "multiple messages
from ``<|user|>`` will not appear continuously"; MediaTek's ``MRPromptV3.check_conversations``).
A format declares its rules as a :class:`RoleOrder`; :func:`check_role_order` raises
:class:`~pawlette.errors.RequestError` naming the first message that breaks one::

    messages[3].role: 'user' right after the user message messages[2]; expected a role that
    may follow it (two user messages in a row)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import RequestError
from ..types import Message


@dataclass(frozen=True)
class RoleOrder:
    """The rules; each is on when True."""

    system_first: bool = True
    """System messages come before any other message."""
    system_only_at_start: bool = False
    """At most one system message, the first (MRPromptV3)."""
    no_user_after_user: bool = True
    """Two user messages never follow each other."""
    assistant_after_user: bool = True
    """An assistant message has a user message somewhere before it."""
    assistant_after_user_or_tool: bool = False
    """An assistant message directly follows a user or a tool message (MRPromptV3)."""
    tool_after_call: bool = True
    """A tool message directly follows an assistant message with calls, or another tool
    message answering the same calls, and there are no more of them than calls."""
    call_needs_answer: bool = False
    """An assistant message with calls is followed by a tool message (MRPromptV3)."""


def _expected(rule: str) -> str:
    return f"a role that may follow it ({rule})"


def check_role_order(messages: Sequence[Message], rules: RoleOrder) -> None:
    """Raise :class:`RequestError` at the first message that breaks one of ``rules``."""
    seen_user = False
    seen_other = False
    answers_left = 0  # tool messages the latest calls may still receive
    previous: Message | None = None
    for index, message in enumerate(messages):
        role = message.role
        where = f"messages[{index}].role"
        before = f"messages[{index - 1}]"
        called = previous is not None and previous.role == "assistant" and previous.tool_calls
        if called and rules.call_needs_answer and role != "tool":
            raise RequestError(
                where,
                f"{role!r} right after the assistant calls in {before}",
                "'tool' messages with their results",
            )
        if role == "system":
            if rules.system_only_at_start and index != 0:
                raise RequestError(where, f"'system' at position {index}", "it only first")
            if rules.system_first and seen_other:
                raise RequestError(
                    where, "'system' after other messages", "system messages only at the start"
                )
        else:
            seen_other = True
        if role == "user":
            if rules.no_user_after_user and previous is not None and previous.role == "user":
                raise RequestError(
                    where,
                    f"'user' right after the user message {before}",
                    _expected("two user messages in a row"),
                )
            seen_user = True
        elif role == "assistant":
            if rules.assistant_after_user and not seen_user:
                raise RequestError(
                    where, "'assistant' with no user message before it", "a user message first"
                )
            if rules.assistant_after_user_or_tool and (
                previous is None or previous.role not in ("user", "tool")
            ):
                found = "first" if previous is None else f"after the {previous.role} in {before}"
                raise RequestError(where, f"'assistant' {found}", "it after a user or tool message")
        elif role == "tool" and rules.tool_after_call:
            if previous is not None and previous.role == "assistant" and previous.tool_calls:
                answers_left = len(previous.tool_calls)
            elif previous is None or previous.role != "tool":
                found = "first" if previous is None else f"after the {previous.role} in {before}"
                raise RequestError(
                    where, f"'tool' {found}", "it after an assistant message with tool calls"
                )
            if answers_left == 0:
                raise RequestError(
                    where,
                    "more tool messages than the calls they answer",
                    "one tool message per call",
                )
            answers_left -= 1
        previous = message
