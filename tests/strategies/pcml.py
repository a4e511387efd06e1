"""Conversations PCML expresses exactly: any text (markers included), metadata, calls."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

import pawlette

from .common import ANY_ROLES, arguments_text, chat_request, function_tool, identifiers, tricky_text

# Every marker of the lexer: the special tokens, then the spellings with their layout
# (``</think>\n``, ``\n<tools>``, ``\n<call>``).
_FORMAT = pawlette.get_format("pcml")
MARKERS = [
    *_FORMAT.special_markers,
    *sorted(_FORMAT.grammar.markers - set(_FORMAT.special_markers), reverse=True),
]
text = tricky_text(MARKERS)
metadata = st.dictionaries(
    identifiers.filter(lambda key: key not in ("name", "id")), text, max_size=2
)


@st.composite
def message(draw: st.DrawFn, role: str) -> dict[str, Any]:
    result: dict[str, Any] = {"role": role}
    if draw(st.booleans()):
        result["name"] = draw(text)
    if draw(st.booleans()):
        result["metadata"] = draw(metadata)
    if role == "assistant":
        calls = draw(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "id": text,
                        "type": st.just("function"),
                        "function": st.fixed_dictionaries(
                            # an empty name is no call (README: Contracts, rule 2)
                            {"name": text.filter(bool), "arguments": arguments_text()}
                        ),
                    }
                ),
                max_size=3,
            )
        )
        if calls:
            result["tool_calls"] = calls
        result["content"] = draw(st.none() | text) if calls else draw(text)
        if draw(st.booleans()):
            result["reasoning_content"] = draw(text)
    else:
        result["content"] = draw(text)
    if role == "tool" and draw(st.booleans()):
        result["tool_call_id"] = draw(text)
    return result


@st.composite
def conversations(draw: st.DrawFn) -> dict[str, Any]:
    messages = [draw(message(role)) for role in draw(ANY_ROLES)]
    tools = draw(st.lists(text.map(lambda name: function_tool(name or "f")), max_size=2))
    return chat_request(messages, tools)


def normalise(request: dict[str, Any]) -> dict[str, Any]:
    """An empty system turn that only holds the tools is not a message (see pcml's docstring)."""
    messages = request["messages"]
    first = messages[0] if messages else None
    if (
        request.get("tools")
        and first is not None
        and first["role"] == "system"
        and first.get("content") in ("", None)
        and "name" not in first
        and not first.get("metadata")
    ):
        return {**request, "messages": messages[1:]}
    return request
