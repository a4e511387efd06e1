"""Qwen's tokenizer for the tests, from the ``qwen-agent`` wheel on PyPI, never committed.

Qwen2, Qwen2.5 and Qwen3 use Qwen's byte-level BPE (the Qwen2 report: "the identical
tokenizer"): 151,643 ranks, which ``qwen-agent`` ships as ``qwen_agent/utils/qwen.tiktoken``
(with the pre-tokenizer pattern in ``tokenization_qwen.py``).  ``qwen-agent`` pulls in
dashscope, pydantic, openai and more, so it is not installed: :func:`qwen_tokenizer`

1. looks in the cache directory (``$PAWLETTE_CACHE``, else ``~/.cache/pawlette``) for the
   converted ``tokenizer.json``, else the extracted rank file, else the wheel;
2. runs ``python -m pip download qwen-agent==<pinned> --no-deps`` (about 7 MB) in pip's
   hash-checking mode, failing the test with pip's message when that does not work;
3. extracts the rank file with :mod:`zipfile` and checks its SHA-256;
4. converts it with :func:`pawlette.tokenization.tokenizer_from_tiktoken`, with Qwen3's added
   tokens, checks it against ``tiktoken`` over the same ranks, and caches it.

The added tokens' ids are Qwen3's (``<|endoftext|>`` 151643 ... ``</think>`` 151668, as in its
``tokenizer_config.json``; typed in here, since no model hub is reached).  Qwen2's tokenizer
also NFC-normalises text; the texts the tests use are NFC already.
"""

from __future__ import annotations

import hashlib
import zipfile
from functools import cache
from pathlib import Path
from typing import NoReturn

import pytest
from tokenizers import Tokenizer

from pawlette.tokenization import tiktoken_file
from pawlette.tokenization.tiktoken_file import read_tiktoken_ranks, tokenizer_from_tiktoken

from .llama3 import cache_directory, random_texts
from .pip_download import pip_download

__all__ = ["QWEN_PATTERN", "QWEN_SPECIAL_TOKENS", "qwen_tokenizer"]

QWEN_AGENT_VERSION = "0.0.34"
_WHEEL_SHA256 = "195264f9c1880f60f23781805d69bb3ffadfe944b7b70358f7115a0dd4bc59b7"
_MEMBER = "qwen_agent/utils/qwen.tiktoken"
_RANKS_SHA256 = "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186"
QWEN_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
_ADDED_TEXT = """
<|endoftext|> <|im_start|> <|im_end|> <|object_ref_start|> <|object_ref_end|>
<|box_start|> <|box_end|> <|quad_start|> <|quad_end|> <|vision_start|> <|vision_end|>
<|vision_pad|> <|image_pad|> <|video_pad|> <tool_call> </tool_call> <|fim_prefix|>
<|fim_middle|> <|fim_suffix|> <|fim_pad|> <|repo_name|> <|file_sep|> <tool_response>
</tool_response> <think> </think>
"""
_ADDED = _ADDED_TEXT.split()
QWEN_SPECIAL_TOKENS = {text: 151643 + number for number, text in enumerate(_ADDED)}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fail(message: str) -> NoReturn:
    pytest.fail(f"Qwen's tokenizer: {message}", pytrace=False)


def _ranks_file() -> Path:
    directory = cache_directory() / "qwen"
    ranks = directory / "qwen.tiktoken"
    if ranks.is_file() and _sha256(ranks.read_bytes()) == _RANKS_SHA256:
        return ranks
    wheel = pip_download(
        f"qwen-agent=={QWEN_AGENT_VERSION}",
        _WHEEL_SHA256,
        f"qwen_agent-{QWEN_AGENT_VERSION}-py3-none-any.whl",
        directory,
        source=False,
        fail=_fail,
        timeout=600,
    )
    with zipfile.ZipFile(wheel) as archive:
        data = archive.read(_MEMBER)
    if _sha256(data) != _RANKS_SHA256:
        _fail(f"{wheel.name}: {_MEMBER} has an unexpected SHA-256")
    ranks.write_bytes(data)
    return ranks


def _converted_name() -> str:
    source = Path(tiktoken_file.__file__).read_bytes() + Path(__file__).read_bytes()
    return f"tokenizer-{_sha256(source)[:12]}.json"


@cache
def qwen_tokenizer() -> Tokenizer:
    """Qwen3's tokenizer as a ``tokenizers.Tokenizer`` (cached on disk and per process)."""
    json_path = cache_directory() / "qwen" / _converted_name()
    if json_path.is_file():
        return Tokenizer.from_file(str(json_path))
    ranks_path = _ranks_file()
    tokenizer = tokenizer_from_tiktoken(
        ranks_path, pattern=QWEN_PATTERN, special_tokens=QWEN_SPECIAL_TOKENS
    )
    import tiktoken

    reference = tiktoken.Encoding(
        name="qwen",
        pat_str=QWEN_PATTERN,
        mergeable_ranks=read_tiktoken_ranks(ranks_path),
        special_tokens=QWEN_SPECIAL_TOKENS,
    )
    for text in random_texts(300, seed=7):
        ids = tokenizer.encode(text, add_special_tokens=False).ids
        if ids != reference.encode_ordinary(text):
            pytest.fail(f"the converted Qwen tokenizer differs from tiktoken on {text!r}")
    tokenizer.save(str(json_path))
    return tokenizer
