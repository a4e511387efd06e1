"""The ChatML family's decisions (:mod:`pawlette.formats.chatml`) and the peers' cases for it
(``families/data/chatml.json``: outputs and readings carried over from llama.cpp's tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pawlette

from ..support.template_compare import corpus_reference

CASES = json.loads((Path(__file__).parent / "families" / "data" / "chatml.json").read_text())


def _reading(message: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if message.get("content"):
        result["content"] = message["content"]
    if message.get("reasoning_content"):
        result["reasoning_content"] = message["reasoning_content"]
    if message.get("tool_calls"):
        result["tool_calls"] = [
            {
                "name": call["function"]["name"],
                "arguments": json.loads(call["function"]["arguments"]),
            }
            for call in message["tool_calls"]
        ]
    return result


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case['format']}:{case['output'][:24]}")
def test_the_peers_cases(case: dict[str, Any]) -> None:
    completion = pawlette.get_format(case["format"]).parse(case["output"])
    found = _reading(completion.message)
    expected = dict(case["expected"])
    if case["decided"]:  # pawlette keeps the newline after the fence: the text as written
        expected["content"] = "\n" + expected["content"]
    assert found == expected


def test_names_are_a_documented_loss() -> None:
    messages = [{"role": "user", "content": "Hi", "name": "alice"}]
    for name in ("chatml", "chatml:qwen2.5", "chatml:qwq"):
        rendering = pawlette.get_format(name).render(messages, add_generation_prompt=True)
        assert any(loss.startswith("messages[0].name") for loss in rendering.losses), name


def test_qwen25_drops_reasoning_and_says_so() -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello", "reasoning_content": "greet"},
    ]
    rendering = pawlette.get_format("chatml:qwen2.5").render(messages)
    assert "greet" not in rendering.text
    assert any(loss.startswith("messages[1].reasoning_content") for loss in rendering.losses)


@pytest.mark.parametrize(
    ("name", "template", "thinking"),
    [
        ("chatml:qwq", "Qwen-QwQ-32B", True),
        ("chatml:qwq", "Qwen-QwQ-32B", False),
        ("chatml", "Qwen-Qwen3-0.6B", True),
        ("chatml", "Qwen-Qwen3-0.6B", False),
    ],
)
def test_the_thinking_option_is_the_templates_enable_thinking(
    name: str, template: str, thinking: bool
) -> None:
    fmt = pawlette.get_format(name).with_options(thinking=thinking)
    reference = corpus_reference(template, variables={"enable_thinking": thinking})
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    rendered = fmt.render(messages, add_generation_prompt=True).text
    assert rendered == reference.render(messages, add_generation_prompt=True).text


def test_qwq_reads_a_completion_inside_the_opened_block() -> None:
    completion = pawlette.get_format("chatml:qwq").parse("Let me see.\n</think>\n\n42")
    assert completion.message["reasoning_content"] == "Let me see."
    assert completion.message["content"] == "42"


def test_qwq_cuts_a_past_turns_text_as_its_template_does() -> None:
    """QwQ's template writes every assistant message but the conversation's last from after
    its last ``</think>``, without the newlines at its start (a recorded loss); the last
    message is written whole.  The render, the exported Jinja and the template agree."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    from ..declare.test_cross_artifacts import template_request
    from ..support.template_compare import corpus_reference

    fmt = pawlette.get_format("chatml:qwq")
    reference = corpus_reference("Qwen-QwQ-32B")
    call = {"id": "a", "type": "function", "function": {"name": "now", "arguments": "{}"}}
    tools = [{"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}}]
    for past, last in (
        ("\n\nstarts with newlines", "\nkept whole"),
        ("thought</think>\n\nanswer", "thought</think>kept"),
        ("a</think>b</think>\nc", "plain"),
    ):
        messages = [
            {"role": "user", "content": "Q1"},
            {"role": "assistant", "content": past},
            {"role": "user", "content": "Q2"},
            {"role": "assistant", "content": "</think>", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "a", "content": "12:00"},
            {"role": "assistant", "content": last},
        ]
        request = {"messages": messages, "tools": tools}
        expected = reference.render(messages, tools, add_generation_prompt=False).text
        rendering = fmt.render(request)
        assert rendering.text == expected
        assert any(loss.startswith("messages[1].content") for loss in rendering.losses)
        assert not any(loss.startswith("messages[5].content") for loss in rendering.losses)
        exported, _ = render_jinja_template(
            [template_request(fmt, request)], tools=tools, chat_template=export_jinja(fmt)
        )
        assert exported[0] == expected
