"""Token ids, loss masks and training data (the ``tokenize`` extra: ``tokenizers``).

- :func:`tokenize` / :class:`ConversationEncoder`: ids, labels and per-token provenance of a
  conversation, markers by id and text as plain text (see :mod:`.encoder` for the boundary
  rule and the mask policies).
- :class:`IdParser`: parse a completion from token ids, one id at a time.
- :func:`prepare_tokenizer` / :func:`write_tokenizer_directory`: a tokenizer with a format's
  markers as special tokens, and a directory transformers loads.
- :class:`RecordTokenizer`: chat-completions records to ids and labels, a ``datasets.map`` and
  Ray ``map_batches`` function; :mod:`pawlette.training` runs it over files into Parquet, with
  :mod:`.inputs` (JSONL, gzip, zstandard, Parquet, ``datasets`` directories), :mod:`.shapes`
  (ShareGPT, drop policies), :mod:`.lengths` (maximum length, truncation), :mod:`.packing`
  and :mod:`.report` (the summary); :mod:`.inspection` shows which tokens are learned.
"""

from __future__ import annotations

from .backend import TokenizerBackend, load_backend, load_tokenizer
from .encoder import IGNORE_INDEX, ConversationEncoder, MaskPolicy, Tokenized, tokenize
from .ids import IdParser
from .prepare import (
    PreparedTokenizer,
    add_markers,
    prepare_tokenizer,
    write_tokenizer_directory,
)
from .records import RecordTokenizer

__all__ = [
    "IGNORE_INDEX",
    "ConversationEncoder",
    "IdParser",
    "MaskPolicy",
    "PreparedTokenizer",
    "RecordTokenizer",
    "Tokenized",
    "TokenizerBackend",
    "add_markers",
    "load_backend",
    "load_tokenizer",
    "prepare_tokenizer",
    "tokenize",
    "write_tokenizer_directory",
]
