"""Training data: chat-completions JSONL to Parquet token ids and labels, on every core.

``pawlette tokenize -f FORMAT --tokenizer PATH in.jsonl -o out.parquet``::

    in.jsonl (one record per line: {"messages": [...], "tools": [...]})
       │  read in chunks of lines (the main process)
       ▼
    bounded queue of chunks ──► worker processes (--workers, default: all cores), each with
       │                        its own encoder: JSON → render → ids + labels, per chunk
       ▼
    results in input order ──► row groups of out.parquet (line, input_ids, labels)

- Memory stays flat: at most ``2 × workers`` chunks are in flight and rows are written out a
  row group at a time, so a 100 GB file needs no more memory than a 1 MB one.
- A record that cannot be tokenized (not JSON, or JSON Python cannot hold: nested too deeply,
  an integer of thousands of digits; no ``messages`` or an empty list; a message the format
  cannot express; text that is not valid Unicode, such as a lone ``\ud800`` escape, named by
  its JSON path; text that reaches a control token) is reported on stderr with its line number
  and reason, and counted; the other records of its chunk are written.  ``--strict`` stops at
  the first one (and writes nothing).  A record written with no learned token (no assistant
  turn, or every turn masked) is counted in the summary.
- The output is written to ``out.parquet.partial`` and renamed when complete.
- A progress bar (tqdm, on stderr) shows bytes read, records and their rate, and the ETA; a
  summary ends the run: records read, written, rejected, tokens, learned tokens, records
  with nothing to learn.

Columns: ``line`` (int64, the record's 1-based line number), ``input_ids`` and ``labels``
(list<int32>; labels are -100 where nothing is learned).  The same per-record function for
``datasets`` and Ray is :class:`~pawlette.tokenization.records.RecordTokenizer`.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import multiprocessing
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .errors import PawletteError
from .format import Format
from .formats import get_format
from .tokenization.encoder import (
    ConversationEncoder,
    MaskPolicy,
    Tokenized,
    _coerce_mask,
    _record_error,
)
from .tokenization.records import RecordTokenizer, conversation_of_record, json_error

__all__ = [
    "RecordTokenizer",
    "RejectedRecord",
    "TokenizeSummary",
    "add_tokenize_arguments",
    "add_tokenizer_arguments",
    "command_tokenize",
    "command_tokenizer_prepare",
    "tokenize_jsonl",
]

CHUNK_RECORDS = 256
CHUNK_BYTES = 4 << 20
ROW_GROUP_ROWS = 8192
ROW_GROUP_TOKENS = 4 << 20


class RejectedRecord(PawletteError):
    """A record that cannot be tokenized (raised by ``--strict``); ``line`` is 1-based."""

    def __init__(self, source: str, line: int, reason: str) -> None:
        self.source = source
        self.line = line
        self.reason = reason
        super().__init__(f"{source}:{line}: {reason}")


@dataclass
class TokenizeSummary:
    """What a run did."""

    read: int = 0
    written: int = 0
    rejected: int = 0
    tokens: int = 0
    learned: int = 0
    nothing_learned: int = 0
    """Records written with no learned token (no assistant turn, or every turn masked)."""
    seconds: float = 0.0
    rejections: list[tuple[int, str]] = field(default_factory=list, repr=False)
    """The first rejected lines and reasons (at most 100 kept)."""

    def __str__(self) -> str:
        share = f" ({100 * self.learned / self.tokens:.1f}%)" if self.tokens else ""
        empty = (
            f"; {self.nothing_learned:,} records with nothing to learn"
            if self.nothing_learned
            else ""
        )
        return (
            f"read {self.read:,} records, wrote {self.written:,}, rejected {self.rejected:,};"
            f" {self.tokens:,} tokens, {self.learned:,} learned{share}{empty};"
            f" {self.seconds:.1f} s"
        )


@dataclass
class _ChunkResult:
    size: int  # bytes of input
    records: int
    batch: Any  # a pyarrow RecordBatch
    rejected: list[tuple[int, str]]
    tokens: int
    learned: int
    nothing_learned: int


# ------------------------------------------------------------------ workers

_WORKER_ENCODER: ConversationEncoder | None = None


def _init_worker(format_name: str, tokenizer: str, mask: MaskPolicy, single_thread: bool) -> None:
    global _WORKER_ENCODER
    if single_thread:  # one process per core: the Rust tokenizer need not add threads
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
    source: object = tokenizer
    if tokenizer.lstrip().startswith("{"):
        from tokenizers import Tokenizer

        source = Tokenizer.from_str(tokenizer)
    _WORKER_ENCODER = ConversationEncoder(get_format(format_name), source, mask=mask)


def _work(chunk: list[tuple[int, bytes]]) -> _ChunkResult:
    if _WORKER_ENCODER is None:  # pragma: no cover - the initializer always runs first
        raise RuntimeError("worker used before its initializer ran")
    return _tokenize_chunk(_WORKER_ENCODER, chunk)


def _tokenize_chunk(encoder: ConversationEncoder, chunk: list[tuple[int, bytes]]) -> _ChunkResult:
    pa = _module("pyarrow")

    rejected: list[tuple[int, str]] = []
    lines: list[int] = []
    pairs: list[object] = []
    for line, data in chunk:
        try:
            # Without the line's end: an unterminated string is reported as such.
            record = json.loads(data.rstrip(b"\r\n"))
        except (ValueError, RecursionError) as error:  # JSONDecodeError, UnicodeDecodeError
            rejected.append((line, f"not a JSON record ({json_error(error)})"))
            continue
        try:
            pairs.append(conversation_of_record(record))
        except Exception as error:
            rejected.append((line, str(_record_error(error))))
            continue
        lines.append(line)
    results = encoder.encode_batch(pairs, errors="return")
    kept_lines: list[int] = []
    ids: list[list[int]] = []
    labels: list[list[int]] = []
    learned = 0
    nothing_learned = 0
    for line, result in zip(lines, results, strict=True):
        if isinstance(result, Tokenized):
            kept_lines.append(line)
            ids.append(result.input_ids)
            labels.append(result.labels)
            count = result.learned
            learned += count
            nothing_learned += not count
        else:
            rejected.append((line, str(result)))
    rejected.sort()
    offsets = pa.array(list(itertools.accumulate(map(len, ids), initial=0)), type=pa.int32())
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array(kept_lines, type=pa.int64()),
            pa.ListArray.from_arrays(
                offsets, pa.array(list(itertools.chain.from_iterable(ids)), type=pa.int32())
            ),
            pa.ListArray.from_arrays(
                offsets, pa.array(list(itertools.chain.from_iterable(labels)), type=pa.int32())
            ),
        ],
        schema=_schema(),
    )
    return _ChunkResult(
        size=sum(len(data) for _, data in chunk),
        records=len(chunk),
        batch=batch,
        rejected=rejected,
        tokens=int(offsets[-1].as_py()) if len(offsets) else 0,
        learned=learned,
        nothing_learned=nothing_learned,
    )


def _module(name: str) -> Any:
    """An optional dependency of the ``tokenize`` extra (pyarrow, tqdm), untyped."""
    try:
        return importlib.import_module(name)
    except ImportError as error:  # pragma: no cover - depends on the installation
        raise PawletteError(
            f"pawlette tokenize: cannot import {name} ({error}); expected the tokenize extra."
            " Install with `pip install 'pawlette[tokenize]'`"
        ) from error


def _schema() -> Any:
    pa = _module("pyarrow")

    return pa.schema(
        [
            ("line", pa.int64()),
            ("input_ids", pa.list_(pa.int32())),
            ("labels", pa.list_(pa.int32())),
        ]
    )


# ------------------------------------------------------------------ reading


def _chunks(handle: IO[bytes]) -> Iterator[list[tuple[int, bytes]]]:
    """Non-blank lines with their 1-based numbers, a few hundred (or a few MB) at a time."""
    chunk: list[tuple[int, bytes]] = []
    size = 0
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue  # a blank line is not a record
        chunk.append((number, line))
        size += len(line)
        if len(chunk) >= CHUNK_RECORDS or size >= CHUNK_BYTES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


# ------------------------------------------------------------------ the run


def tokenize_jsonl(
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
) -> TokenizeSummary:
    """Tokenize a chat-completions JSONL file (``"-"``: stdin) into a Parquet file.

    ``workers``: processes (None: one per core; 0: tokenize in this process).  ``report`` gets
    one line per rejected record (default: stderr).  Raises :class:`RejectedRecord` under
    ``strict`` (nothing is written then).  Returns the :class:`TokenizeSummary`.
    """
    pq = _module("pyarrow.parquet")

    started = time.perf_counter()
    policy = _coerce_mask(mask)
    resolved = get_format(fmt) if isinstance(fmt, str) else fmt
    encoder = ConversationEncoder(resolved, tokenizer, mask=policy)  # fails fast on markers
    if workers is None:
        workers = os.cpu_count() or 1
    if workers < 0:
        raise PawletteError(f"--workers: {workers}; expected 0 or more")
    if workers and get_format(resolved.name) is not resolved:
        raise PawletteError(
            f"format {resolved.name!r} with other options: worker processes load formats by"
            " name; expected a registered format, or workers=0"
        )
    source_name = os.fspath(source)
    handle = _open_input(source_name)
    total = _size(handle)
    output_path = Path(output)
    partial = output_path.with_name(output_path.name + ".partial")
    summary = TokenizeSummary()
    bar = _progress(total, progress)
    say = report or (lambda line: bar.write(line, file=sys.stderr))
    writer = None
    try:
        try:
            writer = pq.ParquetWriter(str(partial), _schema(), compression="zstd")
        except OSError as error:
            raise PawletteError(f"-o {output_path}: cannot write ({error})") from error
        sink = _RowGroups(writer)

        def handle_result(result: _ChunkResult) -> None:
            summary.read += result.records
            summary.written += result.batch.num_rows
            summary.tokens += result.tokens
            summary.learned += result.learned
            summary.nothing_learned += result.nothing_learned
            for line, reason in result.rejected:
                summary.rejected += 1
                if len(summary.rejections) < 100:
                    summary.rejections.append((line, reason))
                if strict:
                    raise RejectedRecord(source_name, line, reason)
                say(f"{source_name}:{line}: rejected: {reason}")
            sink.add(result.batch)
            bar.update(result.size)
            elapsed = max(time.perf_counter() - started, 1e-9)
            bar.set_postfix_str(
                f"{summary.read:,} records ({summary.read / elapsed:,.0f}/s),"
                f" {summary.rejected:,} rejected",
                refresh=False,
            )

        if workers == 0:
            for chunk in _chunks(handle):
                handle_result(_tokenize_chunk(encoder, chunk))
        else:
            _run_pool(resolved.name, tokenizer, policy, workers, _chunks(handle), handle_result)
        sink.flush()
        writer.close()
        writer = None
        os.replace(partial, output_path)
    except BaseException:
        if writer is not None:
            writer.close()
        partial.unlink(missing_ok=True)
        raise
    finally:
        bar.close()
        if handle is not sys.stdin.buffer:
            handle.close()
    summary.seconds = time.perf_counter() - started
    return summary


def _run_pool(
    format_name: str,
    tokenizer: object,
    mask: MaskPolicy,
    workers: int,
    chunks: Iterator[list[tuple[int, bytes]]],
    handle_result: Callable[[_ChunkResult], None],
) -> None:
    if isinstance(tokenizer, (str, os.PathLike)):
        carried = os.fspath(tokenizer)
    else:
        from .tokenization.backend import load_tokenizer

        carried = load_tokenizer(tokenizer).to_str()
    # spawn, not fork: the parent may already run the Rust tokenizer's threads.
    context = multiprocessing.get_context("spawn")
    pending: deque[Future[_ChunkResult]] = deque()
    limit = 2 * workers
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_init_worker,
        initargs=(format_name, carried, mask, True),
    ) as pool:
        try:
            for chunk in chunks:
                pending.append(pool.submit(_work, chunk))
                while len(pending) >= limit:
                    handle_result(pending.popleft().result())
            while pending:
                handle_result(pending.popleft().result())
        except BaseException:
            for future in pending:
                future.cancel()
            raise


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
        self._tokens += len(batch.column(1).values)
        if self._rows >= ROW_GROUP_ROWS or self._tokens >= ROW_GROUP_TOKENS:
            self.flush()

    def flush(self) -> None:
        if not self._batches:
            return
        table = _module("pyarrow").Table.from_batches(self._batches)
        self._writer.write_table(table, row_group_size=table.num_rows)
        self._batches, self._rows, self._tokens = [], 0, 0


def _open_input(path: str) -> IO[bytes]:
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as error:
        raise PawletteError(f"{path}: cannot open ({error.strerror})") from error


def _size(handle: IO[bytes]) -> int | None:
    try:
        return os.fstat(handle.fileno()).st_size or None
    except (OSError, ValueError):
        return None


def _progress(total: int | None, enabled: bool) -> Any:
    return _module("tqdm").tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc="tokenize",
        file=sys.stderr,
        disable=not enabled,
        dynamic_ncols=True,
    )


# ------------------------------------------------------------------ command line


def add_tokenize_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``pawlette tokenize`` (call :func:`command_tokenize` with them)."""
    parser.add_argument("-f", "--format", required=True)
    parser.add_argument(
        "--tokenizer", required=True, help="tokenizer.json, or a directory holding one"
    )
    parser.add_argument("input", help="chat-completions JSONL (one record per line), - for stdin")
    parser.add_argument("-o", "--output", required=True, help="the Parquet file to write")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes (default: one per core; 0: no extra process)",
    )
    parser.add_argument("--strict", action="store_true", help="stop at the first bad record")
    parser.add_argument(
        "--mask",
        default="all",
        help="what is learned: all|last, reasoning|no-reasoning, weights|no-weights,"
        " comma-separated (default: all assistant turns, reasoning, message weights)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(handler=command_tokenize)


def command_tokenize(arguments: argparse.Namespace) -> int:
    """``pawlette tokenize``: prints the summary on stderr; 0 when done."""
    summary = tokenize_jsonl(
        arguments.input,
        arguments.output,
        fmt=arguments.format,
        tokenizer=arguments.tokenizer,
        mask=arguments.mask,
        workers=arguments.workers,
        strict=arguments.strict,
        progress=not arguments.no_progress,
    )
    sys.stderr.write(f"pawlette tokenize: {summary}\n")
    return 0


def add_tokenizer_arguments(parser: argparse.ArgumentParser) -> None:
    """The subcommands of ``pawlette tokenizer`` (``prepare``)."""
    commands = parser.add_subparsers(dest="what", required=True, metavar="WHAT")
    prepare = commands.add_parser(
        "prepare", help="add a format's markers as special tokens; write a transformers directory"
    )
    prepare.add_argument("-f", "--format", required=True)
    prepare.add_argument("--base", required=True, help="the base tokenizer.json (or directory)")
    prepare.add_argument("-o", "--output", required=True, help="the directory to write")
    prepare.set_defaults(handler=command_tokenizer_prepare)


def command_tokenizer_prepare(arguments: argparse.Namespace) -> int:
    """``pawlette tokenizer prepare``: prints what was written on stdout."""
    from .tokenization.prepare import write_tokenizer_directory

    prepared = write_tokenizer_directory(arguments.format, arguments.base, arguments.output)
    added = ", ".join(f"{marker} {token_id}" for marker, token_id in prepared.added) or "none"
    sys.stdout.write(f"wrote {prepared.directory}\n")
    sys.stdout.write(f"added special tokens: {added}\n")
    sys.stdout.write(f"stop token ids: {', '.join(map(str, prepared.stop_ids))}\n")
    sys.stdout.write(
        "chat template: included\n" if prepared.chat_template else f"{prepared.note}\n"
    )
    return 0
