"""Calls and results inferred from fine-tuners' variants of real templates: a marker spelled
otherwise, so that no declared family's text matches, and each derived capability verified
(renders identical, own turns parsed back)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pawlette.declare import (
    GapAfterResults,
    PythonCalls,
    Reasoning,
    Results,
    ResultsAsUser,
    UnwrittenResults,
    XmlCalls,
)
from pawlette.declare.pieces import text_of
from pawlette.formats.apriel.calls import IdsBeforeLast
from pawlette.infer import Inference, infer_template
from pawlette.infer.template import TemplateRunner

from ..support.template_corpus import corpus_template

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        },
    },
}


def _variant(name: str, old: str, new: str) -> tuple[str, dict[str, str]]:
    """The corpus template ``name`` with ``old`` spelled ``new`` everywhere, and its tokens."""
    template = corpus_template(name)
    assert old in template.text
    tokens = {
        key: value
        for key, value in (("bos_token", template.bos_token), ("eos_token", template.eos_token))
        if value is not None
    }
    return template.text.replace(old, new), tokens


def _inferred(text: str, tokens: dict[str, str]) -> Inference:
    inference = infer_template(text, **tokens)  # type: ignore[arg-type]
    assert inference.accepted, inference.describe()
    return inference


def _statuses(inference: Inference) -> dict[str, str]:
    return {item.name: item.status for item in inference.capabilities}


def _concept(inference: Inference, kind: type[Any]) -> Any:
    assert inference.layout is not None
    (found,) = [item for item in inference.layout.concepts if isinstance(item, kind)]
    return found


def _call(identifier: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": identifier,
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps(arguments)},
    }


def _renders_alike(
    inference: Inference,
    text: str,
    tokens: dict[str, str],
    messages: list[dict[str, Any]],
    prompt: bool = False,
) -> str:
    """The template's render of ``messages`` (with the weather tool; ``prompt``: and the
    generation prompt), which the inferred format renders too."""
    assert inference.format is not None
    runner = TemplateRunner(text, tokens)
    expected = runner.render(messages, [WEATHER], add_generation_prompt=prompt).text
    assert expected is not None
    rendering = inference.format.render(messages, tools=[WEATHER], add_generation_prompt=prompt)
    assert rendering.text == expected
    return expected


@pytest.mark.parametrize("name", ["deepseek-ai-DeepSeek-V3.2", "deepseek-ai-DeepSeek-V4"])
def test_a_key_close_that_says_the_value_kind_is_derived(name: str) -> None:
    """DeepSeek's DSML tags close a parameter's key with ``string="true">`` before a string
    and ``string="false">`` before any other value: derived as ``XmlCalls.key_close`` and
    ``key_close_other``, whatever the tags' prefix is spelled."""
    text, tokens = _variant(name, "｜DSML｜", "｜TAGS｜")
    inference = _inferred(text, tokens)
    assert _statuses(inference)["tool calls"] == "derived"
    calls = _concept(inference, XmlCalls)
    assert text_of(calls.key_close).endswith('" string="true">')
    assert text_of(calls.key_close_other).endswith('" string="false">')
    messages = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("c1", {"days": 2, "city": "Oslo"})],
        },
    ]
    written = _renders_alike(inference, text, tokens, messages)
    assert 'name="days" string="false">2</｜TAGS｜parameter>' in written


def test_a_call_without_arguments_writes_what_the_template_writes() -> None:
    """DeepSeek V4 writes a blank line in a call without arguments: ``XmlCalls.no_arguments``."""
    text, tokens = _variant("deepseek-ai-DeepSeek-V4", "｜DSML｜", "｜TAGS｜")
    inference = _inferred(text, tokens)
    assert text_of(_concept(inference, XmlCalls).no_arguments) == "\n"
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", {})]},
    ]
    _renders_alike(inference, text, tokens, messages)


@pytest.mark.parametrize("name", ["GLM-4.6", "poolside-Laguna-XS-2.1"])
def test_text_beside_tag_calls_after_the_turn_lead_is_derived(name: str) -> None:
    """GLM-4.6 and Laguna write a newline before an assistant's text and before each call
    (none in a turn with neither): text beside calls is derived, whatever the parameter tags
    are spelled."""
    text, tokens = _variant(name, "arg_key", "param_name")
    inference = _inferred(text, tokens)
    statuses = _statuses(inference)
    assert statuses["tool calls"] == statuses["text with tool calls"] == "derived"
    assert statuses["tool results"] == "derived"
    messages = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [_call("c1", {"city": "Oslo"})],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "3 C"},
        {"role": "assistant", "content": "3 C."},
    ]
    written = _renders_alike(inference, text, tokens, messages)
    assert "Checking.\n<tool_call>get_weather\n<param_name>city</param_name>" in written


def test_grouped_results_with_a_gap_between_them_are_derived() -> None:
    """DeepSeek V4 joins two results of a group with a blank line it writes after no other:
    ``Results.item_gap`` between the results of a group only."""
    text, tokens = _variant("deepseek-ai-DeepSeek-V4", "tool_result", "tool_output")
    inference = _inferred(text, tokens)
    assert _statuses(inference)["tool results"] == "derived"
    results = _concept(inference, Results)
    assert (results.grouped, text_of(results.item_gap), results.gap_ends_group) == (
        True,
        "\n\n",
        False,
    )
    messages = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("c1", {"city": "Oslo"}), _call("c2", {"city": "Rome"})],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "3 C"},
        {"role": "tool", "tool_call_id": "c2", "content": "18 C"},
    ]
    written = _renders_alike(inference, text, tokens, messages)
    assert "<tool_output>3 C</tool_output>\n\n<tool_output>18 C</tool_output>" in written


def test_a_result_with_the_call_id_after_its_text_is_derived() -> None:
    """Mistral Nemo writes ``{"content": TEXT, "call_id": "ID"}``: ``Results.id_after``, the
    id read back from after the text."""
    text, tokens = _variant("mistralai-Mistral-Nemo-Instruct-2407", "TOOL_RESULTS", "OUTPUTS")
    inference = _inferred(text, tokens)
    assert _statuses(inference)["tool results"] == "derived"
    assert text_of(_concept(inference, Results).id_after) == ', "call_id": "'
    messages = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("abc123xyz", {"city": "Oslo"})],
        },
        {"role": "tool", "tool_call_id": "abc123xyz", "content": "3 C"},
    ]
    written = _renders_alike(inference, text, tokens, messages)
    assert '[OUTPUTS]{"content": 3 C, "call_id": "abc123xyz"}[/OUTPUTS]' in written
    assert inference.format is not None
    parsed = inference.format.parse_conversation(written).messages
    assert [message.get("tool_call_id") for message in parsed if message["role"] == "tool"] == [
        "abc123xyz"
    ]


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        ("microsoft-Phi-3.5-mini-instruct", "<|assistant|>", "<|model|>"),
        ("llama-cpp-rwkv-world", "Assistant:", "Bot:"),
    ],
)
def test_results_the_template_drops_are_a_recorded_loss(name: str, old: str, new: str) -> None:
    """Phi-3.5 and RWKV World write no tool messages: :class:`UnwrittenResults`, each result a
    recorded loss."""
    text, tokens = _variant(name, old, new)
    inference = _inferred(text, tokens)
    assert _statuses(inference)["tool results"] == "dropped"
    _concept(inference, UnwrittenResults)
    assert inference.format is not None
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Checking."},
        {"role": "tool", "tool_call_id": "c1", "content": "3 C"},
    ]
    rendering = inference.format.render(messages, add_generation_prompt=True)
    expected = TemplateRunner(text, tokens).render(messages, None, add_generation_prompt=True)
    assert rendering.text == expected.text
    assert "3 C" not in rendering.text and rendering.losses


def test_an_empty_block_on_every_turn_after_the_last_user_message_is_derived() -> None:
    """Qwen3.5 writes an empty reasoning block on a turn of calls that results follow, not
    only on the last turn: ``Reasoning.empty_after_last_query``, which only results show."""
    text, tokens = _variant("Qwen3.5-4B", "tool_response", "tool_output")
    inference = _inferred(text, tokens)
    assert _statuses(inference)["tool results"] == "derived"
    reasoning = _concept(inference, Reasoning)
    assert (reasoning.empty_after_last_query, reasoning.empty_on_last) == (True, False)
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", {"city": "Oslo"})]},
        {"role": "tool", "tool_call_id": "c1", "content": "3 C"},
    ]
    written = _renders_alike(inference, text, tokens, messages, prompt=True)
    assert written.count("<think>\n\n</think>") == 1


def test_results_written_as_user_messages_are_a_recorded_loss() -> None:
    """SmolLM3 writes a tool result as it writes a user message: :class:`ResultsAsUser`, the
    role a recorded loss, read back as a user message."""
    text, tokens = _variant(
        "HuggingFaceTB-SmolLM3-3B", "named SmolLM, trained by Hugging Face", "named Tiny"
    )
    inference = _inferred(text, tokens)
    assert _statuses(inference)["tool results"] == "dropped"
    _concept(inference, ResultsAsUser)
    assert inference.format is not None
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Checking."},
        {"role": "tool", "tool_call_id": "c1", "content": "3 C"},
    ]
    rendering = inference.format.render(messages, add_generation_prompt=True)
    expected = TemplateRunner(text, tokens).render(messages, None, add_generation_prompt=True)
    assert rendering.text == expected.text
    assert "named Tiny" in rendering.text
    assert any("written as a user turn" in loss for loss in map(str, rendering.losses))
    history = inference.format.render(messages).text
    parsed = inference.format.parse_conversation(history).messages
    assert [(message["role"], message["content"]) for message in parsed][-2:] == [
        ("assistant", "Checking."),
        ("user", "3 C"),
    ]


def test_calls_as_one_python_list_are_derived() -> None:
    """LFM2.5 writes a turn's calls as one Python list between its call markers (an empty
    list for an empty list of calls), a string raw between single quotes and an object as
    JSON: :class:`PythonCalls` with ``spelling="template"``, verified."""
    text, tokens = _variant("LFM2.5-8B-A1B", "<|tool_call_start|>", "<|calls|>")
    inference = _inferred(text, tokens)
    statuses = _statuses(inference)
    assert statuses["tool calls"] == statuses["parallel tool calls"] == "derived"
    calls = _concept(inference, PythonCalls)
    assert (text_of(calls.open), calls.between, calls.quote, calls.spelling) == (
        "<|calls|>",
        ", ",
        "repr",
        "template",
    )
    messages = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [_call("c1", {"city": "Oslo", "days": 2}), _call("c2", {})],
        },
    ]
    written = _renders_alike(inference, text, tokens, messages)
    assert "Checking.<|calls|>[get_weather(city='Oslo', days=2), get_weather()]" in written


def test_a_blank_line_between_results_and_the_answer_is_a_gap_after_results() -> None:
    """DeepSeek V3.2 opens the answer after results with a blank line alone: declared as
    :class:`GapAfterResults` (layout), not as an opener that reading would find in any text
    holding a blank line; system and user texts with blank lines read back whole."""
    text, tokens = _variant("deepseek-ai-DeepSeek-V3.2", "function_results", "tool_outputs")
    inference = _inferred(text, tokens)
    statuses = _statuses(inference)
    assert statuses["tool results"] == statuses["system messages"] == "derived"
    assert text_of(_concept(inference, GapAfterResults).gap) == "\n\n"
    messages = [
        {"role": "system", "content": "Be brief.\n\nBe kind."},
        {"role": "user", "content": "Weather?\n\nIn Oslo."},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", {"city": "Oslo"})]},
        {"role": "tool", "tool_call_id": "c1", "content": "3 C"},
        {"role": "assistant", "content": "Cold.\n\nWrap up."},
    ]
    written = _renders_alike(inference, text, tokens, messages)
    assert "</tool_outputs>\n\n</think>Cold." in written
    assert inference.format is not None
    parsed = inference.format.parse_conversation(written).messages
    assert [(message["role"], message.get("content")) for message in parsed] == [
        ("system", "Be brief.\n\nBe kind."),
        ("user", "Weather?\n\nIn Oslo."),
        ("assistant", None),
        ("tool", "3 C"),
        ("assistant", "Cold.\n\nWrap up."),
    ]


@pytest.mark.parametrize("name", ["unsloth-Apriel-1.5", "Apriel-1.6-15b-Thinker-fixed"])
def test_a_call_list_that_writes_ids_once_answered_is_derived(name: str) -> None:
    """Apriel's templates write a turn of calls without ids when it ends the conversation
    (what the model writes), and with each call's id after its arguments once a result
    follows: the list is declared so (Apriel's IdsBeforeLast), and the results are derived."""
    template = corpus_template(name)
    text = template.text
    tokens = {"bos_token": str(template.bos_token), "eos_token": str(template.eos_token)}
    inference = _inferred(text, tokens)
    statuses = _statuses(inference)
    assert statuses["tool calls"] == statuses["tool results"] == "derived", inference.describe()
    listed = _concept(inference, IdsBeforeLast)
    assert ("id", "id") in listed.keys
    calls = {"role": "assistant", "content": None, "tool_calls": [_call("c1", {"city": "Oslo"})]}
    asked = [{"role": "user", "content": "Weather?"}, calls]
    answered = [*asked, {"role": "tool", "tool_call_id": "c1", "content": "3 °C"}]
    last = _renders_alike(inference, text, tokens, asked)
    assert '"id"' not in last
    written = _renders_alike(inference, text, tokens, answered, prompt=True)
    assert '"arguments": {"city": "Oslo"}, "id": "c1"}' in written
    assert inference.format is not None
    read = inference.format.parse(
        '\n<tool_calls>[{"name": "get_weather", "arguments": {"city": "Oslo"}}]</tool_calls>'
        "\n<|end|>",
        tools=[WEATHER],
    ).message
    assert read["tool_calls"][0]["function"]["name"] == "get_weather"
