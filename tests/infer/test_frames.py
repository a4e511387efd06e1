"""The turn frames inferred from real templates of llama.cpp's corpus."""

from __future__ import annotations

from pawlette.infer import infer_template
from pawlette.infer.conversations import Features, generate

from ..support.template_corpus import corpus_template


def test_an_answer_cannot_hold_the_plain_text_that_ends_its_turn() -> None:
    """RWKV World ends every turn with a blank line and no special token: an answer holding a
    blank line is cut there when read, so the inferred format says so and its answers are
    verified without one (user text with a blank line is still verified)."""
    template = corpus_template("llama-cpp-rwkv-world")
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    assert inference.accepted, inference.describe()
    verification = inference.verification
    assert verification is not None
    assert verification.parsed_back == verification.turns > 0
    layout = inference.layout
    assert layout is not None
    assert any("'\\n\\n'" in note and "cannot be read back" in note for note in layout.notes)
    # Read back, an answer with a blank line stops at it: the reason for the rule above.
    fmt = inference.format
    assert fmt is not None
    parsed = fmt.parse(" # Title\n\n**bold**\n\n").message
    assert parsed.get("content") != "# Title\n\n**bold**"


def test_generated_answers_avoid_what_ends_their_turn() -> None:
    features = Features(tools=False, reasoning=False, answer_avoid=("\n\n",))
    samples = generate(40, seed=2, features=features)
    answers = [m["content"] for s in samples for m in s.messages if m["role"] == "assistant"]
    others = [m["content"] for s in samples for m in s.messages if m["role"] != "assistant"]
    assert answers and not any("\n\n" in text for text in answers)
    assert any("\n\n" in text for text in others)
