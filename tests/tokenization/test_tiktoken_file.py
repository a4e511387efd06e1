"""``tokenizer_from_tiktoken``: small hand-made rank files, then Meta's Llama 3 against tiktoken."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer

from pawlette.tokenization import (
    LLAMA3_PATTERN,
    encode_plain,
    llama3_special_tokens,
    read_tiktoken_ranks,
    tokenizer_from_tiktoken,
)

from ..support.llama3 import (
    KNOWN_ENCODINGS,
    LLAMA3_SPECIAL_TOKENS,
    VERIFICATION_TEXTS,
    llama3_tiktoken,
    llama3_tiktoken_ranks,
    llama3_tokenizer,
    llama3_tokenizer_model,
    mismatches_with_tiktoken,
    random_texts,
)

# ---------------------------------------------------------------- small hand-made rank files

BYTES = [bytes([byte]) for byte in range(256)]
# Ranks 256.. in order.  "abcd" (257) is built through "ab" (258), a token ranked above it: BPE
# on "abcd" joins cd, then ab, then ab+cd.  "xyz" has no merge path at all.
EXTRA_TOKENS = [b"cd", b"abcd", b"ab", b"he", b"the", b" the", b"  ", b"    ", b"xyz", b"\n\n"]


def write_ranks(path: Path, tokens: Sequence[bytes]) -> Path:
    lines = [f"{base64.b64encode(token).decode()} {rank}" for rank, token in enumerate(tokens)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def small_ranks(tmp_path: Path) -> Path:
    return write_ranks(tmp_path / "small.tiktoken", BYTES + EXTRA_TOKENS)


def small_tiktoken(path: Path, special_tokens: dict[str, int]) -> tiktoken.Encoding:
    return tiktoken.Encoding(
        name="small",
        pat_str=LLAMA3_PATTERN,
        mergeable_ranks=read_tiktoken_ranks(path),
        special_tokens=special_tokens,
    )


SMALL_TEXTS = [
    "abcd",
    "abcdx",
    "xabcd abcdabcd",
    "the theme, then the  end",
    "xyz xyzw axyz",
    "a\n\n\nb    c      d\t\t",
    "héllo 你好 🙂",
    "",
]


def test_small_file_encodes_as_tiktoken(small_ranks: Path) -> None:
    special = {"<|start|>": 266, "<|end|>": 267}
    tokenizer = tokenizer_from_tiktoken(small_ranks, pattern=LLAMA3_PATTERN, special_tokens=special)
    reference = small_tiktoken(small_ranks, special)
    for text in SMALL_TEXTS:
        assert tokenizer.encode(text, add_special_tokens=False).ids == reference.encode(text)
        assert encode_plain(tokenizer, text) == reference.encode_ordinary(text)


def test_a_token_built_through_a_higher_ranked_token(small_ranks: Path) -> None:
    # Cutting "abcd" only with joins ranked below 257 never reaches it from a longer piece.
    tokenizer = tokenizer_from_tiktoken(small_ranks, pattern=LLAMA3_PATTERN, special_tokens={})
    assert tokenizer.encode("abcdx").ids == [257, ord("x")]


def test_a_token_without_merges_is_found_whole(small_ranks: Path) -> None:
    tokenizer = tokenizer_from_tiktoken(small_ranks, pattern=LLAMA3_PATTERN, special_tokens={})
    assert tokenizer.encode("xyz").ids == [264]
    assert tokenizer.encode("axyz").ids == [ord("a"), ord("x"), ord("y"), ord("z")]


def test_contiguous_special_tokens_are_added_tokens_only(small_ranks: Path) -> None:
    special = {"<|end|>": 267, "<|start|>": 266}
    tokenizer = tokenizer_from_tiktoken(small_ranks, pattern=LLAMA3_PATTERN, special_tokens=special)
    assert tokenizer.get_vocab_size(with_added_tokens=False) == 266
    added = tokenizer.get_added_tokens_decoder()
    assert {token_id: added[token_id].content for token_id in added} == {
        266: "<|start|>",
        267: "<|end|>",
    }
    assert all(token.special for token in added.values())
    assert tokenizer.encode("<|start|>the<|end|>").ids == [266, 260, 267]


def test_special_tokens_with_gaps_keep_their_ids(small_ranks: Path) -> None:
    # cl100k_base-style: an unused id before <|endoftext|>, another gap after it.
    special = {"<|endoftext|>": 267, "<|fim_prefix|>": 270}
    tokenizer = tokenizer_from_tiktoken(small_ranks, pattern=LLAMA3_PATTERN, special_tokens=special)
    reference = small_tiktoken(small_ranks, special)
    for text, token_id in special.items():
        assert tokenizer.token_to_id(text) == token_id
        assert tokenizer.get_added_tokens_decoder()[token_id].special
    text = "the<|endoftext|>abcd<|fim_prefix|>"
    assert tokenizer.encode(text).ids == reference.encode(text, allowed_special="all")
    assert encode_plain(tokenizer, text) == reference.encode_ordinary(text)


def test_decoder_round_trips_bytes(small_ranks: Path) -> None:
    tokenizer = tokenizer_from_tiktoken(small_ranks, pattern=LLAMA3_PATTERN, special_tokens={})
    for text in SMALL_TEXTS:
        assert tokenizer.decode(tokenizer.encode(text).ids) == text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("YQ== 0 extra\n", "3 fields"),
        ("!!!! 0\n", "does not parse"),
        ("YQ== zero\n", "does not parse"),
        ("YQ== 0\nYg== 0\n", "rank 0 again"),
        ("YQ== 0\nYQ== 1\n", r"again \(first with rank 0\)"),
        ("YQ== -1\n", "rank >= 0"),
    ],
)
def test_malformed_rank_files_name_the_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.tiktoken"
    path.write_text(content)
    with pytest.raises(ValueError, match=message) as caught:
        read_tiktoken_ranks(path)
    assert f"{path}:" in str(caught.value)


def test_missing_single_bytes_are_refused(tmp_path: Path) -> None:
    path = write_ranks(tmp_path / "no_bytes.tiktoken", [b"a", b"b", b"ab"])
    with pytest.raises(ValueError, match="no token for 254 single bytes"):
        tokenizer_from_tiktoken(path, pattern=LLAMA3_PATTERN, special_tokens={})


@pytest.mark.parametrize(
    ("special", "message"),
    [
        ({"<|x|>": 3}, "id 3 is already a token of the rank file"),
        ({"<|x|>": 300, "<|y|>": 300}, "id 300 is already '<|x|>'"),
        ({"the": 300}, "already has this text"),
    ],
)
def test_clashing_special_tokens_are_refused(
    small_ranks: Path, special: dict[str, int], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        tokenizer_from_tiktoken(small_ranks, pattern=LLAMA3_PATTERN, special_tokens=special)


# ---------------------------------------------------------------- Meta's Llama 3


@pytest.fixture(scope="module")
def llama3() -> Tokenizer:
    return llama3_tokenizer()


def test_llama3_special_token_layout() -> None:
    tokens = llama3_special_tokens(128000)
    assert len(tokens) == 256
    assert sorted(tokens.values()) == list(range(128000, 128256))
    named = {
        "<|begin_of_text|>": 128000,
        "<|end_of_text|>": 128001,
        "<|reserved_special_token_0|>": 128002,
        "<|reserved_special_token_1|>": 128003,
        "<|finetune_right_pad_id|>": 128004,
        "<|step_id|>": 128005,
        "<|start_header_id|>": 128006,
        "<|end_header_id|>": 128007,
        "<|eom_id|>": 128008,
        "<|eot_id|>": 128009,
        "<|python_tag|>": 128010,
        "<|image|>": 128011,
        "<|reserved_special_token_2|>": 128012,
        "<|reserved_special_token_245|>": 128255,
    }
    assert {name: tokens[name] for name in named} == named


def test_llama3_rank_file_reads_like_tiktoken() -> None:
    assert read_tiktoken_ranks(llama3_tokenizer_model()) == llama3_tiktoken_ranks()


def test_llama3_known_ids(llama3: Tokenizer) -> None:
    for text, expected in KNOWN_ENCODINGS.items():
        assert llama3.encode(text, add_special_tokens=False).ids == expected


def test_llama3_dialog_matches_meta_reference(llama3: Tokenizer) -> None:
    # llama-models' test_encode_dialog: a system and a user turn, then the generation prompt.
    text = (
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
        "This is a test sentence.<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nThis is a response.<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
    )
    expected = [128000, 128006, 9125, 128007, 271, 2028, 374, 264, 1296, 11914, 13, 128009]
    expected += [128006, 882, 128007, 271, 2028, 374, 264, 2077, 13, 128009]
    expected += [128006, 78191, 128007, 271]
    assert llama3.encode(text, add_special_tokens=False).ids == expected
    assert llama3.decode(expected, skip_special_tokens=False) == text


def test_llama3_special_tokens_have_their_ids(llama3: Tokenizer) -> None:
    assert llama3.get_vocab_size(with_added_tokens=False) == 128000
    assert llama3.get_vocab_size() == 128256
    added = llama3.get_added_tokens_decoder()
    for text, token_id in LLAMA3_SPECIAL_TOKENS.items():
        assert llama3.token_to_id(text) == token_id
        assert added[token_id].content == text
        assert added[token_id].special
        assert llama3.encode(f"x{text}y", add_special_tokens=False).ids == [87, token_id, 88]


def test_llama3_matches_tiktoken_on_mixed_texts(llama3: Tokenizer) -> None:
    texts = [*VERIFICATION_TEXTS, *random_texts(5000, seed=1)]
    assert mismatches_with_tiktoken(llama3, texts) == []


def test_llama3_matches_tiktoken_on_every_token_alone(llama3: Tokenizer) -> None:
    # Each token's bytes as text (invalid UTF-8 becomes U+FFFD): whole-piece lookups and the
    # merge path of every reachable token, in one pass over the vocabulary.
    reference = llama3_tiktoken()
    texts = [token.decode("utf-8", errors="replace") for token in llama3_tiktoken_ranks()]
    encodings = llama3.encode_batch(texts, add_special_tokens=False)
    mismatched = [
        text
        for text, encoding in zip(texts, encodings, strict=True)
        if encoding.ids != reference.encode_ordinary(text)
    ]
    assert mismatched == []


def test_llama3_path_through_higher_ranked_tokens(llama3: Tokenizer) -> None:
    # Texts where converters that cut each token only with lower-ranked joins go wrong; the
    # expected ids are tiktoken's.
    assert llama3.encode(".:.:.:.:.:.:").ids == [124263, 108601]
    assert llama3.encode("íjícíjícíjícíjíc").ids == [2483, 103541, 103541, 103541, 73, 30515]


@given(st.text(max_size=80))
def test_llama3_agrees_with_tiktoken_on_any_text(text: str) -> None:
    tokenizer = llama3_tokenizer()
    ids = encode_plain(tokenizer, text)
    assert ids == llama3_tiktoken().encode_ordinary(text)
    assert tokenizer.decode(ids) == text


def test_llama3_round_trips_unicode(llama3: Tokenizer) -> None:
    for text in VERIFICATION_TEXTS:
        assert llama3.decode(llama3.encode(text, add_special_tokens=False).ids) == text
