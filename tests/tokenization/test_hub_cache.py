"""Datasets in the local Hugging Face Hub cache: a cache built by hand (blobs, snapshot links,
refs), read by name and by path, by split, revision and glob, with no network at all."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import socket
from pathlib import Path
from typing import Any

import pyarrow
import pyarrow.parquet as pq
import pytest

from pawlette.cli import main
from pawlette.errors import PawletteError
from pawlette.tokenization.hub_cache import hub_cache_directory, resolve_hub_dataset
from pawlette.tokenization.inputs import open_records
from pawlette.tokenization.training import tokenize_file

from .support import small
from .test_training import record

REPO = "someone/chats"
MAIN = "a" * 8 + hashlib.sha1(b"main").hexdigest()[8:]
OLD = "b" * 8 + hashlib.sha1(b"old").hexdigest()[8:]
CONVERTED = "c" * 8 + hashlib.sha1(b"parquet").hexdigest()[8:]


def parquet_bytes(rows: list[dict[str, Any]]) -> bytes:
    table = pyarrow.Table.from_pylist(
        [
            {
                "messages": item["messages"],
                "tools": json.dumps(item["tools"]) if "tools" in item else None,
            }
            for item in rows
        ]
    )
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=16)
    return sink.getvalue()


def jsonl_bytes(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(item) + "\n" for item in rows).encode()


def add_snapshot(folder: Path, commit: str, files: dict[str, bytes]) -> None:
    """Files as huggingface_hub stores them: content once in blobs/ (named by its hash), the
    snapshot's path a relative link to it."""
    for name, content in files.items():
        blob = folder / "blobs" / hashlib.sha256(content).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(content)
        link = folder / "snapshots" / commit / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))


def set_ref(folder: Path, name: str, commit: str) -> None:
    ref = folder / "refs" / name
    ref.parent.mkdir(parents=True, exist_ok=True)
    ref.write_text(commit)


TRAIN = [record(number) for number in range(1, 81)]
TEST = [record(number) for number in range(101, 111)]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hub")
    folder = root / ("datasets--" + REPO.replace("/", "--"))
    add_snapshot(
        folder,
        MAIN,
        {
            "README.md": b"---\nlicense: mit\n---\n",
            ".gitattributes": b"*.parquet filter=lfs\n",
            "data/train-00000-of-00002.parquet": parquet_bytes(TRAIN[:50]),
            "data/train-00001-of-00002.parquet": parquet_bytes(TRAIN[50:]),
            "data/test-00000-of-00001.jsonl.gz": gzip.compress(jsonl_bytes(TEST)),
        },
    )
    add_snapshot(folder, OLD, {"train.jsonl": jsonl_bytes(TRAIN[:5]), "notes.txt": b"x"})
    add_snapshot(
        folder,
        CONVERTED,
        {
            "default/train/0000.parquet": parquet_bytes(TRAIN[:30]),
            "default/validation/0000.parquet": parquet_bytes(TEST[:3]),
        },
    )
    set_ref(folder, "main", MAIN)
    set_ref(folder, "refs/convert/parquet", CONVERTED)
    add_snapshot(root / "datasets--other--set", MAIN, {"train.jsonl": jsonl_bytes(TEST)})
    set_ref(root / "datasets--other--set", "main", MAIN)
    (root / "models--someone--model" / "snapshots").mkdir(parents=True)
    return root


@pytest.fixture
def hub(cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    return cache


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hub-tokenizer") / "tokenizer.json"
    small("pcml").save(str(path))
    return path


def read_all(source: str, **options: Any) -> tuple[list[tuple[int, Any]], int, int | None]:
    records = open_records(source, chunk_records=7, chunk_bytes=1 << 20, **options)
    try:
        chunks = list(records.chunks())
    finally:
        records.close()
    assert all(len(chunk) <= 7 for chunk, _ in chunks)
    return [item for chunk, _ in chunks for item in chunk], sum(m for _, m in chunks), records.total


def messages(item: Any) -> Any:
    data = json.loads(item) if isinstance(item, bytes) else item
    return [
        {key: value for key, value in message.items() if value is not None}
        for message in data["messages"]
    ]


def test_the_cache_directory_follows_huggingface_hubs_variables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert hub_cache_directory() == tmp_path / ".cache" / "huggingface" / "hub"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub_cache_directory() == tmp_path / "xdg" / "huggingface" / "hub"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    assert hub_cache_directory() == tmp_path / "home" / "hub"
    monkeypatch.setenv("HUGGINGFACE_HUB_CACHE", str(tmp_path / "former"))
    assert hub_cache_directory() == tmp_path / "former"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "direct"))
    assert hub_cache_directory() == tmp_path / "direct"


def test_a_split_reads_its_files_in_order_numbered_on(hub: Path) -> None:
    items, moved, total = read_all(f"hf://datasets/{REPO}", split="train")
    assert [number for number, _ in items] == list(range(1, 81))
    assert [messages(item) for _, item in items] == [messages(item) for item in TRAIN]
    snapshot = hub / f"datasets--{REPO.replace('/', '--')}" / "snapshots" / MAIN / "data"
    assert moved == total == sum(path.stat().st_size for path in snapshot.glob("train-*"))
    items, _, _ = read_all(f"hf://{REPO}", split="test")  # the short name; gzip'ed JSONL
    assert [messages(item) for _, item in items] == [messages(item) for item in TEST]


def test_one_file_is_open_at_a_time(hub: Path) -> None:
    records = open_records(
        f"hf://datasets/{REPO}", chunk_records=7, chunk_bytes=1 << 20, split="train"
    )
    try:
        opened = []
        for _ in records.chunks():
            opened.append(len(records._close))  # the files open while this chunk is read
        assert max(opened) == 1
    finally:
        records.close()
    assert records._close == []


def test_the_folder_path_and_a_snapshot_path_read_the_same(hub: Path) -> None:
    folder = hub / f"datasets--{REPO.replace('/', '--')}"
    by_name, _, _ = read_all(f"hf://datasets/{REPO}", split="eval")  # a keyword of test
    by_folder, _, _ = read_all(str(folder), split="test")
    by_snapshot, _, _ = read_all(str(folder / "snapshots" / MAIN), split="test")
    assert by_name == by_folder == by_snapshot and len(by_name) == len(TEST)


def test_revisions_refs_commits_and_prefixes(hub: Path) -> None:
    converted = resolve_hub_dataset(
        f"hf://datasets/{REPO}@refs%2Fconvert%2Fparquet", split="training"
    )
    assert (converted.commit, converted.split) == (CONVERTED, "train")  # directory names
    assert converted.files == ("default/train/0000.parquet",)
    old = resolve_hub_dataset(f"hf://datasets/{REPO}@{OLD[:10]}")
    assert (old.commit, old.files, old.split) == (OLD, ("train.jsonl",), "train")
    by_option = resolve_hub_dataset(f"hf://datasets/{REPO}", revision=OLD)
    assert by_option.commit == OLD
    with pytest.raises(PawletteError) as error:
        resolve_hub_dataset(f"hf://datasets/{REPO}@v2")
    message = str(error.value)
    assert "no revision 'v2'" in message
    assert f"refs: main ({MAIN[:12]}), refs/convert/parquet ({CONVERTED[:12]})" in message
    assert OLD in message and MAIN in message and CONVERTED in message


def test_errors_list_what_the_cache_holds(hub: Path) -> None:
    with pytest.raises(PawletteError) as error:
        resolve_hub_dataset(f"hf://datasets/{REPO}")
    assert "splits test (1 file), train (2 files); expected --split naming one" in str(error.value)
    with pytest.raises(
        PawletteError, match=r"no split 'dev'; expected one of test \(1 file\), train"
    ):
        resolve_hub_dataset(f"hf://datasets/{REPO}", split="dev")
    with pytest.raises(PawletteError) as error:
        resolve_hub_dataset("hf://datasets/nobody/missing")
    assert "dataset nobody/missing is not in the Hub cache" in str(error.value)
    assert "(from $HF_HUB_CACHE)" in str(error.value)
    assert "cached datasets: other/set, someone/chats" in str(error.value)
    with pytest.raises(PawletteError, match="cached as a model repository"):
        resolve_hub_dataset("hf://someone/model")
    with pytest.raises(PawletteError, match="a model repository; expected a dataset"):
        resolve_hub_dataset("hf://models/someone/model")
    with pytest.raises(PawletteError, match="expected hf://datasets/OWNER/NAME"):
        resolve_hub_dataset("hf://datasets/lonely")
    with pytest.raises(PawletteError, match=r"--data-files 'x/\*' matches no data file"):
        resolve_hub_dataset(f"hf://datasets/{REPO}", data_files="x/*")


def test_a_missing_blob_and_a_snapshot_without_data(hub: Path, tmp_path: Path) -> None:
    folder = tmp_path / "datasets--broken--set"
    add_snapshot(folder, MAIN, {"train.jsonl": b"{}\n", "README.md": b"card"})
    set_ref(folder, "main", MAIN)
    blob = (folder / "snapshots" / MAIN / "train.jsonl").resolve()
    blob.unlink()
    with pytest.raises(PawletteError, match=r"train\.jsonl: links to .*blobs/.* which is missing"):
        resolve_hub_dataset(str(folder))
    empty = tmp_path / "datasets--empty--set"
    add_snapshot(empty, MAIN, {"README.md": b"card", "data.csv": b"a,b\n"})
    set_ref(empty, "main", MAIN)
    with pytest.raises(PawletteError, match=r"no data file .* the snapshot holds README\.md, data"):
        resolve_hub_dataset(str(empty))


def test_data_files_and_a_path_inside_the_repository(hub: Path) -> None:
    picked = resolve_hub_dataset(f"hf://datasets/{REPO}", data_files="**/*-00001-of-*.parquet")
    assert picked.files == ("data/train-00001-of-00002.parquet",) and picked.split is None
    inside = resolve_hub_dataset(f"hf://datasets/{REPO}/data/test-00000-of-00001.jsonl.gz")
    assert inside.files == ("data/test-00000-of-00001.jsonl.gz",)
    with pytest.raises(PawletteError, match=r"--data-files is for a dataset of the Hub cache"):
        open_records("x.jsonl", chunk_records=1, chunk_bytes=1, data_files="*")


def test_tokenize_reads_the_cache_with_no_network(
    hub: Path,
    tokenizer: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    expected_input = tmp_path / "train.jsonl"
    expected_input.write_bytes(jsonl_bytes(TRAIN))
    expected = tmp_path / "expected.parquet"
    tokenize_file(
        expected_input, expected, fmt="pcml", tokenizer=tokenizer, workers=0, progress=False
    )

    def no_network(*arguments: object, **options: object) -> None:
        raise AssertionError("a socket was opened")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    output = tmp_path / "out.parquet"
    status = main(
        ["tokenize", "-f", "pcml", "--tokenizer", str(tokenizer), f"hf://datasets/{REPO}",
         "--split", "train", "-o", str(output), "--workers", "0", "--no-progress"]
    )  # fmt: skip
    assert status == 0, capsys.readouterr().err
    assert pq.read_table(output).equals(pq.read_table(expected))
    metadata = json.loads(pq.ParquetFile(output).metadata.metadata[b"pawlette"])
    assert metadata["input_kind"] == "hub"
    assert (metadata["hub_repo"], metadata["hub_commit"], metadata["hub_split"]) == (
        REPO,
        MAIN,
        "train",
    )
    assert metadata["hub_files"] == [
        "data/train-00000-of-00002.parquet",
        "data/train-00001-of-00002.parquet",
    ]
    status = main(
        ["tokenize", "-f", "pcml", "--tokenizer", str(tokenizer), f"hf://datasets/{REPO}",
         "-o", str(output), "--workers", "0", "--no-progress"]
    )  # fmt: skip
    assert status == 2
    assert "expected --split naming one" in capsys.readouterr().err


def test_a_damaged_cache_is_an_error_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dataset folder left without ``snapshots/`` (an interrupted download) and a ref that
    is not a commit hash (bytes that are not text) are reported, never an OSError or a
    UnicodeDecodeError (the audit found both as tracebacks of ``pawlette tokenize``)."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    set_ref(tmp_path / "datasets--no--snapshots", "main", MAIN)
    with pytest.raises(PawletteError, match="has no snapshots directory"):
        resolve_hub_dataset("hf://datasets/no/snapshots")
    garbled = tmp_path / "datasets--garbled--ref"
    add_snapshot(garbled, MAIN, {"train.jsonl": b"{}\n"})
    (garbled / "refs").mkdir()
    (garbled / "refs" / "main").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(PawletteError, match=r"refs/main points at .*which has no snapshot"):
        resolve_hub_dataset(str(garbled))


def test_a_damaged_cache_through_the_command_line(
    tmp_path: Path, tokenizer: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    set_ref(tmp_path / "datasets--no--snapshots", "main", MAIN)
    output = str(tmp_path / "out.parquet")
    arguments = ["tokenize", "-f", "pcml", "--tokenizer", str(tokenizer)]
    assert main([*arguments, "hf://datasets/no/snapshots", "-o", output]) == 2
    assert "has no snapshots directory" in capsys.readouterr().err


def test_a_link_to_a_directory_is_no_data_file(tmp_path: Path) -> None:
    """A snapshot entry named like a data file that links to a directory was read as a
    file (IsADirectoryError from ``pawlette tokenize``)."""
    folder = tmp_path / "datasets--linked--dir"
    add_snapshot(folder, MAIN, {"train.jsonl": jsonl_bytes(TRAIN[:3])})
    set_ref(folder, "main", MAIN)
    (folder / "elsewhere").mkdir()
    (folder / "snapshots" / MAIN / "extra.jsonl").symlink_to("../../elsewhere")
    assert resolve_hub_dataset(str(folder), data_files="*.jsonl").files == ("train.jsonl",)
