"""Real tokenizers for the family tests, from files that packages on PyPI ship; never a hub.

Each loader downloads one pinned wheel through :func:`.pip_download.pip_download` (pip's
hash-checking mode) into the test cache (``$PAWLETTE_CACHE``, else ``~/.cache/pawlette``),
extracts the one file it needs, checks its SHA-256, converts it once to a
``tokenizers.Tokenizer`` (what :func:`pawlette.tokenize` takes) with
:func:`pawlette.tokenization.tokenizer_from_tiktoken`, checks the conversion against
``tiktoken`` over the same ranks, and caches the ``tokenizer.json``.  Later calls read the
cache (no network).  A failure fails the test with what went wrong; nothing is skipped.

- :func:`o200k_harmony_tokenizer`: OpenAI's ``o200k_base`` ranks, as ``litellm`` ships them
  for tiktoken's cache (``litellm/litellm_core_utils/tokenizers/`` holds tiktoken cache files
  named by the SHA-1 of their download address), with gpt-oss's harmony special tokens as
  tiktoken's ``o200k_harmony`` encoding defines them (:data:`HARMONY_SPECIAL_TOKENS` names the
  ones the harmony format writes).  :func:`o200k_harmony_tiktoken` is that tiktoken encoding;
  :func:`harmony_encoding` is openai-harmony's encoding over the same ranks.
- :func:`tekken_tokenizer`: Mistral's tekken, the ``tekken_240911.json`` that ``mistral-common``
  bundles, with the control tokens of :data:`TEKKEN_SPECIAL_TOKENS` (ids below 1000; the
  ranks of the vocabulary come after them, as in ``mistral_common``'s ``Tekkenizer``).
  :func:`tekken_tiktoken` is the tiktoken encoding of the same ranks.
- :func:`llama3_tokenizer` (``llama-models``) and :func:`qwen_tokenizer` (``qwen-agent``), the
  existing loaders, re-exported.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest
from tokenizers import Tokenizer

from pawlette.tokenization import tiktoken_file
from pawlette.tokenization.tiktoken_file import tokenizer_from_tiktoken

from .llama3 import VERIFICATION_TEXTS, cache_directory, llama3_tokenizer, random_texts
from .pip_download import pip_download
from .qwen import qwen_tokenizer

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "HARMONY_SPECIAL_TOKENS",
    "LITELLM_VERSION",
    "MISTRAL_COMMON_VERSION",
    "TEKKEN_SPECIAL_TOKENS",
    "harmony_encoding",
    "llama3_tokenizer",
    "o200k_harmony_tiktoken",
    "o200k_harmony_tokenizer",
    "qwen_tokenizer",
    "tekken_tiktoken",
    "tekken_tokenizer",
]

# ------------------------------------------------------------------ o200k and harmony

LITELLM_VERSION = "1.83.14"
_LITELLM_WHEEL = f"litellm-{LITELLM_VERSION}-py3-none-any.whl"
_LITELLM_SHA256 = "92b11ba2a32cf80707ddf388d18526696c7999a21b418c5e3b6eda1243d2cfdb"
# tiktoken names a cached file by the SHA-1 of its address: this is o200k_base.tiktoken's.
_O200K_CACHE_NAME = "fb374d419588a4632f3f557e76b4b70aebbca790"
_O200K_MEMBER = f"litellm/litellm_core_utils/tokenizers/{_O200K_CACHE_NAME}"
# o200k_base.tiktoken's SHA-256, as tiktoken_ext/openai_public.py expects it.
_O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
# o200k_base's pre-tokenizer (tiktoken_ext/openai_public.py, the same for o200k_harmony).
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

HARMONY_SPECIAL_TOKENS: dict[str, int] = {
    "<|startoftext|>": 199998,
    "<|endoftext|>": 199999,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|call|>": 200012,
}
"""gpt-oss's named special tokens and their ids.  Checked against openai-harmony 0.0.8
(``load_harmony_encoding(HARMONY_GPT_OSS).encode(token, allowed_special="all")``, run offline
over these same ranks) and against tiktoken's ``o200k_harmony`` (by the tests); the rest of
the ids from 200000 to 201087 are ``<|reserved_N|>``."""

# ------------------------------------------------------------------ tekken

MISTRAL_COMMON_VERSION = "1.12.0"
_MISTRAL_WHEEL = f"mistral_common-{MISTRAL_COMMON_VERSION}-py3-none-any.whl"
_MISTRAL_SHA256 = "fa4504b66c30c0201ae4578c0340c5ee2abd22151c271532f62e373b985a53cf"
_TEKKEN_MEMBER = "mistral_common/data/tekken_240911.json"
_TEKKEN_SHA256 = "1948e2d48b0e7377f1bb5f1210f1ae5f984934e75713fc07e2452729b8365316"

_TEKKEN_NAMED = (
    # Ranks 0-19: Tekkenizer.DEPRECATED_SPECIAL_TOKENS in mistral_common/tokens/tokenizers/
    # tekken.py (the control tokens of every tekken file without its own list).
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)
TEKKEN_SPECIAL_TOKENS: dict[str, int] = {
    **{text: rank for rank, text in enumerate(_TEKKEN_NAMED)},
    # The later control tokens (SpecialTokens.args, .call_id, .begin_think, .end_think in
    # mistral_common/tokens/tokenizers/base.py) at the ranks mistral-common's own tests give
    # them for v11+ and v13 tokenizers with thinking (get_special_tokens in its test helpers):
    # the bundled files predate them.
    "[ARGS]": 32,
    "[CALL_ID]": 33,
    "[THINK]": 35,
    "[/THINK]": 36,
}
"""Tekken's named control tokens and their ids; the other ids below
:data:`TEKKEN_NUM_SPECIAL_TOKENS` are ``<SPECIAL_N>`` (mistral-common's filler names)."""
TEKKEN_NUM_SPECIAL_TOKENS = 1000
TEKKEN_VOCABULARY_SIZE = 131072


def _fail(name: str, message: str) -> NoReturn:
    pytest.fail(f"{name}: {message}", pytrace=False)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as file:
        file.write(data)
    os.chmod(file.name, 0o644)
    os.replace(file.name, path)


def _member(name: str, requirement: str, wheel: str, sha256: str, member: str) -> bytes:
    """``member`` of the pinned ``wheel`` (downloaded into the cache at first use)."""
    directory = cache_directory() / "wheels"
    path = pip_download(
        requirement,
        sha256,
        wheel,
        directory,
        source=False,
        fail=lambda message: _fail(name, message),
        timeout=600,
    )
    try:
        with zipfile.ZipFile(path) as archive:
            return archive.read(member)
    except (zipfile.BadZipFile, KeyError) as error:
        _fail(name, f"{path} has no readable {member} ({error}); delete it to download it again")


def _extracted(name: str, target: Path, sha256: str, read: Callable[[], bytes]) -> Path:
    if target.is_file() and _sha256(target.read_bytes()) == sha256:
        return target
    data = read()
    found = _sha256(data)
    if found != sha256:
        _fail(name, f"{target.name} has SHA-256 {found}; expected {sha256}")
    _write(target, data)
    return target


def _converted_name(*parts: str) -> str:
    source = Path(tiktoken_file.__file__).read_bytes() + Path(__file__).read_bytes()
    digest = hashlib.sha256(source + "\0".join(parts).encode()).hexdigest()
    return f"tokenizer-{digest[:16]}.json"


def _check_against(
    name: str, tokenizer: Tokenizer, reference: tiktoken.Encoding, id_offset: int = 0
) -> None:
    texts = [*VERIFICATION_TEXTS, *random_texts(400, seed=11)]
    for text in texts:
        found = tokenizer.encode(text, add_special_tokens=False).ids
        expected = [token + id_offset for token in reference.encode_ordinary(text)]
        if found != expected:
            _fail(name, f"the conversion gives {found} for {text!r}; tiktoken gives {expected}")


@contextlib.contextmanager
def _tiktoken_cache(directory: Path) -> Iterator[None]:
    saved = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(directory)
    try:
        yield
    finally:
        if saved is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = saved


# ------------------------------------------------------------------ o200k


def _o200k_ranks() -> Path:
    """The o200k_base rank file, in a folder laid out as tiktoken's cache."""
    return _extracted(
        "o200k",
        cache_directory() / "o200k" / _O200K_CACHE_NAME,
        _O200K_SHA256,
        lambda: _member(
            "o200k",
            f"litellm=={LITELLM_VERSION}",
            _LITELLM_WHEEL,
            _LITELLM_SHA256,
            _O200K_MEMBER,
        ),
    )


@cache
def o200k_harmony_tiktoken() -> tiktoken.Encoding:
    """tiktoken's ``o200k_harmony`` encoding, its ranks read from the cache folder (tiktoken
    finds them there under their SHA-1 name and checks their SHA-256: nothing is fetched)."""
    import tiktoken
    from tiktoken_ext import openai_public

    ranks = _o200k_ranks()
    with _tiktoken_cache(ranks.parent):
        return tiktoken.Encoding(**openai_public.o200k_harmony())


@cache
def o200k_harmony_tokenizer() -> Tokenizer:
    """o200k with gpt-oss's harmony special tokens, as a ``tokenizers.Tokenizer``."""
    path = cache_directory() / "o200k" / _converted_name(_O200K_SHA256)
    if path.is_file():
        return Tokenizer.from_file(str(path))
    encoding = o200k_harmony_tiktoken()
    special = {
        text: encoding.encode_single_token(text)
        for text in encoding.special_tokens_set
        # tiktoken keeps o200k_base's <|endofprompt|> at 200018, which o200k_harmony also
        # names <|reserved_200018|>; openai-harmony reads <|endofprompt|> as plain text.
        if text != "<|endofprompt|>"
    }
    tokenizer = tokenizer_from_tiktoken(
        _o200k_ranks(), pattern=O200K_PATTERN, special_tokens=special
    )
    _check_against("o200k", tokenizer, encoding)
    _write(path, tokenizer.to_str().encode())
    return tokenizer


@cache
def harmony_encoding() -> Any:
    """openai-harmony's ``HARMONY_GPT_OSS`` encoding (the reference implementation of the
    harmony format), its o200k ranks read offline: the library reads
    ``o200k_base.tiktoken`` from the folder ``TIKTOKEN_ENCODINGS_BASE`` names, where it is
    copied from the cache (nothing is fetched)."""
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding

    folder = cache_directory() / "harmony"
    target = folder / "o200k_base.tiktoken"
    if not target.is_file() or _sha256(target.read_bytes()) != _O200K_SHA256:
        _write(target, _o200k_ranks().read_bytes())
    saved = os.environ.get("TIKTOKEN_ENCODINGS_BASE")
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(folder)
    try:
        return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    finally:
        if saved is None:
            del os.environ["TIKTOKEN_ENCODINGS_BASE"]
        else:
            os.environ["TIKTOKEN_ENCODINGS_BASE"] = saved


# ------------------------------------------------------------------ tekken


def _tekken_file() -> Path:
    return _extracted(
        "tekken",
        cache_directory() / "tekken" / Path(_TEKKEN_MEMBER).name,
        _TEKKEN_SHA256,
        lambda: _member(
            "tekken",
            f"mistral-common=={MISTRAL_COMMON_VERSION}",
            _MISTRAL_WHEEL,
            _MISTRAL_SHA256,
            _TEKKEN_MEMBER,
        ),
    )


@cache
def _tekken_model() -> tuple[str, dict[bytes, int]]:
    """The pre-tokenizer pattern and the ranks ``Tekkenizer`` uses: the first
    ``TEKKEN_VOCABULARY_SIZE - TEKKEN_NUM_SPECIAL_TOKENS`` entries of the vocabulary."""
    model = json.loads(_tekken_file().read_text(encoding="utf-8"))
    config = model["config"]
    if (config["default_vocab_size"], config["default_num_special_tokens"]) != (
        TEKKEN_VOCABULARY_SIZE,
        TEKKEN_NUM_SPECIAL_TOKENS,
    ):
        _fail("tekken", f"config {config}; expected 131072 ids of which 1000 special")
    inner = TEKKEN_VOCABULARY_SIZE - TEKKEN_NUM_SPECIAL_TOKENS
    ranks = {
        base64.b64decode(entry["token_bytes"]): entry["rank"] for entry in model["vocab"][:inner]
    }
    return config["pattern"], ranks


def tekken_special_tokens() -> dict[str, int]:
    """Every control token of the tokenizer: the named ones and ``<SPECIAL_N>`` fillers."""
    named = {token_id: text for text, token_id in TEKKEN_SPECIAL_TOKENS.items()}
    return {
        named.get(token_id, f"<SPECIAL_{token_id}>"): token_id
        for token_id in range(TEKKEN_NUM_SPECIAL_TOKENS)
    }


@cache
def tekken_tiktoken() -> tiktoken.Encoding:
    """tiktoken over tekken's ranks (ids without the 1000 control ids before them), as
    ``mistral_common``'s ``Tekkenizer`` builds its model."""
    import tiktoken

    pattern, ranks = _tekken_model()
    return tiktoken.Encoding(
        name="tekken", pat_str=pattern, mergeable_ranks=ranks, special_tokens={}
    )


@cache
def tekken_tokenizer() -> Tokenizer:
    """Mistral's tekken (``tekken_240911``) as a ``tokenizers.Tokenizer``: control tokens
    at ids 0-999, the vocabulary's rank ``r`` at id ``r + 1000``."""
    path = cache_directory() / "tekken" / _converted_name(_TEKKEN_SHA256)
    if path.is_file():
        return Tokenizer.from_file(str(path))
    pattern, ranks = _tekken_model()
    with tempfile.TemporaryDirectory() as staging:
        ranks_path = Path(staging) / "tekken.tiktoken"
        ranks_path.write_text(
            "".join(
                f"{base64.b64encode(token).decode()} {rank + TEKKEN_NUM_SPECIAL_TOKENS}\n"
                for token, rank in ranks.items()
            )
        )
        tokenizer = tokenizer_from_tiktoken(
            ranks_path, pattern=pattern, special_tokens=tekken_special_tokens()
        )
    _check_against("tekken", tokenizer, tekken_tiktoken(), TEKKEN_NUM_SPECIAL_TOKENS)
    _write(path, tokenizer.to_str().encode())
    return tokenizer
