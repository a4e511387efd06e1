"""Whitespace at the ends of reasoning texts, padded as the texts beside calls and the results
are: a template that trims reasoning (Qwen3's ``strip('\\n')``) is told apart from one that
writes it as given, a declaration that forgets the trim fails, and a template that trims it
beside calls otherwise than in an answer is inferred with the difference recorded."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from pawlette.declare import Reasoning, declare, layout_of
from pawlette.formats import get_format
from pawlette.infer import infer_template
from pawlette.infer.conversations import Features, generate
from pawlette.infer.core import marker_texts
from pawlette.infer.template import TemplateRunner

from ..support.template_corpus import corpus_template

QWEN3 = "Qwen-Qwen3-0.6B"
QWEN3_TRIM = "reasoning_content.strip('\\n')"


def _reasonings(samples: list[Any]) -> list[str]:
    return [
        message["reasoning_content"]
        for sample in samples
        for message in sample.messages
        if message.get("reasoning_content")
    ]


def test_reasoning_is_padded_the_same_for_a_seed() -> None:
    samples = generate(24, seed=5)
    padded = [text for text in _reasonings(samples) if text != text.strip()]
    assert len(padded) >= 2, _reasonings(samples)
    assert any("edge-whitespace-reasoning" in sample.kinds for sample in samples)
    again = generate(24, seed=5)
    assert [sample.request for sample in again] == [sample.request for sample in samples]


def test_without_the_padding_the_conversations_are_as_with_it_less_the_whitespace() -> None:
    padded = generate(24, seed=5)
    plain = generate(24, seed=5, features=Features(edge_whitespace_reasoning=False))
    assert not any("edge-whitespace-reasoning" in sample.kinds for sample in plain)
    changed = 0
    for with_it, without in zip(padded, plain, strict=True):
        assert len(with_it.messages) == len(without.messages)
        for one, other in zip(with_it.messages, without.messages, strict=True):
            if one.get("reasoning_content") != other.get("reasoning_content"):
                assert one["reasoning_content"].strip() == other["reasoning_content"].strip()
                changed += 1
                one = {**one, "reasoning_content": other["reasoning_content"]}
            assert one == other
    assert changed >= 2


def test_a_declaration_that_forgets_the_reasoning_trim_differs_on_padded_reasoning() -> None:
    template = corpus_template(QWEN3)
    layout = layout_of(get_format("chatml"))
    assert layout is not None
    concepts = tuple(
        dataclasses.replace(item, trim="") if isinstance(item, Reasoning) else item
        for item in layout.concepts
    )
    forgetful = declare(dataclasses.replace(layout, concepts=concepts))
    runner = TemplateRunner(template.text, {"eos_token": template.eos_token})
    differing = 0
    for sample in generate(24, avoid=marker_texts(layout)):
        if "edge-whitespace-reasoning" not in sample.kinds:
            continue
        stripped = copy.deepcopy(sample.request)
        for message in stripped["messages"]:
            if message.get("reasoning_content"):
                message["reasoning_content"] = message["reasoning_content"].strip()
        for prompt in sample.prompts:
            written = forgetful.render(sample.request, add_generation_prompt=prompt).text
            expected = runner.render(sample.messages, sample.tools, add_generation_prompt=prompt)
            again = forgetful.render(stripped, add_generation_prompt=prompt).text
            reference = runner.render(
                stripped["messages"], stripped.get("tools"), add_generation_prompt=prompt
            )
            if written != expected.text and again == reference.text:
                differing += 1
    assert differing >= 1


def test_reasoning_trimmed_beside_calls_otherwise_is_a_recorded_difference() -> None:
    template = corpus_template(QWEN3)
    assert QWEN3_TRIM in template.text
    text = template.text.replace(
        QWEN3_TRIM, f"(reasoning_content | trim if message.tool_calls else {QWEN3_TRIM})"
    )
    inference = infer_template(text, eos_token=template.eos_token)
    assert inference.accepted, inference.describe()
    found = {item.name: item for item in inference.capabilities}
    assert found["reasoning"].status == "derived"
    difference = found["whitespace at the ends of reasoning"]
    assert difference.status == "differs"
    assert difference.detail.startswith("beside calls the template writes it '<think>\\n")
