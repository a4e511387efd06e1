"""Which capability a failed verification is about: one kind of content alone, or two
together when the declaration gets both wrong in the same conversation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pawlette.formats.deepseek import FORMAT as DEEPSEEK
from pawlette.formats.llama3 import FORMAT as LLAMA3
from pawlette.infer.conversations import Sample
from pawlette.infer.culprits import find_culprit

TOOL = {"type": "function", "function": {"name": "zq_alpha", "parameters": {"type": "object"}}}
FAILED = Sample(
    {
        "messages": [
            {"role": "user", "content": "Answer briefly."},
            {"role": "assistant", "content": "Thanks.", "reasoning_content": "Za1q"},
            {"role": "user", "content": "And now?"},
        ],
        "tools": [TOOL],
    },
    frozenset({"tools", "reasoning", "multi-turn"}),
)


@dataclass(frozen=True)
class Verdict:
    passed: bool


def _reasoning(sample: Sample) -> bool:
    return any("reasoning_content" in message for message in sample.messages)


def verifier(wrong: Callable[[Sample], bool]) -> Callable[[Any, Any, list[Sample]], Verdict]:
    """A verification that fails on every conversation where ``wrong`` holds, and records
    nothing else (find_culprit passes the format and runner through untouched)."""

    def verify(fmt: Any, runner: Any, samples: list[Sample]) -> Verdict:
        assert fmt == "format" and runner == "runner"
        return Verdict(not any(wrong(sample) for sample in samples))

    return verify


def culprit(wrong: Callable[[Sample], bool], blocked: dict[str, str] | None = None) -> Any:
    return find_culprit("format", "runner", FAILED, blocked or {}, verifier(wrong))  # type: ignore[arg-type]


def test_one_kind_alone() -> None:
    assert culprit(_reasoning) == "reasoning"
    assert culprit(lambda sample: sample.tools is not None) == "tools"


def test_two_kinds_wrong_together_give_up_one_then_the_other() -> None:
    def both(sample: Sample) -> bool:
        return sample.tools is not None or _reasoning(sample)

    # Neither alone makes the conversation agree; together they do.  The first of the pair
    # (in the order of CULPRITS: tools before reasoning) is given up ...
    assert culprit(both) == "tools"
    # ... and the next verification, without tools, finds reasoning alone.
    assert culprit(_reasoning, {"tools": "given up"}) == "reasoning"


def test_a_conversation_no_kind_explains_has_no_culprit() -> None:
    assert culprit(lambda sample: True) is None
    assert culprit(lambda sample: len(sample.messages) > 1) is None


CALLED = Sample(
    {
        "messages": [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": "Zt1q",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "zq_alpha", "arguments": "{}"},
                    }
                ],
            },
        ],
        "tools": [TOOL],
    },
    frozenset({"tools", "call", "reasoning-with-calls"}),
)


def _reasoning_beside_calls(fmt: Any, runner: Any, samples: list[Sample]) -> Verdict:
    """A verification that fails where reasoning stands on a turn of calls."""
    return Verdict(
        not any(
            "reasoning_content" in message and message.get("tool_calls")
            for sample in samples
            for message in sample.messages
        )
    )


def test_reasoning_beside_calls_is_the_reasoning_where_no_block_is_written() -> None:
    """Reasoning a template writes beside calls, which a declaration writing no reasoning
    block drops (Gemma 4's), is given up rather than the calls; where the declaration writes
    a reasoning block (giving reasoning up would take it out of every turn), the calls are."""
    assert find_culprit(LLAMA3, "runner", CALLED, {}, _reasoning_beside_calls) == "reasoning"  # type: ignore[arg-type]
    assert find_culprit(DEEPSEEK, "runner", CALLED, {}, _reasoning_beside_calls) == "tool calls"  # type: ignore[arg-type]


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "zq_alpha", "arguments": "{}"}}


PARALLEL = Sample(
    {
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c2")]},
        ],
        "tools": [TOOL],
    },
    frozenset({"tools", "parallel-calls"}),
)


def test_calls_wrong_in_a_conversation_of_parallel_calls_are_the_calls() -> None:
    """A conversation whose only turn of calls holds two, where every call is written
    otherwise (Apertus' calls read as named calls): taking one call out does not make it
    agree, taking the calls out does, so the calls are given up rather than the tools."""

    def called(sample: Sample) -> bool:
        return any(message.get("tool_calls") for message in sample.messages)

    assert find_culprit("format", "runner", PARALLEL, {}, verifier(called)) == "tool calls"  # type: ignore[arg-type]
    assert (
        find_culprit("format", "runner", PARALLEL, {"tool calls": "given up"}, verifier(called))
        == "tools"
    )  # type: ignore[arg-type]
