"""What real models write, read three ways that must agree: whole, as text streamed in any
pieces, and as the model's own token ids (its real tokenizer, markers by id) streamed in any
groups.  Shared by the chatml and llama3 tests."""

from __future__ import annotations

import random
from typing import Any

from tokenizers import Tokenizer

from pawlette.engine.fold import fold
from pawlette.format import Format
from pawlette.tokenization.ids import IdParser

from ..helpers import feed_in_pieces, random_sizes, sequential_ids


def read(fmt: Format, events: list[Any]) -> tuple[Any, ...]:
    """What a client keeps of a completion: the message, the finish reason, the warnings."""
    result = fold(events, fmt.grammar.fields)
    return (result.messages, result.finish_reason, [w.text for w in result.warnings])


def whole(fmt: Format, text: str) -> tuple[Any, ...]:
    parser = fmt.parser(id_factory=sequential_ids())
    return read(fmt, parser.feed(text) + parser.finish())


def calls_of(reading: tuple[Any, ...]) -> list[tuple[str, str]]:
    (message,) = reading[0]
    return [(call.name, call.arguments) for call in message.tool_calls]


def content_of(reading: tuple[Any, ...]) -> str:
    (message,) = reading[0]
    return message.text


def from_ids(fmt: Format, tokenizer: Tokenizer, ids: list[int], sizes: list[int]) -> Any:
    parser = IdParser(fmt, tokenizer, id_factory=sequential_ids())
    events: list[Any] = []
    position = 0
    for size in sizes * (len(ids) // max(1, sum(sizes)) + 1):
        events += parser.feed_ids(ids[position : position + size])
        position += size
        if position >= len(ids):
            break
    return read(fmt, events + parser.finish())


def check_every_way(fmt: Format, tokenizer: Tokenizer, text: str, seed: int = 0) -> Any:
    """The whole reading of ``text``, after checking that every streamed reading equals it:
    text a character at a time and in random pieces (calls held or streamed), and the
    tokenizer's ids of ``text`` (special tokens as the model emits them) one at a time and
    in random groups."""
    expected = whole(fmt, text)
    for sizes in ([1], random_sizes(seed), random_sizes(seed + 1)):
        for stream_arguments in (False, True):
            events = feed_in_pieces(
                fmt, text, sizes, conversation=False, stream_arguments=stream_arguments
            )
            assert read(fmt, events) == expected, (text, sizes, stream_arguments)
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    generator = random.Random(seed)
    for sizes in ([1], [generator.randint(1, 4) for _ in range(16)], [len(ids) or 1]):
        assert from_ids(fmt, tokenizer, ids, sizes) == expected, (text, sizes)
    return expected
