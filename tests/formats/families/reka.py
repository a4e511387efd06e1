"""Reka Edge (``pawlette.formats.reka``) against Reka's template: every kind of
conversation; with thinking off the template drops reasoning (a documented loss), and a text
ending with a newline before calls reads back without it; its own assistant turns parse
back to the message as it keeps it."""

from __future__ import annotations

from typing import Any

from . import FamilyCase


def kept(message: dict[str, Any]) -> dict[str, Any]:
    """What the template keeps of a turn: no reasoning (nor a text up to ``</think>`` in a
    turn without it); before calls, the text's newline is the calls' separator."""
    result = {key: value for key, value in message.items() if key != "reasoning_content"}
    content = result.get("content")
    if not isinstance(message.get("reasoning_content"), str) and "</think>" in (content or ""):
        content = result["content"] = content.split("</think>", 1)[1].lstrip("\n")
    if result.get("tool_calls") and isinstance(content, str) and content.endswith("\n"):
        result["content"] = content[:-1]
    return result


CASES = [FamilyCase("Reka-Edge", "reka", normalise=kept)]
