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
from ..emit.jinja_text import jinja_string
from ..errors import UnsupportedFeature

if TYPE_CHECKING:
    from ..declare.jinja import Template
    from ..declare.write import Render

_TEXT = "(text_of(message, loop.index0, '') | length == 0)"
_CALLS = "(message.tool_calls is defined and message.tool_calls)"
_REASONING = "(message.reasoning_content is defined and message.reasoning_content is not none)"
_CONDITIONS = {
    "system messages": "message.role in ['system', 'developer']",
    "later system messages": "loop.index0 > 0 and message.role in ['system', 'developer']",
    "consecutive user messages": (
        "loop.index0 > 0 and message.role == 'user' and messages[loop.index0 - 1].role == 'user'"
    ),
    "consecutive assistant messages": (
        "loop.index0 > 0 and message.role == 'assistant' "
        "and messages[loop.index0 - 1].role == 'assistant'"
    ),
    "tool results": "message.role == 'tool'",
    "names": "message.role != 'tool' and message.name is defined and message.name is not none",
    "reasoning": f"message.role == 'assistant' and {_REASONING}",
    "empty reasoning": (
        f"message.role == 'assistant' and {_REASONING} and not message.reasoning_content"
    ),
    "tool calls": _CALLS,
    "parallel tool calls": f"{_CALLS} and message.tool_calls | length > 1",
    "text with tool calls": f"{_CALLS} and not {_TEXT}",
    "empty system text": f"message.role in ['system', 'developer'] and {_TEXT}",
    "empty user text": f"message.role == 'user' and {_TEXT}",
    "empty assistant text": f"message.role == 'assistant' and not {_CALLS} and {_TEXT}",
    "empty tool text": f"message.role == 'tool' and {_TEXT}",
    "leading assistant messages": (
        "message.role == 'assistant' and messages[:loop.index0] "
        "| selectattr('role', 'equalto', 'user') | list | length == 0"
    ),
}

__all__ = ["Underived"]


@dataclass(frozen=True)
class Underived(Concept):
    """``refused``: ``(capability, reason)`` pairs, the capabilities being ``"tools"``,
    ``"tool calls"``, ``"parallel tool calls"``, ``"text with tool calls"``, ``"tool results"``,
    ``"reasoning"``, ``"system messages"``, ``"later system messages"``, ``"consecutive user
    messages"``, ``"consecutive assistant messages"``, ``"leading assistant messages"`` (before
    any user message), ``"generation prompt after an answer"``, ``"names"`` and ``"empty ROLE
    text"`` (a message of ROLE with no text)."""

    refused: tuple[tuple[str, str], ...]

    def jinja_setup(self, out: Template) -> None:
        """The exported template refuses what the declaration refuses, saying why."""
        name = out.layout.name
        lines = []
        for capability, reason in self.refused:
            message = jinja_string(f"{name} has no {capability} ({reason[:200]})")
            if capability == "tools":
                lines.append(
                    "{%- if tools is defined and tools -%}{{- raise_exception("
                    + message
                    + ") -}}{%- endif -%}"
                )
                continue
            if capability == "generation prompt after an answer":
                lines.append(
                    "{%- if add_generation_prompt and messages and "
                    "messages[-1].role == 'assistant' -%}{{- raise_exception("
                    + message
                    + ") -}}{%- endif -%}"
                )
                continue
            condition = _CONDITIONS.get(capability)
            if condition is None:
                continue
            lines.append(
                "{%- for message in messages -%}{%- if "
                + condition
                + " -%}{{- raise_exception('messages[' ~ loop.index0 ~ ']: ' ~ "
                + message
                + ") -}}{%- endif -%}{%- endfor -%}"
            )
        if lines:
            out.macro("underived", "\n".join(lines))

    def check(self, out: Render) -> None:
        reasons = dict(self.refused)
        name = out.layout.name

        def refuse(capability: str, where: str, what: str) -> None:
            if capability in reasons:
                raise UnsupportedFeature(
                    where,
                    what,
                    f"none: {name} has no {capability}, which inference could not derive "
                    f"from the template ({reasons[capability]})",
                )

        if out.tools:
            refuse("tools", "tools", f"{len(out.tools)} given")
        if out.prompt and out.messages and out.messages[-1].role == "assistant":
            refuse(
                "generation prompt after an answer",
                "add_generation_prompt",
                f"true after messages[{len(out.messages) - 1}], an assistant message",
            )
        asked = False
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
            if message.role == "assistant" and previous == "assistant":
                refuse(
                    "consecutive assistant messages",
                    f"{where}.role",
                    "an assistant message after an assistant message",
                )
            if message.role == "assistant" and not asked:
                refuse(
                    "leading assistant messages",
                    f"{where}.role",
                    "an assistant message before any user message",
                )
            asked = asked or message.role == "user"
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
