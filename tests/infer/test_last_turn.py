"""Text a template writes at the start of a conversation's last assistant turn only
(Nemotron Nano v2: ``<think>\\n`` before the final answer)."""

from __future__ import annotations

from typing import Any

from pawlette.export.jinja import export_jinja
from pawlette.infer import infer_template
from pawlette.infer.last_turn import LastTurnLead

from ..support.template_corpus import corpus_template

REQUEST: dict[str, Any] = {
    "messages": [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Bye"},
        {"role": "assistant", "content": "Goodbye."},
    ]
}


def test_the_last_answer_is_written_and_read_as_the_template_does() -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    template = corpus_template("NVIDIA-Nemotron-Nano-v2")
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    assert inference.accepted, inference.describe()
    verification = inference.verification
    assert verification is not None
    assert verification.identical == verification.compared
    assert verification.parsed_back == verification.turns > 0
    layout, fmt = inference.layout, inference.format
    assert layout is not None and fmt is not None
    assert any(isinstance(concept, LastTurnLead) for concept in layout.concepts)
    text = fmt.render(REQUEST).text
    assert text.endswith(
        "<SPECIAL_11>Assistant\nHello.\n<SPECIAL_12>\n<SPECIAL_11>User\nBye\n"
        "<SPECIAL_11>Assistant\n<think>\nGoodbye.\n<SPECIAL_12>\n"
    )
    rendered, _ = render_jinja_template(
        [REQUEST["messages"]], chat_template=export_jinja(fmt), add_generation_prompt=False
    )
    assert rendered[0] == text
    # The model's answer after the prompt (which wrote the <think>), and the layout after it.
    assert fmt.parse("Goodbye.\n<SPECIAL_12>\n").message == {
        "role": "assistant",
        "content": "Goodbye.",
    }
