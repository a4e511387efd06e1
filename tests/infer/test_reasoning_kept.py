"""Reasoning kept on some turns only, inferred from real templates: on every turn when the
request has tools, after the first answer, on turns of calls alone; and a dropped block that
writes otherwise than none, said as such."""

from __future__ import annotations

from typing import Any

from pawlette.declare import Reasoning
from pawlette.formats.hy3.concepts import ToolsKeptReasoning
from pawlette.formats.kimi.concepts import ReasoningAfterFirstAnswer
from pawlette.infer import Inference, infer_template

from ..support.template_corpus import corpus_template


def _inferred(name: str, variables: dict[str, Any] | None = None) -> Inference:
    template = corpus_template(name)
    return infer_template(
        template.text,
        bos_token=template.bos_token,
        eos_token=template.eos_token,
        variables=variables,
        switches=False,
    )


def _statuses(inference: Inference) -> dict[str, str]:
    return {item.name: item.status for item in inference.capabilities}


def _reasoning(inference: Inference) -> Reasoning:
    assert inference.layout is not None
    (found,) = [item for item in inference.layout.concepts if isinstance(item, Reasoning)]
    return found


def test_reasoning_kept_on_every_turn_with_tools() -> None:
    """tencent-Hy3 keeps reasoning before the last user message when the request has tools
    (its ``preserved_thinking``): declared as Hunyuan 3's family declares it, the tools, calls
    and results verify (before, the tools failed verification on a kept block)."""
    inference = _inferred("tencent-Hy3")
    assert inference.accepted, inference.describe()
    assert type(_reasoning(inference)) is ToolsKeptReasoning
    statuses = _statuses(inference)
    assert statuses["tools"] == statuses["tool calls"] == statuses["tool results"] == "derived"


def test_reasoning_kept_after_the_first_answer() -> None:
    """Kimi-K2-Thinking drops the reasoning of every turn up to the first answer without calls,
    its last turn too, and keeps it after: declared as Kimi K2's family declares it (before,
    the template was not inferred at all)."""
    inference = _inferred("Kimi-K2-Thinking")
    assert inference.accepted, inference.describe()
    assert type(_reasoning(inference)) is ReasoningAfterFirstAnswer
    assert inference.format is not None
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "A1", "reasoning_content": "R1"},
        {"role": "user", "content": "And?"},
        {"role": "assistant", "content": "A2", "reasoning_content": "R2"},
    ]
    written = inference.format.render({"messages": messages}).text
    assert "<think></think>A1" in written and "<think>R2</think>A2" in written


def test_reasoning_kept_on_turns_of_calls_alone() -> None:
    """CohereForAI-c4ai-command-r7b writes reasoning (the plan) only on a turn of calls:
    ``keep="calls"``, and the calls, tools and results verify with it, thinking on or off
    (before, the calls failed verification on a plan the declaration dropped)."""
    for variables in (None, {"enable_thinking": True}):
        inference = _inferred("CohereForAI-c4ai-command-r7b-12-2024-tool_use", variables)
        assert inference.accepted, inference.describe()
        assert _reasoning(inference).keep == "calls"
        statuses = _statuses(inference)
        assert statuses["tool calls"] == statuses["tool results"] == "derived", statuses


def test_a_dropped_block_written_otherwise_than_none_is_said() -> None:
    """NVIDIA-Nemotron-3-Nano drops the reasoning of a turn before the last user message but
    leaves a newline after the emptied block, which a turn without reasoning does not write:
    not derived, saying so and naming the concept (before, a verification failure)."""
    inference = _inferred("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    (reasoning,) = [item for item in inference.capabilities if item.name == "reasoning"]
    assert reasoning.status == "not derived"
    assert reasoning.detail == (
        "a turn whose reasoning the template drops (before the last user message) writes "
        "'\\n' where the same turn without reasoning writes nothing, after "
        "…'\\n<|im_start|>assistant\\n<think></think>' (needs concept: dropped reasoning "
        "written otherwise than none)"
    )
