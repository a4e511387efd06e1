"""Helpers shared by the tests: real tokenizers built without committed files.

- :mod:`tests.support.llama3`: Meta's Llama 3 tokenizer, fetched from the llama-models wheel on
  PyPI at first use, converted, checked against tiktoken and cached.
- :mod:`tests.support.small_bpe`: a small byte-level BPE trained in-process, with any markers as
  special tokens.
"""
