"""A past assistant turn's text written after the reasoning's last close and stripped at its
start, the conversation's last message whole (QwQ's ``content.split('</think>')[-1]
.lstrip('\\n')``): inferred as :class:`~pawlette.declare.TextAfter`, in a turn of calls too,
so ``pawlette verify`` finds every difference explained."""

from __future__ import annotations

import functools

from pawlette.declare import TextAfter
from pawlette.detect import verify
from pawlette.infer import Inference, infer_template
from pawlette.infer.template import TemplateRunner

from ..support.template_corpus import corpus_template

QWQ = "Qwen-QwQ-32B"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
}


@functools.cache
def _infer(name: str) -> Inference:
    template = corpus_template(name)
    return infer_template(template.text, bos_token=template.bos_token, eos_token=template.eos_token)


def _cuts(inference: Inference) -> list[TextAfter]:
    assert inference.layout is not None
    return [item for item in inference.layout.concepts if isinstance(item, TextAfter)]


def test_qwq_past_texts_are_inferred_cut_after_the_close_and_stripped() -> None:
    inference = _infer(QWQ)
    assert inference.accepted, inference.describe()
    assert _cuts(inference) == [
        TextAfter(separator="</think>", occurrence="last", calls=True, last=False, strip="\n")
    ]
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["text of past assistant turns"] == "derived"
    # The text beside calls is no longer a difference given up in verification.
    assert "whitespace at the ends of text with tool calls" not in statuses


def test_a_past_turn_of_calls_is_written_as_the_template_writes_it_with_its_loss() -> None:
    template = corpus_template(QWQ)
    fmt = _infer(QWQ).format
    assert fmt is not None
    runner = TemplateRunner(template.text, {"eos_token": template.eos_token})
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "\nLet me look.", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "18°C"},
        {"role": "user", "content": "Thanks."},
    ]
    rendering = fmt.render({"messages": messages, "tools": [WEATHER]})
    assert rendering.text == runner.render(messages, [WEATHER]).text
    assert "<|im_start|>assistant\nLet me look.\n<tool_call>" in rendering.text
    assert rendering.losses == ("messages[1].content: '\\n' trimmed at its start",)
    # The conversation's last message is written whole.
    last = fmt.render({"messages": messages[:2], "tools": [WEATHER]})
    assert "<|im_start|>assistant\n\nLet me look." in last.text and not last.losses


def test_qwq_verifies_with_no_unexplained_difference() -> None:
    template = corpus_template(QWQ)
    fmt = _infer(QWQ).format
    assert fmt is not None
    found = verify(fmt, template.text, bos_token=template.bos_token, eos_token=template.eos_token)
    assert found.passed and not found.unexplained, found.describe()


def test_a_template_that_cuts_every_turn_alike_gets_no_past_cut() -> None:
    # Qwen3 cuts a text at its close only where it holds one, the last message too.
    assert _cuts(_infer("Qwen-Qwen3-0.6B")) == []
