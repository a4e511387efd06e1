"""Conversations ChatGLM3 expresses: any roles in any order, names on system and user
messages, calls with identifier keys, code-interpreter programs, tools.

Text never contains a marker's spelling (markers are special tokens, not escaped: text parses
exactly only from token ids); it may end in a newline (every newline is text).
``normalise`` is what the text cannot keep: call ids (numbered ``call_0``, ... and paired
with observations by position), the argument JSON's spelling, observation names, an empty
system turn that only holds the tools, and a calls-only assistant message right after an
assistant message (it joins that message).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from pawlette.formats import chatglm3

from .common import (
    ANY_ROLES,
    canonical_arguments,
    chat_request,
    function_tool,
    keyword_arguments,
    number_calls,
    plain_text,
)

CALL_IDS_ROUND_TRIP = False
MARKERS = [*chatglm3.FORMAT.special_markers, chatglm3.GMASK.text + chatglm3.SOP.text]


# Named predicates, not lambdas: hypothesis describes a retried filter by its predicate.
def one_line(value: str) -> bool:
    return bool(value) and "\n" not in value


def call_name(value: str) -> bool:
    # The code interpreter's metadata and tool are drawn apart (their call is a program).
    return value == value.strip() and value not in ("interpreter", "code_interpreter")


text = plain_text(MARKERS)
names = text.filter(one_line)
call_names = names.filter(call_name)
arguments = keyword_arguments(MARKERS)


@st.composite
def call(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.integers(0, 3)) == 0:
        name, body = "code_interpreter", json.dumps({"code": draw(text)})
    else:
        name, body = draw(call_names), draw(arguments)
    return {"id": draw(names), "type": "function", "function": {"name": name, "arguments": body}}


@st.composite
def message(draw: st.DrawFn, role: str) -> dict[str, Any]:
    result: dict[str, Any] = {"role": role}
    if role in ("system", "user", "tool") and draw(st.booleans()):
        result["name"] = draw(names)
    if role == "assistant":
        calls = draw(st.lists(call(), max_size=3))
        if calls:
            result["tool_calls"] = calls
        result["content"] = draw(st.none() | text) if calls else draw(text)
    else:
        result["content"] = draw(text)
    if role == "tool" and draw(st.booleans()):
        result["tool_call_id"] = draw(names)
    return result


@st.composite
def conversations(draw: st.DrawFn) -> dict[str, Any]:
    messages = [draw(message(role)) for role in draw(ANY_ROLES)]
    return chat_request(messages, draw(st.lists(names.map(function_tool), max_size=2)))


normalise_completion = canonical_arguments


def normalise(request: dict[str, Any]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for original in request["messages"]:
        current = normalise_completion(dict(original))
        if current["role"] == "tool":
            current.pop("name", None)
            current.pop("tool_call_id", None)
        previous = messages[-1] if messages else None
        if (
            previous is not None
            and previous["role"] == "assistant"
            and current["role"] == "assistant"
            and current.get("tool_calls")
            and current.get("content") is None
        ):  # a calls-only message joins the assistant message before it
            calls = previous.get("tool_calls", []) + current["tool_calls"]
            content = previous["content"] if previous["content"] != "" else None
            messages[-1] = {**previous, "content": content, "tool_calls": calls}
            continue
        messages.append(current)
    first = messages[0] if messages else None
    if (
        request.get("tools")
        and first is not None
        and first["role"] == "system"
        and first["content"] == ""
        and "name" not in first
    ):
        messages = messages[1:]
    number_calls(messages)
    return {**request, "messages": messages}
