"""Scripted completions derived from each format itself, and the client-side view of answers.

A scenario is an assistant message; its completion is what the format renders for it after the
generation prompt (:func:`tests.helpers.completion_text`), so every registered format, present
or future, is covered without code written for it.  A format that cannot express a scenario
(:class:`~pawlette.errors.UnsupportedFeature`) skips that one.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from pawlette import declare
from pawlette.declare import layout_of
from pawlette.errors import RequestError
from pawlette.format import Format
from tests.declare.conversations import as_the_model_writes, prompt_opens_reasoning
from tests.helpers import WITHOUT_CALLS, completion_text, without_refused_system

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "The time in a zone",
            "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}},
        },
    },
]

PROMPT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What's the weather in Paris?"},
]


def _call(index: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call{index:05d}",  # 9 letters and digits: Mistral's templates refuse others
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


SCENARIOS: dict[str, dict[str, Any]] = {
    "text": {"role": "assistant", "content": "It is sunny, 25°C — «quite» nice."},
    "call": {
        "role": "assistant",
        "content": None,
        "tool_calls": [_call(0, "get_weather", {"city": "Paris"})],
    },
    "text_and_call": {
        "role": "assistant",
        "content": "Let me check.",
        "tool_calls": [_call(0, "get_weather", {"city": "Paris, 🇫🇷"})],
    },
    "reasoning": {
        "role": "assistant",
        "reasoning_content": "They want the weather.",
        "content": "Sunny.",
    },
    "parallel_calls": {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            _call(0, "get_weather", {"city": "Paris"}),
            _call(1, "get_time", {"zone": "CET"}),
        ],
    },
}


def prompt_for(fmt: Format) -> list[dict[str, Any]]:
    """PROMPT as ``fmt`` expresses it: whole, or without its system message where the format
    refuses one (:func:`tests.helpers.without_refused_system` checks the refusal)."""
    request = without_refused_system(fmt, {"messages": PROMPT, "tools": TOOLS})
    return copy.deepcopy(request["messages"])


def tools_left_out(fmt: Format) -> bool:
    """Whether the format leaves the request's tools out of the prompt (its template writes
    none): a forced call is then refused (the model would call a function it never saw)."""
    return "tools: not written" in fmt.render(prompt_for(fmt), TOOLS).losses


def assert_forced_call_refused(caught: pytest.ExceptionInfo[Any], fmt: Format) -> None:
    """The 400 for a forced call whose tools ``fmt`` leaves out."""
    body = caught.value.body
    assert isinstance(body, dict) and body["param"] == "tool_choice"
    assert f"format {fmt.name!r} leaves the tools out" in body["message"]


def system_refused(fmt: Format) -> bool:
    """Whether ``fmt`` refuses PROMPT's system message (checked, as :func:`prompt_for`)."""
    return len(prompt_for(fmt)) < len(PROMPT)


def request_for(scenario: str, fmt: Format | None = None) -> dict[str, Any]:
    """The conversation whose last message is the scenario's assistant message (after
    :func:`prompt_for` of ``fmt``; PROMPT whole without one)."""
    prompt = copy.deepcopy(PROMPT) if fmt is None else prompt_for(fmt)
    return {"messages": [*prompt, copy.deepcopy(SCENARIOS[scenario])], "tools": TOOLS}


def completion_for(fmt: Format, scenario: str) -> str | None:
    """What the model writes for the scenario in this format, or None if it cannot: it
    refuses the message, or (a format without calls) writes its calls as a recorded loss."""
    request = request_for(scenario, fmt)
    index = len(request["messages"]) - 1
    # A last turn as the model writes it (Nemotron Nano 2's template writes it otherwise).
    fmt = as_the_model_writes(fmt)
    try:
        losses = fmt.render(request).losses
        completion = completion_text(fmt, request, index)
    except RequestError:  # UnsupportedFeature included
        return None
    lost = [loss for loss in losses if loss.startswith(f"messages[{index}].tool_calls:")]
    if lost:
        # A format without calls, or one that writes only a turn's first call (GigaChat 3):
        # the scenario is not one its model writes.
        only_first = all(loss.endswith("calls after the first not written") for loss in lost)
        assert fmt.name in WITHOUT_CALLS or only_first, losses
        return None
    layout = layout_of(fmt)
    if prompt_opens_reasoning(layout) and not request["messages"][index].get("reasoning_content"):
        # The prompt opened the block (MiniMax-M2), which the turn as written does not hold:
        # the model closes it empty first.
        close = layout.concept(declare.Reasoning).close
        return "".join(piece.text for piece in close) + completion
    return completion


def without_ids(message: dict[str, Any]) -> dict[str, Any]:
    """The message with call ids removed (the server draws fresh ones) and null fields dropped.

    Empty content is dropped too: a client folding stream deltas cannot tell ``""`` from null.
    """
    result = {key: value for key, value in message.items() if value is not None}
    if result.get("content") == "":
        del result["content"]
    result.pop("refusal", None)
    result.pop("role", None)
    if "tool_calls" in result:
        result["tool_calls"] = [
            {key: value for key, value in call.items() if key not in ("id", "index")}
            for call in result["tool_calls"]
        ]
    return result


def message_from_sdk(message: Any) -> dict[str, Any]:
    """An SDK ``ChatCompletionMessage`` as a plain dict (extension fields kept)."""
    data: dict[str, Any] = message.model_dump(exclude_none=True)
    for key in ("annotations", "audio", "function_call"):
        data.pop(key, None)
    return data


def ask(client: Any, stream: bool, **fields: Any) -> tuple[dict[str, Any], str | None]:
    """One chat completion through the SDK ``client``, streamed or not: the message and its
    finish reason as the client reads them."""
    if stream:
        chunks = list(client.chat.completions.create(stream=True, **fields))
        message, finish, _ = message_from_chunks(chunks)
        return message, finish
    answer = client.chat.completions.create(**fields)
    return message_from_sdk(answer.choices[0].message), answer.choices[0].finish_reason


def message_from_chunks(chunks: list[Any]) -> tuple[dict[str, Any], str | None, Any]:
    """Fold SDK stream chunks the way a client does: (message, finish_reason, usage)."""
    content: list[str] = []
    reasoning: list[str] | None = None
    calls: dict[int, dict[str, Any]] = {}
    finish_reason = None
    usage = None
    for chunk in chunks:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                content.append(delta.content)
            extra = delta.model_extra or {}
            if extra.get("reasoning_content"):
                reasoning = [*(reasoning or []), extra["reasoning_content"]]
            for call in delta.tool_calls or []:
                entry = calls.setdefault(
                    call.index, {"id": None, "type": "function", "function": {"arguments": ""}}
                )
                if call.id:
                    entry["id"] = call.id
                if call.function is not None:
                    if call.function.name:
                        entry["function"]["name"] = call.function.name
                    if call.function.arguments:
                        entry["function"]["arguments"] += call.function.arguments
            if choice.finish_reason is not None:
                finish_reason = choice.finish_reason
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
    if reasoning is not None:
        message["reasoning_content"] = "".join(reasoning)
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return message, finish_reason, usage
