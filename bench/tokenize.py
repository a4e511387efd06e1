"""Tokenizing conversations with loss masks: pawlette against transformers and the floor.

One run, the same conversations, the same format and tokenizer (Meta's Llama 3 with the
format's markers added), three paths:

- **pawlette**: ``ConversationEncoder.encode_batch`` (ids and labels; provenance too);
- **transformers**: ``apply_chat_template(tokenize=True, return_dict=True,
  return_assistant_tokens_mask=True)`` with the format's exported chat template, batched
  (one call per batch and tool set, its fastest use);
- **floor**: ``fmt.render(...).text`` and ``tokenizers.Tokenizer.encode_batch`` with no masks:
  what tokenizing costs with no loss mask at all.

Conversations are seven messages (system, user, a call, its result, an answer, user,
answer), with unique user and assistant text; by default the system prompt and the tools come
from a few shared variants, as in most fine-tuning sets (``--unique``: every conversation has
its own).  Every run of pawlette starts with a fresh encoder and an empty text cache (the
backend, like the tokenizer the other paths get, is built once before timing); the tokenizer
is warmed first; each path's time is its best of ``--repeat`` rounds in
which the paths take turns.  The ids and masks of pawlette and transformers are compared.

**End to end** (``--end-to-end``): the ``pawlette tokenize`` run (JSONL in, Parquet out, with
masks, lengths, metadata and row groups) on ``--records`` records (default 100,000) against
the floor on the same file in the same run: read each line, ``json.loads``, render and
``tokenizers`` ``encode_batch`` in batches, no masks, nothing written.  Rows: in one process
(``--workers 0``, the floor's footing), with the default worker count, and packed
(``--pack 4096``).  ``--sweep`` also times 1,000 / 5,000 / 20,000 records with 0, 1 and 2
workers (how the default was chosen).

Usage: python bench/tokenize.py [--format pcml] [--conversations 2000] [--unique]
       python bench/tokenize.py --end-to-end [--records 100000] [--sweep]
"""

from __future__ import annotations

import os
import sys

# This file is called tokenize.py: its directory must leave the path before anything imports
# the standard library's tokenize (linecache does), or Python would import this file instead.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))  # the repository, for tests.support

import argparse  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

import pawlette  # noqa: E402
from bench.tables import Table, load_average, machine_facts, version_of  # noqa: E402
from pawlette.export import export_jinja  # noqa: E402
from pawlette.export.jinja import template_inputs  # noqa: E402
from pawlette.tokenization import IGNORE_INDEX, ConversationEncoder, add_markers  # noqa: E402
from pawlette.tokenization.backend import TokenizerBackend  # noqa: E402

WORDS = [
    "the",
    "weather",
    "forecast",
    "city",
    "today",
    "tomorrow",
    "rain",
    "sunny",
    "cloudy",
    "temperature",
    "wind",
    "humidity",
    "please",
    "could",
    "you",
    "tell",
    "me",
    "about",
    "order",
    "price",
    "total",
    "shipping",
    "refund",
    "account",
    "password",
    "reset",
    "email",
    "address",
    "delivery",
    "tracking",
    "number",
    "product",
    "review",
    "rating",
    "python",
    "function",
    "error",
    "exception",
    "stack",
    "trace",
    "server",
    "request",
    "response",
    "token",
    "model",
    "training",
    "data",
    "set",
    "because",
    "however",
    "therefore",
    "although",
    "meanwhile",
    "finally",
    "first",
    "second",
    "third",
]
CHINESE = "天气今天明天北京上海温度下雨晴朗多云风湿度请问订单价格"


def sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    if rng.random() < 0.2:
        text += " " + "".join(rng.choice(CHINESE) for _ in range(rng.randint(2, 8)))
    if rng.random() < 0.3:
        text += f" {rng.randint(0, 10**6)}"
    return text[0].upper() + text[1:] + rng.choice(".?!")


def tool_set(rng: random.Random, variant: int) -> list[dict[str, Any]]:
    tools = []
    for number in range(3):
        name = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}_{variant}_{number}"
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": sentence(rng, 14),
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "query": {"type": "string", "description": sentence(rng, 6)},
                            "limit": {"type": "integer", "description": sentence(rng, 5)},
                            "unit": {"type": "string", "enum": ["metric", "imperial"]},
                        },
                        "required": ["query"],
                    },
                },
            }
        )
    return tools


def conversations(count: int, *, unique: bool, seed: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    systems = [sentence(rng, 30) for _ in range(4)]
    tool_sets = [tool_set(rng, variant) for variant in range(2)]
    result = []
    for number in range(count):
        system = sentence(rng, 30) if unique else rng.choice(systems)
        tools = tool_set(rng, number) if unique else rng.choice(tool_sets)
        call = rng.choice(tools)["function"]["name"]
        arguments = {"query": sentence(rng, 5), "limit": rng.randint(1, 50)}
        result.append(
            {
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": sentence(rng, rng.randint(8, 30))},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": f"call_{number}",
                                "type": "function",
                                "function": {"name": call, "arguments": json.dumps(arguments)},
                            }
                        ],
                    },
                    {
                        "role": "tool",
                        "tool_call_id": f"call_{number}",
                        "content": json.dumps({"result": sentence(rng, 12), "count": number}),
                    },
                    {"role": "assistant", "content": sentence(rng, rng.randint(15, 60))},
                    {"role": "user", "content": sentence(rng, rng.randint(5, 20))},
                    {"role": "assistant", "content": sentence(rng, rng.randint(15, 60))},
                ],
                "tools": tools,
            }
        )
    return result


def template_messages(format_name: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages in the shape the format's template takes (parsed arguments, ...)."""
    inputs = template_inputs(format_name)
    result = []
    for message in messages:
        message = {key: value for key, value in message.items() if value is not None}
        if inputs.object_arguments and message.get("tool_calls"):
            message["tool_calls"] = [
                {**call, "function": {**call["function"], "arguments": json.loads(a)}}
                for call in message["tool_calls"]
                if (a := call["function"]["arguments"])
            ]
        if inputs.parsed_tool_results and message["role"] == "tool":
            value = json.loads(message["content"])
            message["content"] = value if isinstance(value, (dict, list)) else message["content"]
        result.append(message)
    return result


def batches(items: list[Any], size: int) -> list[list[Any]]:
    return [items[start : start + size] for start in range(0, len(items), size)]


def timed(paths: dict[str, Callable[[], int]], repeat: int) -> list[tuple[str, float, int]]:
    """The best wall time of each path over ``repeat`` rounds (see :func:`measured`)."""
    return [(name, row.wall, row.tokens) for name, row in measured(paths, repeat).items()]


@dataclass(frozen=True)
class Measured:
    """One path's times over the rounds: best and median of the process's CPU time (every
    thread: the tokenizers' Rust threads do the encoding on both sides) and of wall time."""

    cpu: float
    cpu_median: float
    wall: float
    wall_median: float
    tokens: int


def measured(paths: dict[str, Callable[[], int]], repeat: int) -> dict[str, Measured]:
    """Each path ``repeat`` times, the paths taking turns in each round (the order reversed
    every other round), so a burst of load on the shared machine falls on all of them."""
    cpu: dict[str, list[float]] = {name: [] for name in paths}
    wall: dict[str, list[float]] = {name: [] for name in paths}
    tokens = dict.fromkeys(paths, 0)
    names = list(paths)
    for number in range(repeat):
        for name in names if number % 2 == 0 else names[::-1]:
            cpu_start, wall_start = time.process_time(), time.perf_counter()
            tokens[name] = paths[name]()
            wall[name].append(time.perf_counter() - wall_start)
            cpu[name].append(time.process_time() - cpu_start)
    return {
        name: Measured(
            min(cpu[name]),
            statistics.median(cpu[name]),
            min(wall[name]),
            statistics.median(wall[name]),
            tokens[name],
        )
        for name in names
    }


def end_to_end(fmt: pawlette.Format, tokenizer: Any, count: int, sweep: bool) -> None:
    """The command's whole run against the floor (see the module docstring)."""
    import tempfile

    from pawlette.tokenization.training import tokenize_file

    directory = tempfile.mkdtemp(prefix="bench-tokenize-")
    tokenizer_path = os.path.join(directory, "tokenizer.json")
    tokenizer.save(tokenizer_path)

    def write_records(number: int) -> str:
        path = os.path.join(directory, f"in{number}.jsonl")
        with open(path, "w", encoding="utf-8") as file:
            start = 0
            while start < number:  # in slices: 100,000 conversations at once are GBs
                size = min(5000, number - start)
                for item in conversations(size, unique=False, seed=start):
                    file.write(json.dumps(item, ensure_ascii=False) + "\n")
                start += size
        return path

    source = write_records(count)
    output = os.path.join(directory, "out.parquet")
    size = os.path.getsize(source)

    def floor() -> int:
        tokens = 0
        batch: list[str] = []
        with open(source, "rb") as file:
            for line in file:
                batch.append(fmt.render(json.loads(line)).text)
                if len(batch) == 256:
                    tokens += sum(
                        len(e.ids) for e in tokenizer.encode_batch(batch, add_special_tokens=False)
                    )
                    batch = []
        if batch:
            tokens += sum(
                len(e.ids) for e in tokenizer.encode_batch(batch, add_special_tokens=False)
            )
        return tokens

    def command(**options: Any) -> Callable[[], int]:
        def run() -> int:
            summary = tokenize_file(
                source, output, fmt=fmt.name, tokenizer=tokenizer_path, progress=False, **options
            )
            return summary.tokens

        return run

    print(
        f"end to end: {count:,} records ({size / 2**20:,.0f} MB of JSONL), format {fmt.name},"
        f" {os.cpu_count()} cores; one round each, in turn"
    )
    rows = timed(
        {
            "floor: parse + render + encode_batch": floor,
            "pawlette tokenize --workers 0": command(workers=0),
            "pawlette tokenize (default workers)": command(),
            "pawlette tokenize --workers 0 --pack 4096": command(workers=0, pack=4096),
            "pawlette tokenize --pack 4096 (default)": command(pack=4096),
        },
        1,
    )
    floor_seconds = rows[0][1]
    header = f"{'path':44} {'seconds':>8} {'records/s':>10} {'tokens/s':>11} {'vs floor':>9}"
    print(header)
    print("-" * len(header))
    for name, seconds, tokens in rows:
        print(
            f"{name:44} {seconds:8.1f} {count / seconds:10,.0f} {tokens / seconds:11,.0f}"
            f" {seconds / floor_seconds:8.2f}x"
        )
    if sweep:
        print("\nworkers sweep (seconds, one run each)")
        for number in (1000, 5000, 20000):
            path = write_records(number)
            times = []
            for workers in (0, 1, 2):
                start = time.perf_counter()
                tokenize_file(path, output, fmt=fmt.name, tokenizer=tokenizer_path,
                              progress=False, workers=workers)  # fmt: skip
                times.append(time.perf_counter() - start)
            megabytes = os.path.getsize(path) / 2**20
            print(
                f"{number:>7,} records ({megabytes:5.1f} MB): "
                + ", ".join(f"{w} workers {t:5.1f}" for w, t in zip((0, 1, 2), times, strict=True))
            )


def masked_table(
    format_names: list[str],
    tokenizer_factory: Callable[[pawlette.Format], Any],
    tokenizer_name: str,
    *,
    count: int,
    repeat: int,
    batch: int = 256,
    kinds: tuple[bool, ...] = (False, True),
) -> Table:
    """pawlette's masked path against transformers' and the floor, per format and kind of
    conversation (shared or unique system prompts and tools): one row each, the three paths
    interleaved in every round, process CPU time and wall time, best and median."""
    from transformers import PreTrainedTokenizerFast
    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()
    table = Table(
        "Tokenizing conversations with loss masks: pawlette against transformers' masked path",
        [
            "format, system prompt and tools",
            "pawlette ms CPU (median)",
            "transformers ms CPU (median)",
            "pawlette / transformers CPU",
            "wall ms: pawlette, transformers",
            "pawlette / transformers wall",
            "floor ms CPU",
            "pawlette / floor CPU",
            "identical ids, masks",
        ],
    )
    table.facts.update(machine_facts())
    table.facts["load average at start"] = load_average()
    table.facts["peer"] = (
        f"transformers {version_of('transformers')} apply_chat_template(tokenize=True, "
        "return_dict=True, return_assistant_tokens_mask=True) with the format's exported "
        "template (it has the {% generation %} blocks the masks need), one call per batch "
        "and tool set; tokenizers " + version_of("tokenizers")
    )
    table.facts["workload"] = (
        f"{count} conversations of 7 messages (system, user, call, result, answer, user, "
        f"answer), batches of {batch}; tokenizer {tokenizer_name} with the format's markers"
    )
    table.facts["timing"] = (
        f"best and median of {repeat} rounds, the paths taking turns (order reversed every "
        "other round); CPU is the process's (the tokenizers' threads included, on every "
        "side); each pawlette round starts with an empty text cache"
    )
    for name in format_names:
        fmt = pawlette.get_format(name)
        tokenizer = tokenizer_factory(fmt)
        hf = PreTrainedTokenizerFast(tokenizer_object=tokenizer)
        hf.chat_template = export_jinja(fmt.name)
        backend = TokenizerBackend(tokenizer)  # built once, like the tokenizer the peer gets
        for unique in kinds:
            data = conversations(count, unique=unique)
            table.rows.append(_masked_row(fmt, tokenizer, hf, backend, data, unique, batch, repeat))
    table.facts["load average at end"] = load_average()
    table.notes.append(
        "pawlette / transformers: at most 0.5x is the target (twice as fast); the floor renders "
        "with pawlette and encodes with tokenizers' encode_batch, no masks."
    )
    return table


def _masked_row(
    fmt: pawlette.Format,
    tokenizer: Any,
    hf: Any,
    backend: TokenizerBackend,
    data: list[dict[str, Any]],
    unique: bool,
    batch: int,
    repeat: int,
) -> list[str]:
    chunks = batches(data, batch)
    hf_chunks = [
        [(template_messages(fmt.name, item["messages"]), item["tools"]) for item in chunk]
        for chunk in chunks
    ]
    outputs: dict[str, list[tuple[list[int], list[int]]]] = {}

    def run_pawlette() -> int:
        backend.clear_cache()
        encoder = ConversationEncoder(fmt, backend)
        results = []
        for chunk in chunks:
            for item in encoder.encode_batch(chunk):
                results.append((item.input_ids, item.labels))
        outputs["pawlette"] = results
        return sum(len(ids) for ids, _ in results)

    def run_transformers() -> int:
        results = []
        for chunk in hf_chunks:
            groups: dict[int, list[int]] = {}
            for position, (_, tools) in enumerate(chunk):
                groups.setdefault(id(tools), []).append(position)
            found: dict[int, tuple[list[int], list[int]]] = {}
            for positions in groups.values():
                out = hf.apply_chat_template(
                    [chunk[p][0] for p in positions],
                    tools=chunk[positions[0]][1],
                    tokenize=True,
                    return_dict=True,
                    return_assistant_tokens_mask=True,
                )
                for p, ids, mask in zip(
                    positions, out["input_ids"], out["assistant_masks"], strict=True
                ):
                    found[p] = (ids, mask)
            results += [found[p] for p in range(len(chunk))]
        outputs["transformers"] = results
        return sum(len(ids) for ids, _ in results)

    def run_floor() -> int:
        tokens = 0
        for chunk in chunks:
            texts = [fmt.render(c).text for c in chunk]
            for encoding in tokenizer.encode_batch(texts, add_special_tokens=False):
                tokens += len(encoding.ids)
        return tokens

    run_floor()  # warm the tokenizer's own caches for every path alike
    rows = measured(
        {"pawlette": run_pawlette, "transformers": run_transformers, "floor": run_floor}, repeat
    )
    same_ids = same_masks = 0
    for (ids, labels), (hf_ids, hf_mask) in zip(
        outputs["pawlette"], outputs["transformers"], strict=True
    ):
        same_ids += ids == hf_ids
        same_masks += [int(label != IGNORE_INDEX) for label in labels] == hf_mask
    ours, peer, floor = rows["pawlette"], rows["transformers"], rows["floor"]
    kind = "unique per conversation" if unique else "shared (4 prompts, 2 tool sets)"
    return [
        f"{fmt.name}, {kind}",
        f"{ours.cpu * 1e3:,.0f} ({ours.cpu_median * 1e3:,.0f})",
        f"{peer.cpu * 1e3:,.0f} ({peer.cpu_median * 1e3:,.0f})",
        f"**{ours.cpu / peer.cpu:.2f}x**",
        f"{ours.wall * 1e3:,.0f}, {peer.wall * 1e3:,.0f}",
        f"{ours.wall / peer.wall:.2f}x",
        f"{floor.cpu * 1e3:,.0f}",
        f"{ours.cpu / floor.cpu:.2f}x",
        f"{same_ids}/{len(data)}, {same_masks}/{len(data)}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--format", default=None, help="one format (default: --formats)")
    parser.add_argument("--formats", default="pcml,breeze,chatglm3,omni,chatml,llama3")
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--unique", action="store_true", help="only unique system prompts/tools")
    parser.add_argument("--shared", action="store_true", help="only shared system prompts/tools")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown")
    parser.add_argument("--tokenizer", help="a tokenizer.json (default: Llama 3, from the cache)")
    parser.add_argument("--end-to-end", action="store_true", help="the command against the floor")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--sweep", action="store_true", help="with --end-to-end: worker counts")
    arguments = parser.parse_args()

    from tokenizers import Tokenizer

    if arguments.tokenizer:
        base = Tokenizer.from_file(arguments.tokenizer)
        tokenizer_name = arguments.tokenizer
    else:
        from tests.support.llama3 import llama3_tokenizer

        base = llama3_tokenizer()
        tokenizer_name = "Llama 3 (llama-models 0.3.0)"

    def with_markers(fmt: pawlette.Format) -> Any:
        return add_markers(base, fmt.special_markers, owner=f"format {fmt.name!r}")

    names = [arguments.format] if arguments.format else arguments.formats.split(",")
    if arguments.end_to_end:
        fmt = pawlette.get_format(names[0])
        end_to_end(fmt, with_markers(fmt), arguments.records, arguments.sweep)
        return
    kinds = (True,) if arguments.unique else (False,) if arguments.shared else (False, True)
    table = masked_table(
        names,
        with_markers,
        tokenizer_name,
        count=arguments.conversations,
        repeat=arguments.repeat,
        batch=arguments.batch,
        kinds=kinds,
    )
    if arguments.markdown:
        print("\n".join(f"- {name}: {value}" for name, value in table.facts.items()))
        print()
        print(table.markdown())
    else:
        print(table.text())


if __name__ == "__main__":
    from bench import pages

    def page(arguments: Sequence[str]) -> pages.Page:
        if "--end-to-end" in arguments:
            return pages.Page(
                measure="tokenize-end-to-end",
                title="pawlette tokenize, end to end",
                what=(
                    "`pawlette tokenize` on generated conversations of seven messages with a "
                    "tool call (PCML on Llama 3's tokenizer with the format's markers), JSONL "
                    "in, Parquet with masks, lengths and metadata out, against the floor: "
                    "read each line, parse it, render it and encode the text with "
                    "`tokenizers`' `encode_batch`, with no mask and nothing written."
                ),
                peer="the floor (render + `tokenizers` `encode_batch`, no masks)",
            )
        return pages.Page(
            measure="tokenize",
            title="Token ids with loss masks",
            what=(
                "Conversations of seven messages with a tool call, tokenized with loss "
                "masks by pawlette and by transformers' `apply_chat_template(tokenize=True, "
                "return_assistant_tokens_mask=True)` on the exported template (both give "
                "the same ids and masks), and the floor (render + `encode_batch`, no masks)."
            ),
            peer="transformers `apply_chat_template` with the exported template",
        )

    sys.exit(pages.run(main, page))
