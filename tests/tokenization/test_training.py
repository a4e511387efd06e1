"""Training data: JSONL to Parquet, bad records, workers, memory; datasets and Ray."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pandas
import pyarrow
import pyarrow.parquet as pq
import pytest

import pawlette
from pawlette.cli import main
from pawlette.errors import PawletteError
from pawlette.tokenization import ConversationEncoder, RecordTokenizer, training
from pawlette.tokenization.provenance import expand_runs
from pawlette.tokenization.training import RejectedRecord, TokenizeFailed, tokenize_jsonl

from .support import small

TOOLS = [{"type": "function", "function": {"name": "get_weather"}}]


def record(number: int) -> dict[str, Any]:
    result: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": f"Question {number}: weather in city {number}?"},
            {"role": "assistant", "content": f"Answer {number}: sunny, {number % 40} C."},
        ]
    }
    if number % 3 == 0:
        result["tools"] = TOOLS
        result["messages"].insert(0, {"role": "system", "content": "Be brief."})
    return result


BAD_LINES = {
    4: ("{not json", "not a JSON record"),
    7: ('["a", "list"]', "record: a JSON array; expected an object with 'messages'"),
    9: ('{"prompt": "x"}', "record: keys prompt; expected a 'messages' list"),
    12: (
        json.dumps({"messages": [{"role": "robot", "content": "x"}]}),
        "messages[0].role: found 'robot'",
    ),
}


@pytest.fixture(scope="module")
def tokenizer_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tokenizer") / "tokenizer.json"
    small("pcml").save(str(path))
    return path


def write_input(path: Path, count: int, *, bad: bool = True) -> None:
    with path.open("w", encoding="utf-8") as file:
        for line in range(1, count + 1):
            if bad and line in BAD_LINES:
                file.write(BAD_LINES[line][0] + "\n")
            elif line == 15:
                file.write("   \n")  # blank: not a record
            else:
                file.write(json.dumps(record(line), ensure_ascii=False) + "\n")


def test_jsonl_to_parquet_in_process(tokenizer_path: Path, tmp_path: Path) -> None:
    source, output = tmp_path / "in.jsonl", tmp_path / "out.parquet"
    write_input(source, 600)
    reports: list[str] = []
    summary = tokenize_jsonl(
        source, output, fmt="pcml", tokenizer=tokenizer_path, workers=0, report=reports.append
    )
    assert (summary.read, summary.written, summary.rejected) == (599, 595, 4)
    for (line, (_, reason)), report in zip(sorted(BAD_LINES.items()), reports, strict=True):
        assert report.startswith(f"{source}:{line}: rejected: ")
        assert reason in report
    table = pq.read_table(output)
    assert table.column_names == ["line", "input_ids", "labels", "length", "provenance"]
    rows = table.to_pylist()
    lines = [row["line"] for row in rows]
    assert lines == [n for n in range(1, 601) if n not in BAD_LINES and n != 15]
    encoder = ConversationEncoder("pcml", tokenizer_path)
    for row in rows[:50]:
        expected = encoder.encode(record(row["line"]))
        assert row["input_ids"] == expected.input_ids and row["labels"] == expected.labels
        assert row["length"] == len(expected)
        assert expand_runs(row["provenance"], len(expected)) == expected.provenance
    assert summary.tokens == sum(len(row["input_ids"]) for row in rows)
    assert summary.learned == sum(label != -100 for row in rows for label in row["labels"])
    assert "read 599 records, wrote 595, rejected 4" in str(summary)
    assert not (tmp_path / "out.parquet.partial").exists()


def test_worker_processes_write_the_same_rows(tokenizer_path: Path, tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    write_input(source, 900)
    tokenize_jsonl(
        source, tmp_path / "a.parquet", fmt="pcml", tokenizer=tokenizer_path, workers=0,
        report=lambda line: None,
    )  # fmt: skip
    summary = tokenize_jsonl(
        source, tmp_path / "b.parquet", fmt="pcml", tokenizer=tokenizer_path, workers=2,
        report=lambda line: None,
    )  # fmt: skip
    assert summary.rejected == 4
    assert pq.read_table(tmp_path / "b.parquet").equals(pq.read_table(tmp_path / "a.parquet"))


def test_strict_stops_at_the_first_bad_record_and_writes_nothing(
    tokenizer_path: Path, tmp_path: Path
) -> None:
    source, output = tmp_path / "in.jsonl", tmp_path / "out.parquet"
    write_input(source, 40)
    with pytest.raises(RejectedRecord) as caught:
        tokenize_jsonl(source, output, fmt="pcml", tokenizer=tokenizer_path, workers=0, strict=True)
    assert caught.value.line == 4
    assert str(caught.value).startswith(f"{source}:4: not a JSON record")
    assert not output.exists() and not (tmp_path / "out.parquet.partial").exists()


def test_memory_stays_flat_as_the_input_grows(
    tokenizer_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows leave memory a row group at a time: the Parquet file has row groups of bounded
    size, more of them as the input grows.  (Arrow's buffers are invisible to tracemalloc, so
    memory is checked by structure, not measured.)"""
    monkeypatch.setattr(training, "ROW_GROUP_ROWS", 256)
    monkeypatch.setattr(training, "CHUNK_RECORDS", 64)
    groups = []
    for count in (600, 4800):
        source = tmp_path / f"in{count}.jsonl"
        write_input(source, count, bad=False)
        output = tmp_path / f"out{count}.parquet"
        tokenize_jsonl(
            source, output, fmt="pcml", tokenizer=tokenizer_path, workers=0, progress=False
        )
        metadata = pq.ParquetFile(output).metadata
        sizes = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
        assert sum(sizes) == count - 1  # line 15 is blank
        # A row group is written once it holds 256 rows: at most one chunk (64) more.
        assert max(sizes) < 256 + 64, sizes
        groups.append(len(sizes))
    # Eight times the input: about eight times the row groups, each as small as before.
    assert groups[0] >= 2 and groups[1] >= 4799 // (256 + 64), groups


def test_a_row_group_is_also_written_when_its_tokens_are_many(
    tokenizer_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(training, "ROW_GROUP_TOKENS", 2000)
    monkeypatch.setattr(training, "CHUNK_RECORDS", 8)
    source, output = tmp_path / "in.jsonl", tmp_path / "out.parquet"
    write_input(source, 400, bad=False)
    tokenize_jsonl(source, output, fmt="pcml", tokenizer=tokenizer_path, workers=0, progress=False)
    table = pq.ParquetFile(output)
    for group in range(table.metadata.num_row_groups):
        rows = table.read_row_group(group).column("input_ids").to_pylist()
        assert sum(map(len, rows[:-8])) < 2000  # at most one chunk past the limit


def test_at_most_two_chunks_per_worker_are_in_flight(tokenizer_path: Path, tmp_path: Path) -> None:
    """The reader is never more than ``2 x workers`` chunks ahead of the writer."""
    in_flight: list[int] = []
    handled = 0
    pulled = 0

    def chunks() -> Any:
        nonlocal pulled
        for number in range(40):
            in_flight.append(pulled - handled)
            pulled += 1
            yield [(number + 1, json.dumps(record(number + 1)).encode())], 1

    def handle(result: Any, chunk: Any) -> None:
        nonlocal handled
        handled += 1

    options = training._Options("pcml", str(tokenizer_path), pawlette.tokenization.MaskPolicy())
    encoder = ConversationEncoder("pcml", tokenizer_path)
    training._run_pool(encoder, options, 2, chunks(), handle)
    assert handled == 40
    assert max(in_flight) <= 2 * 2, in_flight


def test_empty_input_fails_and_writes_nothing(tokenizer_path: Path, tmp_path: Path) -> None:
    source, output = tmp_path / "in.jsonl", tmp_path / "out.parquet"
    source.write_text("\n\n", encoding="utf-8")
    with pytest.raises(TokenizeFailed, match="nothing written: 0 records read") as caught:
        tokenize_jsonl(source, output, fmt="pcml", tokenizer=tokenizer_path, workers=0)
    assert caught.value.summary.read == 0
    assert not output.exists() and not (tmp_path / "out.parquet.partial").exists()


def test_command_line(
    tokenizer_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, output = tmp_path / "in.jsonl", tmp_path / "out.parquet"
    write_input(source, 20)
    arguments = ["-f", "pcml", "--tokenizer", str(tokenizer_path), str(source), "-o", str(output)]
    status = main(["tokenize", *arguments, "--workers", "0", "--mask", "last", "--no-progress"])
    assert status == 0
    err = capsys.readouterr().err
    assert f"{source}:4: rejected: not a JSON record" in err
    assert "pawlette tokenize: read 19 records, wrote 15, rejected 4;" in err
    assert main(["tokenize", *arguments, "--workers", "0", "--strict", "--no-progress"]) == 2
    assert f"pawlette tokenize: {source}:4: not a JSON record" in capsys.readouterr().err
    bad_mask = main(["tokenize", *arguments, "--mask", "sometimes", "--no-progress"])
    assert bad_mask == 2 and "mask: found 'sometimes'" in capsys.readouterr().err


# ------------------------------------------------------------------ one record, many engines


def test_record_tokenizer_takes_records_and_batches(tokenizer_path: Path) -> None:
    function = RecordTokenizer("pcml", tokenizer_path)
    encoder = ConversationEncoder("pcml", tokenizer_path)
    one = function(record(3))
    expected = encoder.encode(record(3))
    assert one == {
        "input_ids": expected.input_ids,
        "labels": expected.labels,
        "length": len(expected),
    }
    records = [record(n) for n in range(1, 5)]
    columns = {
        "messages": [r["messages"] for r in records],
        "tools": [r.get("tools") for r in records],
    }
    batch = function(columns)
    assert batch["input_ids"] == [encoder.encode(r).input_ids for r in records]
    as_json = {"messages": [json.dumps(r["messages"]) for r in records]}
    assert function(as_json)["input_ids"][:2] == batch["input_ids"][:2]
    assert function(pandas.DataFrame(columns))["labels"] == batch["labels"]
    assert function(pyarrow.Table.from_pydict(columns))["labels"] == batch["labels"]


def test_record_tokenizer_errors_raise_or_become_a_column(tokenizer_path: Path) -> None:
    records = [record(1), {"messages": [{"role": "robot"}]}, {"nothing": 1}]
    with pytest.raises(PawletteError, match=r"records\[1\]: messages\[0\]\.role"):
        RecordTokenizer("pcml", tokenizer_path)(
            {"messages": [r.get("messages") for r in records[:2]]}
        )
    kept = RecordTokenizer("pcml", tokenizer_path, errors="keep").tokenize_records(records)
    assert [isinstance(result, PawletteError) for result in kept] == [False, True, True]
    columns = RecordTokenizer("pcml", tokenizer_path, errors="keep")(
        {"messages": [r.get("messages") for r in records[:2]]}
    )
    assert columns["error"][0] is None and "robot" in columns["error"][1]
    assert columns["input_ids"][1] == []


def test_record_tokenizer_pickles_as_its_arguments(tokenizer_path: Path) -> None:
    function = RecordTokenizer("pcml", small("pcml"), mask="last")
    function(record(1))  # builds the encoder
    copy = pickle.loads(pickle.dumps(function))
    assert copy(record(2)) == function(record(2))
    assert copy.mask == function.mask
    variant = RecordTokenizer(pawlette.get_format("omni").with_options(), tokenizer_path)
    with pytest.raises(PawletteError, match="other options"):
        pickle.dumps(variant)


def test_datasets_map_per_record_and_batched(
    tokenizer_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    records = [record(n) for n in range(1, 9)]
    # Arrow gives the rows one struct type: null tools, null keys a message lacks.
    dataset = datasets.Dataset.from_dict(
        {"messages": [r["messages"] for r in records], "tools": [r.get("tools") for r in records]}
    )
    function = RecordTokenizer("pcml", tokenizer_path)
    batched = dataset.map(function, batched=True, remove_columns=dataset.column_names)
    single = dataset.map(function, remove_columns=dataset.column_names)
    encoder = ConversationEncoder("pcml", tokenizer_path)
    expected = [encoder.encode(r).input_ids for r in records]
    assert batched["input_ids"] == expected
    assert single["input_ids"] == expected
    assert batched["labels"] == [encoder.encode(r).labels for r in records]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Ray's own, about its settings
def test_ray_map_batches_in_local_mode(tokenizer_path: Path) -> None:
    import ray

    records = [record(n) for n in range(1, 13)]
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        dataset = ray.data.from_items(records)
        rows = dataset.map_batches(RecordTokenizer("pcml", tokenizer_path), batch_size=5)
        found = sorted((list(row["input_ids"]) for row in rows.take_all()), key=len)
    finally:
        ray.shutdown()
    encoder = ConversationEncoder("pcml", tokenizer_path)
    assert found == sorted((encoder.encode(r).input_ids for r in records), key=len)


# ------------------------------------------------------------------ bad records of every kind

SURROGATE = (
    '{"messages": [{"role": "user", "content": "a\\ud800b"},'
    ' {"role": "assistant", "content": "x"}]}'
)
MALFORMED = {
    2: (SURROGATE, "messages[0].content: text with a lone surrogate U+D800 at character 1;"
        " expected valid Unicode text"),
    3: ('{"messages": [], "n": ' + "7" * 5000 + "}", "not a JSON record (Exceeds the limit"),
    5: ('{"messages": ' + "[" * 100000 + "]" * 100000 + "}",
        "not a JSON record (nested too deeply)"),
    6: ('{"messages": []}', "messages: an empty list; expected at least one message"),
    8: ('{"messages": "[[[[' + "[" * 100000 + '"}', "messages: a string that is not JSON"),
    10: ('{"messages": [{"role": "user", "content": "unterminated}]}',
         "not a JSON record (Unterminated string starting at column 43)"),
    11: ('{"messages": [{"role": "user", "content": "a\tb"}]}',
         "not a JSON record (Invalid control character at column 45)"),
}  # fmt: skip


def write_malformed(path: Path, count: int) -> None:
    with path.open("w", encoding="utf-8") as file:
        for line in range(1, count + 1):
            if line in MALFORMED:
                file.write(MALFORMED[line][0] + "\n")
            elif line == 13:  # nothing to learn: written, and counted
                file.write(json.dumps({"messages": [{"role": "user", "content": "Hi"}]}) + "\n")
            else:
                file.write(json.dumps(record(line), ensure_ascii=False) + "\n")


@pytest.mark.parametrize("workers", [0, 2])
def test_every_bad_record_is_reported_and_the_good_ones_written(
    tokenizer_path: Path, tmp_path: Path, workers: int
) -> None:
    source, output = tmp_path / "in.jsonl", tmp_path / "out.parquet"
    write_malformed(source, 30)
    reports: list[str] = []
    summary = tokenize_jsonl(
        source, output, fmt="pcml", tokenizer=tokenizer_path, workers=workers,
        report=reports.append, progress=False,
    )  # fmt: skip
    assert (summary.read, summary.written, summary.rejected) == (30, 23, 7)
    assert len(reports) == 7
    for (line, (_, reason)), report in zip(sorted(MALFORMED.items()), reports, strict=True):
        assert report.startswith(f"{source}:{line}: rejected: "), report
        assert reason in report, report
    assert " at at " not in "".join(reports)
    lines = [row["line"] for row in pq.read_table(output).to_pylist()]
    assert lines == [n for n in range(1, 31) if n not in MALFORMED]
    assert summary.nothing_learned == 1
    assert "; 1 records with nothing to learn;" in str(summary)


@pytest.mark.parametrize("line", sorted(MALFORMED))
def test_strict_stops_at_any_kind_of_bad_record(
    tokenizer_path: Path, tmp_path: Path, line: int
) -> None:
    source, output = tmp_path / "in.jsonl", tmp_path / "out.parquet"
    source.write_text(
        json.dumps(record(1)) + "\n" + MALFORMED[line][0] + "\n" + json.dumps(record(2)) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(RejectedRecord) as caught:
        tokenize_jsonl(source, output, fmt="pcml", tokenizer=tokenizer_path, workers=0, strict=True)
    assert caught.value.line == 2 and MALFORMED[line][1] in caught.value.reason
    assert not output.exists()


def test_record_tokenizer_keeps_the_good_records_of_a_batch(tokenizer_path: Path) -> None:
    records = [record(1), json.loads(SURROGATE), {"messages": []}, record(2)]
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    records.append({"messages": [{"role": "user", "content": "x"}], "tools": deep})
    kept = RecordTokenizer("pcml", tokenizer_path, errors="keep").tokenize_records(records)
    encoder = ConversationEncoder("pcml", tokenizer_path)
    assert kept[0] == encoder.encode(record(1)) and kept[3] == encoder.encode(record(2))
    assert "messages[0].content: text with a lone surrogate U+D800" in str(kept[1])
    assert "messages: an empty list" in str(kept[2])
    assert isinstance(kept[4], PawletteError)
    with pytest.raises(PawletteError, match=r"records\[1\]: messages\[0\]\.content: text with"):
        RecordTokenizer("pcml", tokenizer_path).tokenize_records(records[:2])
    with pytest.raises(PawletteError, match="lone surrogate"):
        encoder.encode(json.loads(SURROGATE))


def test_the_default_worker_count_follows_the_input_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pawlette.tokenization.inputs import open_records

    monkeypatch.setattr(training.os, "cpu_count", lambda: 2)
    small_input, large_input = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    write_input(small_input, 50, bad=False)
    large_input.write_bytes(small_input.read_bytes() * (training.SMALL_INPUT_BYTES // 2000))
    counts = []
    for path in (small_input, large_input):
        source = open_records(str(path), chunk_records=10, chunk_bytes=1 << 20)
        counts.append(training.default_workers(source))
        source.close()
    assert counts == [0, 2]


@pytest.mark.parametrize(
    ("option", "found"),
    [
        ({"workers": "2"}, r"--workers: '2'; expected a whole number"),
        ({"workers": True}, r"--workers: True; expected a whole number"),
        ({"drop": 5}, r"drop: found 5; expected"),
        ({"drop": [5]}, r"drop: found \[5\]; expected"),
        ({"fmt": 5}, r"fmt: found a int object; expected a format name"),
        ({"max_length": 2.5}, r"max_length: found 2\.5; expected a positive number"),
        ({"pack": 3.5}, r"pack: found 3\.5; expected a positive number"),
        ({"messages_field": 5}, r"messages_field: found 5; expected a key name"),
    ],
)
def test_python_options_of_the_wrong_type_are_refused_up_front(
    tokenizer_path: Path, tmp_path: Path, option: dict[str, Any], found: str
) -> None:
    """The audit found TypeError/AttributeError for these (``workers="2"``, ``drop=5``,
    ``fmt=5``), and floats for lengths accepted until every record was rejected."""
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(record(1)) + "\n", encoding="utf-8")
    arguments: dict[str, Any] = {"fmt": "pcml", "tokenizer": tokenizer_path, "progress": False}
    with pytest.raises(PawletteError, match=found):
        training.tokenize_file(source, tmp_path / "out.parquet", **{**arguments, **option})
    assert not (tmp_path / "out.parquet").exists()
