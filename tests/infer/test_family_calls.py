"""Calls and results in a declared family's own syntax, found by what the family's concept
writes (:mod:`pawlette.infer.family_calls`, :mod:`pawlette.infer.family_results`), on Kimi
K3's template: its tagged calls after the response channel's close, the turn then ending with
the message's close alone, and its results named and numbered per run."""

from __future__ import annotations

import functools

from pawlette.declare import CallTurnEnd, Marker
from pawlette.declare.pieces import text_of
from pawlette.formats.kimi.k3 import NamedResults, TaggedCalls
from pawlette.infer import Inference, infer_template

from ..support.template_corpus import corpus_template


@functools.cache
def _k3() -> Inference:
    template = corpus_template("Kimi-K3")
    return infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token, switches=False
    )


def test_kimi_k3_calls_are_its_family_tagged_calls() -> None:
    inference = _k3()
    assert inference.accepted, inference.describe()
    assert inference.verification is not None and inference.verification.passed
    assert inference.layout is not None
    (calls,) = [item for item in inference.layout.concepts if isinstance(item, TaggedCalls)]
    assert text_of(calls.section_open) == "<|close|>response<|sep|><|open|>tools<|sep|>"
    assert text_of(calls.section_close) == "<|close|>tools<|sep|>"
    (ending,) = [item for item in inference.layout.concepts if isinstance(item, CallTurnEnd)]
    assert text_of(ending.end) == "<|close|>message<|sep|><|end_of_msg|>"
    assert Marker("<|end_of_msg|>") in ending.end
    statuses = {item.name: item.status for item in inference.capabilities}
    assert (
        statuses["tools"]
        == statuses["tool calls"]
        == statuses["parallel tool calls"]
        == ("derived")
    )
    assert inference.format is not None
    completion = (
        "<|close|>think<|sep|><|open|>response<|sep|>Checking.<|close|>response<|sep|>"
        '<|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|>'
        '<|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>'
        "<|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>"
    )
    parsed = inference.format.parse(completion)
    assert parsed.message["content"] == "Checking."
    (called,) = parsed.message["tool_calls"]
    assert called["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}


def test_kimi_k3_results_are_its_family_named_results() -> None:
    inference = _k3()
    assert inference.accepted, inference.describe()
    assert inference.layout is not None
    (results,) = [item for item in inference.layout.concepts if isinstance(item, NamedResults)]
    assert text_of(results.head_open) == '<|open|>message role="tool" tool="'
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["tool results"] == "derived"
    assert inference.format is not None
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    rendered = inference.format.render(
        [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "done"},
        ]
    ).text
    assert '<|open|>message role="tool" tool="f" index="1"<|sep|>done' in rendered
