"""Sequence packing: conversations side by side in rows of at most ``capacity`` tokens.

Packing trainers (transformers' ``DataCollatorWithFlattening``, TRL's ``padding_free`` and
``packing``, flash-attention's variable-length kernels) train on rows that hold several
sequences and keep each sequence's attention to itself.  They need the boundaries, and a
packed row carries them as columns:

- ``input_ids``, ``labels``: the sequences one after the other (no padding: the collator pads
  a batch, or flattens it);
- ``position_ids``: 0, 1, 2, ... restarting at each sequence (what transformers' flattening
  collator writes, and what its flash-attention path reads the boundaries from);
- ``seq_lengths``: each sequence's length; ``cu_seqlens``: their running sums from 0
  (flash-attention's ``cu_seqlens``: ``len(seq_lengths) + 1`` entries, the last the row's
  length);
- ``lines``: each sequence's source line (or row) number; ``length``: the row's tokens;
- ``provenance`` (when the packer is built with ``provenance=True``, as ``pawlette tokenize``
  does): each token's message and segment kind as runs (:mod:`.provenance`), every sequence
  starting a run at its offset in the row.

The first label of every sequence is -100: its first token is predicted by nobody (in a
packed row, the last token of the sequence before would be made to predict it).  Templates
begin with a prompt, so that label is -100 already; it is forced, and counted, in case not.

Bins are filled *best fit* in input order: each sequence goes to the open row with the least
room that still holds it; when none does, a new row opens, and when more than ``open_rows``
rows are open the fullest is written.  Memory is bounded by ``open_rows`` rows; a larger
``open_rows`` packs tighter.
"""

from __future__ import annotations

import bisect
import importlib
import itertools
from dataclasses import dataclass, field
from typing import Any

from .encoder import IGNORE_INDEX
from .provenance import COLUMN, Runs, provenance_array, provenance_type

__all__ = ["PackedRows", "Packer", "packed_schema"]


def _arrow() -> Any:
    return importlib.import_module("pyarrow")


def packed_schema(*, provenance: bool = False) -> Any:
    pa = _arrow()
    extra = [(COLUMN, provenance_type())] if provenance else []
    return pa.schema(
        [
            ("input_ids", pa.list_(pa.int32())),
            ("labels", pa.list_(pa.int32())),
            ("position_ids", pa.list_(pa.int32())),
            ("seq_lengths", pa.list_(pa.int32())),
            ("cu_seqlens", pa.list_(pa.int32())),
            ("lines", pa.list_(pa.int64())),
            ("length", pa.int32()),
            *extra,
        ]
    )


@dataclass
class _Row:
    room: int
    number: int
    # line, ids, labels, provenance runs (from 0)
    sequences: list[tuple[int, Any, Any, Runs | None]] = field(default_factory=list)


@dataclass
class PackedRows:
    """Counts of a packing run."""

    rows: int = 0
    sequences: int = 0
    tokens: int = 0
    first_labels_forced: int = 0


class Packer:
    """Packs sequences (numpy int32 arrays) into rows of at most ``capacity`` tokens."""

    def __init__(self, capacity: int, *, open_rows: int = 64, provenance: bool = False) -> None:
        self.capacity = capacity
        self.provenance = provenance
        self.open_rows = open_rows
        self._open: list[tuple[int, int]] = []  # (room, number), sorted
        self._rows: dict[int, _Row] = {}
        self._numbers = itertools.count()
        self._closed: list[_Row] = []
        self.counts = PackedRows()

    def add(self, line: int, ids: Any, labels: Any, runs: Runs | None = None) -> None:
        """Add one sequence (at most ``capacity`` tokens; ``runs``: its provenance, needed
        when the packer writes provenance)."""
        size = len(ids)
        if size > self.capacity:
            raise ValueError(f"a sequence of {size} tokens in rows of {self.capacity}")
        position = bisect.bisect_left(self._open, (size, -1))
        if position < len(self._open):
            room, number = self._open.pop(position)
            row = self._rows[number]
        else:
            number = next(self._numbers)
            row = self._rows[number] = _Row(self.capacity, number)
            room = self.capacity
        if self.provenance and runs is None:
            raise ValueError("a sequence without provenance runs for a packer that writes them")
        row.sequences.append((line, ids, labels, runs))
        row.room = room - size
        bisect.insort(self._open, (row.room, number))
        if len(self._open) > self.open_rows:
            self._close(self._open.pop(0)[1])  # the fullest

    def _close(self, number: int) -> None:
        self._closed.append(self._rows.pop(number))

    def take(self, *, everything: bool = False) -> Any | None:
        """A record batch of the rows closed so far (``everything``: close all first, in the
        order they opened), or None."""
        if everything:
            for _, number in sorted(self._open, key=lambda item: item[1]):
                self._close(number)
            self._open.clear()
        if not self._closed:
            return None
        rows, self._closed = self._closed, []
        return self._batch(rows)

    def _batch(self, rows: list[_Row]) -> Any:
        pa = _arrow()
        np = importlib.import_module("numpy")
        id_parts: list[Any] = []
        label_parts: list[Any] = []
        lengths: list[int] = []
        lines: list[int] = []
        row_sizes: list[int] = []
        row_counts: list[int] = []
        row_runs: list[Runs] = []
        for row in rows:
            total = 0
            starts: list[int] = []
            messages: list[int] = []
            kinds: list[str] = []
            for line, ids, labels, runs in row.sequences:
                if runs is not None:
                    starts += [total + start for start in runs[0]]
                    messages += runs[1]
                    kinds += runs[2]
                id_parts.append(ids)
                if len(labels) and labels[0] != IGNORE_INDEX:
                    labels = labels.copy()
                    labels[0] = IGNORE_INDEX
                    self.counts.first_labels_forced += 1
                label_parts.append(labels)
                lengths.append(len(ids))
                lines.append(line)
                total += len(ids)
            row_sizes.append(total)
            row_counts.append(len(row.sequences))
            row_runs.append((starts, messages, kinds))
        all_ids = np.concatenate(id_parts).astype(np.int32, copy=False)
        all_labels = np.concatenate(label_parts).astype(np.int32, copy=False)
        sequence_lengths = np.asarray(lengths, dtype=np.int64)
        starts = np.cumsum(sequence_lengths) - sequence_lengths
        positions = (np.arange(len(all_ids)) - np.repeat(starts, sequence_lengths)).astype(np.int32)
        token_offsets = pa.array(np.concatenate([[0], np.cumsum(row_sizes)]), type=pa.int32())
        sequence_offsets = pa.array(np.concatenate([[0], np.cumsum(row_counts)]), type=pa.int32())
        # cu_seqlens: per row, 0 and the running sums of its sequences' lengths.
        cumulative: list[int] = []
        cu_offsets = [0]
        start = 0
        for count in row_counts:
            running = 0
            cumulative.append(0)
            for size in lengths[start : start + count]:
                running += size
                cumulative.append(running)
            start += count
            cu_offsets.append(len(cumulative))
        self.counts.rows += len(rows)
        self.counts.sequences += len(lengths)
        self.counts.tokens += len(all_ids)
        extra = [provenance_array(row_runs)] if self.provenance else []
        return pa.RecordBatch.from_arrays(
            [
                pa.ListArray.from_arrays(token_offsets, pa.array(all_ids)),
                pa.ListArray.from_arrays(token_offsets, pa.array(all_labels)),
                pa.ListArray.from_arrays(token_offsets, pa.array(positions)),
                pa.ListArray.from_arrays(sequence_offsets, pa.array(lengths, type=pa.int32())),
                pa.ListArray.from_arrays(
                    pa.array(cu_offsets, type=pa.int32()), pa.array(cumulative, type=pa.int32())
                ),
                pa.ListArray.from_arrays(sequence_offsets, pa.array(lines, type=pa.int64())),
                pa.array(row_sizes, type=pa.int32()),
                *extra,
            ],
            schema=packed_schema(provenance=self.provenance),
        )
