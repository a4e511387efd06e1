"""``pawlette inspect``: see which tokens are learned, as Axolotl's preprocessing debug does.

    pawlette inspect -f breeze --tokenizer DIR record.json   # a record (JSON; JSONL: --line)
    pawlette inspect out.parquet --row 3                      # a row that tokenize wrote
    pawlette inspect ... --provenance                         # one token a line: id, message, kind
    pawlette inspect ... --html page.html                     # the same as a page to scroll

The text is printed token by token as the model sees it: learned tokens (labels not -100)
are highlighted on a terminal (colour; ``--colour always|never``) and written between
``⟦`` and ``⟧`` otherwise; special tokens (markers) are shown in bold.  A packed row shows
where each sequence starts.  Each token's provenance (message index and segment kind,
:attr:`~pawlette.tokenization.Tokenized.provenance`) comes from the encoder for a record
inspected with ``-f``, and from the row's ``provenance`` column (:mod:`.provenance`, written
by ``pawlette tokenize``) for a Parquet row; a file without that column (written before it
existed, or by another tool) shows the tokens but refuses ``--provenance``.

What the format left out of the text, as its model's template does (a user's ``name``, the
tools of a format whose template writes none: :mod:`.losses`), is printed after the counts
(and listed on the page): a record's losses one per JSON path, those ``--drop`` makes expected
marked so.  A Parquet row keeps no losses of its own; the file's counts by field (``pawlette
tokenize``'s summary) are shown, and its record, inspected with ``-f``, shows its own.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import PawletteError
from .backend import TokenizerBackend, load_backend
from .encoder import IGNORE_INDEX
from .losses import LEFT_OUT, covered, expected_fields, loss_field
from .provenance import COLUMN, expand_runs
from .shapes import DROPPABLE

__all__ = [
    "Inspected",
    "TokenView",
    "add_inspect_arguments",
    "command_inspect",
    "file_loss_lines",
    "loss_lines",
    "render_html",
    "render_text",
]

LEARNED_OPEN, LEARNED_CLOSE = "⟦", "⟧"
_GREEN, _BOLD, _DIM, _RESET = "\x1b[30;42m", "\x1b[1m", "\x1b[2m", "\x1b[0m"


@dataclass(frozen=True)
class TokenView:
    """One token as shown: its id, its text, whether it is learned, where it came from."""

    id: int
    text: str
    learned: bool
    special: bool
    message_index: int | None = None
    kind: str | None = None
    sequence_start: int | None = None
    """The source line of the packed sequence that starts at this token, if one does."""


@dataclass
class Inspected:
    """What ``pawlette inspect`` shows of a record or a row."""

    views: list[TokenView]
    title: str
    facts: list[str]
    """Lines of the page's header (format, mask, tokenizer, losses)."""
    losses: list[str] = field(default_factory=list)
    """Lines printed after the counts: what the format left out (:func:`loss_lines`)."""


def loss_lines(losses: Sequence[str], expected: frozenset[str] = frozenset()) -> list[str]:
    """A record's losses as ``inspect`` prints them: a heading, then each loss line (its JSON
    path and what happened), marked when its field is one ``expected`` covers (``--drop``)."""
    if not losses:
        return []
    lines = [f"  {LEFT_OUT} (not in the ids):"]
    for loss in losses:
        mark = " (expected: --drop)" if covered(loss_field(loss), expected) else ""
        lines.append(f"    {loss}{mark}")
    return lines


def file_loss_lines(
    counts: Mapping[str, object], expected: frozenset[str], row_line: object
) -> list[str]:
    """The losses a Parquet file's summary counts (``lost_places``, ``lost_records`` by
    field), as :func:`loss_lines` prints a record's; empty when it counts none (or is not
    ``pawlette tokenize``'s)."""
    places, records = counts.get("lost_places"), counts.get("lost_records")
    if not isinstance(places, Mapping) or not isinstance(records, Mapping) or not records:
        return []
    record = f"line {row_line}" if isinstance(row_line, int) else "each line"
    lines = [
        f"  {LEFT_OUT}, in the file's records (tokenize's summary; a row keeps no losses:"
        f" inspect the record of {record} with -f for its own):"
    ]
    for name, found in sorted(records.items()):
        if not isinstance(name, str) or type(found) is not int:
            continue
        times = places.get(name)
        where = f"{times:,} times in " if type(times) is int else ""
        mark = " (expected: --drop)" if covered(name, expected) else ""
        lines.append(f"    {name}: {where}{found:,} records{mark}")
    return lines if len(lines) > 1 else []


def token_views(
    backend: TokenizerBackend,
    ids: Sequence[int],
    labels: Sequence[int],
    provenance: Sequence[tuple[int, str]] | None = None,
    starts: dict[int, int] | None = None,
) -> list[TokenView]:
    """Each token's text: byte-level tokens decoded across their UTF-8 splits (a character
    split over two tokens shows at the second), others by their piece."""
    import codecs

    table = backend.token_bytes()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    tokenizer = backend.tokenizer
    views = []
    for position, (token, label) in enumerate(zip(ids, labels, strict=True)):
        special = token in backend.added
        if special:
            text = backend.added[token]
        elif table is not None and 0 <= token < len(table):
            text = decoder.decode(table[token])
        else:
            text = _piece_text(tokenizer.id_to_token(token) or f"<{token}>")
        message, kind = provenance[position] if provenance is not None else (None, None)
        views.append(
            TokenView(
                token,
                text,
                label != IGNORE_INDEX,
                special,
                message,
                kind,
                (starts or {}).get(position),
            )
        )
    return views


def _piece_text(piece: str) -> str:
    """A SentencePiece-style piece as text: ``▁`` is a space, ``<0x0A>`` a byte."""
    if piece.startswith("<0x") and piece.endswith(">") and len(piece) == 6:
        try:
            return bytes([int(piece[3:5], 16)]).decode("utf-8", errors="replace")
        except ValueError:
            return piece
    return piece.replace("▁", " ")


def render_text(views: Sequence[TokenView], *, colour: bool) -> str:
    """The tokens as text, learned ones highlighted (colour) or between ⟦ ⟧."""
    out: list[str] = []
    inside = False
    for view in views:
        if view.sequence_start is not None:
            if inside and not colour:
                out.append(LEARNED_CLOSE)
                inside = False
            rule = f"── sequence from line {view.sequence_start} ──"
            out.append(("\n" if out else "") + (_DIM + rule + _RESET if colour else rule) + "\n")
        if colour:
            text = view.text.replace("\n", "↵\n") if view.learned else view.text
            style = (_GREEN if view.learned else "") + (_BOLD if view.special else "")
            out.append(style + text + _RESET if style else text)
            continue
        if view.learned and not inside:
            out.append(LEARNED_OPEN)
            inside = True
        elif not view.learned and inside:
            out.append(LEARNED_CLOSE)
            inside = False
        out.append(view.text)
    if inside:
        out.append(LEARNED_CLOSE)
    return "".join(out)


def render_provenance(views: Sequence[TokenView]) -> str:
    """One line per token: position, id, learned, message index, kind, text (a packed row:
    a rule where each sequence starts)."""
    lines = [f"{'#':>6} {'id':>7} {'learned':7} {'message':>7} {'kind':12} text"]
    for position, view in enumerate(views):
        if view.sequence_start is not None:
            lines.append(f"── sequence from line {view.sequence_start} ──")
        message = "" if view.message_index is None else str(view.message_index)
        lines.append(
            f"{position:>6} {view.id:>7} {'yes' if view.learned else '':7} {message:>7}"
            f" {view.kind or '':12} {json.dumps(view.text, ensure_ascii=False)}"
        )
    return "\n".join(lines)


def render_html(views: Sequence[TokenView], *, title: str, facts: Sequence[str]) -> str:
    """A page: the tokens with learned ones highlighted, each token's details on hover."""
    body: list[str] = []
    for position, view in enumerate(views):
        if view.sequence_start is not None:
            body.append(f'<div class="rule">sequence from line {view.sequence_start}</div>')
        classes = ["t", "l" if view.learned else "p"]
        if view.special:
            classes.append("s")
        details = [f"#{position}", f"id {view.id}", "learned" if view.learned else "not learned"]
        if view.message_index is not None:
            details.append(f"message {view.message_index}")
        if view.kind is not None:
            details.append(view.kind)
        text = html.escape(view.text).replace("\n", '<span class="nl">↵</span>\n')
        body.append(
            f'<span class="{" ".join(classes)}" title="{html.escape(" · ".join(details))}">'
            f"{text}</span>"
        )
    learned = sum(view.learned for view in views)
    facts = [*facts, f"{len(views):,} tokens, {learned:,} learned"]
    return _PAGE.format(
        title=html.escape(title),
        facts="".join(f"<li>{html.escape(fact)}</li>" for fact in facts),
        body="".join(body),
    )


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font: 14px/1.6 system-ui, sans-serif; margin: 0; background: #fafafa; color: #222; }}
header {{ position: sticky; top: 0; background: #fff; border-bottom: 1px solid #ddd;
  padding: 8px 16px; }}
header h1 {{ font-size: 16px; margin: 0 0 4px; }}
header ul {{ margin: 0; padding: 0; list-style: none; display: flex; flex-wrap: wrap;
  gap: 4px 16px; color: #555; }}
.legend span {{ padding: 0 4px; margin-right: 8px; }}
main {{ padding: 16px; font-family: ui-monospace, Menlo, Consolas, monospace;
  white-space: pre-wrap; word-break: break-word; }}
.t {{ border-right: 1px solid rgba(0,0,0,.12); }}
.p {{ color: #666; }}
.l {{ background: #c8f0c8; color: #000; }}
.s {{ font-weight: bold; color: #0a4fa0; }}
.l.s {{ color: #064; }}
.nl {{ color: #aaa; }}
.rule {{ border-top: 2px dashed #999; color: #999; margin: 8px 0; font-size: 12px; }}
</style></head>
<body><header><h1>{title}</h1><ul>{facts}</ul>
<div class="legend"><span class="l">learned</span><span class="p">not learned</span>\
<span class="s">special token</span> hover a token for its id and provenance</div></header>
<main>{body}</main></body></html>
"""


# ------------------------------------------------------------------ command line


def add_inspect_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a record (JSON, or JSONL with --line) or a Parquet file")
    parser.add_argument("-f", "--format", help="the format (records; Parquet names its own)")
    parser.add_argument(
        "--tokenizer", help="tokenizer.json or its directory (Parquet: the one it names)"
    )
    parser.add_argument("--line", type=int, default=1, help="the JSONL line (default 1)")
    parser.add_argument("--row", type=int, default=0, help="the Parquet row (0-based)")
    parser.add_argument("--mask", default=None, help="the mask policy (as tokenize's --mask)")
    parser.add_argument("--drop", default=None, help="features to drop (as tokenize's --drop)")
    parser.add_argument(
        "--messages-field", default=None, help="the key of the messages list (as tokenize's)"
    )
    parser.add_argument(
        "--sharegpt", action="store_true", help="a ShareGPT record (as tokenize's --sharegpt)"
    )
    parser.add_argument("--provenance", action="store_true", help="a table, one token a line")
    parser.add_argument("--html", metavar="FILE", help="write the view as an HTML page")
    parser.add_argument(
        "--colour",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the learned tokens (auto: on a terminal; else they print between ⟦ and ⟧)",
    )
    parser.set_defaults(handler=command_inspect)


def command_inspect(arguments: argparse.Namespace) -> int:
    path = Path(arguments.file)
    if not path.is_file():
        raise PawletteError(
            f"{path}: {'a directory' if path.is_dir() else 'no such file'}; expected a record"
            " (JSON or JSONL) or a Parquet file pawlette tokenize wrote"
        )
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as error:
        raise PawletteError(f"{path}: cannot read ({error.strerror})") from error
    inspected = _parquet_row(path, arguments) if magic == b"PAR1" else _record(path, arguments)
    views, title, facts = inspected.views, inspected.title, inspected.facts
    colour = sys.stdout.isatty() if arguments.colour == "auto" else arguments.colour == "always"
    if arguments.provenance:
        sys.stdout.write(render_provenance(views) + "\n")
    else:
        sys.stdout.write(render_text(views, colour=colour) + "\n")
    learned = sum(view.learned for view in views)
    sys.stderr.write(f"{title}: {len(views):,} tokens, {learned:,} learned\n")
    for line in inspected.losses:
        sys.stderr.write(line + "\n")
    if arguments.html:
        target = Path(arguments.html)
        try:
            target.write_text(render_html(views, title=title, facts=facts), encoding="utf-8")
        except OSError as error:
            raise PawletteError(f"--html {target}: cannot write ({error.strerror})") from error
        sys.stderr.write(f"wrote {target}\n")
    return 0


def _record(path: Path, arguments: argparse.Namespace) -> Inspected:
    from .records import RecordTokenizer

    if not arguments.format or not arguments.tokenizer:
        raise PawletteError(f"{path}: a record; expected -f FORMAT and --tokenizer")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise PawletteError(f"{path}: cannot read ({error})") from error
    record = _one_record(text, arguments.line, path)
    function = RecordTokenizer(
        arguments.format,
        arguments.tokenizer,
        mask=arguments.mask,
        drop=arguments.drop,
        messages_field=arguments.messages_field,
        sharegpt=arguments.sharegpt,
    )
    (result,) = function.tokenize_records([record], drop_nulls=False)
    if isinstance(result, PawletteError):  # pragma: no cover - errors="raise" raises
        raise result
    backend = function.encoder.backend
    views = token_views(backend, result.input_ids, result.labels, result.provenance)
    title = f"{path.name} · {arguments.format}"
    facts = [
        f"format {arguments.format}",
        f"mask {function.mask}",
        f"tokenizer {arguments.tokenizer}",
    ]
    losses = loss_lines(result.losses, expected_fields(function.drop))
    if losses:
        facts.append(f"{LEFT_OUT}: " + "; ".join(line.strip() for line in losses[1:]))
    return Inspected(views, title, facts, losses)


def _jsonable_mask(policy: Any) -> dict[str, Any]:
    return {"turns": policy.turns, "reasoning": policy.reasoning, "weights": policy.weights}


def mask_words(mask: dict[str, Any]) -> str:
    """A mask policy as ``--mask`` spells it (``all,reasoning,weights``)."""
    return ",".join(
        [
            str(mask.get("turns", "all")),
            "reasoning" if mask.get("reasoning", True) else "no-reasoning",
            "weights" if mask.get("weights", True) else "no-weights",
        ]
    )


def _one_record(text: str, line: int, path: Path) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    lines = [entry for entry in text.splitlines()]
    if not 1 <= line <= len(lines):
        raise PawletteError(f"{path}: --line {line}; expected 1 to {len(lines)}")
    try:
        return json.loads(lines[line - 1])
    except ValueError as error:
        raise PawletteError(f"{path}:{line}: not a JSON record ({error})") from error


def _parquet_row(path: Path, arguments: argparse.Namespace) -> Inspected:
    import importlib

    pyarrow = importlib.import_module("pyarrow")
    try:
        file = importlib.import_module("pyarrow.parquet").ParquetFile(str(path))
    except (OSError, pyarrow.ArrowException) as error:
        raise PawletteError(f"{path}: cannot read as Parquet ({error})") from error
    metadata = file.metadata.metadata or {}
    names = file.schema_arrow.names
    if "input_ids" not in names or "labels" not in names:
        raise PawletteError(
            f"{path}: columns {', '.join(names)}; expected input_ids and labels, as pawlette"
            " tokenize writes them (a row of records: tokenize it first)"
        )
    try:
        provenance = json.loads(metadata.get(b"pawlette", b"{}"))
    except ValueError:  # another tool's key of that name: no provenance to show
        provenance = {}
    if not isinstance(provenance, dict):
        provenance = {}
    tokenizer = arguments.tokenizer or provenance.get("tokenizer")
    if not tokenizer or tokenizer == "object":
        raise PawletteError(f"{path}: names no tokenizer file; expected --tokenizer")
    rows = file.metadata.num_rows
    if not 0 <= arguments.row < rows:
        raise PawletteError(f"{path}: --row {arguments.row}; expected 0 to {rows - 1}")
    try:
        row = _read_row(file, arguments.row)
    except (OSError, pyarrow.ArrowException) as error:
        raise PawletteError(f"{path}: row {arguments.row}: cannot read ({error})") from error
    _check_row(f"{path}: row {arguments.row}", row)
    backend = load_backend(tokenizer)
    starts: dict[int, int] = {}
    if "cu_seqlens" in row:
        try:
            starts = dict(zip(row["cu_seqlens"][:-1], row["lines"], strict=True))
        except (TypeError, ValueError, KeyError) as error:
            raise PawletteError(
                f"{path}: row {arguments.row}: cu_seqlens and lines do not match ({error});"
                " expected one line per packed sequence"
            ) from error
    where = f"line {row['line']}" if "line" in row else f"{len(starts)} packed sequences"
    runs = None
    if COLUMN in row:
        try:
            runs = expand_runs(row[COLUMN], len(row["input_ids"]))
        except ValueError as error:
            raise PawletteError(f"{path}: row {arguments.row}: {error}") from error
    elif arguments.provenance:
        raise PawletteError(
            f"{path}: no {COLUMN} column (written by an older pawlette, or another tool);"
            " expected a file pawlette tokenize wrote, or inspect the record itself with -f"
        )
    views = token_views(backend, row["input_ids"], row["labels"], runs, starts)
    title = f"{path.name} row {arguments.row} ({where})"
    facts = [
        f"{key} {provenance[key]}" for key in ("format", "mask", "tokenizer") if key in provenance
    ]
    losses = file_loss_lines(_summary(metadata), _drop_expected(provenance), row.get("line"))
    if losses:
        facts.append(
            f"{LEFT_OUT}, in the file's records: " + "; ".join(line.strip() for line in losses[1:])
        )
    return Inspected(views, title, facts, losses)


def _summary(metadata: Mapping[bytes, bytes]) -> Mapping[str, object]:
    """The file's ``pawlette.summary`` counts ({} when absent or not an object)."""
    try:
        counts = json.loads(metadata.get(b"pawlette.summary", b"{}"))
    except ValueError:  # another tool's key of that name
        return {}
    return counts if isinstance(counts, dict) else {}


def _drop_expected(provenance: Mapping[str, object]) -> frozenset[str]:
    """The loss fields the run's ``--drop`` made expected."""
    drop = provenance.get("drop")
    if not isinstance(drop, list):
        return frozenset()
    return expected_fields(frozenset(item for item in drop if item in DROPPABLE))


def _check_row(where: str, row: dict[str, Any]) -> None:
    """The row's ``input_ids`` and ``labels``: lists of token ids of one length (labels may
    be -100), as pawlette tokenize writes them; another tool's file may hold anything."""
    ids, labels = row.get("input_ids"), row.get("labels")
    for name, values, ignored in (("input_ids", ids, None), ("labels", labels, IGNORE_INDEX)):
        if not isinstance(values, list):
            found = "null" if values is None else f"a {type(values).__name__}"
            raise PawletteError(f"{where}: {name} is {found}; expected a list")
        for index, value in enumerate(values):
            if type(value) is not int or not (0 <= value < 1 << 32 or value == ignored):
                raise PawletteError(
                    f"{where}: {name}[{index}] is {value!r}; expected a token id"
                    + (" or -100" if name == "labels" else "")
                )
    assert isinstance(ids, list) and isinstance(labels, list)
    if len(ids) != len(labels):
        raise PawletteError(
            f"{where}: {len(ids)} input_ids and {len(labels)} labels; expected one label a token"
        )


def _read_row(file: Any, row: int) -> dict[str, Any]:
    start = 0
    for group in range(file.metadata.num_row_groups):
        size = file.metadata.row_group(group).num_rows
        if row < start + size:
            table = file.read_row_group(group).slice(row - start, 1)
            found: dict[str, Any] = table.to_pylist()[0]
            return found
        start += size
    raise IndexError(row)  # pragma: no cover - checked against num_rows first
