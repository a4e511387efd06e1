"""--pack: rows as transformers' flattening collator builds them from the same sequences."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy
import pyarrow.parquet as pq
import pytest

from pawlette.tokenization.packing import Packer
from pawlette.tokenization.provenance import expand_runs
from pawlette.tokenization.training import tokenize_file

from .support import small


def conversation(rng: random.Random, number: int) -> dict[str, Any]:
    words = ["sun", "rain", "wind", "cloud", "snow", "city", "today", "warm", "cold"]
    messages = []
    for _ in range(rng.randint(1, 3)):
        messages.append(
            {"role": "user", "content": " ".join(rng.choices(words, k=rng.randint(2, 30)))}
        )
        messages.append(
            {"role": "assistant", "content": " ".join(rng.choices(words, k=rng.randint(1, 60)))}
        )
    messages[0]["content"] = f"{number}: " + messages[0]["content"]
    return {"messages": messages}


@pytest.fixture(scope="module")
def tokenized(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    directory = tmp_path_factory.mktemp("packing")
    tokenizer = directory / "tokenizer.json"
    small("pcml").save(str(tokenizer))
    source = directory / "in.jsonl"
    rng = random.Random(7)
    source.write_text(
        "".join(json.dumps(conversation(rng, n)) + "\n" for n in range(400)), encoding="utf-8"
    )
    plain, packed = directory / "plain.parquet", directory / "packed.parquet"
    common: dict[str, Any] = {
        "fmt": "pcml",
        "tokenizer": tokenizer,
        "workers": 0,
        "progress": False,
    }
    tokenize_file(source, plain, max_length=512, **common)
    summary = tokenize_file(source, packed, pack=512, **common)
    assert summary.written == 400 - summary.too_long and summary.packed_rows
    return plain, packed, tokenizer


def test_packed_rows_are_what_the_flattening_collator_makes(
    tokenized: tuple[Path, Path, Path],
) -> None:
    from transformers import DataCollatorWithFlattening

    plain, packed, _ = tokenized
    rows = {row["line"]: row for row in pq.read_table(plain).to_pylist()}
    collator = DataCollatorWithFlattening(return_tensors="np", return_flash_attn_kwargs=True)
    seen: list[int] = []
    for row in pq.read_table(packed).to_pylist():
        assert row["length"] == len(row["input_ids"]) <= 512
        assert sum(row["seq_lengths"]) == row["length"]
        features = [
            {"input_ids": rows[line]["input_ids"], "labels": rows[line]["labels"]}
            for line in row["lines"]
        ]
        expected = collator(features)
        assert row["input_ids"] == expected["input_ids"][0].tolist()
        assert row["labels"] == expected["labels"][0].tolist()
        assert row["position_ids"] == expected["position_ids"][0].tolist()
        assert row["cu_seqlens"] == expected["cu_seq_lens_q"].tolist()
        assert row["seq_lengths"] == [rows[line]["length"] for line in row["lines"]]
        # Each token keeps its conversation's provenance; every sequence starts a run.
        assert expand_runs(row["provenance"], row["length"]) == [
            pair
            for line in row["lines"]
            for pair in expand_runs(rows[line]["provenance"], rows[line]["length"])
        ]
        assert set(row["cu_seqlens"][:-1]) <= {run["start"] for run in row["provenance"]}
        seen += row["lines"]
    assert sorted(seen) == sorted(rows)  # every sequence once


def test_packing_metadata_and_fill(tokenized: tuple[Path, Path, Path]) -> None:
    _, packed, _ = tokenized
    metadata = pq.ParquetFile(packed).metadata.metadata
    provenance = json.loads(metadata[b"pawlette"])
    assert provenance["pack"] == 512 and provenance["max_length"] == 512
    counts = json.loads(metadata[b"pawlette.summary"])
    table = pq.read_table(packed)
    assert counts["packed_rows"] == table.num_rows
    assert counts["tokens"] == sum(table.column("length").to_pylist())
    # Best fit over open rows: rows are nearly full (the sequences are 20-300 tokens).
    assert counts["tokens"] / (table.num_rows * 512) > 0.9


def test_packer_best_fit_and_the_first_label() -> None:
    packer = Packer(10, open_rows=2)
    for line, size in enumerate([6, 5, 4, 3, 2], start=1):
        labels = numpy.arange(size, dtype=numpy.int32)  # the first label is learned here
        packer.add(line, numpy.arange(size, dtype=numpy.int32), labels)
    batch = packer.take(everything=True)
    assert batch is not None
    rows = batch.to_pylist()
    # 6 opens a row, 5 a second; 4 fills the first (room 4); 3 goes to the second (room 5),
    # 2 to the second (room 2).
    assert [row["lines"] for row in rows] == [[1, 3], [2, 4, 5]]
    assert all(row["labels"][start] == -100 for row in rows for start in row["cu_seqlens"][:-1])
    assert packer.counts.first_labels_forced == 5
    with pytest.raises(ValueError, match="a sequence of 11 tokens in rows of 10"):
        packer.add(9, numpy.arange(11), numpy.arange(11))
