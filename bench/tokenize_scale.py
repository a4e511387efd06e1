"""The per-record function on other engines: Hugging Face datasets ``map`` and Ray Data
``map_batches``.

The same :class:`~pawlette.tokenization.RecordTokenizer` that ``pawlette tokenize`` runs, on a
synthetic set of chat records (the conversations of ``bench/tokenize.py``: seven messages
with a tool call, Llama 3 with the format's markers), timed end to end: from the records
in memory as a dataset to the tokenized rows materialised (Ray: written as Parquet, datasets:
the Arrow cache it writes anyway).  Ray runs in local mode on this machine's cores; the
same code runs on a cluster when ``ray.init()`` connects to one (the function pickles as its
arguments, so each worker loads the tokenizer once from the path, which every node must
see: a shared file system or object store path).

Usage: python -m bench.tokenize_scale [--records 50000] [--format pcml] [--engine both]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

import pawlette  # noqa: E402
from pawlette.tokenization import RecordTokenizer, add_markers  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--format", default="pcml")
    parser.add_argument("--engine", choices=("datasets", "ray", "both"), default="both")
    arguments = parser.parse_args()

    import importlib

    conversations = importlib.import_module("bench.tokenize").conversations
    from tests.support.llama3 import llama3_tokenizer

    fmt = pawlette.get_format(arguments.format)
    directory = tempfile.mkdtemp(prefix="bench-scale-")
    tokenizer_path = os.path.join(directory, "tokenizer.json")
    add_markers(llama3_tokenizer(), fmt.special_markers).save(tokenizer_path)
    records = []
    start = 0
    while start < arguments.records:
        size = min(5000, arguments.records - start)
        records += conversations(size, unique=False, seed=start)
        start += size
    import json

    # Messages and tools as JSON text: one Arrow type for every row, and the exact tools.
    columns = {
        "messages": [json.dumps(item["messages"]) for item in records],
        "tools": [json.dumps(item["tools"]) for item in records],
    }
    function = RecordTokenizer(fmt.name, tokenizer_path)
    cores = os.cpu_count() or 1
    print(f"{arguments.records:,} records, format {fmt.name}, {cores} cores")
    if arguments.engine in ("datasets", "both"):
        import datasets

        dataset = datasets.Dataset.from_dict(columns)
        began = time.perf_counter()
        tokenized = dataset.map(
            function, batched=True, batch_size=256, num_proc=cores,
            remove_columns=dataset.column_names,
        )  # fmt: skip
        seconds = time.perf_counter() - began
        tokens = sum(tokenized["length"])
        print(
            f"datasets map (num_proc={cores}): {seconds:.1f} s,"
            f" {arguments.records / seconds:,.0f} records/s, {tokens / seconds:,.0f} tokens/s"
        )
    if arguments.engine in ("ray", "both"):
        import ray

        ray.init(num_cpus=cores, include_dashboard=False, log_to_driver=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        try:
            began = time.perf_counter()
            items = ray.data.from_arrow(__import__("pyarrow").table(columns))
            mapped = items.map_batches(function, batch_size=256, batch_format="pyarrow")
            output = os.path.join(directory, "ray")
            mapped.write_parquet(output)
            seconds = time.perf_counter() - began
            import pyarrow.parquet as pq

            tokens = sum(pq.read_table(output, columns=["length"]).column("length").to_pylist())
            print(
                f"Ray Data map_batches ({cores} CPUs, local): {seconds:.1f} s,"
                f" {arguments.records / seconds:,.0f} records/s, {tokens / seconds:,.0f} tokens/s"
            )
        finally:
            ray.shutdown()


if __name__ == "__main__":
    from bench import pages

    PAGE = pages.Page(
        measure="tokenize-scale",
        title="Tokenizing on datasets and Ray",
        what=(
            "The per-record function `pawlette tokenize` runs (`RecordTokenizer`), on Hugging Face "
            "datasets' `map(num_proc=2)` and on Ray Data's `map_batches` (local, two CPUs, "
            "output written as Parquet), timed from the records in memory to the rows "
            "materialised."
        ),
        peer="none (the same function on two engines)",
    )
    sys.exit(pages.run(main, PAGE))
