"""Each token's provenance in the Parquet that ``pawlette tokenize`` writes, kept small.

A row's ``provenance`` column lists where each *run* of tokens starts: one
``{start, message, kind}`` per stretch of tokens from the same message and segment kind
(:attr:`~pawlette.tokenization.Tokenized.message_indices` and ``kinds``), ``start`` being the
run's first token within the row.  A conversation of seven messages has a few dozen runs for
hundreds of tokens, so the column costs little to build and to store, and ``pawlette inspect
--row N --provenance`` expands it back to one ``(message, kind)`` per token.  In a packed row
every sequence starts a new run, its message indices those of its own conversation.
"""

from __future__ import annotations

import importlib
import itertools
from collections.abc import Sequence
from typing import Any

__all__ = [
    "COLUMN",
    "Runs",
    "column_runs",
    "expand_runs",
    "provenance_array",
    "provenance_type",
    "runs_of",
]

COLUMN = "provenance"

Runs = tuple[list[int], list[int], list[str]]
"""A row's runs: their starts, message indices and kinds."""


def _arrow() -> Any:
    return importlib.import_module("pyarrow")


def provenance_type() -> Any:
    pa = _arrow()
    return pa.list_(
        pa.struct([("start", pa.int32()), ("message", pa.int32()), ("kind", pa.string())])
    )


def runs_of(message_indices: Sequence[int], kinds: Sequence[str], offset: int = 0) -> Runs:
    """The runs of one conversation's tokens (``offset``: where it starts in its row)."""
    starts: list[int] = []
    messages: list[int] = []
    names: list[str] = []
    previous_message, previous_kind = None, None
    for position, (message, kind) in enumerate(zip(message_indices, kinds, strict=True)):
        if message != previous_message or kind != previous_kind:
            starts.append(offset + position)
            messages.append(message)
            names.append(kind)
            previous_message, previous_kind = message, kind
    return starts, messages, names


def provenance_array(rows: Sequence[Runs]) -> Any:
    """The column for these rows' runs."""
    pa = _arrow()
    offsets = [0]
    starts: list[int] = []
    messages: list[int] = []
    kinds: list[str] = []
    for row_starts, row_messages, row_kinds in rows:
        starts += row_starts
        messages += row_messages
        kinds += row_kinds
        offsets.append(len(starts))
    values = pa.StructArray.from_arrays(
        [
            pa.array(starts, type=pa.int32()),
            pa.array(messages, type=pa.int32()),
            pa.array(kinds, type=pa.string()),
        ],
        names=["start", "message", "kind"],
    )
    return pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), values)


def column_runs(column: Any) -> list[Runs]:
    """Each row's runs, back from a ``provenance`` column (an Arrow list array)."""
    offsets = column.offsets.to_pylist()
    values = column.values
    starts = values.field("start").to_pylist()
    messages = values.field("message").to_pylist()
    kinds = values.field("kind").to_pylist()
    return [
        (starts[begin:end], messages[begin:end], kinds[begin:end])
        for begin, end in itertools.pairwise(offsets)
    ]


def expand_runs(entries: Sequence[dict[str, Any]], length: int) -> list[tuple[int, str]]:
    """One ``(message, kind)`` per token of a row of ``length`` tokens, from its column value
    (a list of ``{start, message, kind}``)."""
    result: list[tuple[int, str]] = []
    for index, entry in enumerate(entries):
        end = entries[index + 1]["start"] if index + 1 < len(entries) else length
        result += [(entry["message"], entry["kind"])] * (end - entry["start"])
    if len(result) != length or (entries and entries[0]["start"] != 0):
        raise ValueError(f"provenance runs cover {len(result)} of {length} tokens")
    return result
