"""Inference on real templates of llama.cpp's corpus, the declared families switched off: a
sample of shapes here (``python -m bench.infer`` runs all 70).  An accepted declaration is
checked again with the harness's own generator and transformers' renderer."""

from __future__ import annotations

import pytest

from pawlette.detect import detect_template
from pawlette.infer import Inference, infer_template

from ..support.conversations import generate_conversations
from ..support.template_compare import compare_renders, corpus_reference
from ..support.template_corpus import corpus_template

ACCEPTED = {
    # template: capabilities that must be derived
    "Qwen-Qwen2.5-7B-Instruct": ("system messages", "tools", "tool calls", "tool results"),
    "Qwen-Qwen3-0.6B": ("reasoning", "tools", "tool calls", "tool results"),
    "deepseek-ai-DeepSeek-V3.1": ("tool calls", "tool results"),
    "GLM-4.7-Flash": ("reasoning", "tools", "tool calls", "tool results"),
    "Mistral-Small-3.2-24B-Instruct-2506": ("tools", "tool calls", "date"),
    "meta-llama-Llama-3.1-8B-Instruct": ("system messages",),
    "google-gemma-2-2b-it": (),
    # Ends a conversation rendered without a generation prompt with eos_token.
    "microsoft-Phi-3.5-mini-instruct": ("system messages",),
}
REFUSED = {
    "openai-gpt-oss-120b": "needs concept",
}


def _infer(name: str) -> Inference:
    template = corpus_template(name)
    return infer_template(template.text, bos_token=template.bos_token, eos_token=template.eos_token)


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_inference_reproduces_the_template(name: str) -> None:
    inference = _infer(name)
    assert inference.accepted, inference.describe()
    verification = inference.verification
    assert verification is not None and verification.passed
    assert verification.identical == verification.compared >= 30
    assert verification.parsed_back == verification.turns > 0
    statuses = {item.name: item.status for item in inference.capabilities}
    for capability in ACCEPTED[name]:
        assert statuses.get(capability) == "derived", inference.describe()


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_the_harness_agrees_with_the_verification(name: str) -> None:
    """The harness's generator (every kind) and transformers' own renderer: every
    conversation the declaration renders is the template's, except text with whitespace at
    its ends where the inference says the two differ; what it refuses, it says it does not
    derive; it never renders what the template refuses."""
    inference = _infer(name)
    fmt = inference.format
    assert fmt is not None
    reference = corpus_reference(name, empty_content=inference.empty_content)
    conversations = generate_conversations(24, seed=3, avoid=fmt.special_markers)
    report = compare_renders(fmt, reference, conversations)
    differs = any(item.status == "differs" for item in inference.capabilities)
    for difference in report.differing:
        assert differs and "edge-whitespace" in difference.conversation.kinds, difference.describe()
    assert not report.pawlette_failed
    assert all(item.pawlette is not None for item in report.reference_refused), report.describe()
    not_derived = [item.name for item in inference.capabilities if item.status != "derived"]
    for refusal in report.pawlette_refused:
        assert refusal.pawlette is not None
        assert any(name in refusal.pawlette for name in not_derived) or "has no" in (
            refusal.pawlette
        ), refusal.describe()


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_template_inference_cannot_reproduce_is_refused_saying_why(name: str) -> None:
    inference = _infer(name)
    assert not inference.accepted and inference.format is None
    assert inference.refusal is not None and REFUSED[name] in inference.refusal


def test_declared_families_come_first() -> None:
    template = corpus_template("Qwen-Qwen2.5-7B-Instruct")
    detection = detect_template(template.text, eos_token=template.eos_token)
    assert detection.declared and detection.name == "chatml:qwen2.5"
    alone = detect_template(template.text, eos_token=template.eos_token, declared=False)
    assert alone.inferred and alone.inference is not None
