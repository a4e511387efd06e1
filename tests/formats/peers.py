"""The peers' cases of a family (``tests/formats/families/data/<family>.json``): what models
write, each with what a peer (vLLM, SGLang, llama.cpp) reads from it and what pawlette does
with it (``"pawlette"``: ``"read"`` as the peer reads it, or the name of the decision)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

import pawlette

from ..declared.model_output import check_every_way

DATA = Path(__file__).parent / "families" / "data"


def cases(family: str) -> list[dict[str, Any]]:
    return list(json.loads((DATA / f"{family}.json").read_text(encoding="utf-8")))


def case_id(case: dict[str, Any]) -> str:
    return f"{case['format']}:{case['output'][:32]}"


def peer_tools(case: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The tools the case's calls name (any arguments), as the peer's test declared them."""
    names = sorted({call["name"] for call in case["expected"]["tool_calls"]})
    return [
        {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
        for name in names
    ] or None


def calls_of(message: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (call["function"]["name"], json.loads(call["function"]["arguments"]))
        for call in message.get("tool_calls") or []
    ]


def read_as_the_peer(case: dict[str, Any]) -> pawlette.Completion:
    """Parse the case's output with its format; assert it reads as the peer reads it (text,
    reasoning, calls with their arguments, and a call's written id where the peer gives one).
    Returns the parse, for checks of the family's own (its warnings)."""
    parsed = pawlette.get_format(case["format"]).parse(case["output"], tools=peer_tools(case))
    message = parsed.message
    expected = case["expected"]
    assert (message.get("content") or None) == (expected["content"] or None)
    assert (message.get("reasoning_content") or None) == (expected["reasoning_content"] or None)
    assert calls_of(message) == [
        (call["name"], call["arguments"]) for call in expected["tool_calls"]
    ]
    for written, wanted in zip(
        message.get("tool_calls") or [], expected["tool_calls"], strict=True
    ):
        if "id" in wanted:  # the id a model writes is the call's id (the peers keep it)
            assert written["id"] == wanted["id"]
    return parsed


# ------------------------------------------------------------------ read every way

Reading = tuple[str | None, list[dict[str, Any]], list[str]]


def read_every_way(fmt: pawlette.Format, tokenizer: Tokenizer, text: str) -> Reading:
    """A model's text read whole, streamed and from token ids (which must agree): its
    content, its calls as ``{"name", "arguments"}`` and its warnings."""
    messages, _, warnings = check_every_way(fmt, tokenizer, text)
    (message,) = messages
    calls = [
        {"name": call.name, "arguments": json.loads(call.arguments)} for call in message.tool_calls
    ]
    return message.text or None, calls, warnings


def check_read_as_the_peer(case: dict[str, Any], reading: Reading) -> None:
    """A case pawlette reads as the peer does, with no warning."""
    expected = case["expected"]
    assert reading == (expected["content"], expected["tool_calls"], [])


def check_read_otherwise(case: dict[str, Any], reading: Reading) -> None:
    """A case pawlette decides to read otherwise: what it reads (``"pawlette_reads"``), never
    the peer's reading by accident, and nothing silently dropped (what is no call is kept as
    written)."""
    content, calls, warnings = reading
    reads = case["pawlette_reads"]
    assert (content, calls, bool(warnings)) == (
        reads["content"],
        reads["tool_calls"],
        reads["warns"],
    )
    assert (content, calls) != (case["expected"]["content"], case["expected"]["tool_calls"])
    if not calls:
        assert content == case["output"]
