"""``GET /metrics``: the exposition format, the counters moving with requests, and the sums
over worker snapshots."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from pawlette.serve.metrics import LATENCY_BUCKETS, Registry, SharedMetrics

from .conftest import ServerFactory
from .prometheus import Samples, parse, scrape, total, value
from .scenarios import PROMPT
from .upstream import DEFAULT_USAGE, FakeUpstream, Script


def post(url: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(url + "/v1/chat/completions", json=body, timeout=20)


def moved(after: Samples, before: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


def test_exposition_format_and_histogram_buckets() -> None:
    registry = Registry()
    registry.add("requests_total", status="200")
    registry.add("requests_total", 2, status="200")
    registry.add("request_errors_total", status="502", code='say "no"\\')
    for seconds in (0.0005, 0.003, 0.003, 7.0, 1000.0):
        registry.observe("upstream_latency_seconds", seconds, upstream="http://a")
    samples = parse(registry.exposition())
    assert value(samples, "pawlette_requests_total", status="200") == 3
    assert value(samples, "pawlette_request_errors_total", status="502", code='say \\"no\\"\\\\')
    bucket = "pawlette_upstream_latency_seconds_bucket"
    assert value(samples, bucket, upstream="http://a", le="0.001") == 1
    assert value(samples, bucket, upstream="http://a", le="0.005") == 3
    assert value(samples, bucket, upstream="http://a", le="10") == 4
    assert value(samples, bucket, upstream="http://a", le="+Inf") == 5
    assert value(samples, "pawlette_upstream_latency_seconds_count", upstream="http://a") == 5
    assert value(
        samples, "pawlette_upstream_latency_seconds_sum", upstream="http://a"
    ) == pytest.approx(1007.0065)
    assert len([key for key in samples if key[0] == bucket]) == len(LATENCY_BUCKETS) + 1


def test_worker_snapshots_are_summed_and_a_restarted_worker_continues(tmp_path: Any) -> None:
    first = SharedMetrics(str(tmp_path), worker=0)
    second = SharedMetrics(str(tmp_path), worker=1)
    first.registry.add("requests_total", 2, status="200")
    first.registry.set("requests_in_flight", 3)
    first.registry.observe("time_to_first_token_seconds", 0.02)
    second.registry.add("requests_total", 5, status="200")
    second.registry.observe("time_to_first_token_seconds", 0.2)
    first.dump()
    samples = parse(second.exposition())  # its own live numbers plus the others' snapshots
    assert value(samples, "pawlette_requests_total", status="200") == 7
    assert value(samples, "pawlette_time_to_first_token_seconds_count") == 2
    assert value(samples, "pawlette_requests_in_flight") == 3  # worker 0 (this pid) is alive
    # A snapshot of a process that is gone keeps its counters, not its gauges.
    snapshot = json.loads((tmp_path / "0.json").read_text())
    snapshot["pid"] = 2**22 + 12345  # above Linux's pid_max default: no such process
    (tmp_path / "0.json").write_text(json.dumps(snapshot))
    samples = parse(second.exposition())
    assert value(samples, "pawlette_requests_total", status="200") == 7
    assert value(samples, "pawlette_requests_in_flight") == 0
    # A worker restarted under number 0 starts from its predecessor's counters.
    restarted = SharedMetrics(str(tmp_path), worker=0)
    assert restarted.registry.value("requests_total", status="200") == 2
    assert restarted.registry.value("requests_in_flight") == 0


def test_counters_move_with_requests(serve: ServerFactory, upstream: FakeUpstream) -> None:
    server = serve("pcml")
    url, engine = server.url, upstream.url
    before = scrape(url)
    client = server.client()
    for _ in range(2):
        client.chat.completions.create(model="m", messages=PROMPT)
    upstream.push(Script(text="Hello!", sizes=(3,)))
    chunks = list(client.chat.completions.create(model="m", messages=PROMPT, stream=True))
    assert "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert post(url, {"messages": "hi"}).status_code == 400
    upstream.push(Script(status=500))
    assert post(url, {"messages": PROMPT}).status_code == 502
    upstream.push(Script(text="Hello there, general Kenobi<end>", sizes=(4,), crash_after=2))
    assert '"upstream_disconnected"' in post(url, {"messages": PROMPT, "stream": True}).text
    after = scrape(url)

    assert moved(after, before, "pawlette_requests_total", status="200") == 4
    assert moved(after, before, "pawlette_requests_total", status="400") == 1
    assert moved(after, before, "pawlette_requests_total", status="502") == 1
    errors = "pawlette_request_errors_total"
    assert moved(after, before, errors, status="400", code="invalid_request_error") == 1
    assert moved(after, before, errors, status="502", code="upstream_error") == 1
    code = "upstream_disconnected"
    assert moved(after, before, "pawlette_stream_errors_total", code=code) == 1
    # Usage is reported by the engine for every non-streaming answer (7 tokens each).
    tokens = moved(after, before, "pawlette_completion_tokens_total")
    assert tokens == 2 * DEFAULT_USAGE["completion_tokens"]
    # Streams: "Hel", "lo!", the finish event; then two 4-character pieces before the crash.
    assert moved(after, before, "pawlette_upstream_events_total") == 3 + 2
    assert moved(after, before, "pawlette_time_to_first_token_seconds_count") == 2
    assert moved(after, before, "pawlette_request_duration_seconds_count") == 6
    latency = "pawlette_upstream_latency_seconds_count"
    assert moved(after, before, latency, upstream=engine) == 5
    assert moved(after, before, "pawlette_upstream_requests_total", upstream=engine) == 5
    failures = "pawlette_upstream_failures_total"
    assert moved(after, before, failures, upstream=engine, kind="status") == 1
    assert moved(after, before, failures, upstream=engine, kind="broken") == 1
    # A lone upstream is never ejected; nothing is left in flight.
    assert value(after, "pawlette_upstream_ejected", upstream=engine) == 0
    assert value(after, "pawlette_upstream_outstanding", upstream=engine) == 0
    assert value(after, "pawlette_requests_in_flight") == 0
    assert total(after, "pawlette_worker_requests_total") >= 6


def test_the_serving_guide_lists_every_series_with_its_type() -> None:
    """docs/guides/serving.md's metrics table has a row for every series ``/metrics`` may
    answer, with its type (the refusals of hostile clients, ``refused_total``, were missing:
    a deployer could not know the server counts them)."""
    import pathlib
    import re

    from pawlette.serve.metrics import FAMILIES

    guide = pathlib.Path(__file__).parents[2] / "docs" / "guides" / "serving.md"
    section = guide.read_text(encoding="utf-8").split("\n## Metrics\n", 1)[1].split("\n## ")[0]
    listed: dict[str, str] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 2:
            for name in re.findall(r"`([a-z_]+)(?:\{[^}]*\})?`", cells[0]):
                listed[name] = cells[1]
    for name, family in FAMILIES.items():
        assert name in listed, f"{name} is not in the guide's metrics table"
        assert listed[name] == family.kind, (name, listed[name], family.kind)
