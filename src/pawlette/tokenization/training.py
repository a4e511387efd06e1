"""Training data: chat records to Parquet token ids and labels, on every core.

``pawlette tokenize -f FORMAT --tokenizer PATH INPUT -o out.parquet``::

    INPUT: JSONL (.gz, .zst), Parquet, a datasets save_to_disk directory, a dataset of the
       │   local Hub cache (inputs.py, hub_cache.py)
       │  read in chunks (the main process)
       ▼
    bounded queue of chunks ──► worker processes (--workers), each with its encoder:
       │                        JSON → shape (--sharegpt) → drop (--drop) → render → ids +
       ▼                        labels → length (--max-length, --overflow), per chunk
    results in input order ──► (--pack N: best-fit rows, packing.py) ──► row groups of
                                out.parquet, with the run's provenance in its metadata

- Memory stays flat: at most ``2 × workers`` chunks are in flight, packing keeps a bounded
  number of open rows, and rows are written a row group at a time.
- A record that cannot be tokenized is counted with its reason (the first ten are printed,
  the summary groups them all by reason; ``--rejects FILE`` writes each one, its line and its
  reason), and the other records are written.  ``--strict`` stops at the first one.
- The run fails (non-zero exit, :class:`TokenizeFailed`, nothing left at ``-o``) when it
  wrote nothing or when rejects exceed ``--max-rejected`` (a count, or a fraction ``5%``).
- ``-o`` is checked before any work (not a directory, its directory exists and is writable);
  the output is written to ``out.parquet.partial`` and renamed when complete.
- Workers: forked from the main process on Linux after it has built its encoder, so a worker
  starts in milliseconds with the tokenizer already loaded (spawned elsewhere, each building
  its encoder once).  The default count is chosen by input size (see
  :func:`default_workers`).

Columns (unpacked): ``line`` (int64, the record's 1-based line or row number), ``input_ids``,
``labels`` (list<int32>; -100 where nothing is learned), ``length`` (int32) and
``provenance`` (each token's message and segment kind, as runs:
:mod:`pawlette.tokenization.provenance`; what ``pawlette inspect --row N --provenance``
shows).  Packed: see :mod:`pawlette.tokenization.packing`.  The file's key-value metadata
``pawlette`` is JSON: pawlette's version, format and its options, the tokenizer's SHA-256
and vocabulary size, the mask policy, drops, lengths, packing, the input and the summary's
counts.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib
import json
import multiprocessing
import os
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..errors import PawletteError, RequestError
from ..format import Format
from ..formats import get_format
from .encoder import ConversationEncoder, MaskPolicy, Tokenized, coerce_mask
from .inputs import Chunk, RecordSource, open_records
from .lengths import check_length_options, fit_length
from .losses import expected_fields, loss_field, parse_reject_losses, rejected_loss
from .packing import Packer, packed_schema
from .provenance import (
    COLUMN,
    Runs,
    column_runs,
    provenance_array,
    provenance_type,
    runs_of,
)
from .records import RecordTokenizer, encode_records
from .report import TokenizeFailed, TokenizeSummary
from .shapes import TOOLS, RecordShape, json_error, parse_drop

__all__ = [
    "RecordTokenizer",
    "RejectedRecord",
    "TokenizeFailed",
    "TokenizeSummary",
    "add_tokenize_arguments",
    "add_tokenizer_arguments",
    "command_tokenize",
    "command_tokenizer_prepare",
    "default_workers",
    "tokenize_file",
    "tokenize_jsonl",
]

CHUNK_RECORDS = 256
CHUNK_BYTES = 4 << 20
ROW_GROUP_ROWS = 8192
ROW_GROUP_TOKENS = 4 << 20
SHOWN_REJECTS = 10
SMALL_INPUT_BYTES = 1 << 20
"""Below this many bytes of records (about 300 conversations of bench/tokenize.py), the run
takes under a second in one process, and starting workers would be much of it; measured
(``bench.tokenize --end-to-end --sweep``): at 3 MB two forked workers already took half the
time of one process."""


class RejectedRecord(PawletteError):
    """A record that cannot be tokenized (raised by ``--strict``); ``line`` is 1-based."""

    def __init__(self, source: str, line: int, reason: str) -> None:
        self.source = source
        self.line = line
        self.reason = reason
        super().__init__(f"{source}:{line}: {reason}")


@dataclass(frozen=True)
class _Options:
    """What a worker needs to tokenize a chunk (picklable)."""

    format_name: str
    tokenizer: str  # a path, or a tokenizer's JSON
    mask: MaskPolicy
    drop: frozenset[str] = frozenset()
    shape: RecordShape = field(default_factory=RecordShape)
    max_length: int | None = None
    overflow: str = "drop"
    reject_losses: frozenset[str] = frozenset()


@dataclass
class _ChunkResult:
    size: int  # progress, in the source's unit
    records: int
    batch: Any  # a pyarrow RecordBatch
    rejected: list[tuple[int, str, bool]]  # line, reason, too long
    tokens: int
    learned: int
    nothing_learned: int
    truncated: int = 0
    truncated_inside: int = 0
    dropped_messages: Counter[str] = field(default_factory=Counter)
    dropped_records: Counter[str] = field(default_factory=Counter)
    lost_places: Counter[str] = field(default_factory=Counter)
    lost_records: Counter[str] = field(default_factory=Counter)


# ------------------------------------------------------------------ workers

_WORKER: tuple[ConversationEncoder, _Options] | None = None


def _init_worker(options: _Options) -> None:
    global _WORKER
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one process per core already
    if _WORKER is not None and _WORKER[1] == options:
        return  # forked: the parent's encoder, tokenizer loaded, came along
    source: object = options.tokenizer
    if options.tokenizer.lstrip().startswith("{"):
        from tokenizers import Tokenizer

        source = Tokenizer.from_str(options.tokenizer)
    encoder = ConversationEncoder(get_format(options.format_name), source, mask=options.mask)
    _WORKER = (encoder, options)


def _work(chunk: Chunk) -> _ChunkResult:
    if _WORKER is None:  # pragma: no cover - the initializer always runs first
        raise RuntimeError("worker used before its initializer ran")
    return _tokenize_chunk(_WORKER[0], _WORKER[1], chunk)


def _tokenize_chunk(encoder: ConversationEncoder, options: _Options, chunk: Chunk) -> _ChunkResult:
    pa = _module("pyarrow")

    rejected: list[tuple[int, str, bool]] = []
    lines: list[int] = []
    records: list[object] = []
    from_arrow = False
    for line, data in chunk:
        if isinstance(data, bytes):
            try:
                # Without the line's end: an unterminated string is reported as such.
                records.append(json.loads(data.rstrip(b"\r\n")))
            except (ValueError, RecursionError) as error:  # JSONDecodeError, UnicodeDecodeError
                rejected.append((line, f"not a JSON record ({json_error(error)})", False))
                continue
        else:
            from_arrow = True  # Arrow writes a key a row lacks as null
            records.append(data)
        lines.append(line)
    encoded = encode_records(
        encoder, records, shape=options.shape, drop=options.drop, drop_nulls=from_arrow
    )
    result = _ChunkResult(0, len(chunk), None, rejected, 0, 0, 0)
    for drops in encoded.dropped.values():
        # (a dropped tool listing is the record's: no message lost it)
        result.dropped_messages.update({key: count for key, count in drops.items() if key != TOOLS})
        result.dropped_records.update(drops.keys())
    kept_lines: list[int] = []
    ids: list[list[int]] = []
    labels: list[list[int]] = []
    runs: list[Runs] = []
    for line, tokenized in zip(lines, encoded.results, strict=True):
        if not isinstance(tokenized, Tokenized):
            rejected.append((line, str(tokenized), False))
            continue
        if tokenized.losses:
            refused = rejected_loss(
                tokenized.losses, options.reject_losses, options.drop, options.format_name
            )
            if refused is not None:
                rejected.append((line, str(refused), False))
                continue
        fitted, outcome = fit_length(tokenized, options.max_length, options.overflow)
        if fitted is None:
            rejected.append((line, outcome, True))
            continue
        result.truncated += outcome == "truncated"
        result.truncated_inside += outcome == "truncated inside an answer"
        if fitted.losses:
            fields = [loss_field(loss) for loss in fitted.losses]
            result.lost_places.update(fields)
            result.lost_records.update(set(fields))
        kept_lines.append(line)
        ids.append(fitted.input_ids)
        labels.append(fitted.labels)
        runs.append(runs_of(fitted.message_indices, fitted.kinds))
        count = fitted.learned
        result.learned += count
        result.nothing_learned += not count
    rejected.sort()
    lengths = [len(row) for row in ids]
    token_lists = pa.list_(pa.int32())
    result.batch = pa.RecordBatch.from_arrays(
        [
            pa.array(kept_lines, type=pa.int64()),
            pa.array(ids, type=token_lists),  # Arrow's own conversion: 5x a Python flatten
            pa.array(labels, type=token_lists),
            pa.array(lengths, type=pa.int32()),
            provenance_array(runs),
        ],
        schema=_schema(),
    )
    result.tokens = sum(lengths)
    return result


def _module(name: str) -> Any:
    """An optional dependency of the ``tokenize`` extra (pyarrow, tqdm), untyped."""
    try:
        return importlib.import_module(name)
    except ImportError as error:  # pragma: no cover - depends on the installation
        raise PawletteError(
            f"pawlette tokenize: cannot import {name} ({error}); expected the tokenize extra."
            " Install with `pip install -e '.[tokenize]'` in pawlette's repository"
        ) from error


def _schema() -> Any:
    pa = _module("pyarrow")

    return pa.schema(
        [
            ("line", pa.int64()),
            ("input_ids", pa.list_(pa.int32())),
            ("labels", pa.list_(pa.int32())),
            ("length", pa.int32()),
            (COLUMN, provenance_type()),
        ]
    )


# ------------------------------------------------------------------ checks before any work


def check_output(path: str | os.PathLike[str], what: str = "-o") -> Path:
    """``path`` as a file that can be written: not a directory, in a writable directory."""
    if os.fspath(path) == "-":  # an input's "-" is stdin; a file named "-" would surprise
        raise PawletteError(
            f"{what} -: standard output is not written to; expected a file path to write"
        )
    target = Path(path)
    if target.is_dir():
        raise PawletteError(f"{what} {target}: a directory; expected a file path to write")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise PawletteError(f"{what} {target}: no directory {parent}; expected an existing one")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PawletteError(f"{what} {target}: the directory {parent} is not writable")
    if target.exists() and not os.access(target, os.W_OK):
        raise PawletteError(f"{what} {target}: exists and is not writable")
    return target


def parse_max_rejected(spec: object) -> tuple[int | None, float | None]:
    """``(count, fraction)`` from ``--max-rejected``: ``100`` (records) or ``5%``/``0.05``."""
    if spec is None:
        return None, None
    text = str(spec).strip()
    try:
        if text.endswith("%"):
            fraction = float(text[:-1]) / 100
        elif isinstance(spec, float) or "." in text:
            fraction = float(text)
        else:
            count = int(text)
            if count < 0:
                raise ValueError(text)
            return count, None
    except ValueError:
        fraction = -1.0
    if not 0 <= fraction <= 1:
        raise RequestError(
            "max-rejected", f"found {text!r}", "a count (100), a percentage (5%) or a fraction"
        )
    return None, fraction


def default_workers(source: RecordSource) -> int:
    """One process for a small input (workers would not pay for their start), else one per
    core (the main process reads and writes alongside them)."""
    cores = os.cpu_count() or 1
    if cores < 2:
        return 0
    if source.estimated_bytes is not None and source.estimated_bytes < SMALL_INPUT_BYTES:
        return 0
    return cores


def tokenizer_digest(tokenizer: object) -> tuple[str, str]:
    """``(SHA-256 of the tokenizer's JSON, its path or "object")``."""
    if isinstance(tokenizer, (str, os.PathLike)):
        path = Path(tokenizer)
        if path.is_dir():
            path = path / "tokenizer.json"
        digest = hashlib.sha256()
        with open(path, "rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest(), os.fspath(path)
    from .backend import load_tokenizer

    text = load_tokenizer(tokenizer).to_str()
    return hashlib.sha256(text.encode("utf-8")).hexdigest(), "object"


def _jsonable(value: object) -> object:
    """Options and policies as JSON values (dataclasses as objects, sets sorted)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            item.name: _jsonable(getattr(value, item.name)) for item in dataclasses.fields(value)
        }
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (frozenset, set)):
        return sorted(_jsonable(item) for item in value)  # type: ignore[type-var]
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    return str(value)


# ------------------------------------------------------------------ the run


def tokenize_file(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    fmt: Format | str,
    tokenizer: object,
    mask: MaskPolicy | str | None = None,
    workers: int | None = None,
    strict: bool = False,
    progress: bool = True,
    report: Callable[[str], None] | None = None,
    drop: str | frozenset[str] | None = None,
    messages_field: str | None = None,
    sharegpt: bool = False,
    max_length: int | None = None,
    overflow: str = "drop",
    pack: int | None = None,
    max_rejected: object = None,
    rejects: str | os.PathLike[str] | None = None,
    reject_losses: str | frozenset[str] | None = None,
    start_method: str | None = None,
    split: str | None = None,
    data_files: str | None = None,
    revision: str | None = None,
) -> TokenizeSummary:
    """Tokenize a file of chat records (see :mod:`pawlette.tokenization.inputs`; ``"-"``:
    JSONL on stdin) into a Parquet file.

    ``workers``: processes (None: :func:`default_workers`; 0: in this process).  ``report``
    gets a line per rejected record, the first ten (default: stderr).  ``drop``: features to
    drop where the format refuses them; ``messages_field``/``sharegpt``: the record shape;
    ``max_length``/``overflow``/``pack``: lengths and packing; ``max_rejected``: a count or
    a fraction; ``rejects``: a JSONL file of every rejected record with its reason;
    ``reject_losses``: loss fields (``"tools,messages.name"``, ``"all"``; see
    :mod:`pawlette.tokenization.losses`) whose loss rejects a record, unless ``drop`` makes
    it expected (a record's other losses are counted in the summary);
    ``split``/``data_files``/``revision``: which files of a dataset in the local Hub cache
    (``hf://datasets/OWNER/NAME``; :mod:`pawlette.tokenization.hub_cache`) are read.  Raises
    :class:`RejectedRecord` under ``strict`` and :class:`TokenizeFailed` when nothing was
    written or rejects exceed ``max_rejected`` (nothing is left at ``output`` then).
    """
    started = time.perf_counter()
    output_path = check_output(output)
    rejects_path = check_output(rejects, "--rejects") if rejects is not None else None
    source_name = os.fspath(source)
    if source_name != "-" and Path(source_name).resolve() == output_path.resolve():
        raise PawletteError(f"-o {output_path}: the input itself; expected another file")
    policy = coerce_mask(mask)
    drops = parse_drop(drop)
    refused_losses = parse_reject_losses(reject_losses, drops)
    shape = RecordShape(messages_field=messages_field, sharegpt=sharegpt)
    if messages_field is not None and not isinstance(messages_field, str):
        raise RequestError("messages_field", f"found {messages_field!r}", "a key name")
    if pack is not None:
        if type(pack) is not int or pack < 1:
            raise RequestError("pack", f"found {pack!r}", "a positive number of tokens")
        if max_length is not None and max_length > pack:
            raise RequestError(
                "max-length", f"{max_length}, more than --pack {pack}", f"at most {pack}"
            )
        max_length = pack if max_length is None else max_length
    check_length_options(max_length, overflow)
    limit_count, limit_fraction = parse_max_rejected(max_rejected)
    if not isinstance(fmt, (str, Format)):
        raise RequestError(
            "fmt", f"found a {type(fmt).__name__} object", "a format name or a pawlette Format"
        )
    resolved = get_format(fmt) if isinstance(fmt, str) else fmt
    encoder = ConversationEncoder(resolved, tokenizer, mask=policy)  # fails fast on markers
    if workers is not None and (type(workers) is not int or workers < 0):
        raise PawletteError(f"--workers: {workers!r}; expected a whole number, 0 or more")
    records = open_records(
        source_name,
        chunk_records=CHUNK_RECORDS,
        chunk_bytes=CHUNK_BYTES,
        split=split,
        data_files=data_files,
        revision=revision,
    )
    try:
        if workers is None:
            workers = default_workers(records)
        if workers and get_format(resolved.name) is not resolved:
            raise PawletteError(
                f"format {resolved.name!r} with other options: worker processes load formats"
                " by name; expected a registered format, or workers=0"
            )
        carried = (
            os.fspath(tokenizer)
            if isinstance(tokenizer, (str, os.PathLike))
            else _tokenizer_json(tokenizer)
        )
        options = _Options(
            resolved.name, carried, policy, drops, shape, max_length, overflow, refused_losses
        )
        digest, tokenizer_name = tokenizer_digest(tokenizer)
        provenance = {
            "pawlette_version": _version(),
            "format": resolved.name,
            "format_options": _jsonable(resolved.options),
            "tokenizer": tokenizer_name,
            "tokenizer_sha256": digest,
            "vocabulary_size": encoder.backend.tokenizer.get_vocab_size(with_added_tokens=True),
            "mask": _jsonable(policy),
            "drop": sorted(drops),
            "reject_losses": sorted(refused_losses),
            "input": source_name,
            "input_kind": records.kind,
            **records.details,
            "messages_field": shape.field,
            "sharegpt": sharegpt,
            "max_length": max_length,
            "overflow": overflow,
            "pack": pack,
            "ignore_index": -100,
        }
        run = _Run(output_path, rejects_path, source_name, strict, pack, provenance, report)
        run.limit_count, run.limit_fraction = limit_count, limit_fraction
        run.summary.expected_losses = expected_fields(drops)
        summary = run.execute(records, encoder, options, workers, progress, start_method)
    finally:
        records.close()
    summary.seconds = time.perf_counter() - started
    if not summary.written:
        raise TokenizeFailed(f"nothing written: {summary.read:,} records read, none kept", summary)
    return summary


tokenize_jsonl = tokenize_file
"""The former name of :func:`tokenize_file`."""


def _tokenizer_json(tokenizer: object) -> str:
    from .backend import load_tokenizer

    return str(load_tokenizer(tokenizer).to_str())


def _version() -> str:
    from ..version import __version__

    return __version__


class _Run:
    """One run's sinks: the Parquet writer (with packing), the rejects file, the summary."""

    def __init__(
        self,
        output: Path,
        rejects: Path | None,
        source_name: str,
        strict: bool,
        pack: int | None,
        provenance: dict[str, object],
        report: Callable[[str], None] | None,
    ) -> None:
        self.output = output
        self.partial = output.with_name(output.name + ".partial")
        self.rejects = rejects
        self.source_name = source_name
        self.strict = strict
        self.limit_count: int | None = None
        self.limit_fraction: float | None = None
        self.packer = Packer(pack, provenance=True) if pack is not None else None
        self.provenance = provenance
        self.report = report
        self.summary = TokenizeSummary(pack_capacity=pack or 0)
        self.shown = 0

    def execute(
        self,
        records: RecordSource,
        encoder: ConversationEncoder,
        options: _Options,
        workers: int,
        progress: bool,
        start_method: str | None,
    ) -> TokenizeSummary:
        pq = _module("pyarrow.parquet")
        summary = self.summary
        summary.workers = workers
        schema = packed_schema(provenance=True) if self.packer is not None else _schema()
        metadata = {b"pawlette": json.dumps(self.provenance).encode("utf-8")}
        writer = None
        rejects_file: IO[str] | None = None
        bar: Any = None
        try:
            try:
                writer = pq.ParquetWriter(
                    str(self.partial), schema.with_metadata(metadata), compression="zstd"
                )
                if self.rejects is not None:
                    rejects_file = open(self.rejects, "w", encoding="utf-8")  # noqa: SIM115
            except OSError as error:
                raise PawletteError(f"-o {self.output}: cannot write ({error})") from error
            sink = _RowGroups(writer)

            def handle(result: _ChunkResult, chunk: Chunk) -> None:
                self._count(result, chunk, rejects_file, bar)
                if self.packer is not None:
                    self._pack(result.batch, sink)
                else:
                    sink.add(result.batch)
                bar.update(result.size)
                elapsed = max(time.perf_counter() - self.started, 1e-9)
                bar.set_postfix_str(
                    f"{summary.read:,} records ({summary.read / elapsed:,.0f}/s),"
                    f" {summary.rejected:,} rejected",
                    refresh=False,
                )

            self.started = time.perf_counter()
            if workers == 0:
                bar = _progress(records, progress)
                for chunk, moved in records.chunks():
                    result = _tokenize_chunk(encoder, options, chunk)
                    result.size = moved
                    handle(result, chunk)
            else:

                def started(seconds: float) -> None:
                    nonlocal bar
                    summary.worker_start_seconds = seconds
                    bar = _progress(records, progress)

                _run_pool(
                    encoder, options, workers, records.chunks(), handle, started, start_method,
                    say=self._say_plain if progress else None,
                )  # fmt: skip
            if self.packer is not None:
                last = self.packer.take(everything=True)
                if last is not None:
                    sink.add(last)
                summary.packed_rows = self.packer.counts.rows
                summary.first_labels_forced = self.packer.counts.first_labels_forced
            sink.flush()
            writer.add_key_value_metadata(
                {"pawlette.summary": json.dumps(_counts(summary)).encode("utf-8")}
            )
            writer.close()
            writer = None
            self._check_fraction()
            if summary.written:
                os.replace(self.partial, self.output)
            else:
                self.partial.unlink(missing_ok=True)
        except BaseException:
            if writer is not None:
                writer.close()
            self.partial.unlink(missing_ok=True)
            raise
        finally:
            if bar is not None:
                bar.close()
            if rejects_file is not None:
                rejects_file.close()
        return summary

    def _check_fraction(self) -> None:
        summary, limit = self.summary, self.limit_fraction
        if limit is None or not summary.read:
            return
        share = summary.rejected / summary.read
        if share > limit:
            raise TokenizeFailed(
                f"{summary.rejected:,} of {summary.read:,} records rejected"
                f" ({100 * share:.1f}%); expected at most {100 * limit:g}% (--max-rejected);"
                " nothing written",
                summary,
            )

    def _say_plain(self, line: str) -> None:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def _count(
        self, result: _ChunkResult, chunk: Chunk, rejects_file: IO[str] | None, bar: Any
    ) -> None:
        summary = self.summary
        summary.read += result.records
        if self.packer is None:
            summary.written += result.batch.num_rows
        summary.tokens += result.tokens
        summary.learned += result.learned
        summary.nothing_learned += result.nothing_learned
        summary.truncated += result.truncated
        summary.truncated_inside += result.truncated_inside
        summary.dropped_messages.update(result.dropped_messages)
        summary.dropped_records.update(result.dropped_records)
        summary.lost_places.update(result.lost_places)
        summary.lost_records.update(result.lost_records)
        if not result.rejected:
            return
        by_line = dict(chunk) if rejects_file is not None else {}
        for line, reason, too_long in result.rejected:
            if self.strict and not too_long:
                raise RejectedRecord(self.source_name, line, reason)
            summary.reject(line, reason, too_long=too_long)
            if rejects_file is not None:
                rejects_file.write(_reject_line(line, reason, by_line.get(line)) + "\n")
            if not too_long and self.shown < SHOWN_REJECTS:
                self.shown += 1
                more = ""
                if self.shown == SHOWN_REJECTS:
                    where = f"; all in {self.rejects}" if self.rejects else ""
                    more = f" (further rejects are counted in the summary{where})"
                self._say(f"{self.source_name}:{line}: rejected: {reason}{more}", bar)
        if self.limit_count is not None and summary.rejected > self.limit_count:
            raise TokenizeFailed(
                f"more than {self.limit_count:,} records rejected (--max-rejected);"
                f" stopped after {summary.read:,} records, nothing written",
                summary,
            )

    def _say(self, line: str, bar: Any) -> None:
        if self.report is not None:
            self.report(line)
        elif bar is not None:
            bar.write(line, file=sys.stderr)
        else:
            self._say_plain(line)

    def _pack(self, batch: Any, sink: _RowGroups) -> None:
        packer = self.packer
        assert packer is not None
        if not batch.num_rows:
            return
        lines = batch.column(0).to_pylist()
        ids = batch.column(1)
        labels = batch.column(2)
        id_values = ids.values.to_numpy()
        label_values = labels.values.to_numpy()
        offsets = ids.offsets.to_pylist()
        runs = column_runs(batch.column(COLUMN))
        for row, line in enumerate(lines):
            start, end = offsets[row], offsets[row + 1]
            # Copies: a view would keep its whole chunk alive while its row stays open.
            packer.add(line, id_values[start:end].copy(), label_values[start:end].copy(), runs[row])
        self.summary.written += len(lines)
        packed = packer.take()
        if packed is not None:
            sink.add(packed)


def _counts(summary: TokenizeSummary) -> dict[str, object]:
    return {
        "read": summary.read,
        "written": summary.written,
        "rejected": summary.rejected,
        "too_long": summary.too_long,
        "truncated": summary.truncated,
        "truncated_inside_an_answer": summary.truncated_inside,
        "tokens": summary.tokens,
        "learned": summary.learned,
        "nothing_learned": summary.nothing_learned,
        "dropped_messages": dict(summary.dropped_messages),
        "dropped_records": dict(summary.dropped_records),
        "lost_records": dict(summary.lost_records),
        "lost_places": dict(summary.lost_places),
        "packed_rows": summary.packed_rows,
        "rejects_by_reason": dict(summary.reasons.most_common(50)),
    }


def _reject_line(line: int, reason: str, record: object) -> str:
    entry: dict[str, object] = {"line": line, "reason": reason}
    if isinstance(record, bytes):
        entry["text"] = record.decode("utf-8", errors="replace").rstrip("\r\n")
    elif record is not None:
        entry["record"] = record
    return json.dumps(entry, ensure_ascii=False, default=str)


def _run_pool(
    encoder: ConversationEncoder,
    options: _Options,
    workers: int,
    chunks: Iterator[tuple[Chunk, int]],
    handle: Callable[[_ChunkResult, Chunk], None],
    started: Callable[[float], None] | None = None,
    start_method: str | None = None,
    *,
    say: Callable[[str], None] | None = None,
) -> None:
    """Tokenize ``chunks`` in ``workers`` processes, results handled in input order."""
    global _WORKER
    method = start_method or ("fork" if sys.platform.startswith("linux") else "spawn")
    context = multiprocessing.get_context(method)
    pending: deque[tuple[Future[_ChunkResult], Chunk, int]] = deque()
    limit = 2 * workers
    if say is not None:
        say(f"tokenize: starting {workers} worker processes ({method})...")
    clock = time.perf_counter()
    # Forked workers inherit this encoder (the tokenizer loaded, its caches warm): the
    # initializer finds it and builds nothing.  The Rust tokenizer disables its own threads
    # in a forked child, which is what one process per core wants.
    _WORKER = (encoder, options) if method == "fork" else None
    try:
        with ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_init_worker, initargs=(options,)
        ) as pool:
            # Start every worker now (one empty chunk each), so the start is timed and shown.
            warm = [pool.submit(_work, []) for _ in range(workers)]
            for future in warm:
                future.result()
            seconds = time.perf_counter() - clock
            if say is not None:
                say(f"tokenize: {workers} workers ready in {seconds:.1f} s")
            if started is not None:
                started(seconds)
            try:
                for chunk, moved in chunks:
                    pending.append((pool.submit(_work, chunk), chunk, moved))
                    while len(pending) >= limit:
                        _finish(pending.popleft(), handle)
                while pending:
                    _finish(pending.popleft(), handle)
            except BaseException:
                for future, _, _ in pending:
                    future.cancel()
                raise
    finally:
        _WORKER = None


def _finish(item: tuple[Future[_ChunkResult], Chunk, int], handle: Callable[..., None]) -> None:
    future, chunk, moved = item
    result = future.result()
    result.size = moved
    handle(result, chunk)


class _RowGroups:
    """Collects record batches and writes one row group per few thousand rows."""

    def __init__(self, writer: Any) -> None:
        self._writer = writer
        self._batches: list[Any] = []
        self._rows = 0
        self._tokens = 0

    def add(self, batch: Any) -> None:
        if not batch.num_rows:
            return
        self._batches.append(batch)
        self._rows += batch.num_rows
        self._tokens += len(batch.column("input_ids").values)
        if self._rows >= ROW_GROUP_ROWS or self._tokens >= ROW_GROUP_TOKENS:
            self.flush()

    def flush(self) -> None:
        if not self._batches:
            return
        table = _module("pyarrow").Table.from_batches(self._batches)
        self._writer.write_table(table, row_group_size=table.num_rows)
        self._batches, self._rows, self._tokens = [], 0, 0


def _progress(records: RecordSource, enabled: bool) -> Any:
    in_bytes = records.unit == "B"
    return _module("tqdm").tqdm(
        total=records.total,
        unit="B" if in_bytes else " rows",
        unit_scale=in_bytes,
        unit_divisor=1024 if in_bytes else 1000,
        desc="tokenize",
        file=sys.stderr,
        disable=not enabled,
        dynamic_ncols=True,
    )


# ------------------------------------------------------------------ command line


def add_tokenize_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``pawlette tokenize`` (call :func:`command_tokenize` with them)."""
    parser.add_argument(
        "-f",
        "--format",
        required=True,
        help="the format: a name (pawlette formats lists them), NAME:VARIANT, a model "
        "directory's path, a Python file that sets FORMAT, or auto (detected from --tokenizer)",
    )
    parser.add_argument(
        "--tokenizer", required=True, help="tokenizer.json, or a directory holding one"
    )
    parser.add_argument(
        "input",
        help="JSONL (.gz, .zst), Parquet, a datasets save_to_disk directory, a dataset of the"
        " local Hub cache (hf://datasets/OWNER/NAME[@REVISION], or its datasets--OWNER--NAME"
        " folder); - for stdin",
    )
    parser.add_argument(
        "--split", default=None, help="the split of a Hub dataset or a DatasetDict directory"
    )
    parser.add_argument(
        "--data-files",
        default=None,
        metavar="GLOB",
        help="a Hub dataset's files to read, relative to its snapshot (en/*.parquet, **/*.jsonl)",
    )
    parser.add_argument(
        "--revision", default=None, help="a Hub dataset's branch, tag or commit (default main)"
    )
    parser.add_argument("-o", "--output", required=True, help="the Parquet file to write")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes (default: none for inputs under 1 MB, else one per core; 0: none)",
    )
    parser.add_argument("--strict", action="store_true", help="stop at the first bad record")
    parser.add_argument(
        "--mask",
        default="all",
        help="what is learned: all|last, reasoning|no-reasoning, weights|no-weights,"
        " comma-separated (default: all assistant turns, reasoning, message weights)",
    )
    parser.add_argument(
        "--drop",
        default=None,
        help="features to drop where the format cannot express them, comma-separated:"
        " reasoning, name, metadata, tools (default: reject such records); their losses where"
        " the format leaves them out are expected (see --reject-losses)",
    )
    parser.add_argument("--messages-field", default=None, help="the key of the messages list")
    parser.add_argument(
        "--sharegpt",
        action="store_true",
        help="ShareGPT records: conversations of {from: human|gpt|system|function_call|"
        "observation, value}",
    )
    parser.add_argument("--max-length", type=int, default=None, help="tokens per record at most")
    parser.add_argument(
        "--overflow",
        choices=("drop", "truncate"),
        default="drop",
        help="a record over --max-length: left out (default), or cut at the end of an answer",
    )
    parser.add_argument(
        "--pack",
        type=int,
        default=None,
        metavar="N",
        help="pack records into rows of at most N tokens (position_ids, seq_lengths, cu_seqlens)",
    )
    parser.add_argument(
        "--max-rejected",
        default=None,
        help="fail when more records are rejected: a count (100) or a share (5%%)",
    )
    parser.add_argument(
        "--rejects", default=None, metavar="FILE", help="write each rejected record (JSONL)"
    )
    parser.add_argument(
        "--reject-losses",
        default=None,
        metavar="FIELDS",
        help="reject a record when the format leaves out one of these fields, as its model's"
        " template does (comma-separated: tools, messages.name, messages.reasoning_content,"
        " ...; a field covers those under it; all: every loss), unless --drop expects it"
        " (default: keep such records and count the losses in the summary)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(handler=command_tokenize)


def command_tokenize(arguments: argparse.Namespace) -> int:
    """``pawlette tokenize``: prints the summary on stderr; 0 when done, 1 when the run
    failed (nothing written, too many rejects)."""
    try:
        summary = tokenize_file(
            arguments.input,
            arguments.output,
            fmt=arguments.format,
            tokenizer=arguments.tokenizer,
            mask=arguments.mask,
            workers=arguments.workers,
            strict=arguments.strict,
            progress=not arguments.no_progress,
            drop=arguments.drop,
            messages_field=arguments.messages_field,
            sharegpt=arguments.sharegpt,
            max_length=arguments.max_length,
            overflow=arguments.overflow,
            pack=arguments.pack,
            max_rejected=arguments.max_rejected,
            rejects=arguments.rejects,
            reject_losses=arguments.reject_losses,
            split=arguments.split,
            data_files=arguments.data_files,
            revision=arguments.revision,
        )
    except TokenizeFailed as failure:
        sys.stderr.write(f"pawlette tokenize: {failure.summary}\n")
        sys.stderr.write(f"pawlette tokenize: failed: {failure}\n")
        return 1
    sys.stderr.write(f"pawlette tokenize: {summary}\n")
    return 0


def add_tokenizer_arguments(parser: argparse.ArgumentParser) -> None:
    """The subcommands of ``pawlette tokenizer`` (``prepare``)."""
    commands = parser.add_subparsers(dest="what", required=True, metavar="WHAT")
    prepare = commands.add_parser(
        "prepare", help="add a format's markers as special tokens; write a transformers directory"
    )
    prepare.add_argument(
        "-f", "--format", required=True, help="the format whose markers become special tokens"
    )
    prepare.add_argument("--base", required=True, help="the base tokenizer.json (or directory)")
    prepare.add_argument("-o", "--output", required=True, help="the directory to write")
    prepare.set_defaults(handler=command_tokenizer_prepare)


def command_tokenizer_prepare(arguments: argparse.Namespace) -> int:
    """``pawlette tokenizer prepare``: prints what was written on stdout."""
    from .prepare import write_tokenizer_directory

    prepared = write_tokenizer_directory(arguments.format, arguments.base, arguments.output)
    added = ", ".join(f"{marker} {token_id}" for marker, token_id in prepared.added) or "none"
    grown = prepared.vocabulary_size - prepared.base_size
    sys.stdout.write(f"wrote {prepared.directory}\n")
    sys.stdout.write(f"added special tokens: {added}\n")
    sys.stdout.write(f"bos_token: {prepared.bos_token or 'none (the base has none)'}\n")
    sys.stdout.write(f"pad_token: {prepared.pad_token} ({prepared.pad_note})\n")
    sys.stdout.write(f"stop token ids: {', '.join(map(str, prepared.stop_ids))}\n")
    sys.stdout.write(
        "chat template: included\n" if prepared.chat_template else f"{prepared.note}\n"
    )
    if grown:
        sys.stdout.write(
            f"the vocabulary grew by {grown} tokens, from {prepared.base_size:,} to"
            f" {prepared.vocabulary_size:,}: resize the model's embeddings"
            f" (model.resize_token_embeddings({prepared.vocabulary_size}))\n"
        )
    else:
        sys.stdout.write(f"the vocabulary is unchanged ({prepared.vocabulary_size:,} tokens)\n")
    return 0
