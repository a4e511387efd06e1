"""Training inputs cut short or damaged are errors naming the file, never a traceback and
never fewer records read silently (found by the audit: a truncated ``.jsonl.gz`` raised
gzip's EOFError; a truncated ``.jsonl.zst`` read as zero records and no error)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pawlette.errors import PawletteError
from pawlette.tokenization.inputs import open_records

LINES = b"".join(
    json.dumps({"messages": [{"role": "user", "content": f"hi {n}"}]}).encode() + b"\n"
    for n in range(200)
)


def read(path: Path) -> int:
    records = open_records(str(path), chunk_records=7, chunk_bytes=1 << 20)
    try:
        return sum(len(chunk) for chunk, _ in records.chunks())
    finally:
        records.close()


def zstd(data: bytes) -> bytes:
    zstandard = pytest.importorskip("zstandard")
    return bytes(zstandard.ZstdCompressor().compress(data))


def test_whole_compressed_files_read_every_record(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress(LINES))
    # Two frames, as a file appended to (or written by a multi-threaded compressor) holds.
    (tmp_path / "b.jsonl.zst").write_bytes(zstd(LINES[:999]) + zstd(LINES[999:]))
    assert read(tmp_path / "a.jsonl.gz") == 200
    assert read(tmp_path / "b.jsonl.zst") == 200


@pytest.mark.parametrize("kind", ["jsonl.gz", "jsonl.zst"])
@pytest.mark.parametrize("keep", [0.2, 0.5, 0.95])
def test_a_compressed_file_cut_short_is_an_error(tmp_path: Path, kind: str, keep: float) -> None:
    whole = gzip.compress(LINES) if kind == "jsonl.gz" else zstd(LINES)
    path = tmp_path / f"cut.{kind}"
    path.write_bytes(whole[: max(5, int(len(whole) * keep))])
    with pytest.raises(PawletteError, match=rf"cut\.{kind.replace('.', '[.]')}: .*whole"):
        read(path)


def test_damaged_zstandard_data_is_an_error(tmp_path: Path) -> None:
    whole = bytearray(zstd(LINES))
    whole[len(whole) // 2 :] = b"\x00" * (len(whole) - len(whole) // 2)
    path = tmp_path / "bad.jsonl.zst"
    path.write_bytes(bytes(whole))
    with pytest.raises(PawletteError, match=r"bad\.jsonl\.zst"):
        read(path)


def test_a_damaged_parquet_file_is_an_error(tmp_path: Path) -> None:
    pyarrow = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [{"messages": [{"role": "user", "content": f"hi {n}"}]} for n in range(300)]
    path = tmp_path / "damaged.parquet"
    pq.write_table(pyarrow.Table.from_pylist(rows), str(path), row_group_size=50)
    data = bytearray(path.read_bytes())
    data[len(data) // 3 : len(data) // 3 + 200] = b"\x00" * 200  # a page, footer intact
    path.write_bytes(bytes(data))
    with pytest.raises(PawletteError, match=r"damaged\.parquet: cannot read past row \d+"):
        read(path)


@pytest.mark.parametrize(
    ("files", "found"),
    [
        ({"state.json": b"garbage"}, r"state\.json: cannot read as JSON"),
        ({"state.json": b"\xff"}, r"state\.json: cannot read as JSON"),
        ({"state.json": b"[1]"}, r"state\.json: a list; expected a JSON object"),
        ({"state.json": b'{"_data_files": [1]}'}, r"_data_files is a list; expected a list of"),
        ({"state.json": b'{"_data_files": {}}'}, r"_data_files is a dict; expected"),
        (
            {"state.json": b'{"_data_files": [{"filename": "gone.arrow"}]}'},
            r"gone\.arrow: cannot read as an Arrow stream",
        ),
        (
            {"state.json": b'{"_data_files": [{"filename": "x.arrow"}]}', "x.arrow": b"junk"},
            r"x\.arrow: cannot read as an Arrow stream",
        ),
        ({"dataset_dict.json": b'{"splits": 5}'}, r"splits is an int; expected a list of names"),
        ({"dataset_dict.json": b"{"}, r"dataset_dict\.json: cannot read as JSON"),
    ],
)
def test_a_damaged_datasets_directory_is_an_error(
    tmp_path: Path, files: dict[str, bytes], found: str
) -> None:
    """``save_to_disk`` directories whose JSON or Arrow files are damaged raised
    JSONDecodeError, AttributeError, KeyError or pyarrow's errors."""
    pytest.importorskip("pyarrow")
    directory = tmp_path / "saved"
    directory.mkdir()
    for name, content in files.items():
        (directory / name).write_bytes(content)
    with pytest.raises(PawletteError, match=found):
        read(directory)
