"""A generation prompt that stops short of the assistant's opener (Reka Edge: ``assistant:``
before the model's turn, ``assistant: `` before past turns)."""

from __future__ import annotations

from pawlette.infer import PromptRest

from .reka import reka


def test_the_rest_of_the_opener_is_layout_after_the_prompt() -> None:
    inference = reka()
    assert inference.accepted, inference.describe()
    verification = inference.verification
    assert verification is not None
    assert verification.parsed_back == verification.turns > 0
    layout = inference.layout
    assert layout is not None
    assert layout.concepts[-1] == PromptRest(prompt="assistant:", rest=" ")
    fmt = inference.format
    assert fmt is not None
    # The model's own turn after the prompt: the space is the opener's.
    assert fmt.parse(" It is sunny.\n\n<sep>").message["content"] == "It is sunny."
    assert (
        fmt.parse("  indented\n\n<sep>", prompt="human: Hi<sep>assistant:").message["content"]
        == " indented"
    )


def test_text_after_the_whole_opener_is_read_as_written() -> None:
    fmt = reka().format
    assert fmt is not None
    request = {
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "  two leading spaces"},
        ]
    }
    text = fmt.render(request).text
    assert text == "human: Hi<sep>assistant:   two leading spaces\n\n<sep>"
    messages = fmt.parse_conversation(text).messages
    assert messages[-1]["content"] == "  two leading spaces"
