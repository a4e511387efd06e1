"""An assistant message with no text written otherwise than a turn with its text taken out
(``pawlette.infer.empty_texts``), on real templates of llama.cpp's corpus: the inferred format
writes it as the template does, exports it so and reads it back."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from pawlette.export import export_jinja
from pawlette.infer import Inference, infer_template
from pawlette.infer.template import TemplateRunner

from ..support.template_corpus import corpus_template


@functools.cache
def _infer(name: str) -> Inference:
    template = corpus_template(name)
    return infer_template(template.text, bos_token=template.bos_token, eos_token=template.eos_token)


def _detail(inference: Inference) -> str:
    found = {item.name: item for item in inference.capabilities}
    item = found["empty assistant text"]
    return f"{item.status}; {item.detail}"


def _runner(name: str) -> TemplateRunner:
    template = corpus_template(name)
    return TemplateRunner(
        template.text, {"bos_token": template.bos_token, "eos_token": template.eos_token}
    )


def _around(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", **answer},
        {"role": "user", "content": "Well?"},
    ]


def _written_and_read_as_the_template(name: str, messages: list[dict[str, Any]]) -> str:
    inference = _infer(name)
    fmt = inference.format
    assert fmt is not None, inference.describe()
    rendering = fmt.render({"messages": messages})
    assert rendering.text == _runner(name).render(messages).text
    exported = TemplateRunner(export_jinja(fmt), {"bos_token": corpus_template(name).bos_token})
    assert exported.render(messages).text == rendering.text
    read = fmt.parse_conversation(rendering.text).messages
    assert [message["role"] for message in read] == ["user", "assistant", "user"]
    assert not read[1].get("content") and not read[1].get("tool_calls")
    assert read[1].get("reasoning_content") == messages[1].get("reasoning_content")
    assert read[2]["content"] == "Well?"
    return rendering.text


def test_an_empty_answer_written_as_a_text_of_its_own_is_derived() -> None:
    """llama.cpp's R1 template writes an answer with no text as an empty calls block."""
    name = "llama-cpp-deepseek-r1"
    assert _detail(_infer(name)) == (
        "derived; written as '<｜tool▁calls▁begin｜><｜tool▁calls▁end｜>' in place of the text"
    )
    text = _written_and_read_as_the_template(name, _around({"content": ""}))
    assert (
        "<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜><｜User｜>"
        in text
    )


@pytest.mark.parametrize(
    ("answer", "turn"),
    [
        ({"content": ""}, "<seed:bos>assistant"),
        (
            {"content": "", "reasoning_content": "Nothing to say."},
            "<seed:bos>assistant\n<seed:think>Nothing to say.</seed:think>",
        ),
    ],
)
def test_an_empty_answer_written_with_no_end_is_derived(answer: dict[str, Any], turn: str) -> None:
    """Seed-OSS writes an answer with no text as its opener alone, without the newline after
    it and with no end; a reasoning block there ends the turn without its newline."""
    name = "ByteDance-Seed-OSS"
    assert _detail(_infer(name)) == (
        "derived; written as its opener '<seed:bos>assistant' (without '\\n') and no end: the "
        "next turn's opener ends it"
    )
    text = _written_and_read_as_the_template(name, _around(answer))
    assert f"<seed:eos>{turn}<seed:bos>user\n" in text


def test_an_empty_answer_given_up_after_verification_says_why() -> None:
    """A failed verification gives the capability up: the derivation is not tried again, and
    the capability says what the verification found."""
    from pawlette.infer.atoms import Tokens
    from pawlette.infer.draft import Draft
    from pawlette.infer.fields import derive_empty_texts
    from pawlette.infer.frames import derive_frames
    from pawlette.infer.probe import Probe

    template = corpus_template("llama-cpp-deepseek-r1")
    special = frozenset({template.bos_token, template.eos_token}) - {None}
    probe = Probe(_runner("llama-cpp-deepseek-r1"), Tokens(special=special, by_shape=True))
    reason = "verification: the turn read back otherwise"
    draft = Draft(probe.tokens, blocked={"empty assistant text": reason})
    derive_frames(probe, draft)
    derive_empty_texts(probe, draft)
    found = {item.name: item for item in draft.capabilities}
    assert found["empty assistant text"].status == "not derived"
    assert found["empty assistant text"].detail == reason
    assert not draft.concepts
