"""Conversations omni expresses: any text (markers included, image references too: they are
escaped text), functions with inline results, actions, structured thinking, voice parts, image
requests and input images (each writes its reference where it stands).

``normalise`` is what the text cannot keep: call ids (numbered ``call_0``, ...), images (the
url and sizes are not in the text, the token count is; each stays where it stands), the flat
``reasoning_content`` of steps given alone, an empty system turn that only holds the tools and
an empty assistant message after a result.
Output images (an assistant message holding one image) are tested in tests/formats/test_omni.py:
their prompt is not the generation prompt.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from pawlette.declared import omni
from pawlette.legacy.blocks.thinking import flatten_thinking
from pawlette.types import ThinkStep

from .common import arguments_text, chat_request, identifiers, json_objects, tricky_text

CALL_IDS_ROUND_TRIP = False
DEFAULT_TOKENS = omni.DEFAULT_IMAGE_TOKENS

text = tricky_text(omni.SPECIAL)
names = st.one_of(identifiers, text.filter(bool))


@st.composite
def user_content(draw: st.DrawFn) -> str | list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for kind in draw(st.lists(st.sampled_from(["text", "voice", "image"]), max_size=4)):
        if kind == "text":
            pieces = st.one_of(text, st.sampled_from(omni.IMAGE_REFERENCES))
            parts.append({"type": "text", "text": "".join(draw(st.lists(pieces, max_size=3)))})
        elif kind == "voice":
            parts.append(draw(voice_part()))
        else:
            image: dict[str, Any] = {"url": draw(st.sampled_from(["https://x/a.png", ""]))}
            if draw(st.booleans()):
                image["detail"] = "low"
            if draw(st.booleans()):
                image["tokens"] = draw(st.integers(0, 3))
            parts.append({"type": "image_url", "image_url": image})
    if not parts and draw(st.booleans()):
        return draw(text)
    return parts


@st.composite
def voice_part(draw: st.DrawFn) -> dict[str, Any]:
    return {"type": "voice", "voice": {"text": draw(text), "prosody": draw(json_objects)}}


@st.composite
def assistant_content(draw: st.DrawFn) -> str | list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    kinds = ["text", "voice", "action", "image_request"]
    for kind in draw(st.lists(st.sampled_from(kinds), max_size=4)):
        if kind == "text":
            parts.append({"type": "text", "text": draw(text)})
        elif kind == "voice":
            parts.append(draw(voice_part()))
        elif kind == "action":
            action = {"name": draw(names), "arguments": draw(arguments_text())}
            parts.append({"type": "action", "action": action})
        else:
            parts.append({"type": "image_request", "image_request": draw(json_objects)})
    if all(part["type"] == "text" for part in parts) and draw(st.booleans()):
        return "".join(part["text"] for part in parts)
    return parts


@st.composite
def thinking(draw: st.DrawFn) -> dict[str, Any]:
    steps = draw(
        st.none()
        | st.lists(
            st.fixed_dictionaries({"title": text, "reasoning": text, "conclusion": text}),
            max_size=3,
        )
    )
    result: dict[str, Any] = {}
    if steps is not None:
        result["reasoning_steps"] = steps
    preamble = draw(st.none() | text)
    if preamble is not None:
        core = tuple(ThinkStep(**step) for step in steps or [])
        result["reasoning_content"] = flatten_thinking(preamble, core) if core else preamble
    return result


@st.composite
def assistant(draw: st.DrawFn, *, call: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    if draw(st.booleans()):
        message.update(draw(thinking()))
    message["content"] = draw(assistant_content())
    if call:
        function = {"name": draw(names), "arguments": draw(arguments_text())}
        message["tool_calls"] = [{"id": draw(text), "type": "function", "function": function}]
        if message["content"] in ("", []) and draw(st.booleans()):
            message["content"] = None
    return message


@st.composite
def assistant_turn(draw: st.DrawFn) -> list[dict[str, Any]]:
    """One ASSISTANT turn: calls each answered by a tool message, then maybe a last answer."""
    messages: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 2))):
        message = draw(assistant(call=True))
        messages.append(message)
        result: dict[str, Any] = {"role": "tool", "content": draw(text)}
        if draw(st.booleans()):
            result["tool_call_id"] = message["tool_calls"][0]["id"]
        messages.append(result)
    if not messages or draw(st.booleans()):
        messages.append(draw(assistant(call=False)))
    return messages


@st.composite
def conversations(draw: st.DrawFn) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for role in draw(st.lists(st.sampled_from(["system", "user", "assistant"]), max_size=5)):
        if role == "system":
            messages.append({"role": "system", "content": draw(text)})
        elif role == "user":
            messages.append({"role": "user", "content": draw(user_content())})
        else:
            messages += draw(assistant_turn())
    tools = []
    for kind in draw(st.lists(st.sampled_from(["function", "action"]), max_size=3)):
        definition: dict[str, Any] = {"name": draw(names)}
        if draw(st.booleans()):
            definition["description"] = draw(text)
        definition["parameters"] = draw(json_objects)
        if kind == "function" and draw(st.booleans()):
            definition["returns"] = draw(json_objects)
        tools.append({"type": kind, kind: definition})
    return chat_request(messages, tools)


# ------------------------------------------------------------------ what the text cannot keep


def _normalise_user(message: dict[str, Any], default_tokens: int) -> dict[str, Any]:
    """Images stay where they stand (their references do), as ``{"url": "", "tokens": N}``."""
    content = message["content"]
    if isinstance(content, str):
        return message
    parts: list[dict[str, Any]] = []
    for part in content:
        if part["type"] == "image_url":
            tokens = part["image_url"].get("tokens", default_tokens)
            part = {"type": "image_url", "image_url": {"url": "", "tokens": tokens}}
        if part["type"] == "text" and parts and parts[-1]["type"] == "text":
            parts[-1] = {"type": "text", "text": parts[-1]["text"] + part["text"]}
        else:
            parts.append(part)
    if all(part["type"] == "text" for part in parts):
        return {**message, "content": "".join(part["text"] for part in parts)}
    return {**message, "content": parts}


def normalise_completion(message: dict[str, Any]) -> dict[str, Any]:
    """The flat text of thinking steps given alone; no empty step list."""
    steps = message.get("reasoning_steps")
    if steps is None:
        return message
    result = dict(message)
    if not steps:
        del result["reasoning_steps"]
        result.setdefault("reasoning_content", "")
    elif "reasoning_content" not in result:
        core = tuple(ThinkStep(**step) for step in steps)
        result["reasoning_content"] = flatten_thinking("", core)
    # keep OpenAI's key order: content, reasoning_content, reasoning_steps, tool_calls
    order = ["role", "content", "reasoning_content", "reasoning_steps", "tool_calls"]
    return {key: result[key] for key in order if key in result}


def normalise(request: dict[str, Any], default_tokens: int = DEFAULT_TOKENS) -> dict[str, Any]:
    """(``default_tokens``: the tiling's default, for another format of the blocks concept.)"""
    messages = request["messages"]
    tools = request.get("tools")
    if (
        tools
        and messages
        and messages[0]["role"] == "system"
        and messages[0].get("content") in ("", None)
    ):
        messages = messages[1:]
    result: list[dict[str, Any]] = []
    calls = 0
    after_result = False
    for message in messages:
        role = message["role"]
        if role == "user":
            message = _normalise_user(message, default_tokens)
        elif role == "assistant":
            if after_result and message == {"role": "assistant", "content": ""}:
                after_result = False
                continue  # the same text as a turn closed right after the result
            message = normalise_completion(message)
            if "tool_calls" in message:
                call = dict(message["tool_calls"][0])
                call["id"] = f"call_{calls}"
                calls += 1
                message = {**message, "tool_calls": [call]}
        elif role == "tool":
            message = {**message, "tool_call_id": f"call_{calls - 1}"}
        after_result = role == "tool"
        result.append(message)
    normalised: dict[str, Any] = {"messages": result}
    if tools:
        normalised["tools"] = tools
    return normalised
