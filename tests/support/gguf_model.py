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
grammar allows one, a closing quote inside a string, a stop where the turn may end.  A fence of
several ordinary tokens that ends free text (Qwen3-Coder's ``\n</parameter>\n`` after a value)
is linked: each of its tokens favours the next, so a value ends once its fence begins (and its
first token is favoured: MiniMax-M2's ``</parameter>\n`` begins with no closing token).  A
string argument written raw (LFM2.5's ``city='O'Hare'``) ends only at a quote the call goes on
after, so the tokens that write both (``')``, ``')]``, ``',``) are favoured as a quote is.

The format's stop markers are the model's end-of-generation tokens (``eos``, ``eot``, ``eom``),
and the only ones, as in a real GGUF converted for the format: a Llama 3 token that llama.cpp
would end on by its name is renamed (:data:`END_OF_GENERATION_NAMES`).  The cells check
pawlette's grammars and server; an answer should end because the grammar let the format's stop
come, not run to the output budget because the random model had no words for the format.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pawlette.format import Format
from pawlette.formats import get_format
from pawlette.tokenization.prepare import prepare_tokenizer

from .llama3 import cache_directory, llama3_tokenizer

__all__ = ["END_OF_GENERATION_NAMES", "FAVOURED_TEXTS", "GgufModel", "format_model"]

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
_STOP_ADVANTAGE = 14.5
"""A stop marker's: where a turn may end or go on with another call (``\\n<tool_call>``), it
ends about four times in five, so call after call does not run into the output budget."""
_LINK_ADVANTAGE = 18.0
"""A fence's next token, right after its previous one (``\\n</parameter>\\n`` is four tokens:
each must follow the one before, which a model of independent token weights seldom writes)."""
_LINK_COMPONENTS = 6
"""Embedding components kept for the fences' links (one per token that a link starts from)."""
_BLOCK_OUTPUT_SCALE = 0.05
"""The block's output weights (attention and feed-forward): small, so the hidden state is
mostly the token's own embedding and its constant component survives the final norm."""

END_OF_GENERATION_NAMES = frozenset(
    {
        "<|eot_id|>",
        "<|eom_id|>",
        "<|end_of_text|>",
        "<|im_end|>",
        "<|end|>",
        "<|return|>",
        "<|call|>",
        "<end_of_turn>",
        "<|endoftext|>",
        "<EOT>",
        "_<EOT>",
        "[EOT]",
        "<end_of_utterance>",
        "<｜end▁of▁sentence｜>",  # DeepSeek
    }
)
"""The token texts llama.cpp reads as end of generation whatever the GGUF says (its vocabulary
loader matches them by name).  The vocabulary is Llama 3's, whose ``<|end_of_text|>``,
``<|eot_id|>`` and ``<|eom_id|>`` would end a turn of any format, and llama.cpp returns such a
token's text as the answer's last words (``/v1/completions`` reports it as an ordinary
``stop``): a call's arguments ending in ``<|end_of_text|>``.  A converted model's
end-of-generation tokens are its own format's, so each of these that is not one of the
format's markers gets a neutral name in the GGUF (the prepared ``tokenizer.json`` keeps the
Llama 3 name for an id the format never writes)."""

FAVOURED_TEXTS = ("}", "]", ")", "]]", '"}', "=", "0", "1", "true", "x")
QUOTES = ('"', "'", "\n")
"""Ordinary tokens the output layer favours: what closes a value, a string, a call, a line
(a reasoning block closes after a newline)."""

_VERSION = "7"
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


def _weights(
    vocabulary: int, favoured: dict[int, float], links: list[tuple[int, int]], seed: int
) -> dict[str, np.ndarray]:
    """One llama block of small random weights, and the biased embedding and output layers.

    ``links``: (token, next token) pairs of the format's fences: after the first the second is
    favoured by ``_LINK_ADVANTAGE`` (a component of its own per first token, zero in every
    other token's embedding and output row)."""
    rng = np.random.default_rng(seed)
    n, f = _EMBEDDING, _FEED_FORWARD

    def random(*shape: int, scale: float = 0.2) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    embedding = random(vocabulary, n, scale=1.0)
    embedding[:, 0] = _CONSTANT  # the constant component the output bias reads
    output = random(vocabulary, n, scale=_OUTPUT_SCALE)
    output[:, 0] = 0.0
    for token_id, advantage in favoured.items():
        # Only the constant component: a random remainder, read against the hidden state's
        # drift, moved each favoured token by an amount of its own (one format's <|im_end|>
        # sat several units below its other markers and was hardly ever written).
        output[token_id, 1:] = 0.0
        output[token_id, 0] = advantage / _NORMED_CONSTANT
    firsts = list(dict.fromkeys(first for first, _ in links))
    if len(firsts) > _LINK_COMPONENTS:
        raise ValueError(f"{len(firsts)} fence tokens, components for {_LINK_COMPONENTS}")
    embedding[:, n - _LINK_COMPONENTS :] = 0.0
    output[:, n - _LINK_COMPONENTS :] = 0.0
    for number, first in enumerate(firsts):
        embedding[first, n - 1 - number] = _CONSTANT
    for first, following in links:
        output[following, n - 1 - firsts.index(first)] = _LINK_ADVANTAGE / _NORMED_CONSTANT
    # The block never writes the constant component and adds little to the others, so after
    # the final norm the hidden state's first component stays near ``_NORMED_CONSTANT`` and
    # the advantages are what they say (written at full strength, the block's output halved
    # them on some tokens and left markers at a few percent where the grammar allows them).
    attention_output = random(n, n, scale=_BLOCK_OUTPUT_SCALE)
    feed_forward_down = random(n, f, scale=_BLOCK_OUTPUT_SCALE)
    attention_output[0] = 0.0
    feed_forward_down[0] = 0.0
    return {
        "token_embd.weight": embedding,
        "output_norm.weight": np.ones(n, dtype=np.float32),
        "output.weight": output,
        "blk.0.attn_norm.weight": np.ones(n, dtype=np.float32),
        "blk.0.attn_q.weight": random(n, n),
        "blk.0.attn_k.weight": random(n, n),
        "blk.0.attn_v.weight": random(n, n),
        "blk.0.attn_output.weight": attention_output,
        "blk.0.ffn_norm.weight": np.ones(n, dtype=np.float32),
        "blk.0.ffn_gate.weight": random(f, n),
        "blk.0.ffn_up.weight": random(f, n),
        "blk.0.ffn_down.weight": feed_forward_down,
    }


def fences(fmt: Format) -> list[str]:
    """The format's texts of several tokens that close free text and that its grammar needs
    whole: an XML-style call's value close (``\\n</parameter>\\n`` after a parameter
    written as text, which a model must write token after token to end the value), a call
    list's close written as text."""
    from pawlette import declare
    from pawlette.declare.pieces import text_of

    layout = declare.layout_of(fmt)
    calls = layout.concept(declare.XmlCalls) if layout is not None else None
    xml = [] if calls is None else [text_of(calls.value_close, layout.options, layout.name)]
    return xml + list_closes(fmt)


def unfavoured_openings(fmt: Format, tokenizer: Any, favoured: Mapping[int, float]) -> list[int]:
    """The first tokens of the format's fences that nothing above favours (Seed-OSS's value
    close ``</parameter>\n`` begins with ``<``): favoured as a newline is, which begins the
    others, so the model begins the close it is linked through as often."""
    openings = []
    for fence in fences(fmt):
        ids = tokenizer.encode(fence, add_special_tokens=False).ids
        if ids and ids[0] not in favoured and ids[0] not in openings:
            openings.append(ids[0])
    return openings


def list_closes(fmt: Format) -> list[str]:
    """A call list's close written as text (MiniMax M1's ``\\n</tool_calls>``): after a
    call, a model must write it token after token to end the list."""
    from pawlette import declare
    from pawlette.declare.pieces import text_of

    layout = declare.layout_of(fmt)
    listed = layout.concept(declare.JsonCallList) if layout is not None else None
    if listed is None or not listed.close:
        return []
    if any(isinstance(piece, declare.Marker) for piece in listed.close):
        return []
    return [text_of(listed.close, layout.options, layout.name)]


def raw_string_closes(fmt: Format) -> list[str]:
    """What ends a string argument written raw (``PythonCalls`` spelt as LFM2.5's template
    spells them): its quote and what the call goes on with, which a model writing quotes and
    closing punctuation as separate tokens would seldom put together."""
    from pawlette import declare
    from pawlette.declare import PythonCalls

    layout = declare.layout_of(fmt)
    calls = layout.concept(PythonCalls) if layout is not None else None
    return ["')", "')]", "',"] if calls is not None and calls.spelling == "template" else []


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
    for content, token_id in vocabulary_map.items():
        if content in END_OF_GENERATION_NAMES and content not in fmt.special_markers:
            tokens[token_id] = f"<|unused_{token_id}|>"
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
    for text in (*QUOTES, *raw_string_closes(fmt)):
        for token_id in tokenizer.encode(text, add_special_tokens=False).ids:
            favoured[token_id] = _QUOTE_ADVANTAGE
    stop_markers = fmt.stop_markers
    for marker, token_id in marker_ids.items():
        favoured[token_id] = _STOP_ADVANTAGE if marker in stop_markers else _MARKER_ADVANTAGE
    links = []
    for fence in fences(fmt):
        ids = tokenizer.encode(fence, add_special_tokens=False).ids
        links += list(itertools.pairwise(ids))
    for token_id in unfavoured_openings(fmt, tokenizer, favoured):
        favoured[token_id] = _QUOTE_ADVANTAGE

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
    stops = [marker_ids[marker] for marker in stop_markers]
    writer.add_eos_token_id(stops[0])
    # llama.cpp's llguidance ends a grammar with the end-of-turn token (else the end of
    # sequence): the format's last stop, not Llama 3's own <|eot_id|> found by its text.
    writer.add_eot_token_id(stops[-1] if len(stops) < 3 else stops[1])
    if len(stops) > 2:
        writer.add_eom_token_id(stops[2])
    writer.add_bos_token_id(vocabulary_map["<|begin_of_text|>"])
    writer.add_add_bos_token(False)
    seed = int.from_bytes(hashlib.sha256(format_name.encode()).digest()[:4], "little")
    for name, tensor in _weights(size, favoured, links, seed).items():
        writer.add_tensor(name, tensor)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return marker_ids


def _opened(format_name: str, tokenizer_json: str) -> bool:
    """Whether the model favours a fence's first token no other rule favours."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(tokenizer_json)
    fmt = get_format(format_name)
    favoured = {
        token_id
        for text in (*FAVOURED_TEXTS, *QUOTES)
        for token_id in tokenizer.encode(text, add_special_tokens=False).ids
    }
    favoured |= {tokenizer.token_to_id(marker) for marker in fmt.special_markers}
    return bool(unfavoured_openings(fmt, tokenizer, dict.fromkeys(favoured, 0.0)))


def format_model(format_name: str) -> GgufModel:
    """The cached test model of ``format_name`` (built in a few seconds at first use)."""
    tokenizer_json = prepare_tokenizer(format_name, llama3_tokenizer()).to_str()
    key = _VERSION + tokenizer_json
    fmt = get_format(format_name)
    closes = list_closes(fmt)
    if closes:  # linked since version 7: the other models keep their key
        key += json.dumps(closes)
    if _opened(format_name, tokenizer_json):  # favoured since then: the others keep theirs
        key += "opened-as-a-newline"
    raw_closes = raw_string_closes(fmt)
    if raw_closes:  # favoured since then: the others keep their key
        key += json.dumps(raw_closes)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
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
