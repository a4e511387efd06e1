"""A small SentencePiece model with ChatGLM3's settings and special tokens, trained here.

ChatGLM3's ``tokenization_chatglm.py`` wraps a SentencePiece BPE model (byte fallback, a
dummy prefix on every ``encode`` call) and numbers its nine special tokens after the model's
vocabulary, in this order: ``[MASK] [gMASK] [sMASK] sop eop <|system|> <|user|>
<|assistant|> <|observation|>``.  :func:`spm_model` trains such a model on
:func:`tests.support.small_bpe.corpus` with the ``sentencepiece`` package (a few seconds; cached
under the test cache directory), and :func:`hf_tokenizer` is the same model as a
``tokenizers.Tokenizer`` (what pawlette tokenizes with): its BPE vocabulary and merges, a
normaliser that prefixes every piece with ``▁`` and writes spaces as ``▁`` (SentencePiece's
dummy prefix and whitespace), byte fallback, and the special tokens with the same ids.
"""

from __future__ import annotations

import hashlib
import io
import os
from functools import cache
from pathlib import Path
from typing import Any

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers

from .llama3 import cache_directory
from .small_bpe import corpus

__all__ = ["SPECIAL_TOKENS", "hf_tokenizer", "spm_model", "spm_processor"]

SPECIAL_TOKENS = (
    "[MASK]",
    "[gMASK]",
    "[sMASK]",
    "sop",
    "eop",
    "<|system|>",
    "<|user|>",
    "<|assistant|>",
    "<|observation|>",
)
SETTINGS: dict[str, Any] = {
    "model_type": "bpe",
    "vocab_size": 800,
    "byte_fallback": True,
    "add_dummy_prefix": True,
    "remove_extra_whitespaces": False,
    "normalization_rule_name": "identity",
    "split_digits": True,
    "character_coverage": 1.0,
    "unk_id": 0,
    "bos_id": 1,
    "eos_id": 2,
    "pad_id": -1,
    "num_threads": 1,
    "minloglevel": 2,
}


@cache
def spm_model() -> Path:
    """The trained model file (trained once, then read from the cache directory)."""
    key = hashlib.sha256(repr(sorted(SETTINGS.items())).encode()).hexdigest()[:12]
    path = cache_directory() / "chatglm3-spm" / f"bpe-{key}.model"
    if not path.exists():
        import sentencepiece

        written = io.BytesIO()
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(corpus()), model_writer=written, **SETTINGS
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")  # each test process its own
        partial.write_bytes(written.getvalue())
        partial.replace(path)
    return path


@cache
def spm_processor() -> Any:
    import sentencepiece

    return sentencepiece.SentencePieceProcessor(model_file=str(spm_model()))


@cache
def hf_tokenizer() -> Tokenizer:
    """The model as a ``tokenizers.Tokenizer`` with the special tokens ChatGLM3 numbers."""
    processor = spm_processor()
    size = processor.get_piece_size()
    vocab = {processor.id_to_piece(index): index for index in range(size)}
    # SentencePiece BPE merges pieces by score: every piece made of two others is a merge,
    # ranked by the piece's score (best first).
    merges: list[tuple[str, str]] = []
    ranked = sorted(range(size), key=lambda index: -processor.get_score(index))
    for index in ranked:
        piece = processor.id_to_piece(index)
        if processor.is_control(index) or processor.is_unknown(index) or len(piece) < 2:
            continue
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in vocab and right in vocab:
                merges.append((left, right))
    model = models.BPE(
        vocab=vocab, merges=merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True
    )
    tokenizer = Tokenizer(model)
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]
    )
    tokenizer.decoder = decoders.Sequence(
        [
            decoders.Replace("▁", " "),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(" ", 1, 0),
        ]
    )
    tokenizer.add_special_tokens(
        [
            AddedToken(token, special=True, normalized=False, lstrip=False, rstrip=False)
            for token in SPECIAL_TOKENS
        ]
    )
    return tokenizer
