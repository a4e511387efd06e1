"""The tokenizers from PyPI packages: each loads, every named control token is one id (the
id its package gives it), pawlette's tokenization takes each, and text around the markers
encodes as the package's own tiktoken encoding does."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable

import pytest
from tokenizers import Tokenizer

from pawlette.tokenization.backend import load_backend

from .llama3 import LLAMA3_SPECIAL_TOKENS, cache_directory
from .pypi_tokenizers import (
    HARMONY_SPECIAL_TOKENS,
    MISTRAL_COMMON_VERSION,
    TEKKEN_NUM_SPECIAL_TOKENS,
    TEKKEN_SPECIAL_TOKENS,
    llama3_tokenizer,
    o200k_harmony_tiktoken,
    o200k_harmony_tokenizer,
    qwen_tokenizer,
    tekken_tiktoken,
    tekken_tokenizer,
)
from .qwen import QWEN_SPECIAL_TOKENS

TOKENIZERS: dict[str, tuple[Callable[[], Tokenizer], dict[str, int]]] = {
    "o200k_harmony": (o200k_harmony_tokenizer, HARMONY_SPECIAL_TOKENS),
    "tekken": (tekken_tokenizer, TEKKEN_SPECIAL_TOKENS),
    "llama3": (
        llama3_tokenizer,
        {t: i for t, i in LLAMA3_SPECIAL_TOKENS.items() if "reserved" not in t},
    ),
    "qwen": (qwen_tokenizer, QWEN_SPECIAL_TOKENS),
}


@pytest.mark.parametrize("name", TOKENIZERS)
def test_every_special_token_encodes_to_its_one_id(name: str) -> None:
    load, special = TOKENIZERS[name]
    tokenizer = load()
    for text, token_id in special.items():
        assert tokenizer.encode(text, add_special_tokens=False).ids == [token_id], text
        assert tokenizer.id_to_token(token_id) == text
    backend = load_backend(tokenizer)  # what pawlette.tokenize builds from it
    assert set(special.values()) <= set(backend.control_ids)


def test_harmony_ids_are_tiktokens_o200k_harmony() -> None:
    encoding = o200k_harmony_tiktoken()
    for text, token_id in HARMONY_SPECIAL_TOKENS.items():
        assert encoding.encode_single_token(text) == token_id
    text = "<|start|>assistant<|channel|>final<|message|>Hi 🙂 你好<|return|>"
    ids = o200k_harmony_tokenizer().encode(text, add_special_tokens=False).ids
    assert ids == encoding.encode(text, allowed_special="all")
    assert ids[:3] == [200006, 173781, 200005]  # <|start|> "assistant" <|channel|>


def test_tekken_control_tokens_are_mistral_commons() -> None:
    """Ranks 0-19 are the package's DEPRECATED_SPECIAL_TOKENS, and every named token is a
    SpecialTokens value of the package (read from the pinned wheel's source)."""
    wheel = (
        cache_directory() / "wheels" / f"mistral_common-{MISTRAL_COMMON_VERSION}-py3-none-any.whl"
    )
    tekken_tokenizer()  # downloads the wheel when the cache lacks it
    with zipfile.ZipFile(wheel) as archive:
        base = archive.read("mistral_common/tokens/tokenizers/base.py").decode()
        tekken = archive.read("mistral_common/tokens/tokenizers/tekken.py").decode()
    values = dict(re.findall(r'^    (\w+) = "([^"]+)"$', base, flags=re.M))
    deprecated = {
        int(rank): values[member]
        for rank, member in re.findall(
            r"SpecialTokenInfo\(rank=(\d+), token_str=SpecialTokens\.(\w+)", tekken
        )
    }
    assert len(deprecated) == 20
    assert {text: i for text, i in TEKKEN_SPECIAL_TOKENS.items() if i < 20} == {
        v: k for k, v in deprecated.items()
    }
    assert set(TEKKEN_SPECIAL_TOKENS) <= set(values.values())


def test_tekken_text_ids_are_the_ranks_after_the_control_ids() -> None:
    tokenizer = tekken_tokenizer()
    reference = tekken_tiktoken()
    text = "[INST]Hello world, Ça va? 北京[/INST]"
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    plain = [
        TEKKEN_NUM_SPECIAL_TOKENS + rank
        for rank in reference.encode_ordinary("Hello world, Ça va? 北京")
    ]
    assert ids == [3, *plain, 4]
    # transformers' tests of its mistral-common tokenizer: "Hello world !" is 22177 4304 2662.
    assert tokenizer.encode("Hello world !", add_special_tokens=False).ids == [22177, 4304, 2662]
