"""``encode_plain``: text never becomes a special or added token, whatever it spells."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers

from pawlette.errors import TokenizerMismatch
from pawlette.tokenization import encode_plain, tokenizer_from_tiktoken

from ..support.llama3 import (
    LLAMA3_SPECIAL_TOKENS,
    VERIFICATION_TEXTS,
    llama3_tiktoken,
    llama3_tokenizer,
)
from ..support.small_bpe import small_tokenizer

MARKERS = ("<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "[TOOL_CALLS]")


def test_encode_matches_special_strings_in_text() -> None:
    # Why encode_plain exists: add_special_tokens=False does not stop the match.
    tokenizer = llama3_tokenizer()
    ids = tokenizer.encode("stop<|eot_id|>now", add_special_tokens=False).ids
    assert LLAMA3_SPECIAL_TOKENS["<|eot_id|>"] in ids


@pytest.mark.parametrize("special", sorted(LLAMA3_SPECIAL_TOKENS))
def test_no_llama3_special_token_comes_from_text(special: str) -> None:
    tokenizer = llama3_tokenizer()
    text = f"{special}Say {special} now,{special}\n\n{special}{special}"
    ids = encode_plain(tokenizer, text)
    assert all(token_id < 128000 for token_id in ids)
    assert ids == llama3_tiktoken().encode_ordinary(text)
    assert tokenizer.decode(ids) == text


@given(
    st.lists(
        st.one_of(st.text(max_size=12), st.sampled_from(sorted(LLAMA3_SPECIAL_TOKENS))),
        max_size=6,
    )
)
def test_llama3_text_with_special_strings_encodes_as_tiktoken_ordinary(parts: list[str]) -> None:
    text = "".join(parts)
    ids = encode_plain(llama3_tokenizer(), text)
    assert ids == llama3_tiktoken().encode_ordinary(text)


def test_same_as_encode_when_no_added_token_is_spelled() -> None:
    tokenizer = llama3_tokenizer()
    for text in VERIFICATION_TEXTS:
        assert encode_plain(tokenizer, text) == tokenizer.encode(text, add_special_tokens=False).ids


@given(st.lists(st.one_of(st.text(max_size=10), st.sampled_from(MARKERS)), max_size=6))
def test_no_marker_comes_from_text_with_a_small_tokenizer(parts: list[str]) -> None:
    tokenizer = small_tokenizer(MARKERS)
    marker_ids = {tokenizer.token_to_id(marker) for marker in MARKERS}
    text = "".join(parts)
    ids = encode_plain(tokenizer, text)
    assert marker_ids.isdisjoint(ids)
    assert tokenizer.decode(ids) == text


def test_added_tokens_that_are_not_special_are_not_matched_either() -> None:
    # Qwen adds <tool_call> as an added token with special=False; encode matches it even with
    # encode_special_tokens=True, encode_plain does not.
    tokenizer = Tokenizer.from_str(small_tokenizer(()).to_str())
    tokenizer.add_tokens([AddedToken("<tool_call>", special=False, normalized=False)])
    tool_call_id = tokenizer.token_to_id("<tool_call>")
    tokenizer.encode_special_tokens = True
    assert tool_call_id in tokenizer.encode("a <tool_call> b").ids
    assert tool_call_id not in encode_plain(tokenizer, "a <tool_call> b")


def test_normalizer_and_missing_pre_tokenizer_are_honoured() -> None:
    vocabulary = {"a": 0, "b": 1, "ab": 2, "<x>": 3, "<": 4, "x": 5, ">": 6}
    tokenizer = Tokenizer(models.BPE(vocab=vocabulary, merges=[("a", "b")]))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.add_special_tokens([AddedToken("<X>", special=True, normalized=False)])
    assert tokenizer.pre_tokenizer is None
    assert encode_plain(tokenizer, "ABab") == tokenizer.encode("ABab").ids == [2, 2]
    assert encode_plain(tokenizer, "a<X>") == [0, 4, 5, 6]
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    assert encode_plain(tokenizer, "AB ab") == [2, 2]


def test_a_vocabulary_that_spells_an_added_token_is_reported(tmp_path: Path) -> None:
    # Special tokens with gapped ids live in the BPE vocabulary too; a pre-tokenizer that keeps
    # "<|endoftext|>" whole would then reach it through the vocabulary, so this is refused.
    ranks = tmp_path / "gapped.tiktoken"
    lines = [f"{base64.b64encode(bytes([byte])).decode()} {byte}" for byte in range(256)]
    ranks.write_text("\n".join(lines) + "\n")
    tokenizer = tokenizer_from_tiktoken(
        ranks, pattern=r"\S+|\s+", special_tokens={"<|endoftext|>": 300}
    )
    with pytest.raises(TokenizerMismatch, match=r"'<\|endoftext\|>' at characters 3\.\.16"):
        encode_plain(tokenizer, "hi <|endoftext|>")
    assert encode_plain(tokenizer, "hi <|endoftext|>!") == list(b"hi <|endoftext|>!")
