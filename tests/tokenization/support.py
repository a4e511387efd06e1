"""Tokenizers and helpers the tokenization tests share (each built once per process)."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from tokenizers import Tokenizer

import pawlette
from pawlette import declare
from pawlette.engine.lexer import marker_pattern
from pawlette.format import Format
from pawlette.tokenization import encode_plain
from pawlette.tokenization.prepare import add_markers
from pawlette.types import Rendering

from ..declare.conversations import reasoning_rules
from ..support.llama3 import llama3_tokenizer
from ..support.small_bpe import small_tokenizer

FORMATS = pawlette.formats()
GOLDEN = Path(__file__).resolve().parents[1] / "golden"
ALL_MARKERS: tuple[str, ...] = tuple(
    dict.fromkeys(
        marker for name in FORMATS for marker in pawlette.get_format(name).special_markers
    )
)
"""Every marker of every registered format, in a stable order."""


def strategy(name: str) -> ModuleType:
    return importlib.import_module(f"tests.strategies.{name}")


@cache
def small(name: str) -> Tokenizer:
    """A small byte-level BPE with the markers of format ``name``."""
    return small_tokenizer(pawlette.get_format(name).special_markers)


@cache
def small_all() -> Tokenizer:
    """A small byte-level BPE with the markers of every format."""
    return small_tokenizer(ALL_MARKERS)


@cache
def llama3_all() -> Tokenizer:
    """Meta's Llama 3 tokenizer with the markers of every format added (breeze's and others')."""
    return add_markers(llama3_tokenizer(), ALL_MARKERS, owner="every format")


def golden_cases(name: str) -> list[Path]:
    """The golden cases of format ``name`` (a case of a variant names it in its input.json's
    ``format``, and belongs to that variant)."""
    return sorted(
        path.parent
        for path in (GOLDEN / name).glob("*/input.json")
        if json.loads(path.read_text(encoding="utf-8")).get("format", name) == name
    )


def golden_input(case: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((case / "input.json").read_text(encoding="utf-8"))
    data.pop("format", None)
    return data


def assistant_indices(request: dict[str, Any]) -> list[int]:
    return [i for i, message in enumerate(request["messages"]) if message["role"] == "assistant"]


def _after_last_query(request: dict[str, Any]) -> list[int]:
    """The assistant turns after the last user message: a format that drops the reasoning of
    earlier turns writes those earlier turns differently once a later user message comes."""
    messages = request["messages"]
    last_query = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=-1)
    return [i for i, m in enumerate(messages) if m["role"] == "assistant" and i > last_query]


def prefix_indices(fmt: Format) -> Callable[[dict[str, Any]], list[int]]:
    """Where a format's prompts are prefixes of its training render: its strategy may say
    (Mistral); a declared format that keeps reasoning only after the last user message
    (Qwen3, GLM) says so by its declaration; otherwise every assistant turn."""
    explicit = getattr(strategy(fmt.name), "prompt_prefix_indices", None)
    if explicit is not None:
        return explicit  # type: ignore[no-any-return]
    if isinstance(fmt.declaration, declare.Layout):
        rules = reasoning_rules(fmt.declaration)
        if rules is not None and rules.keep == "after_last_query":
            return _after_last_query
    return assistant_indices


def token_text(tokenizer: Tokenizer, ids: list[int]) -> str:
    return str(tokenizer.decode(ids, skip_special_tokens=False))


def cut_positions(fmt: Format, rendering: Rendering) -> list[int]:
    """Character offsets where two text pieces of different trainability meet."""
    pattern = marker_pattern(fmt.special_markers)
    cuts = []
    position = 0
    previous: bool | None = None
    for segment in rendering.segments:
        spans = [(0, len(segment.text), False)]
        if segment.special:
            spans, start = [], 0
            for match in pattern.finditer(segment.text):
                spans += [(start, match.start(), False), (match.start(), match.end(), True)]
                start = match.end()
            spans.append((start, len(segment.text), False))
        for start, end, is_marker in spans:
            if start == end:
                continue
            if is_marker:
                previous = None
            else:
                if previous is not None and previous != segment.trainable:
                    cuts.append(position + start)
                previous = segment.trainable
        position += len(segment.text)
    return cuts


def call_ids(fmt: Format, tokenizer: Tokenizer, rendering: Rendering) -> list[int]:
    """The ids of a format that declares ``encode_cuts`` (its reference encodes piece by
    piece): markers by id, and each piece after a marker or a declared cut encoded by a
    ``tokenizer.encode`` call of its own."""
    assert fmt.encode_cuts is not None
    pattern = marker_pattern(fmt.special_markers)
    ids: list[int] = []
    piece, kind = "", ""

    added = [token.content for token in tokenizer.get_added_tokens_decoder().values()]

    def flush() -> None:
        nonlocal piece
        if any(token in piece for token in added):
            ids.extend(encode_plain(tokenizer, piece))  # text spelling a marker stays text
        elif piece:
            ids.extend(tokenizer.encode(piece, add_special_tokens=False).ids)
        piece = ""

    for segment in rendering.segments:
        if segment.special and pattern.fullmatch(segment.text):
            flush()
            ids.append(tokenizer.token_to_id(segment.text))
            kind = ""
            continue
        assert not segment.special, segment  # no format with cuts writes composite markers
        if piece and kind in fmt.encode_cuts and segment.kind != kind:
            flush()
        piece += segment.text
        kind = segment.kind
    flush()
    return ids
