"""Conversations breeze expresses: system/user/assistant/tool turns in any order, images (as
placeholder runs), boxes, calls with identifier names and keys, result runs, tools.

Text never contains a marker's spelling (markers are special tokens, not escaped: text parses
exactly only from token ids) nor starts like the tools preamble.  ``normalise`` is what the
text cannot keep: call ids (numbered ``call_0``, ... and paired with results by position), the
JSON spelling of arguments and of JSON results, the order of results (call order, ``null``
for a call without one), tool names, and an empty system turn that only holds the tools.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from pawlette.formats import breeze

from .common import (
    canonical_arguments,
    chat_request,
    function_tool,
    keyword_arguments,
    keyword_names,
    number_calls,
    plain_text,
)

CALL_IDS_ROUND_TRIP = False
MARKERS = list(breeze.SPECIAL)


# Named predicates, not lambdas: hypothesis describes a retried filter by its predicate.
def not_like_the_tools_preamble(value: str) -> bool:
    return not value.startswith(breeze.TOOLS_LEAD)


text = plain_text(MARKERS).filter(not_like_the_tools_preamble)
plain_names = keyword_names
arguments = keyword_arguments(MARKERS)
results = st.one_of(
    text,
    st.sampled_from(['{"temperature": 22}', "[1, 2.5, true, null]", '"quoted"', "3", "null"]),
    arguments,
)


@st.composite
def parts(draw: st.DrawFn, role: str) -> str | list[dict[str, Any]]:
    kinds = ["text", "bbox", "image"] if role == "user" else ["text", "bbox"]
    content: list[dict[str, Any]] = []
    for kind in draw(st.lists(st.sampled_from(kinds), max_size=4)):
        if kind == "text":
            content.append({"type": "text", "text": draw(text)})
        elif kind == "bbox":
            box = st.lists(st.integers(0, 1000), min_size=4, max_size=4)
            content.append(
                {"type": "bbox", "bbox": {"boxes": draw(st.lists(box, min_size=1, max_size=2))}}
            )
        else:
            image = {"url": "", "tokens": draw(st.integers(0, 3))}
            content.append({"type": "image_url", "image_url": image})
    if all(part["type"] == "text" for part in content) and draw(st.booleans()):
        return "".join(part["text"] for part in content)
    return content


@st.composite
def call(draw: st.DrawFn, number: int) -> dict[str, Any]:
    function = {"name": draw(plain_names), "arguments": draw(arguments)}
    return {"id": f"id{number}", "type": "function", "function": function}


@st.composite
def conversations(draw: st.DrawFn) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(text)})
    for role in draw(
        st.lists(st.sampled_from(["user", "assistant", "calls", "tool", "system"]), max_size=5)
    ):
        if role in ("system", "tool"):
            message: dict[str, Any] = {
                "role": role,
                "content": draw(text if role == "system" else results),
            }
            if role == "tool" and draw(st.booleans()):
                message["tool_call_id"] = draw(st.sampled_from(["id0", "id1", "other"]))
            messages.append(message)
        elif role == "calls":
            calls = [draw(call(number)) for number in range(draw(st.integers(1, 3)))]
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            answers = draw(st.permutations(calls))[: draw(st.integers(0, len(calls)))]
            for answer in answers:  # results for some of the calls, in any order
                messages.append(
                    {"role": "tool", "tool_call_id": answer["id"], "content": draw(results)}
                )
        else:
            messages.append({"role": role, "content": draw(parts(role))})
    return chat_request(messages, draw(st.lists(plain_names.map(function_tool), max_size=2)))


def _result_content(content: str) -> str:
    try:
        value = json.loads(content)
        written = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError:
        return content
    return value if isinstance(value, str) else written  # a JSON string is written as its text


normalise_completion = canonical_arguments


def _results_in_call_order(run: list[dict[str, Any]], calls: list[str]) -> list[dict[str, Any]]:
    slots: list[dict[str, Any] | None] = [None] * len(calls)
    extra = []
    for message in run:
        free = [k for k, call_id in enumerate(calls) if call_id == message.get("tool_call_id")]
        free = [k for k in free if slots[k] is None]
        if free:
            slots[free[0]] = message
        else:
            extra.append(message)
    ordered = []
    for message in [*slots, *extra]:
        content = "null" if message is None else _result_content(message["content"])
        ordered.append({"role": "tool", "content": content})
    return ordered


def normalise(request: dict[str, Any]) -> dict[str, Any]:
    source = request["messages"]
    first = source[0] if source else None
    if request.get("tools") and first is not None and first == {"role": "system", "content": ""}:
        source = source[1:]
    elif first == {"role": "system", "content": breeze.TRAINING_SYSTEM}:
        source = source[1:]  # the text written when there is no system message: read as none
    messages: list[dict[str, Any]] = []
    index = 0
    while index < len(source):
        message = source[index]
        if message["role"] != "tool":
            messages.append(normalise_completion(message))
            index += 1
            continue
        end = index
        while end < len(source) and source[end]["role"] == "tool":
            end += 1
        before = source[index - 1] if index else None
        calls = [c["id"] for c in before.get("tool_calls", [])] if before is not None else []
        messages += _results_in_call_order(source[index:end], calls)
        index = end
    number_calls(messages)
    return {**request, "messages": messages}
