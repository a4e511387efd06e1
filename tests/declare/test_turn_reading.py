"""Turn reading (:mod:`pawlette.legacy.turn_reading`) and the decision concept's rule that a
decision or call marker comes first in its turn, as breeze declares them.

Breeze's own tests check the three malformed inputs' errors; here: what each row reads in both
modes, from text and from token ids, and that none of it is written or a stop.
"""

from __future__ import annotations

import pytest

import pawlette
from pawlette.engine.fold import fold
from pawlette.errors import ParseError
from pawlette.legacy import TurnReading, layout_of
from pawlette.openai import message_to_openai
from pawlette.tokenization.ids import IdParser

from .tokens import feed_pieces, tokenizer

HEAD = "<|start_header_id|>{}<|end_header_id|>\n\n"


def breeze() -> pawlette.Format:
    return pawlette.get_format("breeze")


def test_breeze_declares_it_and_it_is_neither_written_nor_a_stop() -> None:
    layout = layout_of(breeze())
    assert layout is not None and isinstance(layout.turn_reading, TurnReading)
    assert breeze().stop == ("<|eot_id|>", "<|eom_id|>")
    text = breeze().render([{"role": "user", "content": "Hi"}], add_generation_prompt=True).text
    assert "<|end_of_text|>" not in text


@pytest.mark.parametrize("strict", [True, False])
def test_the_end_of_text_ends_any_turn_and_is_skipped_between_turns(strict: bool) -> None:
    text = (
        HEAD.format("system") + "Be brief.<|end_of_text|><|end_of_text|>"
        + HEAD.format("user") + "Hi<|end_of_text|>"
        + HEAD.format("assistant") + "Hello<|end_of_text|>"
    )  # fmt: skip
    parsed = breeze().parse_conversation(text, strict=strict)
    assert parsed.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
    ]
    assert not parsed.warnings
    completion = breeze().parse("<|answer|>Hello<|end_of_text|>", strict=strict)
    assert completion.message["content"] == "Hello"


def test_headers_in_pieces_read_the_same_from_token_ids() -> None:
    pieces = [
        (True, "<|start_header_id|>"), (False, "user"), (True, "<|end_header_id|>"),
        (False, "Hi"), (True, "<|eot_id|>"),
        (True, "<|start_header_id|>"), (False, "robot"), (True, "<|end_header_id|>"),
        (False, "\n\nbeep"), (True, "<|eot_id|>"),
    ]  # fmt: skip
    tok = tokenizer("breeze")
    parser = IdParser(breeze(), tok, conversation=True)
    events = feed_pieces(parser, tok, pieces)
    messages = [message_to_openai(m) for m in fold(events, breeze().grammar.fields).messages]
    text = "".join(text for _, text in pieces)
    assert (
        messages
        == breeze().parse_conversation(text).messages
        == [
            {"role": "user", "content": "Hi"},
            {"role": "user", "content": "<|start_header_id|>robot<|end_header_id|>beep"},
        ]
    )


@pytest.mark.parametrize(
    "completion",
    [
        "Sure.<|use_tool|>[f()]<|eot_id|>",
        "Sure.<|answer|>Fine.<|eot_id|>",
        "Sure.<|python_tag|>[f()]<|eom_id|>",
        "<|answer|>Fine.<|python_tag|>[f()]<|eom_id|>",
    ],
)
def test_a_decision_or_call_marker_after_text_is_malformed(completion: str) -> None:
    with pytest.raises(ParseError, match="after text; expected it first in the turn"):
        breeze().parse(completion, strict=True)
    lenient = breeze().parse(completion)
    assert len(lenient.warnings) == 1


@pytest.mark.parametrize(
    "completion",
    ["<|use_tool|>[f()]<|eot_id|>", "<|python_tag|>[f()]<|eom_id|>", "<|answer|>Fine.<|eot_id|>"],
)
def test_markers_first_in_the_turn_are_read(completion: str) -> None:
    assert not breeze().parse(completion, strict=True).warnings
