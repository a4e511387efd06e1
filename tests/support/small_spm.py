"""Small SentencePiece-style BPEs trained in-process, for tests of tokenizers that add a prefix.

``spm_tokenizer(style, markers)`` trains a BPE on :func:`tests.support.small_bpe.corpus` with
one of the pipelines Hugging Face tokenizer.json files use for SentencePiece models, then adds
``markers`` as special tokens (ids after the trained vocabulary, in order):

- ``"metaspace-first"``: a Metaspace pre-tokenizer, ``prepend_scheme="first"`` (Mistral, Llama 2
  converted by recent transformers): ``▁`` before the piece at the very start of the text only;
- ``"metaspace-always"``: ``▁`` before every piece between added tokens;
- ``"metaspace-never"``: no ``▁`` added;
- ``"legacy"``: no pre-tokenizer, the normaliser ``Prepend("▁")`` then ``Replace(" ", "▁")``
  (Llama 2's original tokenizer.json): ``▁`` before every piece;
- ``"byte-level-prefix"``: ByteLevel with ``add_prefix_space=True`` (RoBERTa-style).

Cached per ``(style, markers, vocab_size)``; callers share the object and must not change it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from tokenizers import (
    AddedToken,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    trainers,
)

from .small_bpe import corpus

__all__ = ["STYLES", "spm_tokenizer"]

STYLES = ("metaspace-first", "metaspace-always", "metaspace-never", "legacy", "byte-level-prefix")


@cache
def _trained_json(style: str, vocab_size: int) -> str:
    tokenizer = Tokenizer(models.BPE(fuse_unk=False))
    # Every printable ASCII character is a token, whether or not the corpus holds it (it holds
    # no "<"): the model has no unknown token, and a character it cannot spell is dropped with
    # the offsets of the tokens after it in its piece shifted (DeepSeek's "</think>" before an
    # answer), which would misplace the cuts a test takes from those offsets.
    alphabet = [chr(code) for code in range(0x20, 0x7F)]
    if style.startswith("metaspace-"):
        scheme = style.removeprefix("metaspace-")
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme=scheme)
        tokenizer.decoder = decoders.Metaspace(prepend_scheme=scheme)
    elif style == "legacy":
        tokenizer.normalizer = normalizers.Sequence(
            [normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]
        )
        tokenizer.decoder = decoders.Sequence(
            [decoders.Replace("▁", " "), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
        )
    elif style == "byte-level-prefix":
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
        tokenizer.decoder = decoders.ByteLevel()
        alphabet = pre_tokenizers.ByteLevel.alphabet()  # every byte
    else:
        raise ValueError(f"style: {style!r}; expected one of {', '.join(STYLES)}")
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        show_progress=False,
        initial_alphabet=alphabet,
        special_tokens=[],
    )
    tokenizer.train_from_iterator(corpus(), trainer=trainer)
    return tokenizer.to_str()


@cache
def _spm_tokenizer(style: str, markers: tuple[str, ...], vocab_size: int) -> Tokenizer:
    tokenizer = Tokenizer.from_str(_trained_json(style, vocab_size))
    tokenizer.add_special_tokens(
        [
            AddedToken(marker, special=True, normalized=False, lstrip=False, rstrip=False)
            for marker in markers
        ]
    )
    return tokenizer


def spm_tokenizer(style: str, markers: Sequence[str], *, vocab_size: int = 1500) -> Tokenizer:
    """A BPE of about ``vocab_size`` tokens in ``style`` with ``markers`` as special tokens."""
    return _spm_tokenizer(style, tuple(markers), vocab_size)
