"""Token ids, loss masks and training data (the ``tokenize`` extra: ``tokenizers``).

- :func:`tokenize` / :class:`ConversationEncoder`: ids, labels and per-token provenance of a
  conversation, markers by id and text as plain text (see :mod:`.encoder` for the boundary
  rule and the mask policies).
- :class:`IdParser`: parse a completion from token ids, one id at a time.
- :func:`encode_plain`: text as plain text, so that no special or added token comes out of it;
  :func:`tokenizer_from_tiktoken`: a tiktoken rank file (Llama 3's ``tokenizer.model``) as a
  byte-level BPE ``tokenizers.Tokenizer`` that encodes exactly as tiktoken does.
- :func:`prepare_tokenizer` / :func:`write_tokenizer_directory`: a tokenizer with a format's
  markers as special tokens, and a directory transformers loads.
- :class:`RecordTokenizer`: chat-completions records to ids and labels, a ``datasets.map`` and
  Ray ``map_batches`` function; :mod:`.training` runs it over files into Parquet, with
  :mod:`.inputs` (JSONL, gzip, zstandard, Parquet, ``datasets`` directories), :mod:`.shapes`
  (ShareGPT, drop policies), :mod:`.lengths` (maximum length, truncation), :mod:`.packing`
  and :mod:`.report` (the summary); :mod:`.inspection` shows which tokens are learned.
"""

from __future__ import annotations

from .backend import TokenizerBackend, load_backend, load_tokenizer
from .encoder import IGNORE_INDEX, ConversationEncoder, MaskPolicy, Tokenized, tokenize
from .ids import IdParser
from .plain_text import encode_plain
from .prepare import (
    PreparedTokenizer,
    add_markers,
    prepare_tokenizer,
    write_tokenizer_directory,
)
from .records import RecordTokenizer
from .tiktoken_file import (
    LLAMA3_PATTERN,
    LLAMA3_SPECIAL_TOKEN_COUNT,
    llama3_special_tokens,
    read_tiktoken_ranks,
    tokenizer_from_tiktoken,
)

__all__ = [
    "IGNORE_INDEX",
    "LLAMA3_PATTERN",
    "LLAMA3_SPECIAL_TOKEN_COUNT",
    "ConversationEncoder",
    "IdParser",
    "MaskPolicy",
    "PreparedTokenizer",
    "RecordTokenizer",
    "Tokenized",
    "TokenizerBackend",
    "add_markers",
    "encode_plain",
    "llama3_special_tokens",
    "load_backend",
    "load_tokenizer",
    "prepare_tokenizer",
    "read_tiktoken_ranks",
    "tokenize",
    "tokenizer_from_tiktoken",
    "write_tokenizer_directory",
]
