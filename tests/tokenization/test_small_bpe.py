"""``small_tokenizer``: a deterministic byte-level BPE with markers as special tokens."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..support.small_bpe import corpus, small_tokenizer

MARKERS = ("<|im_start|>", "<|im_end|>", "<think>", "</think>")
ROOT = Path(__file__).resolve().parents[2]

TEXTS = (
    "The weather in Paris is sunny today.",
    "北京今天的天气怎么样？",
    '{"name": "get_weather", "arguments": {"city": "São Paulo"}}',
    "def f(x):\n    return x * 2\n",
    "emoji 🙂 and rare script ᚠᛇᚻ and control \x00\x1f",
    "   \n\t spaces ",
)


def test_markers_are_special_tokens_after_the_vocabulary() -> None:
    tokenizer = small_tokenizer(MARKERS)
    base_size = tokenizer.get_vocab_size(with_added_tokens=False)
    added = tokenizer.get_added_tokens_decoder()
    assert [added[base_size + index].content for index in range(len(MARKERS))] == list(MARKERS)
    assert all(added[base_size + index].special for index in range(len(MARKERS)))
    for index, marker in enumerate(MARKERS):
        assert tokenizer.encode(f"a{marker}b").ids[1:-1] == [base_size + index]


def test_vocabulary_is_about_the_size_asked() -> None:
    tokenizer = small_tokenizer((), vocab_size=1000)
    assert 900 <= tokenizer.get_vocab_size() <= 1000
    assert 1900 <= small_tokenizer(()).get_vocab_size() <= 2000


def test_round_trips_any_text() -> None:
    tokenizer = small_tokenizer(MARKERS)
    for text in (*TEXTS, "".join(MARKERS)):
        assert tokenizer.decode(tokenizer.encode(text).ids, skip_special_tokens=False) == text


def test_merges_learned_from_the_corpus() -> None:
    tokenizer = small_tokenizer(())
    english = "The weather in the city is sunny today, please call the tool."
    assert len(tokenizer.encode(english).ids) < len(english.encode()) / 3
    assert len(tokenizer.encode("今天天气怎么样").ids) <= 4


def test_cached_per_marker_tuple() -> None:
    assert small_tokenizer(MARKERS) is small_tokenizer(list(MARKERS))
    assert small_tokenizer(MARKERS) is not small_tokenizer(MARKERS[:2])
    base = small_tokenizer(MARKERS[:2]).get_vocab(with_added_tokens=False)
    assert small_tokenizer(MARKERS).get_vocab(with_added_tokens=False) == base


def test_same_tokenizer_in_another_process() -> None:
    # Training must not depend on hash seeds or thread scheduling.
    here = hashlib.sha256(small_tokenizer(MARKERS).to_str().encode()).hexdigest()
    script = (
        "import hashlib\n"
        "from tests.support.small_bpe import small_tokenizer\n"
        f"print(hashlib.sha256(small_tokenizer({MARKERS!r}).to_str().encode()).hexdigest())\n"
    )
    environment = {**os.environ, "PYTHONHASHSEED": "12345", "RAYON_NUM_THREADS": "3"}
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == here


def test_corpus_is_deterministic_and_mixed() -> None:
    documents = list(corpus())
    assert documents == list(corpus())
    text = "".join(documents)
    assert "天气" in text and '"arguments"' in text and "def " in text and "🙂" in text


@pytest.mark.parametrize(
    ("markers", "vocab_size", "message"),
    [
        (("<a>", ""), 2000, "empty string"),
        (("<a>", "<a>"), 2000, "repeats a marker"),
        ((), 100, "at least 257"),
    ],
)
def test_bad_arguments_are_refused(markers: tuple[str, ...], vocab_size: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        small_tokenizer(markers, vocab_size=vocab_size)
