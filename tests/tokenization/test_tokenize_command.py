"""pawlette tokenize end to end: exits, rejects, drops, lengths, provenance, outputs checked."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from pawlette.cli import main

from .support import small
from .test_shapes import REASONING, SHAREGPT
from .test_training import record


@pytest.fixture(scope="module")
def breeze_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("breeze") / "tokenizer.json"
    small("breeze").save(str(path))
    return path


def run(
    capsys: pytest.CaptureFixture[str], tokenizer: Path, source: Path, output: Path, *extra: str
) -> tuple[int, str]:
    arguments = ["tokenize", "-f", "breeze", "--tokenizer", str(tokenizer), str(source)]
    status = main([*arguments, "-o", str(output), "--no-progress", "--workers", "0", *extra])
    return status, capsys.readouterr().err


def write_lines(path: Path, items: list[Any]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def test_a_sharegpt_file_fails_clearly_then_works_with_sharegpt(
    breeze_tokenizer: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_lines(tmp_path / "sharegpt.jsonl", [SHAREGPT] * 30)
    output = tmp_path / "out.parquet"
    status, err = run(capsys, breeze_tokenizer, source, output)
    assert status == 1 and not output.exists()
    assert "read 30 records, wrote 0, rejected 30" in err
    assert (
        "30  line 1: record: keys conversations, system, tools; expected a 'messages' list." in err
    )
    assert "use --sharegpt" in err and "failed: nothing written: 30 records read" in err
    status, err = run(capsys, breeze_tokenizer, source, output, "--sharegpt")
    assert status == 0 and pq.read_table(output).num_rows == 30


def test_a_gzip_file_is_read_and_an_all_rejected_run_fails(
    breeze_tokenizer: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "".join(json.dumps(record(n)) + "\n" for n in range(1, 21)).encode()
    source = tmp_path / "in.jsonl.gz"
    source.write_bytes(gzip.compress(text))
    output = tmp_path / "out.parquet"
    status, err = run(capsys, breeze_tokenizer, source, output)
    assert status == 0 and "read 20 records, wrote 20, rejected 0" in err
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"<html>not json</html>\n" * 5)
    status, err = run(capsys, breeze_tokenizer, garbage, tmp_path / "none.parquet")
    assert status == 1 and not (tmp_path / "none.parquet").exists()
    assert "5  line 1: not a JSON record (Expecting value at column N)" in err


def test_rejects_are_grouped_written_and_limited(
    breeze_tokenizer: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items: list[Any] = [record(n) for n in range(1, 41)]
    for number in range(0, 40, 3):  # 14 records breeze cannot write
        items[number] = REASONING
    items[1] = {"messages": [{"role": "robot", "content": "x"}]}
    source = write_lines(tmp_path / "in.jsonl", items)
    source.write_text(source.read_text() + "{broken\n", encoding="utf-8")
    output, rejects = tmp_path / "out.parquet", tmp_path / "rejects.jsonl"
    status, err = run(capsys, breeze_tokenizer, source, output, "--rejects", str(rejects))
    assert status == 0
    assert "read 41 records, wrote 25, rejected 16" in err
    assert "14  line 1: messages[N].name: a name; expected none: breeze has no names" in err
    assert "1  line 2: messages[N].role: found '…'" in err
    assert err.count(": rejected: ") == 10 and "all in " + str(rejects) in err
    written = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert [entry["line"] for entry in written] == [1, 2, *range(4, 41, 3), 41]
    assert json.loads(written[0]["text"]) == REASONING and written[-1]["text"] == "{broken"
    assert "not a JSON record" in written[-1]["reason"]

    output.unlink()
    status, err = run(capsys, breeze_tokenizer, source, output, "--max-rejected", "30%")
    assert status == 1 and "16 of 41 records rejected (39.0%); expected at most 30%" in err
    assert not output.exists()
    status, err = run(capsys, breeze_tokenizer, source, output, "--max-rejected", "5")
    assert status == 1 and "more than 5 records rejected (--max-rejected); stopped" in err
    assert main(["tokenize", "-f", "breeze", "--tokenizer", str(breeze_tokenizer), str(source),
                 "-o", str(output), "--max-rejected", "lots"]) == 2  # fmt: skip
    assert "max-rejected: found 'lots'" in capsys.readouterr().err


def test_drop_reasoning_and_names_is_counted(
    breeze_tokenizer: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_lines(tmp_path / "in.jsonl", [REASONING, record(1), REASONING])
    output = tmp_path / "out.parquet"
    status, err = run(capsys, breeze_tokenizer, source, output, "--drop", "reasoning,name")
    assert status == 0 and "wrote 3, rejected 0" in err
    assert "dropped name (--drop) from 2 messages of 2 records" in err
    assert "dropped reasoning (--drop) from 4 messages of 2 records" in err
    counts = json.loads(pq.ParquetFile(output).metadata.metadata[b"pawlette.summary"])
    assert counts["dropped_messages"] == {"reasoning": 4, "name": 2}


def test_lengths_are_counted_and_the_provenance_written(
    breeze_tokenizer: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long = {"messages": [{"role": "user", "content": "word " * 400},
                         {"role": "assistant", "content": "ok"}]}  # fmt: skip
    source = write_lines(tmp_path / "in.jsonl", [record(1), long, record(2)])
    output = tmp_path / "out.parquet"
    status, err = run(capsys, breeze_tokenizer, source, output, "--max-length", "256")
    assert status == 0 and "1 records left out as too long" in err
    assert "1  line 2: too long: N tokens; expected at most 256 (--max-length)" in err
    table = pq.read_table(output)
    assert table.column("line").to_pylist() == [1, 3]
    provenance = json.loads(table.schema.metadata[b"pawlette"])
    assert provenance["format"] == "breeze" and provenance["max_length"] == 256
    assert provenance["mask"] == {"turns": "all", "reasoning": True, "weights": True}
    assert len(provenance["tokenizer_sha256"]) == 64 and provenance["pawlette_version"]
    assert provenance["format_options"] is not None  # breeze has options (today, ...)


def test_the_output_is_checked_before_any_work(
    breeze_tokenizer: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing_input = tmp_path / "missing.jsonl"
    status, err = run(capsys, breeze_tokenizer, missing_input, tmp_path)
    assert status == 2 and f"-o {tmp_path}: a directory; expected a file path" in err
    status, err = run(capsys, breeze_tokenizer, missing_input, tmp_path / "no" / "out.parquet")
    assert status == 2 and "no directory" in err
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # root writes anywhere: nothing to check then
            return
        status, err = run(capsys, breeze_tokenizer, missing_input, locked / "out.parquet")
        assert status == 2 and "is not writable" in err
    finally:
        locked.chmod(0o700)


def test_a_dash_is_no_output_file(
    breeze_tokenizer: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``-`` is stdin as the input; as ``-o`` or ``--rejects`` it wrote a file named ``-``
    in the working directory (found by the audit)."""
    monkeypatch.chdir(tmp_path)
    source = write_lines(tmp_path / "in.jsonl", [{"messages": [{"role": "user", "content": "hi"}]}])
    status, err = run(capsys, breeze_tokenizer, source, Path("-"))
    assert status == 2 and "-o -: standard output is not written to" in err
    status, err = run(capsys, breeze_tokenizer, source, tmp_path / "o.parquet", "--rejects", "-")
    assert status == 2 and "--rejects -: standard output is not written to" in err
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("pack", [None, "300"])
def test_workers_write_what_one_process_writes(
    breeze_tokenizer: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], pack: str | None
) -> None:
    source = write_lines(tmp_path / "in.jsonl", [record(n) for n in range(1, 700)])
    extra = ["--pack", pack] if pack else []
    assert run(capsys, breeze_tokenizer, source, tmp_path / "a.parquet", *extra)[0] == 0
    status, _ = run(
        capsys, breeze_tokenizer, source, tmp_path / "b.parquet", *extra, "--workers", "2"
    )
    assert status == 0
    assert pq.read_table(tmp_path / "b.parquet").equals(pq.read_table(tmp_path / "a.parquet"))
