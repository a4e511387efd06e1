"""Tokenizer helpers: build ``tokenizers.Tokenizer`` objects and encode text as plain text.

``tokenizers`` is an optional dependency (the ``tokenize`` extra); it is imported only when a
function here is called, so importing this package costs nothing.

- :func:`tokenizer_from_tiktoken` turns a tiktoken rank file (Llama 3's ``tokenizer.model``)
  into a byte-level BPE ``tokenizers.Tokenizer`` that encodes exactly as tiktoken does.
- :func:`encode_plain` encodes text so that no special or added token can come out of it.
"""

from __future__ import annotations

from .plain import encode_plain
from .tiktoken_file import (
    LLAMA3_PATTERN,
    LLAMA3_SPECIAL_TOKEN_COUNT,
    llama3_special_tokens,
    read_tiktoken_ranks,
    tokenizer_from_tiktoken,
)

__all__ = [
    "LLAMA3_PATTERN",
    "LLAMA3_SPECIAL_TOKEN_COUNT",
    "encode_plain",
    "llama3_special_tokens",
    "read_tiktoken_ranks",
    "tokenizer_from_tiktoken",
]
