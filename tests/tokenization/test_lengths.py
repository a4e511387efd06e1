"""--max-length and --overflow: truncation keeps whole answers, never a learned token alone."""

from __future__ import annotations

import pytest

import pawlette
from pawlette.tokenization import IGNORE_INDEX, ConversationEncoder
from pawlette.tokenization.lengths import fit_length

from ..helpers import without_refused_system
from .support import llama3_all, small

CONVERSATION = {
    "messages": [
        {"role": "system", "content": "You answer in one word."},
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "Paris, the city of light."},
        {"role": "user", "content": "And of Italy?"},
        {"role": "assistant", "content": "Rome, the eternal city."},
        {"role": "user", "content": "Thanks."},
    ]
}


def learned_span_ends(labels: list[int]) -> list[int]:
    return [
        position
        for position in range(1, len(labels) + 1)
        if labels[position - 1] != IGNORE_INDEX
        and (position == len(labels) or labels[position] == IGNORE_INDEX)
    ]


@pytest.mark.parametrize("name", pawlette.formats())
def test_truncation_at_every_length(name: str) -> None:
    """For every maximum: a prefix of the conversation, cut at the last answer end that fits,
    else inside the first answer, else dropped when no learned token fits."""
    tokenizer = llama3_all() if name == "breeze" else small(name)
    conversation = without_refused_system(pawlette.get_format(name), CONVERSATION)
    full = ConversationEncoder(name, tokenizer).encode(conversation)
    ends = learned_span_ends(full.labels)
    assert len(ends) >= 2, ends  # two answers (more where a format splits one)
    first_learned = next(n for n, label in enumerate(full.labels) if label != IGNORE_INDEX)
    for limit in range(1, len(full) + 2):
        fitted, outcome = fit_length(full, limit, "truncate")
        if limit >= len(full):
            assert (fitted, outcome) == (full, "fits")
            continue
        fitting = [end for end in ends if end <= limit]
        if fitting:
            assert outcome == "truncated" and fitted is not None
            assert len(fitted) == fitting[-1]
        elif limit > first_learned:
            assert outcome == "truncated inside an answer" and fitted is not None
            assert len(fitted) == limit
        else:
            assert fitted is None and "no learned token in the first" in outcome
            continue
        cut = len(fitted)
        assert fitted.input_ids == full.input_ids[:cut] and fitted.labels == full.labels[:cut]
        assert fitted.provenance == full.provenance[:cut]
        assert fitted.labels[-1] != IGNORE_INDEX  # nothing after the last learned token


def test_drop_names_the_length_and_the_limit() -> None:
    full = ConversationEncoder("breeze", llama3_all()).encode(CONVERSATION)
    fitted, outcome = fit_length(full, 10, "drop")
    assert fitted is None
    assert outcome == f"too long: {len(full)} tokens; expected at most 10 (--max-length)"
    assert fit_length(full, None, "drop") == (full, "fits")


def test_the_record_tokenizer_applies_lengths_to_batches() -> None:
    from pawlette.errors import PawletteError
    from pawlette.tokenization import RecordTokenizer

    short = {"messages": CONVERSATION["messages"][:3]}
    encoded = ConversationEncoder("pcml", small("pcml")).encode(short)
    length = len(encoded)
    answer_end = learned_span_ends(encoded.labels)[-1]  # before the unlearned [/AST]
    batch = {"messages": [short["messages"], CONVERSATION["messages"], short["messages"]]}
    dropping = RecordTokenizer("pcml", small("pcml"), max_length=length)
    assert dropping(batch)["length"] == [length, length]  # the long one left out
    kept = RecordTokenizer("pcml", small("pcml"), max_length=length, errors="keep")(batch)
    assert kept["length"] == [length, 0, length] and kept["error"][1].startswith("too long")
    truncating = RecordTokenizer("pcml", small("pcml"), max_length=length, overflow="truncate")
    assert truncating(batch)["length"] == [length, answer_end, length]
    with pytest.raises(PawletteError, match=r"records\[0\]: too long"):
        dropping(CONVERSATION)
