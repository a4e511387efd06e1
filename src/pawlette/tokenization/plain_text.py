"""Encode text as plain text: no special or added token can ever come out of it.

``tokenizers.Tokenizer.encode(text, add_special_tokens=False)`` does *not* do this:
``add_special_tokens`` only controls the post-processor (a BOS the template adds), while every
added token spelled inside ``text`` is still matched and becomes its control id, so a user who
types ``<|eot_id|>`` would end the turn.  ``Tokenizer.encode_special_tokens = True`` treats
special tokens as text, but it mutates a tokenizer that other threads may share and still
matches added tokens that are not flagged special (Qwen's ``<tool_call>`` is one).

:func:`encode_plain` therefore skips the added-token stage altogether and runs the rest of the
pipeline itself: normalizer, pre-tokenizer, then the model on each piece.  For text that spells
no added token this gives the same ids as ``encode(text, add_special_tokens=False)``.
Truncation, padding and the post-processor are not applied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import TokenizerMismatch

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["encode_plain"]


def encode_plain(tokenizer: Tokenizer, text: str) -> list[int]:
    """The ids of ``text`` encoded as ordinary text, with no special or added token matched.

    Example (``tokenizer`` is Llama 3's): ``encode_plain(tokenizer, "<|eot_id|>")`` gives
    ``[27, 91, 68, 354, 851, 91, 29]``, the pieces ``<``, ``|``, ``e``, ``ot``, ``_id``, ``|``,
    ``>``, where ``tokenizer.encode("<|eot_id|>").ids`` gives ``[128009]``.

    Raises :class:`~pawlette.errors.TokenizerMismatch` if the model's own vocabulary turns part
    of ``text`` into an added token's id (a tokenizer whose model vocabulary also lists its
    special tokens, and whose pre-tokenizer leaves one whole); no byte-level BPE built by
    :func:`~pawlette.tokenization.tokenizer_from_tiktoken` from a Llama 3 file does.
    """
    normalizer = tokenizer.normalizer
    normalized = normalizer.normalize_str(text) if normalizer is not None else text
    pre_tokenizer = tokenizer.pre_tokenizer
    if pre_tokenizer is None:
        pieces = [(normalized, (0, len(normalized)))]
    else:
        pieces = pre_tokenizer.pre_tokenize_str(normalized)
    model = tokenizer.model
    added_tokens = tokenizer.get_added_tokens_decoder()
    ids: list[int] = []
    for piece, (start, end) in pieces:
        for token in model.tokenize(piece):
            added = added_tokens.get(token.id)
            if added is not None:
                raise TokenizerMismatch(
                    f"encode_plain: the text {normalized[start:end]!r} at characters {start}..{end}"
                    f" (after normalisation) became the added token {added.content!r};"
                    " expected only ordinary tokens. The model's vocabulary lists this token, so"
                    " plain text can reach it"
                )
            ids.append(token.id)
    return ids
