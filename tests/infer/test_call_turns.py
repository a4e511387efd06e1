"""Calls inferred from real templates whose turn of calls is written otherwise than a turn of
text: text beside the calls dropped, a turn of calls ending with its own marker, calls in a
family's own syntax.  Each is
verified (renders identical, own turns parsed back), and a turn of calls the template writes
reads back as the calls."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pawlette.declare import CallTurnEnd
from pawlette.declare.pieces import text_of
from pawlette.formats.gemma4.concepts import CallsAwaitResults
from pawlette.infer import Inference, infer_template
from pawlette.infer.template import TemplateRunner

from ..support.template_corpus import corpus_template

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        },
    },
}

CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": json.dumps({"city": "Oslo", "days": 2})},
}


def _inferred(name: str) -> tuple[Inference, TemplateRunner]:
    template = corpus_template(name)
    tokens = {
        key: value
        for key, value in (("bos_token", template.bos_token), ("eos_token", template.eos_token))
        if value is not None
    }
    inference = infer_template(template.text, **tokens)  # type: ignore[arg-type]
    assert inference.accepted, inference.describe()
    verification = inference.verification
    assert verification is not None and verification.passed
    assert verification.parsed_back == verification.turns > 0
    return inference, TemplateRunner(template.text, tokens)


def _statuses(inference: Inference) -> dict[str, str]:
    return {item.name: item.status for item in inference.capabilities}


def _read_back(inference: Inference, runner: TemplateRunner, messages: list[dict[str, Any]]) -> str:
    """The template's render of ``messages``, which the inferred format renders too and
    reads back with the calls of its assistant turns."""
    assert inference.format is not None
    written = runner.render(messages, [WEATHER]).text
    assert written is not None
    assert inference.format.render(messages, tools=[WEATHER]).text == written
    parsed = inference.format.parse_conversation(written).messages
    calls = [
        (item["function"]["name"], json.loads(item["function"]["arguments"]))
        for message in parsed
        for item in message.get("tool_calls") or ()
    ]
    assert calls == [("get_weather", {"city": "Oslo", "days": 2})]
    return written


@pytest.mark.parametrize(
    "name",
    [
        "meta-llama-Llama-3.1-8B-Instruct",
        "meta-llama-Llama-3.2-3B-Instruct",
        "meta-llama-Llama-3.3-70B-Instruct",
    ],
)
def test_text_dropped_beside_json_calls_is_a_declared_loss(name: str) -> None:
    """Meta's Llama 3 templates write a turn of calls as the call alone, whatever text the
    message holds: the text is declared dropped (a recorded loss), not left underived."""
    inference, runner = _inferred(name)
    statuses = _statuses(inference)
    assert statuses["tool calls"] == "derived"
    assert statuses["text with tool calls"] == "dropped"
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [CALL]},
    ]
    written = _read_back(inference, runner, messages)
    assert "Checking." not in written
    assert inference.format is not None
    rendering = inference.format.render(messages, tools=[WEATHER])
    assert rendering.losses, "the dropped text is recorded as a loss"


def test_a_turn_of_calls_ending_with_its_own_marker_is_derived() -> None:
    """Functionary v3.1 ends a turn of calls with ``<|eom_id|>`` and every other assistant
    turn with ``<|eot_id|>``: :class:`~pawlette.declare.CallTurnEnd`, and the calls, text
    beside them and results derived."""
    inference, runner = _inferred("meetkai-functionary-medium-v3.1")
    statuses = _statuses(inference)
    for capability in ("tools", "tool calls", "text with tool calls", "tool results"):
        assert statuses[capability] == "derived", inference.describe()
    assert inference.layout is not None
    (ended,) = [item for item in inference.layout.concepts if isinstance(item, CallTurnEnd)]
    assert text_of(ended.end) == "<|eom_id|>"
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "3 C"},
        {"role": "assistant", "content": "3 C in Oslo."},
    ]
    written = _read_back(inference, runner, messages)
    assert 'Checking.<function=get_weather>{"city": "Oslo", "days": 2}</function><|eom_id|>' in (
        written
    )


def test_a_turn_of_calls_awaiting_its_results_is_derived() -> None:
    """Gemma 4 ends a turn of calls with ``<|tool_response>`` and nothing after it (every
    other turn: ``<turn|>`` and a newline), its calls in the family's value syntax:
    :class:`CallsAwaitResults` and the family's calls.  Text beside calls, written after
    them, and the reasoning the template writes beside calls only, are not derived."""
    inference, runner = _inferred("google-gemma-4-31B-it")
    statuses = _statuses(inference)
    assert statuses["tools"] == statuses["tool calls"] == "derived", inference.describe()
    assert statuses["text with tool calls"] == statuses["reasoning"] == "not derived"
    assert inference.layout is not None
    (ended,) = [item for item in inference.layout.concepts if isinstance(item, CallsAwaitResults)]
    assert (text_of(ended.end), text_of(ended.newline)) == ("<|tool_response>", "\n")
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "user", "content": "Never mind."},
    ]
    written = _read_back(inference, runner, messages)
    assert '{city:<|"|>Oslo<|"|>,days:2}<tool_call|><|tool_response><|turn>user' in written


def test_calls_in_a_family_syntax_with_results_as_turns_are_derived() -> None:
    """Gemma 4's interleaved-thinking template ends a turn of calls as any other and writes
    results as turns of their own: the family's calls, and the results, derived."""
    inference, runner = _inferred("google-gemma-4-31B-it-interleaved")
    statuses = _statuses(inference)
    for capability in ("tools", "tool calls", "parallel tool calls", "tool results"):
        assert statuses[capability] == "derived", inference.describe()
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "3 C"},
        {"role": "assistant", "content": "3 C in Oslo."},
    ]
    written = _read_back(inference, runner, messages)
    assert "<tool_call|><turn|>\n<|turn>tool\n3 C<turn|>" in written


def _detail(name: str, capability: str) -> str:
    template = corpus_template(name)
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    found = {item.name: item for item in inference.capabilities}
    return f"{found[capability].status}; {found[capability].detail}"


def test_a_last_turn_of_calls_framed_otherwise_says_what_is_missing() -> None:
    """Nemotron Nano 2 writes the turn of calls a conversation ends on as
    ``</TOOLCALL><SPECIAL_12>\\n\\n`` and an earlier one as other turns,
    ``</TOOLCALL>\\n<SPECIAL_12>\\n``: not derived, saying both and the concept it needs."""
    detail = _detail("NVIDIA-Nemotron-Nano-v2", "tool calls")
    assert detail.startswith("not derived; the turn that holds calls is framed otherwise when")
    assert "</TOOLCALL><SPECIAL_12>\\n\\n'" in detail
    assert "before another turn '\\n<SPECIAL_11>Assistant\\n<TOOLCALL>" in detail
    assert "</TOOLCALL>\\n<SPECIAL_12>\\n'" in detail
    assert detail.endswith("(needs concept: a last turn of calls written otherwise)")


def test_text_after_calls_in_a_turn_of_its_own_says_what_is_missing() -> None:
    """DeepSeek R1's Qwen distill writes a message's text after its calls, in an assistant
    turn of its own: not derived, saying so."""
    detail = _detail("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "tool calls")
    assert detail == (
        "not derived; the template writes the text after the calls, in an assistant turn of "
        "its own (opened after the calls' turn ends: '<｜end▁of▁sentence｜><｜Assistant｜>'), "
        "where a model writes it before them (needs concept: text after calls as a turn of "
        "its own)"
    )
