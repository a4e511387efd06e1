"""Inputs: JSONL plain, gzip and zstandard, Parquet, datasets directories: the same rows."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pyarrow
import pyarrow.parquet as pq
import pytest
import zstandard

from pawlette.errors import PawletteError
from pawlette.tokenization.inputs import open_records
from pawlette.tokenization.training import tokenize_file

from .support import small
from .test_training import record

COUNT = 300


def records() -> list[dict[str, Any]]:
    return [record(number) for number in range(1, COUNT + 1)]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("inputs")
    text = "".join(json.dumps(item) + "\n" for item in records()).encode()
    paths = {name: directory / name for name in ("in.jsonl", "in.jsonl.gz", "in.jsonl.zst")}
    paths["in.jsonl"].write_bytes(text)
    paths["in.jsonl.gz"].write_bytes(gzip.compress(text))
    paths["in.jsonl.zst"].write_bytes(zstandard.ZstdCompressor().compress(text))
    # Messages as Arrow structs (nulls where a message lacks a key), tools as JSON text.
    table = pyarrow.Table.from_pylist(
        [
            {
                "messages": item["messages"],
                "tools": json.dumps(item["tools"]) if "tools" in item else None,
            }
            for item in records()
        ]
    )
    paths["in.parquet"] = directory / "data.bin"  # found by its content, not its name
    pq.write_table(table, paths["in.parquet"], row_group_size=64)
    import datasets

    dataset = datasets.Dataset(table)
    paths["datasets"] = directory / "saved"
    dataset.save_to_disk(str(paths["datasets"]), max_shard_size="40KB")
    datasets.DatasetDict({"train": dataset}).save_to_disk(str(directory / "dict"))
    paths["dict"] = directory / "dict"
    paths["tokenizer"] = directory / "tokenizer.json"
    small("pcml").save(str(paths["tokenizer"]))
    return paths


@pytest.mark.parametrize(
    "name", ["in.jsonl", "in.jsonl.gz", "in.jsonl.zst", "in.parquet", "datasets"]
)
def test_every_input_gives_the_same_rows(
    inputs: dict[str, Path], name: str, tmp_path: Path
) -> None:
    expected = tmp_path / "expected.parquet"
    tokenize_file(
        inputs["in.jsonl"], expected, fmt="pcml", tokenizer=inputs["tokenizer"], workers=0,
        progress=False,
    )  # fmt: skip
    output = tmp_path / "out.parquet"
    summary = tokenize_file(
        inputs[name], output, fmt="pcml", tokenizer=inputs["tokenizer"], workers=0,
        progress=False,
    )  # fmt: skip
    assert (summary.read, summary.written, summary.rejected) == (COUNT, COUNT, 0)
    assert pq.read_table(output).equals(pq.read_table(expected))
    kind = json.loads(pq.ParquetFile(output).metadata.metadata[b"pawlette"])["input_kind"]
    assert kind == {"in.jsonl": "jsonl", "in.jsonl.gz": "jsonl.gz", "in.jsonl.zst": "jsonl.zst",
                    "in.parquet": "parquet", "datasets": "datasets"}[name]  # fmt: skip


def test_reading_is_chunked_and_progress_reaches_the_total(inputs: dict[str, Path]) -> None:
    for name in ("in.jsonl.gz", "in.parquet", "datasets"):
        source = open_records(str(inputs[name]), chunk_records=50, chunk_bytes=1 << 20)
        try:
            chunks = list(source.chunks())
        finally:
            source.close()
        assert max(len(chunk) for chunk, _ in chunks) <= 50, name
        assert [number for chunk, _ in chunks for number, _ in chunk] == list(range(1, COUNT + 1))
        assert sum(moved for _, moved in chunks) == source.total, name


def test_a_dataset_dict_names_its_splits(inputs: dict[str, Path]) -> None:
    with pytest.raises(
        PawletteError, match=r"a DatasetDict directory; expected --split naming one of train \("
    ):
        open_records(str(inputs["dict"]), chunk_records=50, chunk_bytes=1 << 20)
    with pytest.raises(PawletteError, match=r"no split 'test'; expected one of train$"):
        open_records(str(inputs["dict"]), chunk_records=50, chunk_bytes=1 << 20, split="test")
    source = open_records(str(inputs["dict"]), chunk_records=50, chunk_bytes=1 << 20, split="train")
    try:
        assert sum(len(chunk) for chunk, _ in source.chunks()) == COUNT
    finally:
        source.close()
    with pytest.raises(PawletteError, match=r"--split 'train' for a single file"):
        open_records(str(inputs["in.jsonl"]), chunk_records=50, chunk_bytes=1, split="train")
    with pytest.raises(PawletteError, match=r"a directory without state\.json"):
        open_records(str(inputs["dict"].parent), chunk_records=50, chunk_bytes=1 << 20)
