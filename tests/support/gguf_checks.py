"""One tool_choice request to ``pawlette serve`` over a real engine, and what makes its answer
right.

Shared by the real-engine tests (tests/serve/test_llama_cpp.py) and the measurement script
(``python -m bench.engine``), so the README's table counts what the tests assert.  The prompt,
the tools and the client side (an SDK call, streamed or not, folded into one message) are the
scripted-upstream tests' own (tests/serve/scenarios.py).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import openai

from pawlette.formats import get_format

from ..serve.scenarios import PROMPT, ask
from ..serve.scenarios import TOOLS as SCENARIO_TOOLS


def _closed(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tools with closed objects, as strict tool definitions are: a random model writes
    endless extra property names otherwise (identifiers are not closed by any favoured
    token).  ``get_weather`` also takes an integer, so numbers are sampled too."""
    closed = copy.deepcopy(tools)
    for tool in closed:
        parameters = tool["function"]["parameters"]
        parameters["additionalProperties"] = False
        if tool["function"]["name"] == "get_weather":
            parameters["properties"]["days"] = {"type": "integer"}
    return closed


TOOLS = _closed(SCENARIO_TOOLS)
NAMES = {tool["function"]["name"] for tool in TOOLS}
NAMED = "get_time"
CHOICES: dict[str, Any] = {
    "required": "required",
    "named": {"type": "function", "function": {"name": NAMED}},
    "none": "none",
    "auto": "auto",
}


def request(
    choice: str, *, parallel: bool | None = None, max_tokens: int = 96, seed: int = 0
) -> dict[str, Any]:
    """The chat completion's fields under ``CHOICES[choice]`` (``parallel``:
    ``parallel_tool_calls``, None: not sent)."""
    fields: dict[str, Any] = {
        "model": "m",
        "messages": PROMPT,
        "tools": TOOLS,
        "tool_choice": CHOICES[choice],
        "max_tokens": max_tokens,
        "temperature": 1.0,
        "seed": seed,
    }
    if parallel is not None:
        fields["parallel_tool_calls"] = parallel
    return fields


def ask_choice(
    client: openai.OpenAI,
    choice: str,
    *,
    stream: bool,
    parallel: bool | None = None,
    max_tokens: int = 96,
    seed: int = 0,
) -> tuple[dict[str, Any], str | None]:
    """One request under ``choice``: the message as the client reads it, and its finish
    reason."""
    fields = request(choice, parallel=parallel, max_tokens=max_tokens, seed=seed)
    return ask(client, stream, **fields)


def content_text(message: dict[str, Any]) -> str:
    """A message's text (content parts, as omni and breeze return boxes, joined)."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(
        part.get("text", "") if isinstance(part, dict) else str(part) for part in content
    )


def calls_of(message: dict[str, Any]) -> list[tuple[str, str]]:
    """The message's calls as (name, arguments text)."""
    return [
        (call["function"].get("name", ""), call["function"].get("arguments", ""))
        for call in message.get("tool_calls") or []
    ]


def problems(
    format_name: str,
    choice: str,
    parallel: bool | None,
    message: dict[str, Any],
    finish_reason: str | None,
) -> list[str]:
    """Why the answer breaks the contract of ``choice`` (empty: it keeps it)."""
    found: list[str] = []
    content = content_text(message)
    calls = calls_of(message)
    # The markers the format's lexer reads (chatglm3's "[gMASK]sop" is one; "sop" alone is
    # text).  Under ``auto`` no grammar constrains the text (llama.cpp's lazy grammar starts
    # at the call trigger), so a random model's marker soup may come back as text there.
    markers = [m for m in get_format(format_name).grammar.markers if m in content]
    if markers and choice != "auto":
        found.append(f"marker text {markers} in content {content!r}")
    for name, text in calls:
        expected = {NAMED} if choice == "named" else NAMES
        if name not in expected:
            found.append(f"call to {name!r}, expected one of {sorted(expected)}")
        try:
            value = json.loads(text)
        except ValueError:
            found.append(f"arguments {text!r} are not JSON")
        else:
            if not isinstance(value, dict):
                found.append(f"arguments {text!r} are not an object")
    if choice in ("required", "named") and not calls:
        found.append("no call")
    if choice == "none" and calls:
        found.append(f"calls under none: {calls}")
    if parallel is False and len(calls) > 1:
        found.append(f"{len(calls)} calls with parallel_tool_calls false")
    expected_reason = "tool_calls" if calls else "stop"
    # A random model may repeat parallel calls until the budget: the engine's length limit
    # then ends an answer of complete, valid calls, and pawlette rightly says "length".
    repeated = parallel is not False and choice != "none" and len(calls) >= 2
    if finish_reason == "length" and repeated and not found:
        return found
    if finish_reason != expected_reason:
        found.append(f"finish_reason {finish_reason!r}, expected {expected_reason!r}")
    return found
