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


def _with_days(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scenario's tools, as users write them (no ``additionalProperties``: the server's
    strict default closes their objects, else a random model writes endless property names
    nobody declared); ``get_weather`` also takes an integer, so numbers are sampled too."""
    tools = copy.deepcopy(tools)
    for tool in tools:
        if tool["function"]["name"] == "get_weather":
            tool["function"]["parameters"]["properties"]["days"] = {"type": "integer"}
    return tools


TOOLS = _with_days(SCENARIO_TOOLS)
NAMES = {tool["function"]["name"] for tool in TOOLS}
DECLARED = {
    tool["function"]["name"]: set(tool["function"]["parameters"].get("properties", {}))
    for tool in TOOLS
}
NAMED = "get_time"
CHOICES: dict[str, Any] = {
    "required": "required",
    "named": {"type": "function", "function": {"name": NAMED}},
    "none": "none",
    "auto": "auto",
}


CHAINING = {"deepseek", "deepseek_dsml", "cohere", "kimi:k3", "muse"}
"""Formats whose random model, when parallel calls are allowed, writes call after call until
the token budget on every seed: each call may be followed by another or by the end of the
list, and the list's close begins with text the random model does not favour (Command R7B's
a newline and ``]``, DeepSeek's ``<｜tool▁calls▁end｜>`` beside ``<｜tool▁call▁begin｜>``,
Kimi K3's ``<|close|>tools<|sep|>`` beside ``<|open|>call``, a call of some 30 tokens; Muse
Glimmer's end of turn beside ``<|eom|><|start|>assistant`` and another call of some 40).
Their forced cases ask with ``parallel_tool_calls`` false, where the grammar allows one call
and then only the list's close; a parallel list's parse is checked in their format tests."""

# Command R+: each call may be followed by ",\n    " and another, and the list's close
# ("\n]```\n", text) is none the random model favours.
CHAINING |= {"cohere:command-r-plus"}


def parallel_for(format_name: str, choice: str, parallel: bool | None) -> bool | None:
    """The ``parallel_tool_calls`` a case asks with: false for a forced choice of a format in
    :data:`CHAINING`, else ``parallel``."""
    if format_name in CHAINING and choice in ("required", "named"):
        return False
    return parallel


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
    # The markers the format's lexer reads (chatglm3's "[gMASK]sop" is one) and its other
    # special tokens (chatglm3's "[gMASK]"), but not one that is a plain word ("sop": text).
    # Under ``auto`` no grammar constrains the text (llama.cpp's lazy grammar starts at the
    # call trigger), so a random model's marker soup may come back as text there.
    fmt = get_format(format_name)
    spellings = set(fmt.grammar.markers) | {
        m for m in getattr(fmt, "special_markers", ()) if m and not m.isalnum()
    }
    # A random model may repeat parallel calls until the budget: the engine's length limit
    # then ends an answer of complete, valid calls, and pawlette rightly says "length".
    repeated = parallel is not False and choice != "none" and len(calls) >= 2
    markers = sorted(m for m in spellings if m in content)
    # The cut call after complete ones is itself a repeat (one complete call is enough).
    calling = parallel is not False and choice != "none" and bool(calls)
    cut_call = bool(markers) and finish_reason == "length" and calling
    if cut_call and _unfinished_call(fmt, content):
        markers = []  # the cut call's text, returned once as content (the contract says so)
    else:
        cut_call = False
    if markers and choice != "auto":
        found.append(f"marker text {markers} in content {content!r}")
    found += call_problems(choice, parallel, calls)
    if choice in ("required", "named") and not calls:
        found.append("no call")
    expected_reason = "tool_calls" if calls else "stop"
    if finish_reason == "length" and (repeated or cut_call) and not found:
        return found
    if finish_reason != expected_reason:
        found.append(f"finish_reason {finish_reason!r}, expected {expected_reason!r}")
    return found


def _unfinished_call(fmt: Any, content: str) -> bool:
    """Whether ``content`` is exactly the text of one call the length limit cut: read alone
    it is no call, and one warning covers all of it (a malformed call is content, with one
    warning, says docs/concepts/contracts.md), so no other marker text hides beside it."""
    completion = fmt.parse(content, finish_reason="length")
    warnings = completion.warnings
    return (
        not completion.message.get("tool_calls")
        and len(warnings) == 1
        and warnings[0].text == content
    )


def call_problems(choice: str, parallel: bool | None, calls: list[tuple[str, str]]) -> list[str]:
    """What is wrong with the complete calls of an answer under ``choice`` (those of an
    answer cut by the length limit too: the cut takes only the unfinished last one)."""
    found: list[str] = []
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
            elif choice != "auto" and name in DECLARED and set(value) - DECLARED[name]:
                # Strict schemas by default: a grammar-constrained call holds no key its tool
                # does not declare (under auto the call is the model's, checked by the parser).
                found.append(f"undeclared keys {sorted(set(value) - DECLARED[name])} in {text!r}")
    if choice == "none" and calls:
        found.append(f"calls under none: {calls}")
    if parallel is False and len(calls) > 1:
        found.append(f"{len(calls)} calls with parallel_tool_calls false")
    return found
