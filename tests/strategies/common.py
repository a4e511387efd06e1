"""Building blocks for conversation strategies."""

from __future__ import annotations

import json
import keyword
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

# Any unicode but surrogates (not encodable as UTF-8) and NUL.
CHARACTERS = st.characters(codec="utf-8", exclude_characters="\x00")

identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)

# The roles of a conversation with every role anywhere (formats without role order rules).
ANY_ROLES = st.lists(st.sampled_from(["user", "assistant", "tool", "system"]), max_size=6)


def tricky_text(markers: Sequence[str], max_size: int = 6) -> st.SearchStrategy[str]:
    """Text that mixes arbitrary unicode with the format's markers, backslashes and quotes."""
    pieces = st.one_of(
        st.text(CHARACTERS, max_size=12),
        st.sampled_from([*markers, "\\", "\\\\", "\n", '"', "=", " ", "\n\n"]),
    )
    return st.lists(pieces, max_size=max_size).map("".join)


def plain_text(avoid: Sequence[str], max_size: int = 30) -> st.SearchStrategy[str]:
    """Unicode text that contains none of ``avoid`` (formats that do not escape markers)."""
    return st.text(CHARACTERS, max_size=max_size).filter(
        lambda text: not any(marker in text for marker in avoid)
    )


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.text(CHARACTERS, max_size=10),
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(CHARACTERS, max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
json_objects = st.dictionaries(st.text(CHARACTERS, max_size=8), json_values, max_size=4)


# Named predicates, not lambdas: hypothesis describes a retried filter by its predicate.
def not_a_keyword(name: str) -> bool:
    return not keyword.iskeyword(name)


# What Python-call formats can write as a keyword argument's name.
keyword_names = identifiers.filter(not_a_keyword)


def keyword_arguments(markers: Sequence[str]) -> st.SearchStrategy[str]:
    """JSON arguments with keys a Python-call format writes as keyword arguments, spelling
    no marker."""

    def no_marker(value: str) -> bool:
        return not any(marker in value for marker in markers)

    return arguments_text(keyword_names).filter(no_marker)


@st.composite
def arguments_text(draw: st.DrawFn, keys: st.SearchStrategy[str] | None = None) -> str:
    """A JSON object as text, in a randomly chosen JSON style."""
    if keys is None:
        value = draw(json_objects)
    else:
        value = draw(st.dictionaries(keys, json_values, max_size=4))
    separators = draw(st.sampled_from([(", ", ": "), (",", ":")]))
    return json.dumps(value, ensure_ascii=draw(st.booleans()), separators=separators)


def chat_request(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """A request of ``messages``, with ``tools`` when there are any."""
    request: dict[str, Any] = {"messages": messages}
    if tools:
        request["tools"] = tools
    return request


def canonical_arguments(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with its calls' arguments as ``json.dumps`` writes them: formats that write
    arguments in another syntax keep the JSON value, not its spelling."""
    if "tool_calls" not in message:
        return message
    calls = []
    for tool_call in message["tool_calls"]:
        function = tool_call["function"]
        arguments = json.dumps(json.loads(function["arguments"]), ensure_ascii=False)
        calls.append({**tool_call, "function": {**function, "arguments": arguments}})
    return {**message, "tool_calls": calls}


def number_calls(messages: list[dict[str, Any]]) -> None:
    """Ids as a parser gives them to formats that write none, in place: calls numbered in
    order (``call_0``, ...), each tool message paired with the next call of the latest calls."""
    number, latest, answered = 0, [], 0
    for position, item in enumerate(messages):
        if item.get("tool_calls"):
            calls = []
            for tool_call in item["tool_calls"]:
                calls.append({**tool_call, "id": f"call_{number}"})
                number += 1
            latest, answered = [c["id"] for c in calls], 0
            messages[position] = {**item, "tool_calls": calls}
        elif item["role"] == "tool":
            if answered < len(latest):
                messages[position] = {**item, "tool_call_id": latest[answered]}
            answered += 1


def function_tool(name: str, description: str | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name}
    if description is not None:
        function["description"] = description
    function["parameters"] = {"type": "object", "properties": {"x": {"type": "string"}}}
    return {"type": "function", "function": function}
