"""Tiny random-weight llama GGUF models for a real llama.cpp in the tests (no compiler, no hub).

:func:`format_model` writes, once per format and cached under the test cache directory
(``$PAWLETTE_CACHE``, else ``~/.cache/pawlette``), a one-layer llama whose vocabulary is Meta's
Llama 3 tokenizer prepared for the format (``pawlette tokenizer prepare``: the format's markers
are special tokens).  Its ``tokenizer.json`` is saved next to it for ``--tokenizer``.

A random 128k-token model almost never writes one of a handful of tokens, so the output layer
is biased: every token's embedding carries a constant first component, which survives the
final RMS norm, and the output row of each favoured token (the format's markers, closing
punctuation and the characters that end a JSON or Python value) has a large weight there.
Under a grammar the model then often reaches the interesting paths: a marker where the
grammar allows one, a closing quote inside a string, a stop where the turn may end.  The
format's stop markers are the model's end-of-generation tokens (``eos``, ``eot``, ``eom``), as
in a real GGUF converted for the format.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pawlette.formats import get_format
from pawlette.tokenization.prepare import prepare_tokenizer

from .llama3 import cache_directory, llama3_tokenizer

__all__ = ["FAVOURED_TEXTS", "GgufModel", "format_model"]

_EMBEDDING = 32
_HEADS = 2
_FEED_FORWARD = 64
_CONTEXT = 4096
_CONSTANT = 4.0
"""The first component of every embedding (the others are standard normal): after the final
RMS norm it is about ``_NORMED_CONSTANT``, which a favoured token's output row multiplies."""
_NORMED_CONSTANT = _CONSTANT / ((_CONSTANT**2 + _EMBEDDING - 1) / _EMBEDDING) ** 0.5
_OUTPUT_SCALE = 0.3
"""Random output weights: ordinary logits have a spread of about ``0.3 * sqrt(31)`` = 1.7."""
_MARKER_ADVANTAGE = 13.0
_PUNCTUATION_ADVANTAGE = 10.0
_QUOTE_ADVANTAGE = 13.0
"""Logit advantages over an ordinary token.  The 128k ordinary tokens weigh about 540k
(``128000 * exp(1.7**2 / 2)``): a marker or a closing quote (exp(13) = 440k) is written
within a few tokens where the grammar allows it (a reasoning block closes, a string ends),
so most answers end well within a small output budget."""

FAVOURED_TEXTS = ("}", "]", ")", "]]", '"}', "=", "0", "1", "true", "x")
QUOTES = ('"', "'")
"""Ordinary tokens the output layer favours: what closes a value, a string, a call."""

_VERSION = "5"
"""Bumped when the weights or the metadata change (part of the cache file's name)."""


@dataclass(frozen=True)
class GgufModel:
    path: Path
    tokenizer: Path
    """The prepared ``tokenizer.json`` (for ``pawlette serve --tokenizer``)."""
    marker_ids: dict[str, int]


def _token_type(content: str, special_ids: set[int], token_id: int) -> int:
    # llama.cpp's token types: 1 normal, 3 control.
    return 3 if token_id in special_ids else 1


def _weights(vocabulary: int, favoured: dict[int, float], seed: int) -> dict[str, np.ndarray]:
    """One llama block of small random weights, and the biased embedding and output layers."""
    rng = np.random.default_rng(seed)
    n, f = _EMBEDDING, _FEED_FORWARD

    def random(*shape: int, scale: float = 0.2) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    embedding = random(vocabulary, n, scale=1.0)
    embedding[:, 0] = _CONSTANT  # the constant component the output bias reads
    output = random(vocabulary, n, scale=_OUTPUT_SCALE)
    output[:, 0] = 0.0
    for token_id, advantage in favoured.items():
        output[token_id, 0] = advantage / _NORMED_CONSTANT
    return {
        "token_embd.weight": embedding,
        "output_norm.weight": np.ones(n, dtype=np.float32),
        "output.weight": output,
        "blk.0.attn_norm.weight": np.ones(n, dtype=np.float32),
        "blk.0.attn_q.weight": random(n, n),
        "blk.0.attn_k.weight": random(n, n),
        "blk.0.attn_v.weight": random(n, n),
        "blk.0.attn_output.weight": random(n, n),
        "blk.0.ffn_norm.weight": np.ones(n, dtype=np.float32),
        "blk.0.ffn_gate.weight": random(f, n),
        "blk.0.ffn_up.weight": random(f, n),
        "blk.0.ffn_down.weight": random(n, f),
    }


def _write(path: Path, format_name: str, tokenizer_json: str) -> dict[str, int]:
    import gguf

    fmt = get_format(format_name)
    data = json.loads(tokenizer_json)
    vocabulary_map: dict[str, int] = dict(data["model"]["vocab"])
    special_ids = set()
    for added in data["added_tokens"]:
        vocabulary_map[added["content"]] = added["id"]
        if added.get("special"):
            special_ids.add(added["id"])
    size = max(vocabulary_map.values()) + 1
    tokens = [f"<|unused_{number}|>" for number in range(size)]
    for content, token_id in vocabulary_map.items():
        tokens[token_id] = content
    unused = set(range(size)) - set(vocabulary_map.values())
    special_ids |= unused
    merges = [
        merge if isinstance(merge, str) else " ".join(merge) for merge in data["model"]["merges"]
    ]
    marker_ids = {marker: vocabulary_map[marker] for marker in fmt.special_markers}

    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(tokenizer_json)
    favoured: dict[int, float] = {}
    for text in FAVOURED_TEXTS:
        for token_id in tokenizer.encode(text, add_special_tokens=False).ids:
            favoured[token_id] = _PUNCTUATION_ADVANTAGE
    for text in QUOTES:
        for token_id in tokenizer.encode(text, add_special_tokens=False).ids:
            favoured[token_id] = _QUOTE_ADVANTAGE
    for token_id in marker_ids.values():
        favoured[token_id] = _MARKER_ADVANTAGE

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(f"pawlette-test-{format_name}")
    writer.add_context_length(_CONTEXT)
    writer.add_embedding_length(_EMBEDDING)
    writer.add_block_count(1)
    writer.add_feed_forward_length(_FEED_FORWARD)
    writer.add_head_count(_HEADS)
    writer.add_head_count_kv(_HEADS)
    writer.add_rope_dimension_count(_EMBEDDING // _HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(size)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("llama-bpe")
    writer.add_token_list(tokens)
    writer.add_token_types([_token_type(t, special_ids, i) for i, t in enumerate(tokens)])
    writer.add_token_merges(merges)
    stops = [marker_ids[marker] for marker in fmt.stop if marker in marker_ids]
    writer.add_eos_token_id(stops[0])
    # llama.cpp's llguidance ends a grammar with the end-of-turn token (else the end of
    # sequence): the format's last stop, not Llama 3's own <|eot_id|> found by its text.
    writer.add_eot_token_id(stops[-1] if len(stops) < 3 else stops[1])
    if len(stops) > 2:
        writer.add_eom_token_id(stops[2])
    writer.add_bos_token_id(vocabulary_map["<|begin_of_text|>"])
    writer.add_add_bos_token(False)
    seed = int.from_bytes(hashlib.sha256(format_name.encode()).digest()[:4], "little")
    for name, tensor in _weights(size, favoured, seed).items():
        writer.add_tensor(name, tensor)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return marker_ids


def format_model(format_name: str) -> GgufModel:
    """The cached test model of ``format_name`` (built in a few seconds at first use)."""
    tokenizer_json = prepare_tokenizer(format_name, llama3_tokenizer()).to_str()
    digest = hashlib.sha256((_VERSION + tokenizer_json).encode()).hexdigest()[:16]
    directory = cache_directory() / "gguf"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{format_name}-{digest}.gguf"
    tokenizer_path = directory / f"{format_name}-{digest}.tokenizer.json"
    ids_path = directory / f"{format_name}-{digest}.markers.json"
    if not (path.is_file() and tokenizer_path.is_file() and ids_path.is_file()):
        for stale in directory.glob(f"{format_name}-*"):
            if not stale.name.startswith(f"{format_name}-{digest}."):  # another process's
                with contextlib.suppress(OSError):  # build of this model is left alone
                    stale.unlink()
        # Written under private names, then renamed: a half-written file is never cached, and
        # test processes building the same model at once each rename a whole one.
        staging = path.with_suffix(f".{os.getpid()}.partial")
        marker_ids = _write(staging, format_name, tokenizer_json)
        for target, text in ((tokenizer_path, tokenizer_json), (ids_path, json.dumps(marker_ids))):
            private = target.with_suffix(f".{os.getpid()}.partial")
            private.write_text(text, encoding="utf-8")
            os.replace(private, target)
        os.replace(staging, path)
    marker_ids = json.loads(ids_path.read_text(encoding="utf-8"))
    return GgufModel(path=path, tokenizer=tokenizer_path, marker_ids=marker_ids)
