"""The segment writer: segments built once per layout write what marker() and raw() write."""

from __future__ import annotations

import pytest

import pawlette
from pawlette.engine.writer import MAX_CACHED_INDEX, ConstantSegments, Writer

PIECES = ((True, "[AST]"), (False, ""), (False, "assistant\n"), (True, ""), (True, "<end>"))


def by_calls(texts: list[str], index: int) -> Writer:
    """Caller texts each followed by PIECES, written one call per piece."""
    writer = Writer(pawlette.get_format("pcml").escape_pattern)
    writer.at("assistant", index)
    for text in texts:
        writer.text(text, "content", trainable=True)
        for special, piece in PIECES:
            (writer.marker if special else writer.raw)(piece, "end", trainable=True)
    return writer


def by_constants(texts: list[str], index: int, constants: ConstantSegments) -> Writer:
    writer = Writer(pawlette.get_format("pcml").escape_pattern)
    writer.at("assistant", index)
    for text in texts:
        writer.text(text, "content", trainable=True)
        key = ("pieces", "end", True, writer.role, writer.message_index)
        segments = constants.found.get(key)
        if segments is None:
            segments = constants.build(writer, "pieces", PIECES, "end", trainable=True)
        writer.extend(segments)
    return writer


@pytest.mark.parametrize("index", [0, 3, MAX_CACHED_INDEX + 1])
@pytest.mark.parametrize(
    "texts", [["plain"], ["ends in a backslash \\"], ["a\\\\", "<end> inside \\", ""]]
)
def test_constant_segments_write_what_marker_and_raw_write(texts: list[str], index: int) -> None:
    constants = ConstantSegments()
    expected = by_calls(texts, index).rendering()
    for _ in range(2):  # built, then from the cache (unless past the cached indices)
        assert by_constants(texts, index, constants).rendering() == expected
    assert bool(constants.found) == (index < MAX_CACHED_INDEX)
