"""Rows (:mod:`pawlette.legacy.rows`): a row writes what the writer's piece-by-piece calls
write, in every message context, and a derived value is made once per value."""

from __future__ import annotations

import re

import pytest

from pawlette.engine.writer import Writer
from pawlette.legacy import rows
from pawlette.legacy.rows import Row

PIECES = (
    (False, "\n", "separator", False),
    (True, "<|start|>", "header", False),
    (False, "", "header", False),  # empty text: written by neither
    (True, "<|call|>", "tool_call", True),
    (True, "", "tool_call", True),  # an empty marker is written, as marker() writes it
)
ESCAPE = re.compile(re.escape("<|start|>"))


def written_piece_by_piece(escape: re.Pattern[str] | None, caller_text: str) -> Writer:
    writer = Writer(escape)
    writer.at("user", 3)
    writer.text(caller_text, "content")
    for special, text, kind, trainable in PIECES:
        if special:
            writer.marker(text, kind, trainable=trainable)
        else:
            writer.raw(text, kind, trainable=trainable)
    return writer


def written_as_a_row(row: Row, escape: re.Pattern[str] | None, caller_text: str) -> Writer:
    writer = Writer(escape)
    writer.at("user", 3)
    writer.text(caller_text, "content")
    row.write(writer)
    return writer


@pytest.mark.parametrize("escape", [None, ESCAPE])
@pytest.mark.parametrize("caller_text", ["plain", "ends in a backslash\\", "<|start|>"])
def test_a_row_writes_what_the_pieces_write(
    escape: re.Pattern[str] | None, caller_text: str
) -> None:
    row = Row(PIECES)
    for _ in range(2):  # built, then kept
        expected = written_piece_by_piece(escape, caller_text).rendering()
        assert written_as_a_row(row, escape, caller_text).rendering() == expected


def test_a_row_leading_with_a_marker_settles_a_trailing_backslash() -> None:
    row = Row(((True, "<|start|>", "header", False),))
    for _ in range(2):
        writer = Writer(ESCAPE)
        writer.at("user", 0)
        writer.text("a\\", "content")
        row.write(writer)
        piece = Writer(ESCAPE)
        piece.at("user", 0)
        piece.text("a\\", "content")
        piece.marker("<|start|>", "header")
        assert writer.rendering() == piece.rendering()


def test_segments_follow_the_message_context() -> None:
    row = Row(PIECES[:2])
    writer = Writer(None)
    for role, index in [("user", 1), ("assistant", 1), ("user", 1), (None, -1), ("user", 999)]:
        writer.at(role, index)  # type: ignore[arg-type]
        row.write(writer)
    contexts = [(segment.role, segment.message_index) for segment in writer.rendering().segments]
    assert contexts == [
        *[("user", 1)] * 2,
        *[("assistant", 1)] * 2,
        *[("user", 1)] * 2,
        *[(None, -1)] * 2,
        *[("user", 999)] * 2,
    ]


def test_once_per_derives_once_per_value_and_tells_equal_values_apart() -> None:
    calls: list[object] = []

    def build(value: object) -> int:
        calls.append(value)
        return len(calls)

    derived = rows.once_per(build)
    first, second = [1], [1]  # equal, not the same value
    assert derived(first) == derived(first) == 1
    assert derived(second) == 2
    assert calls == [first, second]
    for number in range(rows.MAX_VALUES + 5):  # past the bound: still right
        assert derived([number]) == len(calls)
