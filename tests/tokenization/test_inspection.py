"""pawlette inspect: learned tokens marked, provenance per token, a page, a Parquet row."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import pawlette
from pawlette.cli import main
from pawlette.tokenization import ConversationEncoder, add_markers
from pawlette.tokenization.inspection import LEARNED_CLOSE, LEARNED_OPEN
from pawlette.tokenization.losses import LEFT_OUT

from ..support.llama3 import llama3_tokenizer
from .support import small

RECORD = {
    "messages": [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Weather in 北京?"},
        {"role": "assistant", "content": "Sunny, 晴朗.\nWarm."},
        {"role": "user", "content": "Thanks <|eot_id|>"},
        {"role": "assistant", "content": "You're welcome."},
    ]
}


@pytest.fixture(scope="module")
def breeze(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("inspect") / "tokenizer.json"
    fmt = pawlette.get_format("breeze")
    add_markers(llama3_tokenizer(), fmt.special_markers, owner="breeze").save(str(path))
    return path


def learned_spans(text: str) -> list[str]:
    return re.findall(f"{LEARNED_OPEN}(.*?){LEARNED_CLOSE}", text, flags=re.S)


def test_a_record_shows_the_text_with_its_learned_spans(
    breeze: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "record.json"
    source.write_text(json.dumps(RECORD), encoding="utf-8")
    status = main(
        ["inspect", "-f", "breeze", "--tokenizer", str(breeze), str(source), "--colour", "never"]
    )
    out = capsys.readouterr().out
    assert status == 0
    rendered = pawlette.get_format("breeze").render(RECORD).text
    assert out.replace(LEARNED_OPEN, "").replace(LEARNED_CLOSE, "") == rendered + "\n"
    assert learned_spans(out) == ["Sunny, 晴朗.\nWarm.<|eot_id|>", "You're welcome.<|eot_id|>"]
    status = main(
        ["inspect", "-f", "breeze", "--tokenizer", str(breeze), str(source), "--colour", "always"]
    )
    coloured = capsys.readouterr().out
    assert "\x1b[30;42m" in coloured and LEARNED_OPEN not in coloured


def test_provenance_is_one_token_a_line(
    breeze: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "records.jsonl"
    source.write_text(
        json.dumps({"messages": [{"role": "user", "content": "x"}]})
        + "\n"
        + json.dumps(RECORD)
        + "\n",
        encoding="utf-8",
    )
    assert (
        main(
            [
                "inspect",
                "-f",
                "breeze",
                "--tokenizer",
                str(breeze),
                str(source),
                "--line",
                "2",
                "--provenance",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    expected = ConversationEncoder("breeze", breeze).encode(RECORD)
    assert len(lines) == 1 + len(expected)
    for line, token, label, (message, kind) in zip(
        lines[1:], expected.input_ids, expected.labels, expected.provenance, strict=True
    ):
        fields = line.split(None, 2)
        assert int(fields[1]) == token
        assert (" yes " in line) == (label != -100)
        assert f" {message:>7} {kind:12} " in line


def test_a_parquet_row_and_a_packed_row_and_the_page(
    breeze: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text((json.dumps(RECORD) + "\n") * 3, encoding="utf-8")
    for name, extra in (("plain", []), ("packed", ["--pack", "512"])):
        output = tmp_path / f"{name}.parquet"
        assert (
            main(
                [
                    "tokenize",
                    "-f",
                    "breeze",
                    "--tokenizer",
                    str(breeze),
                    str(source),
                    "-o",
                    str(output),
                    "--workers",
                    "0",
                    "--no-progress",
                    *extra,
                ]
            )
            == 0
        )
        capsys.readouterr()
        page = tmp_path / f"{name}.html"
        assert (
            main(["inspect", str(output), "--row", "0", "--colour", "never", "--html", str(page)])
            == 0
        )
        out = capsys.readouterr().out
        spans = learned_spans(out)
        if name == "plain":
            assert spans == ["Sunny, 晴朗.\nWarm.<|eot_id|>", "You're welcome.<|eot_id|>"]
        else:
            assert out.count("── sequence from line") == 3 and len(spans) == 6
        page_text = page.read_text(encoding="utf-8")
        assert 'class="t l s" title="#' in page_text  # a learned special token (<|eot_id|>)
        assert "<script" not in page_text
        main_text = page_text.split("<main>")[1].split("</main>")[0]
        main_text = re.sub(r'<span class="nl">↵</span>', "", main_text)
        main_text = re.sub(r"<div class=\"rule\">[^<]*</div>", "", main_text)
        shown = html.unescape(re.sub(r"<[^>]+>", "", main_text))
        rendered = pawlette.get_format("breeze").render(RECORD).text
        assert shown == rendered * (3 if name == "packed" else 1)
    assert main(["inspect", str(tmp_path / "plain.parquet"), "--row", "3"]) == 2
    assert "--row 3; expected 0 to 2" in capsys.readouterr().err


def provenance_rows(lines: list[str]) -> list[tuple[int, int, bool, int, str]]:
    """(position, id, learned, message, kind) of each token line of --provenance."""
    rows = []
    for line in lines[1:]:
        if line.startswith("──"):
            continue
        position, token, rest = line.split(None, 2)
        learned = rest.startswith("yes")
        message, kind = rest.removeprefix("yes").split(None, 2)[:2]
        rows.append((int(position), int(token), learned, int(message), kind))
    return rows


NAMED_WITH_TOOLS = {
    "messages": [
        {"role": "user", "content": "Hi", "name": "Ann"},
        {"role": "assistant", "content": "Yo"},
        {"role": "user", "content": "Again", "name": "Ann"},
        {"role": "assistant", "content": "Yes"},
    ],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
}
NO_LOSSES = {
    "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}]
}


def test_a_records_losses_are_shown_per_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Gemma's template writes no tools and no user names: each loss is printed after the
    counts, by its JSON path, those --drop expects marked; the page lists them."""
    tokenizer = tmp_path / "gemma.json"
    small("gemma").save(str(tokenizer))
    source = tmp_path / "record.json"
    source.write_text(json.dumps(NAMED_WITH_TOOLS), encoding="utf-8")
    page = tmp_path / "record.html"
    command = ["inspect", "-f", "gemma", "--tokenizer", str(tokenizer), str(source)]
    assert main([*command, "--colour", "never", "--html", str(page)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("record.json · gemma: ")
    assert err[1:4] == [
        f"  {LEFT_OUT} (not in the ids):",
        "    tools: not written",
        "    messages[0].name: not written",
    ]
    assert err[4] == "    messages[2].name: not written"
    assert html.escape(
        f"{LEFT_OUT}: tools: not written; messages[0].name: not written;"
        " messages[2].name: not written"
    ) in page.read_text(encoding="utf-8")
    assert main([*command, "--provenance", "--drop", "name"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[2:] == [
        "    tools: not written",
        "    messages[0].name: not written (expected: --drop)",
        "    messages[2].name: not written (expected: --drop)",
    ]
    source.write_text(json.dumps(NO_LOSSES), "utf-8")
    assert main(command) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and LEFT_OUT not in err  # no losses: nothing said


def test_a_rows_file_counts_its_losses_by_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tokenizer = tmp_path / "gemma.json"
    small("gemma").save(str(tokenizer))
    plain = NO_LOSSES
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(NAMED_WITH_TOOLS) + "\n" + json.dumps(plain) + "\n", "utf-8")
    for name, extra in (("plain", ["--drop", "name"]), ("packed", ["--pack", "512"])):
        output = tmp_path / f"{name}.parquet"
        tokenize = ["tokenize", "-f", "gemma", "--tokenizer", str(tokenizer), str(source), "-o",
                    str(output), "--workers", "0", "--no-progress", *extra]  # fmt: skip
        assert main(tokenize) == 0
        capsys.readouterr()
        assert main(["inspect", str(output), "--colour", "never"]) == 0
        err = capsys.readouterr().err.splitlines()
        record = "line 1" if name == "plain" else "each line"
        expected = " (expected: --drop)" if name == "plain" else ""
        assert err[1:] == [
            f"  {LEFT_OUT}, in the file's records (tokenize's summary; a row keeps no losses:"
            f" inspect the record of {record} with -f for its own):",
            f"    messages.name: 2 times in 1 records{expected}",
            "    tools: 1 times in 1 records",
        ]
    # A file whose summary counts no losses (or that has none) says nothing of them.
    source.write_text(json.dumps(plain) + "\n", "utf-8")
    output = tmp_path / "none.parquet"
    assert main(["tokenize", "-f", "gemma", "--tokenizer", str(tokenizer), str(source), "-o",
                 str(output), "--workers", "0", "--no-progress"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["inspect", str(output), "--colour", "never"]) == 0
    assert LEFT_OUT not in capsys.readouterr().err


def test_a_parquet_row_shows_each_tokens_provenance(
    breeze: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    short = {
        "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}]
    }
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(short) + "\n" + json.dumps(RECORD) + "\n", encoding="utf-8")
    encoder = ConversationEncoder("breeze", breeze)
    expected = [encoder.encode(short), encoder.encode(RECORD)]
    for name, extra in (("plain", []), ("packed", ["--pack", "512"])):
        output = tmp_path / f"{name}.parquet"
        tokenize = ["tokenize", "-f", "breeze", "--tokenizer", str(breeze), str(source), "-o",
                    str(output), "--workers", "0", "--no-progress", *extra]  # fmt: skip
        assert main(tokenize) == 0
        capsys.readouterr()
        row = "1" if name == "plain" else "0"
        assert main(["inspect", str(output), "--row", row, "--provenance"]) == 0
        lines = capsys.readouterr().out.splitlines()
        wanted = expected[1:] if name == "plain" else expected
        tokens = [
            (token, label != -100, message, kind)
            for result in wanted
            for token, label, (message, kind) in zip(
                result.input_ids, result.labels, result.provenance, strict=True
            )
        ]
        if name == "packed":  # the first label of every sequence is -100 in a packed row
            second = len(expected[0])
            tokens[0] = (tokens[0][0], False, *tokens[0][2:])
            tokens[second] = (tokens[second][0], False, *tokens[second][2:])
            assert [line for line in lines if line.startswith("──")] == [
                "── sequence from line 1 ──",
                "── sequence from line 2 ──",
            ]
        shown = provenance_rows(lines)
        assert [position for position, *_ in shown] == list(range(len(tokens)))
        assert [tuple(rest) for _, *rest in shown] == tokens
    page = tmp_path / "row.html"
    assert (
        main(["inspect", str(tmp_path / "plain.parquet"), "--row", "1", "--html", str(page)]) == 0
    )
    capsys.readouterr()
    assert " · learned · message 2 · content" in page.read_text(encoding="utf-8")  # on hover
    # A file written without the column (an older pawlette, another tool): tokens, no table.
    table = pq.read_table(tmp_path / "plain.parquet")
    older = tmp_path / "older.parquet"
    pq.write_table(table.drop_columns(["provenance"]), older)
    assert main(["inspect", str(older), "--row", "1", "--colour", "never"]) == 0
    assert learned_spans(capsys.readouterr().out)
    assert main(["inspect", str(older), "--row", "1", "--provenance"]) == 2
    assert "no provenance column" in capsys.readouterr().err
    records = tmp_path / "records.parquet"  # an input file, not tokenize's output
    pq.write_table(pq.read_table(older).select(["line"]), records)
    assert main(["inspect", str(records), "--row", "0", "--tokenizer", str(breeze)]) == 2
    assert "columns line; expected input_ids and labels" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("rows", "found"),
    [
        ([{"input_ids": [1, 2, 3], "labels": [1, -100]}], "3 input_ids and 2 labels"),
        ([{"input_ids": None, "labels": None}], "input_ids is null; expected a list"),
        ([{"input_ids": [10**12], "labels": [-100]}], r"input_ids\[0\] is 1000000000000"),
        ([{"input_ids": [-1], "labels": [-100]}], r"input_ids\[0\] is -1; expected a token id"),
        ([{"input_ids": [5], "labels": [-7]}], r"labels\[0\] is -7; expected a token id or -100"),
        ([{"input_ids": "x", "labels": "y"}], "input_ids is a str; expected a list"),
    ],
)
def test_a_row_another_tool_wrote_is_refused_clearly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rows: list[object], found: str
) -> None:
    """Rows whose ids and labels are not what pawlette tokenize writes: the audit found a
    ValueError (lengths), TypeError (null, text) and OverflowError (an id over 2**32)."""
    import pyarrow

    from .support import small

    tokenizer = tmp_path / "tokenizer.json"
    small("pcml").save(str(tokenizer))
    path = tmp_path / "other.parquet"
    pq.write_table(pyarrow.Table.from_pylist(rows), str(path))
    assert main(["inspect", str(path), "--row", "0", "--tokenizer", str(tokenizer)]) == 2
    assert re.search(found, capsys.readouterr().err)


def test_a_missing_or_damaged_file_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing file was reported as ``a record; expected -f FORMAT and --tokenizer``, a file
    with Parquet's magic and no footer raised pyarrow's error."""
    assert main(["inspect", str(tmp_path / "missing.parquet")]) == 2
    assert "missing.parquet: no such file" in capsys.readouterr().err
    assert main(["inspect", str(tmp_path)]) == 2
    assert "a directory; expected a record" in capsys.readouterr().err
    fake = tmp_path / "fake.parquet"
    fake.write_bytes(b"PAR1 not really")
    assert main(["inspect", str(fake), "--tokenizer", str(fake)]) == 2
    assert "fake.parquet: cannot read as Parquet" in capsys.readouterr().err
