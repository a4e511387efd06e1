"""Reading training records: JSONL (plain, gzip, zstandard), Parquet, ``datasets`` directories.

:func:`open_records` looks at what a path holds, not at its name:

- a file starting with gzip's magic bytes (``.jsonl.gz``) or zstandard's (``.jsonl.zst``;
  needs the ``zstandard`` package, in the ``tokenize`` extra) is JSONL, decompressed as it
  is read;
- a file starting with ``PAR1`` is Parquet, read a row group's batch at a time;
- a directory written by ``datasets``' ``save_to_disk`` (``state.json`` and its Arrow files)
  is read file by file, batch by batch, memory-mapped; a ``DatasetDict`` directory reads the
  split ``split`` names, and without one names its splits in the error;
- a dataset in the local Hugging Face Hub cache (``hf://datasets/OWNER/NAME``, or the path of
  its ``datasets--OWNER--NAME`` folder; :mod:`.hub_cache`) is its split's data files read one
  after the other, each as above;
- anything else (and ``-``, stdin) is JSONL, one record per line.

Every reader is streaming: a chunk of records at a time, so memory does not grow with the
input.  A chunk is a list of ``(number, record)``: the 1-based line (JSONL, blank lines
skipped but counted) or row number (counted on across the files of a Hub dataset), and the
line's bytes (JSON is parsed by whoever tokenizes it) or the row as a dict.  Progress is
counted in bytes of the file as stored (compressed bytes for compressed JSONL) or in rows.
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
from .hub_cache import HubDataset, is_hub_address, resolve_hub_dataset

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
    """``jsonl``, ``jsonl.gz``, ``jsonl.zst``, ``parquet``, ``datasets`` or ``hub``."""
    total: int | None
    """The input's size in :attr:`unit` (None: unknown, such as stdin)."""
    unit: str
    """``B`` (bytes as stored) or ``rows``."""
    estimated_bytes: int | None
    """About how many bytes of records the input holds (to choose the worker count)."""
    _chunks: Iterator[tuple[Chunk, int]] = field(repr=False, default=iter(()))
    _close: list[Any] = field(repr=False, default_factory=list)
    details: dict[str, object] = field(default_factory=dict)
    """What the Parquet metadata records of the input beyond its name and kind (a Hub
    dataset's repository, revision, commit, split and files)."""

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
            f" Install with `pip install -e '.[{extra}]'` in pawlette's repository"
        ) from error


def open_records(
    path: str,
    *,
    chunk_records: int,
    chunk_bytes: int,
    split: str | None = None,
    data_files: str | None = None,
    revision: str | None = None,
) -> RecordSource:
    """Open ``path`` (``"-"``: stdin) for reading records (see the module docstring).

    ``split``: a split of a Hub dataset or a ``DatasetDict`` directory; ``data_files`` and
    ``revision``: a Hub dataset's files and revision (:mod:`.hub_cache`)."""
    if is_hub_address(path):
        dataset = resolve_hub_dataset(path, split=split, data_files=data_files, revision=revision)
        return _hub_dataset(path, dataset, chunk_records, chunk_bytes)
    if data_files is not None or revision is not None:
        option = "--data-files" if data_files is not None else "--revision"
        raise PawletteError(
            f"{path}: {option} is for a dataset of the Hub cache; expected hf://OWNER/NAME or"
            " a datasets--OWNER--NAME folder"
        )
    if path == "-":
        _no_split(path, split)
        return _jsonl(path, sys.stdin.buffer, None, "jsonl", chunk_records, chunk_bytes, [])
    target = Path(path)
    if target.is_dir():
        return _datasets_directory(target, chunk_records, split)
    _no_split(path, split)
    return _file(path, chunk_records, chunk_bytes)


def _no_split(path: str, split: str | None) -> None:
    if split is not None:
        raise PawletteError(
            f"{path}: --split {split!r} for a single file; expected a Hub dataset or a"
            " DatasetDict directory"
        )


def _file(path: str, chunk_records: int, chunk_bytes: int) -> RecordSource:
    target = Path(path)
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
        lines = _BufferedLines(_ZstdFrames(path, raw, _module("zstandard")))
        return _jsonl(path, lines, raw, "jsonl.zst", chunk_records, chunk_bytes, [raw])
    return _jsonl(path, raw, raw, "jsonl", chunk_records, chunk_bytes, [raw])


class _ZstdFrames:
    """The decompressed bytes of zstandard frames, one after the other, refusing a file that
    ends inside a frame: zstandard's ``stream_reader`` returns what it has and no error
    there, so a cut download read as fewer records, silently."""

    def __init__(self, name: str, raw: IO[bytes], zstandard: Any) -> None:
        self._name, self._raw = name, raw
        self._decompressor = zstandard.ZstdDecompressor()
        self._error = zstandard.ZstdError
        self._frame = self._decompressor.decompressobj()
        self._inside = False

    def read(self, size: int) -> bytes:
        while True:
            data = self._raw.read(size)
            if not data:
                if self._inside:
                    raise PawletteError(
                        f"{self._name}: ends inside a zstandard frame; expected a whole"
                        " .jsonl.zst file (an interrupted download?)"
                    )
                return b""
            output = b""
            while data:
                try:
                    output += self._frame.decompress(data)
                except self._error as error:
                    raise PawletteError(
                        f"{self._name}: not valid zstandard data ({error})"
                    ) from error
                self._inside = not self._frame.eof
                data = self._frame.unused_data if self._frame.eof else b""
                if self._frame.eof:
                    self._frame = self._decompressor.decompressobj()
            if output:
                return output


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
        for number, line in _lines(name, kind, stream):
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


def _lines(name: str, kind: str, stream: Any) -> Iterator[tuple[int, bytes]]:
    """Numbered lines; a compressed file cut short (gzip's EOFError, a damaged block's
    OSError) is an error naming the file and the last line read, not a traceback."""
    number = 0
    iterator = iter(stream)
    while True:
        try:
            line = next(iterator)
        except StopIteration:
            return
        except (EOFError, OSError) as error:
            raise PawletteError(
                f"{name}: cannot read past line {number} ({error}); expected a whole .{kind}"
                " file (an interrupted download?)"
            ) from error
        number += 1
        yield number, line


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
    pa = _module("pyarrow")
    pq = _module("pyarrow.parquet")
    try:
        file = pq.ParquetFile(str(path))
    except Exception as error:
        raise PawletteError(f"{path}: cannot read as Parquet ({error})") from error
    rows = file.metadata.num_rows

    def chunks() -> Iterator[tuple[Chunk, int]]:
        number = 0
        batches = file.iter_batches(batch_size=chunk_records)
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            except (OSError, pa.ArrowException) as error:  # a damaged page or row group
                raise PawletteError(
                    f"{path}: cannot read past row {number} ({error}); expected a whole"
                    " Parquet file"
                ) from error
            records = batch.to_pylist()
            yield [(number + offset + 1, row) for offset, row in enumerate(records)], len(records)
            number += len(records)

    size = path.stat().st_size
    return RecordSource(str(path), "parquet", rows or None, "rows", size * 4, chunks(), [file])


def _json_object(path: Path) -> dict[str, Any]:
    """A JSON object file of a ``datasets`` directory; anything else is an error naming it."""
    try:
        value = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise PawletteError(
            f"{path}: cannot read as JSON ({error}); expected the file datasets' save_to_disk"
            " writes"
        ) from error
    if not isinstance(value, dict):
        raise PawletteError(f"{path}: {_shape(value)}; expected a JSON object")
    return value


def _shape(value: object) -> str:
    if value is None:
        return "missing"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _split_names(path: Path) -> list[str]:
    names = _json_object(path).get("splits", [])
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise PawletteError(f"{path}: splits is {_shape(names)}; expected a list of names")
    return names


def _datasets_directory(path: Path, chunk_records: int, split: str | None) -> RecordSource:
    pa = _module("pyarrow")
    state_file = path / "state.json"
    splits = path / "dataset_dict.json"
    if split is not None:
        if not splits.is_file():
            _no_split(str(path), split)
        names = _split_names(splits)
        if split not in names:
            raise PawletteError(
                f"{path}: no split {split!r}; expected one of {', '.join(names) or 'none'}"
            )
        return _datasets_directory(path / split, chunk_records, None)
    if not state_file.is_file():
        if splits.is_file():
            names = _split_names(splits)
            raise PawletteError(
                f"{path}: a DatasetDict directory; expected --split naming one of"
                f" {', '.join(names)} (or one split's directory,"
                f" {', '.join(str(path / name) for name in names)})"
            )
        raise PawletteError(
            f"{path}: a directory without state.json; expected a file, or a directory written"
            " by datasets' save_to_disk"
        )
    state = _json_object(state_file)
    entries = state.get("_data_files")
    if not isinstance(entries, list) or not all(
        isinstance(entry, dict) and isinstance(entry.get("filename"), str) for entry in entries
    ):
        raise PawletteError(
            f"{state_file}: _data_files is {_shape(entries)}; expected a list of"
            ' {"filename": ...} objects, as datasets\' save_to_disk writes'
        )
    files = [path / entry["filename"] for entry in entries]
    if not files:
        raise PawletteError(f"{state_file}: no _data_files; expected datasets' save_to_disk")
    readers = []
    rows = 0
    size = 0
    for file in files:
        try:
            readers.append(pa.ipc.open_stream(pa.memory_map(str(file))))
            size += file.stat().st_size
            # The row count, from each file's metadata-light stream reader.
            rows += pa.ipc.open_stream(pa.memory_map(str(file))).read_all().num_rows
        except (OSError, pa.ArrowException) as error:
            raise PawletteError(
                f"{file}: cannot read as an Arrow stream ({error}); expected the data file"
                f" {state_file} names"
            ) from error

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


def _hub_dataset(
    name: str, dataset: HubDataset, chunk_records: int, chunk_bytes: int
) -> RecordSource:
    """The files of a Hub dataset, one after the other, one open at a time; numbers count on
    across them, progress is in bytes as stored (a Parquet file's rows as their share)."""
    paths = [dataset.snapshot / file for file in dataset.files]
    sizes = [path.stat().st_size for path in paths]
    estimated = 0
    for path, size in zip(paths, sizes, strict=True):
        with open(path, "rb") as file:
            plain = not file.read(4).startswith((GZIP_MAGIC, ZSTD_MAGIC, PARQUET_MAGIC))
        estimated += size if plain else size * 4
    handles: list[Any] = []
    source = RecordSource(
        name, "hub", sum(sizes) or None, "B", estimated, details=dataset.describe()
    )

    def chunks() -> Iterator[tuple[Chunk, int]]:
        offset = 0  # the last number of the files before
        for path, size in zip(paths, sizes, strict=True):
            part = _file(str(path), chunk_records, chunk_bytes)
            handles.append(part)
            last = 0
            rows_done = bytes_done = 0
            for chunk, moved in part.chunks():
                if chunk:
                    last = chunk[-1][0]
                if part.unit == "rows":  # a Parquet file: its rows as their share of its bytes
                    rows_done += moved
                    share = size * rows_done // part.total if part.total else size
                    moved, bytes_done = share - bytes_done, share
                yield [(offset + number, record) for number, record in chunk], moved
            part.close()
            handles.remove(part)
            offset += last

    source._chunks = chunks()
    source._close = handles
    return source
