"""``pawlette serve`` over a real llama.cpp under concurrency, and over two replicas of it with
one killed mid-run: the tool_choice contract held by every answer, no 500, failover as the
README documents.

Two parts (from the repository root; needs the ``serve`` and ``test`` extras: xllamacpp,
gguf, openai):

- **concurrent**: per format with a grammar export, one llama.cpp server with ``--slots``
  slots (``n_parallel``) and ``pawlette serve --engine llamacpp --tokenizer`` in front;
  ``--clients`` threads send every case of tests/serve/test_llama_cpp.py (``required``, a
  named function, ``none``, ``auto`` with and without ``parallel_tool_calls``), streamed and
  not, over ``--seeds`` seeds, at once.  With several sequences per batch a seed no longer
  gives the same tokens on every run, but under a correct grammar every answer must still
  keep the contract (tests/support/gguf_checks.py).
- **replicas** (``--replicas``): two llama.cpp servers for pcml behind one ``pawlette serve``
  (two ``--upstream``); the clients run, one engine is killed halfway through.  Counted: the
  answers by status, streams ended by an error event (the ones in flight on the killed
  engine: the README's "the stream ends with one error event"), answers after the kill
  (they must all pass: the dead replica is ejected at its first refused connect), and any 500.

Usage::

    python -m bench.fuzz_engine [--formats pcml,omni] [--seeds 2] [--clients 4] [--slots 4]
    python -m bench.fuzz_engine --replicas [--rounds 60]
"""

from __future__ import annotations

import argparse
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable

import httpx
import openai

from pawlette.export.grammar import grammar_formats
from pawlette.serve.config import ServeConfig
from tests.serve.conftest import LiveServer
from tests.support.gguf_checks import ask_choice, problems
from tests.support.gguf_model import format_model
from tests.support.gguf_server import EngineProcess

CASES = [("required", None), ("named", None), ("none", None), ("auto", True), ("auto", False)]


def _load() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()

    def add(self, key: str, reason: str | None = None) -> None:
        with self.lock:
            self.counts[key] += 1
            if reason is not None:
                self.reasons[reason[:160]] += 1


def one(
    client: openai.OpenAI,
    format_name: str,
    case: tuple[str, bool | None],
    stream: bool,
    seed: int,
    max_tokens: int,
    tally: Tally,
) -> bool:
    choice, parallel = case
    try:
        message, finish = ask_choice(
            client, choice, stream=stream, parallel=parallel, max_tokens=max_tokens, seed=seed
        )
    except openai.APIStatusError as error:
        tally.add(f"HTTP {error.status_code}", f"HTTP {error.status_code}: {error.message}")
        return False
    except openai.APIError as error:  # a stream's error event
        tally.add("stream error event", f"stream error: {error.message}")
        return False
    found = problems(format_name, choice, parallel, message, finish)
    if found:
        tally.add("failed", f"{format_name} {case} stream={stream}: {found[0]}")
        return False
    tally.add("passed")
    if finish == "length":
        tally.add("length cuts (passing)")
    return True


def concurrent(format_name: str, seeds: int, clients: int, slots: int, max_tokens: int) -> Tally:
    model = format_model(format_name)
    engine = EngineProcess(model.path, slots)
    tally = Tally()
    try:
        server = LiveServer(
            ServeConfig(
                format=format_name,
                upstream=engine.url,
                engine="llamacpp",
                tokenizer=str(model.tokenizer),
                model="m",
                timeout=300,
            )
        )
        work = [
            (case, stream, seed)
            for case in CASES
            for stream in (False, True)
            for seed in range(seeds)
        ]
        random.Random(format_name).shuffle(work)
        lock = threading.Lock()

        def worker() -> None:
            client = sdk_client(server.url)
            while True:
                with lock:
                    if not work:
                        break
                    case, stream, seed = work.pop()
                one(client, format_name, case, stream, seed, max_tokens, tally)
            client.close()

        run_workers(worker, clients)
        count_metrics(server.url, tally, REQUEST_METRICS)
        server.stop()
    finally:
        engine.kill()
    return tally


def replicas(rounds: int, clients: int, slots: int, max_tokens: int) -> Tally:
    model = format_model("pcml")
    first, second = EngineProcess(model.path, slots), EngineProcess(model.path, slots)
    tally = Tally()
    try:
        server = LiveServer(
            ServeConfig(
                format="pcml",
                upstream=first.url,
                replicas=(second.url,),
                engine="llamacpp",
                tokenizer=str(model.tokenizer),
                model="m",
                timeout=300,
                eject_seconds=2.0,
            )
        )
        done = 0
        killed_at: int | None = None
        lock = threading.Lock()
        generator = random.Random(5)
        work = [(generator.choice(CASES), generator.random() < 0.5, seed) for seed in range(rounds)]

        def worker() -> None:
            nonlocal done, killed_at
            client = sdk_client(server.url)
            while True:
                with lock:
                    if not work:
                        break
                    case, stream, seed = work.pop()
                    if killed_at is None and done >= rounds // 2:
                        killed_at = done
                        second.kill()  # mid-run: some requests are in flight on it
                        tally.add("killed the second replica after answers", str(done))
                    after = killed_at is not None
                ok = one(client, "pcml", case, stream, seed, max_tokens, tally)
                with lock:
                    done += 1
                if after:
                    tally.add("after the kill: " + ("passed" if ok else "FAILED"))
            client.close()

        run_workers(worker, clients)
        count_metrics(server.url, tally, REQUEST_METRICS + UPSTREAM_METRICS)
        server.stop()
    finally:
        first.kill()
        second.kill()
    return tally


REQUEST_METRICS = (
    "pawlette_requests_total",
    "pawlette_request_errors_total",
    "pawlette_stream_errors_total",
)
UPSTREAM_METRICS = (
    "pawlette_upstream_ejections_total",
    "pawlette_upstream_failures_total",
    "pawlette_upstream_requests_total",
    "pawlette_upstream_ejected",
)


def sdk_client(url: str) -> openai.OpenAI:
    """An SDK client of the server at ``url``: no retries (a failure is counted, not hidden),
    a timeout long enough for a slow engine's longest answer."""
    return openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0, timeout=600)


def run_workers(worker: Callable[[], None], clients: int) -> None:
    """Run ``worker`` in ``clients`` threads at once, until each returns."""
    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def count_metrics(url: str, tally: Tally, names: tuple[str, ...]) -> None:
    """Add the server's ``/metrics`` lines for ``names`` to the tally (to compare with what
    was sent)."""
    for line in httpx.get(url + "/metrics", timeout=10).text.splitlines():
        if line.startswith(names):
            tally.add("metrics: " + line)


def report(title: str, tally: Tally, seconds: float) -> None:
    print(f"\n## {title} ({seconds:.0f} s, {_load()})")
    for key, count in sorted(tally.counts.items()):
        print(f"  {count:5d}  {key}")
    for reason, count in tally.reasons.most_common(12):
        print(f"        {count} x {reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--formats", default=",".join(grammar_formats()))
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--replicas", action="store_true", help="the two-replica failover run")
    parser.add_argument("--rounds", type=int, default=60)
    options = parser.parse_args()
    print(f"before: {_load()}", flush=True)
    if options.replicas:
        started = time.monotonic()
        tally = replicas(options.rounds, options.clients, options.slots, options.max_tokens)
        report("two replicas, one killed halfway", tally, time.monotonic() - started)
        return
    for name in [name for name in options.formats.split(",") if name]:
        started = time.monotonic()
        tally = concurrent(name, options.seeds, options.clients, options.slots, options.max_tokens)
        title = f"{name}: {options.clients} clients, {options.slots} slots"
        report(title, tally, time.monotonic() - started)


if __name__ == "__main__":
    from bench import pages

    PAGE = pages.Page(
        measure="fuzz-engine",
        title="A real llama.cpp under concurrency and failover",
        what=(
            "`pawlette serve` over a real llama.cpp (the `xllamacpp` wheel, the tiny biased "
            "model per format, 4 slots) with concurrent clients running every tool_choice "
            "case streamed and not, and over two replicas with one killed halfway: every "
            "answer must keep the tool_choice contract, with no HTTP 500."
        ),
        peer="none (the contract is absolute); llama.cpp from the `xllamacpp` wheel",
    )
    raise SystemExit(pages.run(main, PAGE))
