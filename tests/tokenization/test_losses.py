"""What a format's render leaves out is counted by ``pawlette tokenize`` per field (summary
and metadata), rejected with ``--reject-losses`` (and :class:`RecordTokenizer`'s
``reject_losses``), expected with ``--drop``."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from pawlette.cli import main
from pawlette.errors import PawletteError, RequestError
from pawlette.tokenization import ConversationEncoder, RecordTokenizer, Tokenized
from pawlette.tokenization.lengths import fit_length
from pawlette.tokenization.losses import (
    RejectedLoss,
    covered,
    first_covered,
    loss_field,
    parse_loss_fields,
)
from pawlette.tokenization.training import tokenize_file

from .support import small
from .test_shapes import no_tools_block

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
NAMED = {
    "messages": [
        {"role": "user", "content": "Hi", "name": "Alice"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Again", "name": "Alice"},
        {"role": "assistant", "content": "Yes"},
    ]
}
PLAIN = {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]}
WITH_TOOLS = {**PLAIN, "tools": TOOLS}


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("tokenizers")
    paths = {}
    for name in ("chatml", "gemma", "functionary"):
        paths[name] = folder / f"{name}.json"
        small(name).save(str(paths[name]))
    return paths


def run(
    capsys: pytest.CaptureFixture[str],
    tokenizers: dict[str, Path],
    format_name: str,
    records: list[Any],
    folder: Path,
    *extra: str,
) -> tuple[int, str, dict[str, Any]]:
    source = folder / "in.jsonl"
    source.write_text("".join(json.dumps(item) + "\n" for item in records), encoding="utf-8")
    output = folder / "out.parquet"
    output.unlink(missing_ok=True)
    arguments = ["tokenize", "-f", format_name, "--tokenizer", str(tokenizers[format_name])]
    status = main([*arguments, str(source), "-o", str(output), "--no-progress", *extra])
    counts: dict[str, Any] = {}
    if output.exists():
        counts = json.loads(pq.ParquetFile(output).metadata.metadata[b"pawlette.summary"])
    return status, capsys.readouterr().err, counts


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_name_chatml_leaves_out_is_counted(
    tokenizers: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], workers: str
) -> None:
    status, err, counts = run(
        capsys, tokenizers, "chatml", [NAMED, PLAIN, NAMED], tmp_path, "--workers", workers
    )
    assert status == 0 and "wrote 3, rejected 0" in err
    assert "left out by the format, as its model's template does" in err
    assert "    messages.name: 4 times in 2 records\n" in err
    assert counts["lost_records"] == {"messages.name": 2}
    assert counts["lost_places"] == {"messages.name": 4}
    assert counts["rejected"] == 0


def test_nothing_is_said_of_records_without_losses(
    tokenizers: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, err, counts = run(capsys, tokenizers, "chatml", [PLAIN, WITH_TOOLS], tmp_path)
    assert status == 0 and "left out by the format" not in err
    assert counts["lost_records"] == {} and counts["lost_places"] == {}


def test_tools_gemma_leaves_out_are_counted_and_drop_name_expects_the_names(
    tokenizers: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, err, counts = run(
        capsys, tokenizers, "gemma", [WITH_TOOLS, NAMED], tmp_path, "--drop", "name"
    )
    assert status == 0 and "wrote 2, rejected 0" in err
    assert "    messages.name: 2 times in 1 records (expected: --drop)\n" in err
    assert "    tools: 1 times in 1 records\n" in err
    assert counts["lost_records"] == {"messages.name": 1, "tools": 1}


@pytest.mark.parametrize("chosen", ["tools", "all"])
def test_reject_losses_rejects_the_records_with_those_losses(
    tokenizers: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    chosen: str,
) -> None:
    records = [WITH_TOOLS, PLAIN, NAMED]
    status, err, counts = run(
        capsys, tokenizers, "gemma", records, tmp_path, "--reject-losses", chosen, "--drop", "name"
    )
    assert status == 0 and "read 3 records, wrote 2, rejected 1" in err
    assert (
        "in.jsonl:1: rejected: tools: not written, as format 'gemma' leaves it out;"
        " expected no loss of tools (--reject-losses)"
    ) in err
    assert counts["rejected"] == 1
    assert counts["lost_records"] == {"messages.name": 1}  # expected by --drop name: kept
    provenance = json.loads(pq.read_table(tmp_path / "out.parquet").schema.metadata[b"pawlette"])
    assert provenance["reject_losses"] == [chosen]


def test_reject_losses_of_a_name_rejects_named_records(
    tokenizers: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, err, counts = run(
        capsys, tokenizers, "chatml", [NAMED, PLAIN], tmp_path, "--reject-losses", "messages"
    )
    assert status == 0 and "wrote 1, rejected 1" in err
    assert "rejected: messages[0].name: not written, as format 'chatml' leaves it out" in err
    assert counts["lost_records"] == {}


def test_reject_losses_and_drop_naming_one_loss_is_refused(
    tokenizers: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, err, _ = run(
        capsys, tokenizers, "chatml", [NAMED], tmp_path,
        "--reject-losses", "messages.name", "--drop", "name",
    )  # fmt: skip
    assert status == 2
    assert (
        "reject-losses: messages.name, a loss --drop name makes expected;"
        " expected --drop or --reject-losses to name it, not both"
    ) in err
    assert not (tmp_path / "out.parquet").exists()


def test_an_unknown_loss_field_is_refused(
    tokenizers: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, err, _ = run(capsys, tokenizers, "chatml", [NAMED], tmp_path, "--reject-losses", "nme")
    assert status == 2 and "reject-losses: found 'nme'; expected 'all' or loss fields" in err


def test_tokenized_carries_the_losses_through_truncation(tokenizers: dict[str, Path]) -> None:
    encoder = ConversationEncoder("chatml", str(tokenizers["chatml"]))
    tokenized = encoder.encode(NAMED["messages"])
    assert tokenized.losses == (
        "messages[0].name: not written",
        "messages[2].name: not written",
    )
    fitted, outcome = fit_length(tokenized, len(tokenized) - 2, "truncate")
    assert fitted is not None and outcome.startswith("truncated")
    assert fitted.losses == tokenized.losses
    assert encoder.encode(PLAIN["messages"]).losses == ()


def test_fields_and_what_covers_them() -> None:
    assert loss_field("messages[12].tool_calls[0].id: written as its position") == (
        "messages.tool_calls.id"
    )
    assert loss_field("tools: not written") == "tools"
    chosen = parse_loss_fields("tools, messages.name", "reject-losses")
    assert covered("tools.function.description", chosen)
    assert covered("messages.name", chosen)
    assert not covered("messages.reasoning_content", chosen)
    assert covered("messages.reasoning_content", frozenset({"all"}))
    assert not covered("tools", frozenset())
    with pytest.raises(RequestError, match=r"found 'messages\[0\].name'"):
        parse_loss_fields("messages[0].name", "reject-losses")


# ------------------------------------------------------------------ RecordTokenizer


def test_the_record_tokenizer_rejects_a_loss_in_tokenizes_words(
    tokenizers: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, err, _ = run(capsys, tokenizers, "gemma", [WITH_TOOLS, PLAIN], tmp_path,
                    "--reject-losses", "tools")  # fmt: skip
    (said,) = [line for line in err.splitlines() if ": rejected: " in line]
    reason = said.partition(": rejected: ")[2]
    function = RecordTokenizer("gemma", str(tokenizers["gemma"]), reject_losses="tools")
    with pytest.raises(PawletteError) as caught:
        function(WITH_TOOLS)
    assert str(caught.value) == f"records[0]: {reason}"
    rejected, kept = RecordTokenizer(
        "gemma", str(tokenizers["gemma"]), reject_losses="tools", errors="keep"
    ).tokenize_records([WITH_TOOLS, PLAIN])
    assert isinstance(rejected, RejectedLoss) and str(rejected) == reason
    assert rejected.path == "tools" and rejected.loss == "tools: not written"
    assert isinstance(kept, Tokenized) and kept.losses == ()
    columns = RecordTokenizer(
        "gemma", str(tokenizers["gemma"]), reject_losses="tools", errors="keep"
    )({"messages": [WITH_TOOLS["messages"], PLAIN["messages"]], "tools": [TOOLS, None]})
    assert columns["error"] == [reason, None]
    assert columns["input_ids"][0] == [] and columns["length"][1] > 0


def test_the_record_tokenizer_keeps_losses_it_is_not_told_to_reject(
    tokenizers: dict[str, Path],
) -> None:
    path = str(tokenizers["gemma"])
    plain = RecordTokenizer("gemma", path)
    assert plain(WITH_TOOLS)["input_ids"] == plain(PLAIN)["input_ids"]  # tools left out
    (named,) = plain.tokenize_records([NAMED])
    assert isinstance(named, Tokenized) and named.losses == (
        "messages[0].name: not written",
        "messages[2].name: not written",
    )
    expected = RecordTokenizer("gemma", path, reject_losses="all", drop="name")
    assert expected(NAMED)["input_ids"] == named.input_ids  # --drop name expects them
    with pytest.raises(PawletteError, match=r"^records\[0\]: tools: not written"):
        expected(WITH_TOOLS)
    copy = pickle.loads(pickle.dumps(expected))
    assert copy.reject_losses == frozenset({"all"}) and copy.drop == frozenset({"name"})
    with pytest.raises(PawletteError, match=r"^records\[0\]: tools: not written"):
        copy(WITH_TOOLS)


def test_the_record_tokenizer_refuses_what_tokenize_refuses(
    tokenizers: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, err, _ = run(capsys, tokenizers, "chatml", [NAMED], tmp_path,
                    "--reject-losses", "messages.name", "--drop", "name")  # fmt: skip
    said = err.strip().splitlines()[-1].removeprefix("pawlette tokenize: ")
    with pytest.raises(RequestError) as caught:
        RecordTokenizer("chatml", str(tokenizers["chatml"]), reject_losses="messages.name",
                        drop="name")  # fmt: skip
    assert str(caught.value) in said
    assert str(caught.value).startswith("reject-losses: messages.name, a loss --drop name")
    with pytest.raises(RequestError, match="reject-losses: found 'nme'; expected 'all'"):
        RecordTokenizer("chatml", str(tokenizers["chatml"]), reject_losses="nme")


# ------------------------------------------------------------------ --drop tools


def test_drop_tools_expects_the_tools_a_format_leaves_out(
    tokenizers: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, err, counts = run(capsys, tokenizers, "gemma", [WITH_TOOLS, PLAIN], tmp_path,
                              "--drop", "tools", "--reject-losses", "all")  # fmt: skip
    assert status == 0 and "wrote 2, rejected 0" in err
    assert "    tools: 1 times in 1 records (expected: --drop)\n" in err
    assert counts["lost_records"] == {"tools": 1}
    assert counts["dropped_records"] == {}  # gemma refused nothing: nothing was dropped
    status, err, _ = run(capsys, tokenizers, "gemma", [WITH_TOOLS], tmp_path,
                         "--drop", "tools", "--reject-losses", "tools")  # fmt: skip
    assert status == 2
    assert (
        "reject-losses: tools, a loss --drop tools makes expected;"
        " expected --drop or --reject-losses to name it, not both"
    ) in err


def test_drop_tools_expects_every_loss_under_the_tools(
    tokenizers: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Functionary writes the tools, and a tool without a description as an empty one."""
    status, err, counts = run(capsys, tokenizers, "functionary", [WITH_TOOLS], tmp_path,
                              "--reject-losses", "tools")  # fmt: skip
    assert status == 1 and "rejected: tools[0].function.description: none given" in err
    status, err, counts = run(capsys, tokenizers, "functionary", [WITH_TOOLS], tmp_path,
                              "--drop", "tools", "--reject-losses", "all")  # fmt: skip
    assert status == 0 and "wrote 1, rejected 0" in err
    assert "    tools.function.description: 1 times in 1 records (expected: --drop)\n" in err
    assert counts["lost_records"] == {"tools.function.description": 1}
    status, err, _ = run(capsys, tokenizers, "functionary", [WITH_TOOLS], tmp_path,
                         "--drop", "tools", "--reject-losses", "tools.function")  # fmt: skip
    assert status == 2 and "reject-losses: tools.function, a loss --drop tools" in err


def test_drop_tools_drops_a_listing_the_format_refuses(tmp_path: Path) -> None:
    from ..support.small_bpe import small_tokenizer

    fmt = no_tools_block()
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(WITH_TOOLS) + "\n" + json.dumps(PLAIN) + "\n", "utf-8")
    arguments: dict[str, Any] = {
        "fmt": fmt,
        "tokenizer": small_tokenizer(fmt.special_markers),
        "workers": 0,
        "progress": False,
    }
    said: list[str] = []
    refused = tokenize_file(source, tmp_path / "a.parquet", report=said.append, **arguments)
    assert refused.rejected == 1 and said == [
        f"{source}:1: rejected: tools: 1 given; expected none: turns-only has no tools block"
    ]
    summary = tokenize_file(source, tmp_path / "b.parquet", drop="tools", **arguments)
    assert summary.written == 2 and summary.rejected == 0
    assert summary.dropped_records == {"tools": 1} and summary.dropped_messages == {}
    assert "  dropped tools (--drop) from 1 records\n" in str(summary) + "\n"
    rows = pq.read_table(tmp_path / "b.parquet").column("input_ids").to_pylist()
    assert rows[0] == rows[1]


def test_an_expected_field_covers_the_fields_under_it() -> None:
    losses = ("tools[0].function.description: none given", "messages[1].name: not written")
    assert first_covered(losses, frozenset({"all"}), frozenset({"tools"})) == losses[1]
    assert first_covered(losses, frozenset({"tools"}), frozenset({"tools"})) is None
    assert first_covered(losses, frozenset({"all"})) == losses[0]
