"""Prometheus metrics for ``GET /metrics``: counters, gauges and histograms in the text
exposition format (version 0.0.4), with no client library.

The server's series (every name starts with ``pawlette_``):

- ``requests_total{status}`` (counter): chat-completion requests answered, by HTTP status;
- ``request_errors_total{status,code}`` (counter): error answers, by status and error code;
- ``stream_errors_total{code}`` (counter): streams ended by an error event (after the 200);
- ``request_duration_seconds`` (histogram): arrival to the answer's last byte;
- ``time_to_first_token_seconds`` (histogram): streams, arrival to the engine's first piece;
- ``completion_tokens_total`` (counter): ``usage.completion_tokens`` the engines reported
  (every non-streaming answer; streams when the client asks for usage);
- ``upstream_events_total`` (counter): text events streamed by the engines (one per token
  for vLLM, SGLang and llama.cpp): ``rate()`` of it is the tokens per second;
- ``upstream_latency_seconds{upstream}`` (histogram): request sent to the answer's head;
- ``upstream_requests_total{upstream}``, ``upstream_failures_total{upstream,kind}`` (kind:
  connect, status, timeout, broken, invalid, too_large, deadline),
  ``upstream_ejections_total{upstream}`` (counters); ``upstream`` is the replica's URL
  without credentials;
- ``upstream_outstanding{upstream}``, ``upstream_ejected{upstream}``, ``requests_in_flight``
  (gauges);
- ``upstream_lark_grammars{upstream}`` (gauge): 1 while the replica's forced tool-call
  grammars go in llguidance's Lark, 0 in GBNF (:mod:`~pawlette.serve.grammar_syntax`; engines
  that take grammars);
- ``worker_requests_total{worker}`` (counter): requests per worker process;
- ``render_losses_total{field}`` (counter): fields the format left out of prompts, as its
  template does (:mod:`~pawlette.serve.losses`), by field (``messages.name``, ``tools``);
- ``refused_total{code}`` (counter): requests and connections refused before a handler ran
  (a foreign ``Host``, a head too large or too slow, the connection cap, ...).

With ``--workers N`` every process keeps its own numbers and writes them to a shared directory
each second; ``/metrics`` (answered by whichever process the kernel hands the connection to)
sums every process's last snapshot with its own current numbers.  Counters and histograms are
summed (a restarted worker continues from its predecessor's snapshot, so no counter goes back);
gauges are summed over the processes alive, so ``upstream_ejected`` counts the workers that
have that replica out of their rotation.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import math
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["counter", "gauge", "histogram"]
Labels = tuple[tuple[str, str], ...]

LATENCY_BUCKETS = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    120.0,
)
"""Seconds; from a loopback hop (1 ms) to a long generation (2 minutes)."""


@dataclass(frozen=True)
class Family:
    name: str
    kind: Kind
    help: str
    buckets: tuple[float, ...] = ()


FAMILIES = {
    family.name: family
    for family in (
        Family("requests_total", "counter", "Chat-completion requests answered, by HTTP status."),
        Family("request_errors_total", "counter", "Error answers, by HTTP status and error code."),
        Family("stream_errors_total", "counter", "Streams ended by an error event, by code."),
        Family(
            "request_duration_seconds",
            "histogram",
            "Request arrival to the answer's last byte.",
            LATENCY_BUCKETS,
        ),
        Family(
            "time_to_first_token_seconds",
            "histogram",
            "Streaming requests: arrival to the first piece of the engine's answer.",
            LATENCY_BUCKETS,
        ),
        Family(
            "completion_tokens_total",
            "counter",
            "Completion tokens the engines reported in usage.",
        ),
        Family(
            "upstream_events_total",
            "counter",
            "Server-sent events streamed by the engines (about one per generated token).",
        ),
        Family(
            "upstream_latency_seconds",
            "histogram",
            "Request sent to the engine's answer head, per replica.",
            LATENCY_BUCKETS,
        ),
        Family("upstream_requests_total", "counter", "Requests sent to each engine replica."),
        Family(
            "upstream_failures_total",
            "counter",
            "Engine failures per replica: connect, status (not a completion), timeout, broken "
            "(cut short), invalid (malformed), too_large, deadline (--request-timeout).",
        ),
        Family("upstream_ejections_total", "counter", "Times a replica was taken out of rotation."),
        Family("upstream_outstanding", "gauge", "Requests in progress per engine replica."),
        Family(
            "upstream_ejected",
            "gauge",
            "1 while a replica is out of rotation (summed over worker processes).",
        ),
        Family(
            "upstream_lark_grammars",
            "gauge",
            "1 while a replica's forced tool-call grammars go in llguidance's Lark, 0 in GBNF "
            "(summed over worker processes).",
        ),
        Family(
            "render_losses_total",
            "counter",
            "Fields the format left out of requests' prompts, as its template does, by field "
            "(the path without indexes: messages.name, tools, ...).",
        ),
        Family("requests_in_flight", "gauge", "Requests being answered."),
        Family("worker_requests_total", "counter", "Requests answered per worker process."),
        Family(
            "refused_total",
            "counter",
            "Requests and connections refused before a handler ran, by code: invalid_host, "
            "forbidden_origin, request_header_too_large, head_timeout, body_timeout, "
            "too_many_connections, evicted (an idle connection closed at the cap), stalled "
            "(a client that took none of its answer for --send-timeout).",
        ),
    )
}


@dataclass
class _Histogram:
    counts: list[int]
    total: float = 0.0

    @property
    def count(self) -> int:
        return sum(self.counts)


def _key(name: str, labels: dict[str, str]) -> tuple[str, Labels]:
    """The key of a value: labels in name order (none or one, the common cases, unsorted)."""
    if len(labels) < 2:
        return name, tuple(labels.items())
    return name, tuple(sorted(labels.items()))


@dataclass
class Registry:
    """One process's numbers.  Values are keyed by ``(family name, labels)``."""

    values: dict[tuple[str, Labels], float] = field(default_factory=dict)
    histograms: dict[tuple[str, Labels], _Histogram] = field(default_factory=dict)

    def add(self, name: str, amount: float = 1.0, **labels: str) -> None:
        key = _key(name, labels)
        self.values[key] = self.values.get(key, 0.0) + amount

    def set(self, name: str, value: float, **labels: str) -> None:
        self.values[_key(name, labels)] = value

    def observe(self, name: str, seconds: float, **labels: str) -> None:
        key = _key(name, labels)
        histogram = self.histograms.get(key)
        buckets = FAMILIES[name].buckets
        if histogram is None:
            histogram = self.histograms[key] = _Histogram([0] * (len(buckets) + 1))
        # Non-cumulative counts: the last slot is above the top bucket (+Inf).
        histogram.counts[bisect.bisect_left(buckets, seconds)] += 1
        histogram.total += seconds

    def value(self, name: str, **labels: str) -> float:
        return self.values.get((name, tuple(sorted(labels.items()))), 0.0)

    # ------------------------------------------------------------------ snapshots

    def snapshot(self) -> dict[str, Any]:
        """The numbers as JSON-able data (for another process to merge)."""
        return {
            "values": [
                [name, list(labels), value] for (name, labels), value in self.values.items()
            ],
            "histograms": [
                [name, list(labels), histogram.counts, histogram.total]
                for (name, labels), histogram in self.histograms.items()
            ],
        }

    def merge(self, snapshot: dict[str, Any], *, gauges: bool = True) -> None:
        """Add another process's snapshot to these numbers (its gauges too, if ``gauges``)."""
        for name, labels, value in snapshot.get("values", []):
            family = FAMILIES.get(name)
            if family is None or (family.kind == "gauge" and not gauges):
                continue
            key = (name, tuple((str(k), str(v)) for k, v in labels))
            self.values[key] = self.values.get(key, 0.0) + float(value)
        for name, labels, counts, total in snapshot.get("histograms", []):
            family = FAMILIES.get(name)
            if family is None or len(counts) != len(family.buckets) + 1:
                continue
            key = (name, tuple((str(k), str(v)) for k, v in labels))
            histogram = self.histograms.get(key)
            if histogram is None:
                histogram = self.histograms[key] = _Histogram([0] * len(counts))
            histogram.counts = [a + int(b) for a, b in zip(histogram.counts, counts, strict=True)]
            histogram.total += float(total)

    # ------------------------------------------------------------------ exposition

    def exposition(self) -> str:
        """The text exposition format: ``# HELP``, ``# TYPE`` and the samples, per family."""
        lines: list[str] = []
        by_family: dict[str, list[str]] = {}
        for (name, labels), value in sorted(self.values.items()):
            by_family.setdefault(name, []).append(
                f"pawlette_{name}{_labels(labels)} {_number(value)}"
            )
        for (name, labels), histogram in sorted(self.histograms.items()):
            samples = by_family.setdefault(name, [])
            running = 0
            for bound, count in zip(
                (*FAMILIES[name].buckets, math.inf), histogram.counts, strict=True
            ):
                running += count
                le = "+Inf" if bound == math.inf else _number(bound)
                samples.append(f"pawlette_{name}_bucket{_labels((*labels, ('le', le)))} {running}")
            samples.append(f"pawlette_{name}_sum{_labels(labels)} {_number(histogram.total)}")
            samples.append(f"pawlette_{name}_count{_labels(labels)} {running}")
        for name, family in FAMILIES.items():
            if not by_family.get(name):
                continue
            lines.append(f"# HELP pawlette_{name} {family.help}")
            lines.append(f"# TYPE pawlette_{name} {family.kind}")
            lines.extend(by_family[name])
        return "\n".join(lines) + "\n"


def _labels(labels: Iterable[tuple[str, str]]) -> str:
    pairs = [f'{key}="{_escape(value)}"' for key, value in labels]
    return "{" + ",".join(pairs) + "}" if pairs else ""


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if value == math.inf:
        return "+Inf"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

DIRECTORY_VARIABLE = "PAWLETTE_METRICS_DIR"
WORKER_VARIABLE = "PAWLETTE_WORKER"
"""Set by the ``--workers`` supervisor for its workers: where the snapshots go, and which
worker this process is (0 to N-1, kept by a restarted worker)."""
DUMP_SECONDS = 1.0


class SharedMetrics:
    """This process's :class:`Registry`, and (with ``--workers``) the other workers' snapshots.

    ``directory`` is shared by the workers; each writes ``<worker>.json`` there.  A worker
    that starts where a file of its number exists continues that file's counters, so a
    restarted worker does not make the sums go back.
    """

    def __init__(self, directory: str | None = None, worker: int = 0) -> None:
        self.registry = Registry()
        self.directory = directory
        self.worker = worker
        if directory is not None:
            previous = _load(self._path(worker))
            if previous is not None:
                self.registry.merge(previous, gauges=False)

    @classmethod
    def from_environment(cls) -> SharedMetrics:
        """This process's metrics: shared when the ``--workers`` supervisor started it."""
        directory = os.environ.get(DIRECTORY_VARIABLE) or None
        worker = os.environ.get(WORKER_VARIABLE, "0")
        return cls(directory, int(worker) if worker.isdigit() else 0)

    async def dump_forever(self) -> None:
        while True:
            self.dump()
            await asyncio.sleep(DUMP_SECONDS)

    def _path(self, worker: int) -> str:
        assert self.directory is not None
        return os.path.join(self.directory, f"{worker}.json")

    def dump(self) -> None:
        """Write this process's snapshot (atomically: a reader sees the old or the new)."""
        if self.directory is None:
            return
        snapshot = self.registry.snapshot()
        snapshot["pid"] = os.getpid()
        snapshot["written"] = time.time()
        temporary = self._path(self.worker) + f".{os.getpid()}.tmp"
        with open(temporary, "w") as handle:
            json.dump(snapshot, handle)
        os.replace(temporary, self._path(self.worker))

    def exposition(self) -> str:
        """Every worker's numbers summed (or just this process's, without a directory)."""
        if self.directory is None:
            return self.registry.exposition()
        total = Registry()
        total.merge(self.registry.snapshot())
        with contextlib.suppress(OSError):
            for name in sorted(os.listdir(self.directory)):
                stem, _, extension = name.partition(".")
                if extension != "json" or not stem.isdigit() or int(stem) == self.worker:
                    continue
                snapshot = _load(os.path.join(self.directory, name))
                if snapshot is not None:
                    total.merge(snapshot, gauges=_alive(snapshot.get("pid")))
        return total.exposition()


def _load(path: str) -> dict[str, Any] | None:
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
