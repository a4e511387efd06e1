"""Calls and results in a declared family's own syntax, found by what the family's concept
writes (:mod:`pawlette.infer.family_calls`, :mod:`pawlette.infer.family_results`), on Kimi
K3's template: its tagged calls after the response channel's close, the turn then ending with
the message's close alone, and its results named and numbered per run; on Apertus' calls
keyed by name, Kimi K2's labelled calls, MiniMax-M3's tags named by their keys and Gemma 4's
results inside the model turn; and
Reka Edge's run-on calls, which no concept inference declares."""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

from pawlette.declare import CallTurnEnd, Marker
from pawlette.declare.pieces import text_of
from pawlette.formats.apertus.calls import NameKeyedCalls
from pawlette.formats.gemma4.concepts import GemmaResults
from pawlette.formats.kimi.concepts import LabelledCalls
from pawlette.formats.kimi.k3 import NamedResults, TaggedCalls
from pawlette.formats.minimax_m2.tags import TagCalls
from pawlette.infer import Inference, infer_template
from pawlette.infer.template import TemplateRunner

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


def _weather_tools() -> list[dict[str, Any]]:
    def tool(name: str, properties: dict[str, Any]) -> dict[str, Any]:
        parameters = {"type": "object", "properties": properties}
        function = {"name": name, "description": "Looks it up.", "parameters": parameters}
        return {"type": "function", "function": function}

    city = {"type": "string", "description": "The city."}
    return [tool("get_weather", {"city": city}), tool("get_time", {})]


def _two_calls() -> list[dict[str, Any]]:
    def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }

    return [call("a1", "get_weather", {"city": "Paris"}), call("a2", "get_time", {})]


@functools.cache
def _inferred(name: str) -> Inference:
    template = corpus_template(name)
    return infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token, switches=False
    )


def _written_turn_of_two_calls(name: str) -> str:
    """The assistant turn of two calls as the corpus template writes it: its render after
    the render of the conversation before it with the generation prompt, or else (Gemma 4's
    prompt opens a reasoning block an earlier turn does not write) after the last line both
    renders start with."""
    template = corpus_template(name)
    tokens = {"bos_token": template.bos_token or "", "eos_token": template.eos_token or ""}
    runner = TemplateRunner(template.text, tokens)
    tools = _weather_tools()
    user = [{"role": "user", "content": "Weather and time?"}]
    turn = {"role": "assistant", "content": "", "tool_calls": _two_calls()}
    prompt = runner.render(user, tools, add_generation_prompt=True).text
    whole = runner.render([*user, turn], tools).text
    assert prompt is not None and whole is not None
    if whole.startswith(prompt):
        return whole[len(prompt) :]
    common = 0
    while prompt[common] == whole[common]:
        common += 1
    line = whole.rfind("\n", 0, common) + 1
    assert len(prompt) - line < 32, prompt[line:]
    return whole[line:]


def _parses_back(inference: Inference, completion: str) -> None:
    assert inference.format is not None
    parsed = inference.format.parse(completion, tools=_weather_tools())
    assert [call["function"] for call in parsed.message["tool_calls"]] == [
        {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"name": "get_time", "arguments": "{}"},
    ]
    assert not parsed.message.get("content")


def test_apertus_calls_are_its_family_name_keyed_calls() -> None:
    """Apertus writes ``[{"NAME": ARGUMENTS}, ...]``: declared as the family's name-keyed
    list (a generic named call would end its arguments at their own ``}``)."""
    inference = _inferred("Apertus-8B-Instruct")
    assert inference.verification is not None and inference.verification.passed
    assert inference.layout is not None
    (calls,) = [item for item in inference.layout.concepts if isinstance(item, NameKeyedCalls)]
    assert calls.open is not None and text_of(calls.open) == "<|tools_prefix|>"
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["tools"] == statuses["tool calls"] == "derived"
    assert statuses["parallel tool calls"] == "derived"
    completion = _written_turn_of_two_calls("Apertus-8B-Instruct")
    assert '[{"get_weather": {"city": "Paris"}}, {"get_time": {}}]' in completion
    _parses_back(inference, completion)


def test_kimi_k2_calls_are_labelled_and_numbered_per_turn() -> None:
    """Kimi K2 writes each call's id as ``functions.NAME:N``, N counting the turn's calls:
    declared as the family's labelled calls, so the second call is ``:1``, not ``:0``."""
    inference = _inferred("moonshotai-Kimi-K2")
    assert inference.verification is not None and inference.verification.passed
    assert inference.layout is not None
    (calls,) = [item for item in inference.layout.concepts if isinstance(item, LabelledCalls)]
    assert calls.label.count == "turn"
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["tool calls"] == statuses["parallel tool calls"] == "derived"
    completion = _written_turn_of_two_calls("moonshotai-Kimi-K2")
    assert "functions.get_time:1<|tool_call_argument_begin|>" in completion
    _parses_back(inference, completion)


def test_minimax_m3_calls_are_tags_named_by_their_keys() -> None:
    """MiniMax-M3 writes each argument as a tag named by its key (``<city>Paris</city>``,
    the key written twice): declared as the family's tag calls, and the results after them
    derived too."""
    inference = _inferred("MiniMax-M3")
    assert inference.verification is not None and inference.verification.passed
    assert inference.layout is not None
    (calls,) = [item for item in inference.layout.concepts if isinstance(item, TagCalls)]
    assert text_of(calls.section_open) == "]<]minimax[>[<tool_call>\n"
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["tools"] == statuses["tool calls"] == statuses["tool results"] == "derived"
    assert statuses["parallel tool calls"] == "derived"
    completion = _written_turn_of_two_calls("MiniMax-M3")
    assert "]<]minimax[>[<city>Paris]<]minimax[>[</city>" in completion
    _parses_back(inference, completion)


def test_reka_edge_parallel_calls_say_the_concept_they_need() -> None:
    """Reka Edge writes ``\\n`` between text and calls and nothing between calls, which
    JsonCalls (one separator for both) cannot write: several calls in a turn are not
    derived, naming the concept, and the rest verifies."""
    inference = _inferred("Reka-Edge")
    assert inference.verification is not None and inference.verification.passed
    (parallel,) = [item for item in inference.capabilities if item.name == "parallel tool calls"]
    assert parallel.status == "not derived"
    assert "calls from each other by nothing" in parallel.detail
    assert "needs concept: JSON calls with a separator after text of their own" in parallel.detail
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["tool calls"] == statuses["text with tool calls"] == "derived"


def test_gemma_4_results_are_written_inside_the_model_turn() -> None:
    """Gemma 4's turn of calls ends with ``<|tool_response>``, each result is
    ``response:NAME{value:...}<tool_response|>`` and the answer goes on in the same model
    turn: declared as the family's results inside the model turn, rendering a conversation
    with results and an answer as the template does."""
    name = "google-gemma-4-31B-it"
    inference = _inferred(name)
    assert inference.verification is not None and inference.verification.passed
    assert inference.layout is not None
    assert [item for item in inference.layout.concepts if isinstance(item, GemmaResults)]
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["tool results"] == statuses["tool calls"] == "derived"
    template = corpus_template(name)
    tokens = {"bos_token": template.bos_token or "", "eos_token": template.eos_token or ""}
    runner = TemplateRunner(template.text, tokens)
    tools = _weather_tools()
    called = _two_calls()
    messages = [
        {"role": "user", "content": "Weather and time?"},
        {"role": "assistant", "content": "", "tool_calls": called},
        {"role": "tool", "tool_call_id": "a1", "content": "Sunny."},
        {"role": "tool", "tool_call_id": "a2", "content": "Noon."},
        {"role": "assistant", "content": "Sunny at noon."},
    ]
    for prompt, conversation in ((False, messages), (True, messages[:-1])):
        expected = runner.render(conversation, tools, add_generation_prompt=prompt).text
        assert expected is not None
        assert inference.format is not None
        sent = copy.deepcopy(conversation)
        for call in sent[1]["tool_calls"]:
            call["function"]["arguments"] = json.dumps(call["function"]["arguments"])
        written = inference.format.render(sent, tools=tools, add_generation_prompt=prompt)
        assert written.text == expected
        if not prompt:  # (the answer goes on in the model turn, opened by nothing)
            assert 'response:get_time{value:<|"|>Noon.<|"|>}<tool_response|>Sunny at' in expected
    _parses_back(inference, _written_turn_of_two_calls(name))
