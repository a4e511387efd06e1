"""Text cut where the pre-tokenizer splits (tokenization/cuts.py), per real tokenizer.

Each tokenizer pawlette's tests use from PyPI (Llama 3 from llama-models, o200k from litellm,
tekken from mistral-common, Qwen2 from qwen-agent) and the small GPT-2-style BPE: which rules
its probes allow, and, over adversarial text (whitespace runs of every kind, digits, CJK,
emojis, combining marks, apostrophes, ``\\r\\n``, ``/`` after newlines, text spelling markers),
that the backend's ids (pieces encoded apart, known pieces from the cache) are the ids of the
whole text encoded as plain text (:func:`encode_plain`, the pipeline run step by step).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from pawlette.errors import TokenizerMismatch
from pawlette.tokenization import encode_plain
from pawlette.tokenization.backend import AFTER_MARKER, CONTINUATION, START, TokenizerBackend
from pawlette.tokenization.cuts import PieceCache, TextCuts, verified_cuts

from ..support.llama3 import LLAMA3_SPECIAL_TOKENS
from ..support.pypi_tokenizers import (
    llama3_tokenizer,
    o200k_harmony_tokenizer,
    qwen_tokenizer,
    tekken_tokenizer,
)
from .support import ALL_MARKERS, small_all

TOKENIZERS: dict[str, Callable[[], Tokenizer]] = {
    "llama3": llama3_tokenizer,
    "o200k": o200k_harmony_tokenizer,
    "tekken": tekken_tokenizer,
    "qwen2": qwen_tokenizer,
    "gpt2-style": small_all,
}
# GPT-2's \s+(?!\S) keeps a newline with the spaces after it: the line rule must be found off.
EXPECTED_RULES = {
    "llama3": (True, True),
    "o200k": (True, True),
    "tekken": (True, True),
    "qwen2": (True, True),
    "gpt2-style": (True, False),
}

FRAGMENTS = [
    " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", "\r", "\u00a0", "\u3000", "\x0b", "\x0c",
    "\x85", "\u2028", "\u2029", "\u200b", "\x1c", "/", "//", "\n/", "\n  /", "'", "'s", "'T",
    "n't", "'ll", "0", "7", "123", "12345", "3.14", "1,000", "a", "A", "word", "Word", "WORD",
    "é", "e\u0301", "\u0301", "ß", "ǅ", "天气", "北京", "東京", "한국어", "😀", "👍🏽", "🇫🇷",
    ".", ",", ":", ";", "!?", "...", "-", "—", "(", ")", "{", "}", "[", "]", '"', "\\", "<", ">",
    '{"name": "a",', '\n    "type": "object",\n', "<|eot_id|>", "<|im_end|>", "<call>",
    "\n<call>", "</think>\n", "[INST]", "<|end|>",
]  # fmt: skip
FRAGMENTS += sorted(LLAMA3_SPECIAL_TOKENS)[:4] + list(ALL_MARKERS[:12])

texts = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), min_size=1, max_size=24
).map("".join)


@cache
def backend(name: str) -> TokenizerBackend:
    return TokenizerBackend(TOKENIZERS[name](), source=name)


@pytest.mark.parametrize("name", list(TOKENIZERS))
def test_the_probes_find_the_rules_the_pre_tokenizer_keeps(name: str) -> None:
    cuts = backend(name).cuts
    assert cuts is not None
    assert (cuts.space, cuts.line) == EXPECTED_RULES[name]


@pytest.mark.parametrize("name", list(TOKENIZERS))
def test_cut_text_encodes_as_the_whole_text(name: str) -> None:
    found = backend(name)
    tokenizer = TOKENIZERS[name]()
    cuts = found.cuts
    assert cuts is not None

    @settings(max_examples=150)
    @given(st.lists(texts, min_size=1, max_size=6))
    def check(batch: list[str]) -> None:
        expected = [encode_plain(tokenizer, text) for text in batch]
        # Each piece alone, and the backend (pieces joined, cached across examples).
        for text, ids in zip(batch, expected, strict=True):
            separate = [i for piece in cuts.pieces(text) for i in encode_plain(tokenizer, piece)]
            assert separate == ids, (text, cuts.pieces(text))
        for context in (START, AFTER_MARKER, CONTINUATION):
            assert found.encode_texts(batch, [context] * len(batch)) == expected

    check()


def test_a_tokenizer_without_pre_tokenizer_cuts_nowhere() -> None:
    """A BPE that sees the whole text as one piece: no rule holds, so no cut is made."""
    tokenizer = Tokenizer.from_str(small_all().to_str())
    tokenizer.pre_tokenizer = None
    assert verified_cuts(lambda batch: [e.ids for e in tokenizer.encode_batch(list(batch))]) is None


def test_the_rules_cut_where_they_say() -> None:
    both = TextCuts(space=True, line=True)
    assert both.words("a b  c\n d") == ["a", " b", "  c\n d"]
    assert both.words("  x y") == ["  x", " y"]
    assert both.lines("a\nb\n  c\n\nd\n/e\n \n") == ["a\n", "b\n", "  c\n\n", "d\n/e\n \n"]
    assert both.pieces('{"a": 1,\n    "b": 2}') == ['{"a":', " 1,\n", '    "b":', " 2}"]
    assert both.joinable("a", " b") and both.joinable("a\n", "  b")
    assert both.joinable("a\n", " b")  # the line rule: spaces may follow the newline
    assert not both.joinable("a ", " b") and not both.joinable("a\n", "/b")
    assert not both.joinable("a\n", "  \nb")
    neither = TextCuts(space=False, line=False)
    assert neither.pieces("a b\nc") == ["a b\nc"]


class _InsideWords(TextCuts):
    """A wrong rule: a cut after the third character of every word."""

    def words(self, text: str) -> list[str]:
        return [text[:3], text[3:]] if len(text) > 3 else [text]

    def joinable(self, before: str, after: str) -> bool:
        return True


def test_a_piece_that_ends_inside_a_token_is_an_error() -> None:
    """A cut the pre-tokenizer does not keep is caught when ids are split back by bytes."""
    found = backend("llama3")
    lengths = found._token_lengths
    assert lengths is not None
    pieces = PieceCache(_InsideWords(space=True, line=True), found._encode_plain, lengths, "x")
    with pytest.raises(TokenizerMismatch, match="spans the cut after 'hel'"):
        pieces.encode(["hello world"])


def test_the_cache_starts_again_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """A full piece cache is emptied, and ids stay those of the whole text."""
    from pawlette.tokenization import cuts as cuts_module

    monkeypatch.setattr(cuts_module, "PIECE_CACHE_ENTRIES", 8)
    monkeypatch.setattr(cuts_module, "PIECE_CACHE_CHARACTERS", 60)
    found = backend("llama3")
    lengths = found._token_lengths
    cuts = found.cuts
    assert lengths is not None and cuts is not None
    pieces = PieceCache(cuts, found._encode_plain, lengths, "llama3")
    tokenizer = llama3_tokenizer()
    batches = [
        ["one two three four five six", "seven\neight nine ten"],
        ["one two\nthree four five", "eleven twelve thirteen fourteen fifteen sixteen"],
        ["one two three four five six", '{\n    "a": 1,\n    "b": [2, 3]\n}'],
    ]
    for batch in batches:
        assert pieces.encode(batch) == [encode_plain(tokenizer, text) for text in batch]
        assert len(pieces._known) <= 2 * 8 + 8  # never more than one batch past the bound
