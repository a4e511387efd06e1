"""The segment writer: segments built once per layout write what marker() and raw() write."""

from __future__ import annotations

import pytest

import pawlette
from pawlette.engine import writer as writer_module
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


def test_constant_segments_are_kept_under_a_second_key_and_start_over_when_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``also`` keeps the same segments under another key; a full store starts over with
    the segments just built."""
    constants = ConstantSegments()
    writer = Writer(None)
    writer.at("assistant", 2)
    built = constants.build(writer, "pieces", PIECES, "end", True, also=("by", "value"))
    assert constants.found[("pieces", "end", True, "assistant", 2)] is built
    assert constants.found[(("by", "value"), "end", True, "assistant", 2)] is built
    monkeypatch.setattr(writer_module, "MAX_CONSTANT_SEGMENTS", len(constants.found))
    writer.at("assistant", 3)
    again = constants.build(writer, "pieces", PIECES, "end", True)
    assert again == tuple(segment._replace(message_index=3) for segment in built)
    assert constants.found == {("pieces", "end", True, "assistant", 3): again}
