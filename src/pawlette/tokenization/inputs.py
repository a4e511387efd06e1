"""Reading training records: JSONL (plain, gzip, zstandard), Parquet, ``datasets`` directories.

:func:`open_records` looks at what a path holds, not at its name:

- a file starting with gzip's magic bytes (``.jsonl.gz``) or zstandard's (``.jsonl.zst``;
  needs the ``zstandard`` package, in the ``tokenize`` extra) is JSONL, decompressed as it
  is read;
- a file starting with ``PAR1`` is Parquet, read a row group's batch at a time;
- a directory written by ``datasets``' ``save_to_disk`` (``state.json`` and its Arrow files)
  is read file by file, batch by batch, memory-mapped; a ``DatasetDict`` directory names its
  splits in the error;
- anything else (and ``-``, stdin) is JSONL, one record per line.

Every reader is streaming: a chunk of records at a time, so memory does not grow with the
input.  A chunk is a list of ``(number, record)``: the 1-based line (JSONL, blank lines
skipped but counted) or row number, and the line's bytes (JSON is parsed by whoever
tokenizes it) or the row as a dict.  Progress is counted in bytes of the file as stored
(compressed bytes for compressed JSONL) or in rows.
"""

from __future__ import annotations

import gzip
import importlib
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..errors import PawletteError

__all__ = ["Chunk", "RecordSource", "open_records"]

Chunk = list[tuple[int, "bytes | dict[str, Any]"]]

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
PARQUET_MAGIC = b"PAR1"


@dataclass
class RecordSource:
    """An opened input: its chunks, and how far reading has gone."""

    name: str
    kind: str
    """``jsonl``, ``jsonl.gz``, ``jsonl.zst``, ``parquet`` or ``datasets``."""
    total: int | None
    """The input's size in :attr:`unit` (None: unknown, such as stdin)."""
    unit: str
    """``B`` (bytes as stored) or ``rows``."""
    estimated_bytes: int | None
    """About how many bytes of records the input holds (to choose the worker count)."""
    _chunks: Iterator[tuple[Chunk, int]] = field(repr=False, default=iter(()))
    _close: list[Any] = field(repr=False, default_factory=list)

    def chunks(self) -> Iterator[tuple[Chunk, int]]:
        """Chunks of records, each with how far it moved the progress (in :attr:`unit`)."""
        return self._chunks

    def close(self) -> None:
        for handle in self._close:
            handle.close()
        self._close.clear()


def _module(name: str, extra: str = "tokenize") -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as error:  # pragma: no cover - depends on the installation
        raise PawletteError(
            f"cannot import {name} ({error}); expected the {extra} extra."
            f" Install with `pip install 'pawlette[{extra}]'`"
        ) from error


def open_records(path: str, *, chunk_records: int, chunk_bytes: int) -> RecordSource:
    """Open ``path`` (``"-"``: stdin) for reading records (see the module docstring)."""
    if path == "-":
        return _jsonl(path, sys.stdin.buffer, None, "jsonl", chunk_records, chunk_bytes, [])
    target = Path(path)
    if target.is_dir():
        return _datasets_directory(target, chunk_records)
    try:
        raw = open(target, "rb")  # noqa: SIM115 - closed by RecordSource.close
    except OSError as error:
        raise PawletteError(f"{path}: cannot open ({error.strerror})") from error
    try:
        magic = raw.read(4)
        raw.seek(0)
    except OSError as error:
        raw.close()
        raise PawletteError(f"{path}: cannot read ({error.strerror})") from error
    if magic == PARQUET_MAGIC:
        raw.close()
        return _parquet(target, chunk_records)
    if magic.startswith(GZIP_MAGIC):
        stream: Any = gzip.GzipFile(fileobj=raw, mode="rb")
        return _jsonl(path, stream, raw, "jsonl.gz", chunk_records, chunk_bytes, [stream, raw])
    if magic == ZSTD_MAGIC:
        zstandard = _module("zstandard")
        stream = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        lines = _BufferedLines(stream)
        return _jsonl(path, lines, raw, "jsonl.zst", chunk_records, chunk_bytes, [stream, raw])
    return _jsonl(path, raw, raw, "jsonl", chunk_records, chunk_bytes, [raw])


class _BufferedLines:
    """Lines of a binary stream that only has ``read`` (zstandard's reader)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._buffer = b""

    def __iter__(self) -> Iterator[bytes]:
        while True:
            data = self._stream.read(1 << 20)
            if not data:
                break
            self._buffer += data
            *lines, self._buffer = self._buffer.split(b"\n")
            for line in lines:
                yield line + b"\n"
        if self._buffer:
            yield self._buffer


def _jsonl(
    name: str,
    stream: Any,
    raw: IO[bytes] | None,
    kind: str,
    chunk_records: int,
    chunk_bytes: int,
    handles: list[Any],
) -> RecordSource:
    total = None
    if raw is not None:
        try:
            total = os.fstat(raw.fileno()).st_size or None
        except (OSError, ValueError):
            total = None
    # Compressed JSONL holds several times its size in records (about 4x for chat text).
    estimated = None if total is None else total * (1 if kind == "jsonl" else 4)

    def chunks() -> Iterator[tuple[Chunk, int]]:
        chunk: Chunk = []
        size = 0
        position = 0
        for number, line in enumerate(stream, start=1):
            size += len(line)
            if line.strip():  # a blank line is not a record
                chunk.append((number, line))
            if len(chunk) >= chunk_records or size >= chunk_bytes:
                moved, position = _moved(raw, position, size)
                yield chunk, moved
                chunk, size = [], 0
        if chunk or size:
            moved, position = _moved(raw, position, size)
            yield chunk, moved

    return RecordSource(name, kind, total, "B", estimated, chunks(), handles)


def _moved(raw: IO[bytes] | None, position: int, size: int) -> tuple[int, int]:
    """Progress in stored bytes: the raw file's position when it is compressed."""
    if raw is None:
        return size, position + size
    try:
        now = raw.tell()
    except (OSError, ValueError):
        return size, position + size
    return max(now - position, 0), now


def _parquet(path: Path, chunk_records: int) -> RecordSource:
    pq = _module("pyarrow.parquet")
    try:
        file = pq.ParquetFile(str(path))
    except Exception as error:
        raise PawletteError(f"{path}: cannot read as Parquet ({error})") from error
    rows = file.metadata.num_rows

    def chunks() -> Iterator[tuple[Chunk, int]]:
        number = 0
        for batch in file.iter_batches(batch_size=chunk_records):
            records = batch.to_pylist()
            yield [(number + offset + 1, row) for offset, row in enumerate(records)], len(records)
            number += len(records)

    size = path.stat().st_size
    return RecordSource(str(path), "parquet", rows or None, "rows", size * 4, chunks(), [file])


def _datasets_directory(path: Path, chunk_records: int) -> RecordSource:
    pa = _module("pyarrow")
    state_file = path / "state.json"
    if not state_file.is_file():
        splits = path / "dataset_dict.json"
        if splits.is_file():
            names = json.loads(splits.read_text(encoding="utf-8")).get("splits", [])
            raise PawletteError(
                f"{path}: a DatasetDict directory; expected one split's directory"
                f" ({', '.join(str(path / name) for name in names)})"
            )
        raise PawletteError(
            f"{path}: a directory without state.json; expected a file, or a directory written"
            " by datasets' save_to_disk"
        )
    state = json.loads(state_file.read_text(encoding="utf-8"))
    files = [path / entry["filename"] for entry in state.get("_data_files", [])]
    if not files:
        raise PawletteError(f"{state_file}: no _data_files; expected datasets' save_to_disk")
    readers = []
    rows = 0
    size = 0
    for file in files:
        reader = pa.ipc.open_stream(pa.memory_map(str(file)))
        readers.append(reader)
        size += file.stat().st_size
    for file in files:  # the row count, from each file's metadata-light stream reader
        rows += pa.ipc.open_stream(pa.memory_map(str(file))).read_all().num_rows

    def chunks() -> Iterator[tuple[Chunk, int]]:
        number = 0
        for reader in readers:
            for batch in reader:
                for start in range(0, batch.num_rows, chunk_records):
                    records = batch.slice(start, chunk_records).to_pylist()
                    chunk = [(number + offset + 1, row) for offset, row in enumerate(records)]
                    number += len(records)
                    yield chunk, len(records)

    return RecordSource(str(path), "datasets", rows or None, "rows", size, chunks(), [])
