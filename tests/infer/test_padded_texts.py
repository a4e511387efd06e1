"""Whitespace at the ends of the texts verification generates beside calls and in results:
padded there so that a template trimming them (Qwen3-Coder's text beside calls, Qwen3.5's and
Gemma 4's results) is told apart from one writing them as given; inferred with the trim, or
recorded as a difference, and a declaration that forgets the trim fails verification."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pawlette.declare import Results, declare, layout_of
from pawlette.detect import verify as verify_declaration
from pawlette.formats import get_format
from pawlette.formats.chatml.xml import CallTextTrimmed
from pawlette.infer import Inference, infer_template
from pawlette.infer.conversations import Features, generate
from pawlette.infer.core import marker_texts
from pawlette.infer.template import TemplateRunner
from pawlette.infer.verify import verify

from ..support.template_corpus import corpus_template

# Qwen3-Coder's template writes the text beside calls trimmed, and every other text as given.
CODER_TRIM = "{{- '\\n' + message.content | trim + '\\n' }}"


def _call_texts(samples: list[Any]) -> list[str]:
    return [
        message["content"]
        for sample in samples
        for message in sample.messages
        if message.get("tool_calls") and message.get("content")
    ]


def _results(samples: list[Any]) -> list[str]:
    return [
        message["content"]
        for sample in samples
        for message in sample.messages
        if message["role"] == "tool"
    ]


def test_texts_beside_calls_and_results_are_padded_the_same_for_a_seed() -> None:
    samples = generate(24, seed=5)
    texts = _call_texts(samples)
    padded = [text for text in texts if text != text.strip()]
    # Every twelfth conversation from the third has one; about half of the others.
    assert len(padded) >= 2, texts
    assert {text[0] for text in padded} | {text[-1] for text in padded} > {"\n"}, padded
    assert any("edge-whitespace-with-calls" in sample.kinds for sample in samples)
    results = _results(samples)
    assert any(text != text.strip() for text in results), results
    assert any("edge-whitespace-results" in sample.kinds for sample in samples)
    again = generate(24, seed=5)
    assert [sample.request for sample in again] == [sample.request for sample in samples]
    assert [sample.kinds for sample in again] == [sample.kinds for sample in samples]


def test_without_the_padding_the_conversations_are_as_with_it_less_the_whitespace() -> None:
    padded = generate(24, seed=5)
    plain = generate(24, seed=5, features=Features(edge_whitespace_with_calls=False))
    assert not any(text != text.strip() for text in _call_texts(plain))
    assert not any("edge-whitespace-with-calls" in sample.kinds for sample in plain)
    changed = 0
    for with_it, without in zip(padded, plain, strict=True):
        assert len(with_it.messages) == len(without.messages)
        for one, other in zip(with_it.messages, without.messages, strict=True):
            if one.get("tool_calls") and one["content"] != other["content"]:
                # (A turn the padding gives a text of its own has none without it.)
                assert other["content"] in (None, one["content"].strip()), (one, other)
                changed += 1
                one = {**one, "content": other["content"]}
            assert one == other
    assert changed >= 2


def _coder(trim: str = CODER_TRIM) -> tuple[Inference, str]:
    template = corpus_template("Qwen3-Coder")
    assert CODER_TRIM in template.text
    text = template.text.replace(CODER_TRIM, trim)
    inference = infer_template(text, bos_token=template.bos_token, eos_token=template.eos_token)
    return inference, text


@pytest.mark.parametrize(
    ("trim", "side", "characters"),
    [
        (CODER_TRIM, "both", None),
        ("{{- '\\n' + message.content.strip('\\n') + '\\n' }}", "both", "\n"),
        ("{{- '\\n' + message.content.rstrip() + '\\n' }}", "end", None),
    ],
    ids=["trim", "newlines", "end"],
)
def test_text_trimmed_beside_calls_alone_is_inferred_with_its_trim(
    trim: str, side: str, characters: str | None
) -> None:
    inference, _ = _coder(trim)
    assert inference.accepted, inference.describe()
    assert inference.layout is not None
    trims = [item for item in inference.layout.concepts if isinstance(item, CallTextTrimmed)]
    assert [(item.side, item.characters) for item in trims] == [(side, characters)]
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["text with tool calls"] == "derived"
    assert "whitespace at the ends of text with tool calls" not in statuses


def test_text_beside_calls_trimmed_in_a_way_no_concept_declares_is_a_recorded_difference() -> None:
    inference, _ = _coder("{{- '\\n' + message.content.strip(' \\n') + '\\n' }}")
    assert inference.accepted, inference.describe()
    assert inference.layout is not None
    assert not any(isinstance(item, CallTextTrimmed) for item in inference.layout.concepts)
    found = {item.name: item for item in inference.capabilities}
    difference = found["whitespace at the ends of text with tool calls"]
    assert difference.status == "differs"
    assert "the template changes it; written as given" in difference.detail
    assert found["text with tool calls"].status == "derived"


def _without_call_trim() -> Any:
    layout = layout_of(get_format("chatml:qwen3-coder"))
    assert layout is not None
    concepts = tuple(item for item in layout.concepts if not isinstance(item, CallTextTrimmed))
    assert len(concepts) == len(layout.concepts) - 1
    return declare(dataclasses.replace(layout, concepts=concepts))


def test_a_declaration_that_forgets_the_trim_beside_calls_fails_verification() -> None:
    template = corpus_template("Qwen3-Coder")
    tokens = {"bos_token": template.bos_token, "eos_token": template.eos_token}
    declared = verify_declaration("chatml:qwen3-coder", template.text, **tokens)
    assert declared.passed, declared.describe()
    forgetful = verify_declaration(_without_call_trim(), template.text, **tokens)
    assert not forgetful.passed
    assert forgetful.unexplained, forgetful.describe()
    difference = forgetful.unexplained[0]
    assert any(
        message.get("tool_calls") and message["content"] != message["content"].strip()
        for message in difference.request["messages"]
    ), forgetful.describe()


def test_inference_verification_names_the_padded_text_a_forgetful_declaration_misses() -> None:
    template = corpus_template("Qwen3-Coder")
    fmt = _without_call_trim()
    runner = TemplateRunner(
        template.text, {"bos_token": template.bos_token, "eos_token": template.eos_token}
    )
    layout = layout_of(fmt)
    assert layout is not None
    samples = generate(24, avoid=marker_texts(layout))
    verification = verify(fmt, runner, samples)
    assert not verification.passed
    failure = verification.failure
    assert failure is not None and failure.kind == "render"
    assert "edge-whitespace-with-calls" in failure.kinds
    described = failure.describe()
    # Where the texts part: the template's trimmed text against the declaration's padding.
    assert "the template writes" in described and "where the declaration writes" in described
    assert failure.template.strip() == "" and failure.declaration.strip() == "", described
    assert failure.template != failure.declaration


@pytest.mark.parametrize("name", ["Qwen3.5-4B", "google-gemma-4-31B-it-interleaved"])
def test_results_a_template_trims_are_inferred_trimmed(name: str) -> None:
    template = corpus_template(name)
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    assert inference.accepted, inference.describe()
    assert inference.layout is not None and inference.format is not None
    results = inference.layout.concept(Results)
    assert results is not None and results.trim
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["tool results"] == "derived"
    assert "whitespace at the ends of tool results" not in statuses
    checked = verify_declaration(
        inference.format,
        template.text,
        bos_token=template.bos_token,
        eos_token=template.eos_token,
    )
    assert not checked.unexplained, checked.describe()
