"""Tests of ``pawlette.tokenizers`` and of the tokenizers the other tests use."""
