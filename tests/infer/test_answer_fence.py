"""Turns of calls framed unlike answers, on real templates of llama.cpp's corpus: an answer's
own fences (:class:`~pawlette.declare.AnswerFence`), a turn of calls that ends with its own
marker (:class:`~pawlette.declare.CallTurnEnd`), an empty last turn written as a bare opener."""

from __future__ import annotations

import functools
from typing import Any

from pawlette.declare import (
    AnswerFence,
    CallTurnEnd,
    JsonCallList,
    Marker,
    Reasoning,
    Results,
    XmlCalls,
)
from pawlette.declare.pieces import text_of
from pawlette.formats.solar.concepts import IdFirstCalls
from pawlette.infer import Inference, infer_template

from ..support.template_corpus import corpus_template


@functools.cache
def _infer(name: str) -> Inference:
    template = corpus_template(name)
    return infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token, switches=False
    )


def _verified(name: str) -> Inference:
    inference = _infer(name)
    assert inference.accepted, inference.describe()
    assert inference.verification is not None and inference.verification.passed
    return inference


def _concept(inference: Inference, kind: type[Any]) -> Any:
    assert inference.layout is not None
    (found,) = [item for item in inference.layout.concepts if isinstance(item, kind)]
    return found


def _statuses(inference: Inference) -> dict[str, tuple[str, str]]:
    return {item.name: (item.status, item.detail) for item in inference.capabilities}


def test_an_answer_lead_and_a_calls_marker_are_derived_from_solar_open() -> None:
    """Solar Open: ``<|begin|>assistant<|content|>`` + text + ``<|end|>``, but
    ``<|begin|>assistant<|tool_calls|>`` + calls + ``<|calls|>``.  The model writes
    ``<|content|>`` after the prompt, so it must read as the answer's fence, not text."""
    inference = _verified("upstage-Solar-Open-100B")
    assert _concept(inference, AnswerFence) == AnswerFence(open=(Marker("<|content|>"),))
    assert _concept(inference, CallTurnEnd) == CallTurnEnd(end=(Marker("<|calls|>"),))
    assert inference.layout is not None
    assistant = inference.layout.frames["assistant"]
    assert text_of(assistant.open) == "<|begin|>assistant"
    assert (Marker("<|calls|>"),) in assistant.also_end
    assert inference.format is not None
    parsed = inference.format.parse("<|content|>Hello.<|end|>")
    assert parsed.message == {"role": "assistant", "content": "Hello."}


def test_calls_led_by_their_ids_and_named_results_are_derived_from_solar_open() -> None:
    """Solar Open writes a call's id before its name (``<|tool_call:begin|>ID
    <|tool_call:name|>NAME<|tool_call:args|>``) and the tool's name after a result's id
    (``ID<|tool_response:name|>NAME<|tool_response:result|>``)."""
    inference = _verified("upstage-Solar-Open-100B")
    calls = _concept(inference, IdFirstCalls)
    assert calls.name_open == (Marker("<|tool_call:name|>"),)
    assert calls.section_open == (Marker("<|tool_calls|>"),) and calls.content == "dropped"
    results = _concept(inference, Results)
    assert results.grouped and results.name_close == (Marker("<|tool_response:result|>"),)
    assert results.id_close == (Marker("<|tool_response:name|>"),)
    statuses = _statuses(inference)
    assert all(status == "derived" for status, _ in statuses.values() if status != "dropped")
    assert inference.format is not None
    parsed = inference.format.parse(
        "<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>f<|tool_call:args|>"
        '{"city": "Paris"}<|tool_call:end|><|calls|>'
    )
    (called,) = parsed.message["tool_calls"]
    assert called["id"] == "a1b2c3d4e5" and called["function"]["name"] == "f"


def test_an_answer_fenced_on_both_sides_is_derived_from_command_a() -> None:
    """Command A: ``<|START_TEXT|>`` + text + ``<|END_TEXT|>``, but ``<|START_ACTION|>`` +
    calls + ``<|END_ACTION|>``; the reasoning block closes with ``<|END_THINKING|>`` alone."""
    inference = _verified("Cohere2MoE")
    assert _concept(inference, AnswerFence) == AnswerFence(
        open=(Marker("<|START_TEXT|>"),), close=(Marker("<|END_TEXT|>"),)
    )
    reasoning = _concept(inference, Reasoning)
    assert reasoning.close == (Marker("<|END_THINKING|>"),) and reasoning.absent == ()
    assert inference.format is not None
    parsed = inference.format.parse(
        "<|END_THINKING|><|START_TEXT|>Hi.<|END_TEXT|><|END_OF_TURN_TOKEN|>"
    )
    assert parsed.message["content"] == "Hi."


def test_calls_and_results_numbered_by_position_are_derived_from_command_a() -> None:
    """Command A writes each call's position among the conversation's calls where its id
    goes (``"tool_call_id": "0"``): ``JsonCallList(ids="positional")``, and its tools with
    the calls."""
    inference = _verified("Cohere2MoE")
    calls = _concept(inference, JsonCallList)
    assert calls.ids == "positional" and calls.content == "dropped"
    assert ("id", "tool_call_id") in calls.keys
    statuses = _statuses(inference)
    assert statuses["tool calls"][0] == "derived" and statuses["tools"][0] == "derived"
    # Its results, grouped, lead with the position of the call each answers.
    assert statuses["tool results"] == (
        "derived",
        "grouped in one turn, with the call's position among the calls",
    )
    results = _concept(inference, Results)
    assert results.grouped and results.ids == "positional" and results.json_text
    assert inference.format is not None
    # The generation prompt opens the reasoning block: the model closes it, then calls.
    parsed = inference.format.parse(
        '<|END_THINKING|><|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "f", '
        '"parameters": {"city": "Paris"}}\n]<|END_ACTION|><|END_OF_TURN_TOKEN|>'
    )
    assert parsed.finish_reason == "tool_calls"
    (called,) = parsed.message["tool_calls"]
    assert called["function"] == {"name": "f", "arguments": '{"city": "Paris"}'}


def test_calls_are_derived_where_an_empty_last_turn_is_a_bare_opener() -> None:
    """Seed-OSS writes an empty last assistant turn as its opener alone (no newline, no end):
    the turn of calls is framed as answers are, and its calls are the whole body."""
    inference = _verified("ByteDance-Seed-OSS")
    statuses = _statuses(inference)
    for capability in ("tools", "tool calls", "tool results"):
        assert statuses[capability][0] == "derived", statuses[capability]
    calls = _concept(inference, XmlCalls)
    assert text_of(calls.open) == "<seed:tool_call>\n<function="
