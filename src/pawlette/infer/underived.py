"""What inference could not derive, refused at use with the reason.

An inferred declaration writes what the probes showed and verification proved; a capability
it could not derive (tool calls a template writes in a syntax no concept reads, results in a
turn shape no concept writes) is refused when a conversation holds it, saying why, while the
rest of the format works.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..declare.concept import Concept
from ..errors import UnsupportedFeature

if TYPE_CHECKING:
    from ..declare.write import Render

__all__ = ["Underived"]


@dataclass(frozen=True)
class Underived(Concept):
    """``refused``: ``(capability, reason)`` pairs, the capabilities being ``"tools"``,
    ``"tool calls"``, ``"parallel tool calls"``, ``"text with tool calls"``, ``"tool results"``,
    ``"reasoning"``, ``"system messages"``, ``"later system messages"``, ``"consecutive user
    messages"``, ``"names"`` and ``"empty ROLE text"`` (a message of ROLE with no text)."""

    refused: tuple[tuple[str, str], ...]

    def check(self, out: Render) -> None:
        reasons = dict(self.refused)
        name = out.layout.name

        def refuse(capability: str, where: str, what: str) -> None:
            if capability in reasons:
                raise UnsupportedFeature(
                    where, what, f"none: {name} has no {capability} ({reasons[capability]})"
                )

        if out.tools:
            refuse("tools", "tools", "tools")
        seen_other = False
        previous = None
        for index, message in enumerate(out.messages):
            where = f"messages[{index}]"
            if message.role == "user" and previous == "user":
                refuse(
                    "consecutive user messages",
                    f"{where}.role",
                    "a user message after a user message",
                )
            previous = message.role
            if message.role == "system":
                refuse("system messages", f"{where}.role", "a system message")
                if seen_other or index > 0:
                    refuse("later system messages", f"{where}.role", "a later system message")
            else:
                seen_other = True
            if message.role == "tool":
                refuse("tool results", f"{where}.role", "a tool result")
            if not out.message_text(index) and not (
                message.role == "assistant" and message.tool_calls
            ):
                refuse(f"empty {message.role} text", f"{where}.content", "an empty text")
            if message.name is not None and message.role != "tool":
                refuse("names", f"{where}.name", "a name")
            if message.reasoning is not None and message.role == "assistant":
                refuse("reasoning", f"{where}.reasoning_content", "reasoning")
                if not message.reasoning:
                    refuse("empty reasoning", f"{where}.reasoning_content", "an empty text")
            if message.tool_calls:
                refuse("tool calls", f"{where}.tool_calls", "tool calls")
                if len(message.tool_calls) > 1:
                    refuse("parallel tool calls", f"{where}.tool_calls", "several calls")
                if out.message_text(index):
                    refuse("text with tool calls", f"{where}.content", "text with tool calls")
