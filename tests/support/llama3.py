"""Meta's Llama 3 tokenizer for the tests, fetched from PyPI at first use and never committed.

Meta publishes Llama 3's tiktoken rank file inside the ``llama-models`` wheel on PyPI
(``llama_models/llama3/tokenizer.model``).  :func:`llama3_tokenizer`:

1. looks in the cache directory (``$PAWLETTE_CACHE``, else ``~/.cache/pawlette``) for a
   converted ``tokenizer.json``, then for the extracted rank file, then for the wheel;
2. if none is there, runs ``python -m pip download llama-models==<pinned> --no-deps`` into it
   (about 6.6 MB), and fails the test with pip's message when PyPI cannot be reached (nothing is
   skipped);
3. extracts the rank file with :mod:`zipfile` and checks its SHA-256;
4. converts it with :func:`pawlette.tokenization.tokenizer_from_tiktoken`, checks the result
   against known ids and against ``tiktoken`` itself on :data:`VERIFICATION_TEXTS`, and only
   then caches the ``tokenizer.json`` (its name carries a digest of the converter's source, so
   a changed converter is never served from a stale cache).

The tokenizer is built once per process and shared: callers must not change its settings.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from tokenizers import Tokenizer

from pawlette.tokenization import tiktoken_file
from pawlette.tokenization.plain_text import encode_plain
from pawlette.tokenization.tiktoken_file import (
    LLAMA3_PATTERN,
    llama3_special_tokens,
    tokenizer_from_tiktoken,
)

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "KNOWN_ENCODINGS",
    "LLAMA3_SPECIAL_TOKENS",
    "LLAMA_MODELS_VERSION",
    "VERIFICATION_TEXTS",
    "cache_directory",
    "llama3_tiktoken",
    "llama3_tiktoken_ranks",
    "llama3_tokenizer",
    "llama3_tokenizer_model",
    "mismatches_with_tiktoken",
    "random_texts",
]

# The newest llama-models on PyPI when this was written; it holds llama3/tokenizer.model.
LLAMA_MODELS_VERSION = "0.3.0"
_WHEEL_NAME = f"llama_models-{LLAMA_MODELS_VERSION}-py3-none-any.whl"
_WHEEL_MEMBER = "llama_models/llama3/tokenizer.model"
# The SHA-256 of Meta's Llama 3 tokenizer.model (the same file ships with every Llama 3.x).
_TOKENIZER_MODEL_SHA256 = "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"
_NUM_BASE_TOKENS = 128000

LLAMA3_SPECIAL_TOKENS = llama3_special_tokens(_NUM_BASE_TOKENS)

KNOWN_ENCODINGS: dict[str, list[int]] = {
    # From llama-models' own tests (llama3/tests/api/test_tokenizer.py).
    "This is a test sentence.": [2028, 374, 264, 1296, 11914, 13],
    "This is a response.": [2028, 374, 264, 2077, 13],
    "user": [882],
    "system": [9125],
    "assistant": [78191],
    "\n\n": [271],
}
"""Plain texts and their Llama 3 ids, as Meta's reference tokenizer gives them."""

VERIFICATION_TEXTS: tuple[str, ...] = (
    "",
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog. THE END... isn't it? We'll see, they'd say.",
    "I'm here; you're there; it's fine, we've done it, I'll go.  'S 'T 'RE (case-folded)",
    "你好，世界！今天天气怎么样？北京的温度是二十五度。",
    "日本語のテキストと한국어 텍스트, русский текст, العربية, हिन्दी, Ελληνικά.",
    "emoji 🙂😀🚀✨ family 👨‍👩‍👧‍👦 flags 🇫🇷🇯🇵 skin 👍🏽 keycap 1️⃣",
    "    four spaces\n\ttab\n\n\nthree newlines\r\n crlf   \n  trailing   ",
    " " * 17 + "x" + "\n" * 9 + "y" + "\t \t \n",
    "1 12 123 1234 12345 123456789 3.14159 -42 1e-9 0x1F 1,000,000 ٣٤٥ ５６７",
    'def f(x: int) -> dict[str, int]:\n    return {"x": x ** 2}  # square\n',
    '{"name": "get_weather", "arguments": {"city": "São Paulo", "days": 3, "ok": true}}',
    '<tool_call>\n{"name": "f"}\n</tool_call><think>hmm</think>',
    "C:\\path\\to\\file.txt and https://example.com/a?b=c&d=e#frag",
    "naïve café résumé Ünïcödé \u00a0nbsp \u200bzwsp \ufeffbom",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "=" * 70 + "\n" + "-" * 33 + "\n" + "#" * 12 + ".:" * 6,
    "MixedCASE camelCase snake_case kebab-case SCREAMING_CASE",
)
"""Texts on which the converted tokenizer must agree with tiktoken, id for id."""


def cache_directory() -> Path:
    """Where downloads and converted tokenizers live: ``$PAWLETTE_CACHE``, ~/.cache/pawlette."""
    configured = os.environ.get("PAWLETTE_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "pawlette"


def random_texts(count: int, *, seed: int = 0) -> list[str]:
    """``count`` deterministic strings mixing ASCII, CJK, emoji, whitespace and digits."""
    rng = random.Random(seed)
    alphabet = (
        "aaaabbbeeeTHE   \n\n\t\r0123456789你好世界的是🙂🚀é'sSt-_.,;:{}[]\"\\/<|>=#*\u00a0\u3000"
    )
    texts = []
    for _ in range(count):
        if rng.random() < 0.5:
            texts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 48))))
        else:
            code_points = [
                rng.choice(
                    (
                        rng.randint(0x20, 0x2FF),
                        rng.randint(0x4E00, 0x9FFF),
                        rng.randint(0x1F300, 0x1FAFF),
                        rng.randint(0x0, 0xD7FF),
                    )
                )
                for _ in range(rng.randint(0, 24))
            ]
            texts.append("".join(map(chr, code_points)))
    return texts


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _download_wheel(directory: Path) -> Path:
    wheel = directory / _WHEEL_NAME
    if wheel.is_file():
        return wheel
    directory.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        f"llama-models=={LLAMA_MODELS_VERSION}",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--quiet",
    ]
    # Download into a private directory, then move: two test processes never see half a wheel.
    with tempfile.TemporaryDirectory(dir=directory) as staging:
        try:
            result = subprocess.run(
                [*command, "--dest", staging],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(
                f"llama3 tokenizer: `{' '.join(command)}` took over 600 s;"
                " expected the llama-models wheel from PyPI",
                pytrace=False,
            )
        downloaded = Path(staging) / _WHEEL_NAME
        if result.returncode != 0 or not downloaded.is_file():
            output = (result.stderr or result.stdout).strip()[-2000:]
            pytest.fail(
                f"llama3 tokenizer: `{' '.join(command)}` exited {result.returncode} with\n"
                f"{output}\nexpected {_WHEEL_NAME} from PyPI. Without network, put that wheel"
                f" (or {_WHEEL_MEMBER}) in {directory} (set PAWLETTE_CACHE to move it)",
                pytrace=False,
            )
        os.replace(downloaded, wheel)
    return wheel


def llama3_tokenizer_model() -> Path:
    """The path of Meta's Llama 3 ``tokenizer.model`` in the cache, downloading it if needed."""
    directory = cache_directory()
    model_path = directory / "llama3" / "tokenizer.model"
    if model_path.is_file() and _file_sha256(model_path) == _TOKENIZER_MODEL_SHA256:
        return model_path
    wheel = _download_wheel(directory)
    try:
        with zipfile.ZipFile(wheel) as archive:
            data = archive.read(_WHEEL_MEMBER)
    except (zipfile.BadZipFile, KeyError) as error:
        pytest.fail(
            f"llama3 tokenizer: {wheel} has no readable {_WHEEL_MEMBER} ({error});"
            " expected the llama-models wheel. Delete it to download it again",
            pytrace=False,
        )
    digest = hashlib.sha256(data).hexdigest()
    if digest != _TOKENIZER_MODEL_SHA256:
        pytest.fail(
            f"llama3 tokenizer: {_WHEEL_MEMBER} in {wheel} has SHA-256 {digest};"
            f" expected {_TOKENIZER_MODEL_SHA256}",
            pytrace=False,
        )
    model_path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(model_path, data)
    return model_path


def _write_atomically(path: Path, data: bytes) -> None:
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as file:
        file.write(data)
    # NamedTemporaryFile makes the file private (0600); a cache is as readable as a download.
    os.chmod(file.name, 0o644)
    os.replace(file.name, path)


@contextlib.contextmanager
def _tiktoken_cache_disabled() -> Iterator[None]:
    # tiktoken copies every file it loads into a cache under /tmp unless this is "".
    saved = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = ""
    try:
        yield
    finally:
        if saved is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = saved


@cache
def llama3_tiktoken_ranks() -> dict[bytes, int]:
    """Llama 3's ranks as tiktoken's own loader reads them (nothing is fetched for a local path)."""
    try:
        import tiktoken.load
    except ImportError as error:
        pytest.fail(
            f"llama3 tokenizer: cannot import tiktoken ({error}); expected it from the test"
            " extra. Install with `pip install -e '.[test]'`",
            pytrace=False,
        )
    model_path = llama3_tokenizer_model()
    with _tiktoken_cache_disabled():
        return tiktoken.load.load_tiktoken_bpe(
            str(model_path), expected_hash=_TOKENIZER_MODEL_SHA256
        )


@cache
def llama3_tiktoken() -> tiktoken.Encoding:
    """Llama 3 as Meta's reference code builds it: ``tiktoken`` over the same local rank file."""
    import tiktoken

    ranks = llama3_tiktoken_ranks()
    return tiktoken.Encoding(
        name="llama3",
        pat_str=LLAMA3_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=llama3_special_tokens(len(ranks)),
    )


def mismatches_with_tiktoken(
    tokenizer: Tokenizer, texts: Sequence[str], *, limit: int = 5
) -> list[str]:
    """Up to ``limit`` readable descriptions of texts where ``tokenizer`` and tiktoken disagree.

    Both ``tokenizer.encode`` and :func:`encode_plain` are compared with tiktoken's
    ``encode_ordinary`` (special token strings are plain text there).
    """
    reference = llama3_tiktoken()
    problems = []
    encodings = tokenizer.encode_batch(list(texts), add_special_tokens=False)
    for text, encoding in zip(texts, encodings, strict=True):
        expected = reference.encode_ordinary(text)
        plain = encode_plain(tokenizer, text)
        # encode() matches special token strings, so it is compared only on texts without them.
        has_special = any(special in text for special in LLAMA3_SPECIAL_TOKENS)
        if plain != expected or (not has_special and encoding.ids != expected):
            expected_pieces = [reference.decode_single_token_bytes(i) for i in expected]
            found_pieces = [tokenizer.id_to_token(i) for i in plain]
            problems.append(
                f"{text!r}: tiktoken {expected} {expected_pieces}; "
                f"converted encode {encoding.ids}, encode_plain {plain} {found_pieces}"
            )
            if len(problems) >= limit:
                break
    return problems


def _check(tokenizer: Tokenizer, *, against_tiktoken: bool) -> None:
    for text, expected in KNOWN_ENCODINGS.items():
        found = tokenizer.encode(text, add_special_tokens=False).ids
        if found != expected:
            pytest.fail(
                f"llama3 tokenizer: {text!r} encodes to {found}; expected {expected}",
                pytrace=False,
            )
    for text, token_id in LLAMA3_SPECIAL_TOKENS.items():
        found_id = tokenizer.token_to_id(text)
        if found_id != token_id:
            pytest.fail(
                f"llama3 tokenizer: special token {text!r} has id {found_id}; expected {token_id}",
                pytrace=False,
            )
    if against_tiktoken:
        problems = mismatches_with_tiktoken(tokenizer, [*VERIFICATION_TEXTS, *random_texts(2000)])
        if problems:
            pytest.fail(
                "llama3 tokenizer: the conversion disagrees with tiktoken on\n"
                + "\n".join(problems)
                + "\nexpected the same ids",
                pytrace=False,
            )


def _converted_name() -> str:
    # The cached JSON is only valid for this converter and this rank file.
    converter_source = Path(tiktoken_file.__file__).read_bytes()
    digest = hashlib.sha256(converter_source + _TOKENIZER_MODEL_SHA256.encode()).hexdigest()
    return f"tokenizer-{digest[:16]}.json"


@cache
def llama3_tokenizer() -> Tokenizer:
    """Meta's Llama 3 tokenizer as a ``tokenizers.Tokenizer`` (cached on disk and per process).

    The first call in a fresh cache downloads the llama-models wheel (6.6 MB), converts the rank
    file and checks it against tiktoken; later calls load the cached ``tokenizer.json`` and
    re-check the known ids and special token ids only.
    """
    json_path = cache_directory() / "llama3" / _converted_name()
    if json_path.is_file():
        tokenizer = Tokenizer.from_file(str(json_path))
        _check(tokenizer, against_tiktoken=False)
        return tokenizer
    model_path = llama3_tokenizer_model()
    tokenizer = tokenizer_from_tiktoken(
        model_path, pattern=LLAMA3_PATTERN, special_tokens=LLAMA3_SPECIAL_TOKENS
    )
    _check(tokenizer, against_tiktoken=True)
    # Drop JSON files of older converters, then publish ours whole.
    for stale in json_path.parent.glob("tokenizer-*.json"):
        with contextlib.suppress(OSError):
            stale.unlink()
    _write_atomically(json_path, tokenizer.to_str().encode())
    return tokenizer
