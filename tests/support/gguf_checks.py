"""One tool_choice request through the stock ``openai`` SDK, and what makes its answer right.

Shared by the real-engine tests (tests/serve/test_llama_cpp.py) and the measurement script
(``python -m bench.llama_cpp``), so the README's table counts what the tests assert.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import openai

from pawlette.formats import get_format

# Closed objects, as strict tool definitions are: a random model writes endless extra
# property names otherwise (identifiers are not closed by any favoured token).
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "The time in a zone",
            "parameters": {
                "type": "object",
                "properties": {"zone": {"type": "string"}},
                "additionalProperties": False,
            },
        },
    },
]
NAMES = {tool["function"]["name"] for tool in TOOLS}
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What's the weather in Paris?"},
]

CHOICES: dict[str, Any] = {
    "required": "required",
    "named": {"type": "function", "function": {"name": "get_time"}},
    "none": "none",
    "auto": "auto",
}


@dataclass
class Answer:
    """What a client saw: content, calls (name, arguments text), finish reason."""

    content: str = ""
    calls: list[tuple[str, str]] = field(default_factory=list)
    finish_reason: str | None = None


def ask(
    client: openai.OpenAI,
    choice: str,
    *,
    stream: bool,
    parallel: bool | None = None,
    max_tokens: int = 96,
    seed: int = 0,
) -> Answer:
    """One chat completion under ``CHOICES[choice]`` (``parallel``: ``parallel_tool_calls``)."""
    extra: dict[str, Any] = {}
    if parallel is not None:
        extra["parallel_tool_calls"] = parallel
    arguments: dict[str, Any] = {
        "model": "m",
        "messages": MESSAGES,
        "tools": TOOLS,
        "tool_choice": CHOICES[choice],
        "max_tokens": max_tokens,
        "temperature": 1.0,
        "seed": seed,
        **extra,
    }
    answer = Answer()
    if not stream:
        completion = client.chat.completions.create(**arguments)
        message = completion.choices[0].message
        answer.content = _text(message.content)
        for call in message.tool_calls or []:
            answer.calls.append((call.function.name, call.function.arguments))
        answer.finish_reason = completion.choices[0].finish_reason
        return answer
    calls: dict[int, list[str]] = {}
    for chunk in client.chat.completions.create(stream=True, **arguments):
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        answer.content += _text(delta.content)
        for call in delta.tool_calls or []:
            entry = calls.setdefault(call.index, ["", ""])
            if call.function is not None:
                entry[0] += call.function.name or ""
                entry[1] += call.function.arguments or ""
        if chunk.choices[0].finish_reason is not None:
            answer.finish_reason = chunk.choices[0].finish_reason
    answer.calls = [(name, text) for _, (name, text) in sorted(calls.items())]
    return answer


def _text(content: Any) -> str:
    """A message's text (content parts, as omni and breeze return boxes, joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(
        part.get("text", "") if isinstance(part, dict) else str(part) for part in content
    )


def problems(format_name: str, choice: str, parallel: bool | None, answer: Answer) -> list[str]:
    """Why ``answer`` breaks the contract of ``choice`` (empty: it keeps it)."""
    found: list[str] = []
    # The markers the format's lexer reads (chatglm3's "[gMASK]sop" is one; "sop" alone is
    # text).  Under ``auto`` no grammar constrains the text (llama.cpp's lazy grammar starts
    # at the call trigger), so a random model's marker soup may come back as text there.
    markers = [m for m in get_format(format_name).grammar.markers if m in answer.content]
    if markers and choice != "auto":
        found.append(f"marker text {markers} in content {answer.content!r}")
    for name, text in answer.calls:
        expected = {"get_time"} if choice == "named" else NAMES
        if name not in expected:
            found.append(f"call to {name!r}, expected one of {sorted(expected)}")
        try:
            value = json.loads(text)
        except ValueError:
            found.append(f"arguments {text!r} are not JSON")
        else:
            if not isinstance(value, dict):
                found.append(f"arguments {text!r} are not an object")
    if choice in ("required", "named") and not answer.calls:
        found.append("no call")
    if choice == "none" and answer.calls:
        found.append(f"calls under none: {answer.calls}")
    if parallel is False and len(answer.calls) > 1:
        found.append(f"{len(answer.calls)} calls with parallel_tool_calls false")
    expected_reason = "tool_calls" if answer.calls else "stop"
    # A random model may repeat parallel calls until the budget: the engine's length limit
    # then ends an answer of complete, valid calls, and pawlette rightly says "length".
    repeated = parallel is not False and choice != "none" and len(answer.calls) >= 2
    if answer.finish_reason == "length" and repeated and not found:
        return found
    if answer.finish_reason != expected_reason:
        found.append(f"finish_reason {answer.finish_reason!r}, expected {expected_reason!r}")
    return found
