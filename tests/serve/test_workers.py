"""``pawlette serve --workers N``: N processes on one port, metrics summed over them, a dead
worker replaced, and a clean stop."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable

import httpx

from pawlette.serve.metrics import DUMP_SECONDS
from pawlette.serve.workers import worker_pids

from .prometheus import Samples, scrape, total, value
from .scenarios import PROMPT
from .upstream import FakeUpstream


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def healthy(url: str) -> bool:
    try:
        return httpx.get(url + "/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_workers_share_the_port_and_their_metrics(upstream: FakeUpstream) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable,
        "-c",
        "import sys; from pawlette.cli import main; sys.exit(main(sys.argv[1:]))",
        "serve",
        *("-f", "pcml", "--upstream", upstream.url, "--model", "m"),
        *("--port", str(port), "--workers", "2", "--log-level", "warning"),
    ]
    supervisor = subprocess.Popen(
        command, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    )
    try:
        assert wait_until(lambda: len(worker_pids(supervisor.pid)) == 2, 60), "no 2 workers"
        first_pids = worker_pids(supervisor.pid)
        assert wait_until(lambda: healthy(url), 60)
        # Each request on a new connection: SO_REUSEPORT spreads connections over workers.
        for _ in range(30):
            with httpx.Client(timeout=20) as client:
                answer = client.post(url + "/v1/chat/completions", json={"messages": PROMPT})
            assert answer.status_code == 200
            assert answer.json()["choices"][0]["message"]["content"] == "Hello!"

        def summed() -> Samples:
            return scrape(url)

        # Every worker writes its numbers each second; any of them answers with the sum (of
        # its own numbers and the others' last written ones: two scrapes answered by two
        # workers may differ for a second, so the checks read the scrape that saw all 30).
        scraped: list[Samples] = []

        def complete() -> bool:
            scraped[:] = [summed()]
            return value(scraped[0], "pawlette_requests_total", status="200") == 30

        assert wait_until(complete, 20)
        samples = scraped[0]
        per_worker = [
            value(samples, "pawlette_worker_requests_total", worker=str(index))
            for index in range(2)
        ]
        assert sum(per_worker) == total(samples, "pawlette_worker_requests_total") == 30
        assert min(per_worker) > 0, f"one worker got every connection: {per_worker}"

        # A worker that dies is replaced; the sums do not go back.  (What a killed worker
        # counted after its last write, at most a second's worth, is lost: let both write.)
        time.sleep(2 * DUMP_SECONDS)
        os.kill(first_pids[0], signal.SIGKILL)
        assert wait_until(
            lambda: (
                len(worker_pids(supervisor.pid)) == 2 and worker_pids(supervisor.pid) != first_pids
            ),
            60,
        )
        assert wait_until(lambda: healthy(url), 60)
        for _ in range(10):
            with httpx.Client(timeout=20) as client:
                answer = client.post(url + "/v1/chat/completions", json={"messages": PROMPT})
            assert answer.status_code == 200
        # The new worker 0 continued its predecessor's counters: nothing was lost.
        assert wait_until(
            lambda: value(summed(), "pawlette_requests_total", status="200") == 40, 20
        )
    finally:
        supervisor.send_signal(signal.SIGTERM)
        status = supervisor.wait(60)
    assert status == 0
    assert worker_pids(supervisor.pid) == []


def test_one_kept_alive_client_spreads_over_the_workers(upstream: FakeUpstream) -> None:
    """The kernel spreads connections, not requests: a client keeping one connection alive
    sent every request to one worker (a soak split 6,424 / 776).  A connection is closed after
    --max-requests-per-connection answers, so the client reconnects and is spread again."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable,
        "-c",
        "import sys; from pawlette.cli import main; sys.exit(main(sys.argv[1:]))",
        "serve",
        *("-f", "pcml", "--upstream", upstream.url, "--model", "m"),
        *("--port", str(port), "--workers", "2", "--log-level", "warning"),
        *("--max-requests-per-connection", "3"),
    ]
    supervisor = subprocess.Popen(
        command, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    )
    try:
        assert wait_until(lambda: len(worker_pids(supervisor.pid)) == 2, 60), "no 2 workers"
        assert wait_until(lambda: healthy(url), 60)
        time.sleep(2)  # both workers listening (each binds its own SO_REUSEPORT socket)
        with httpx.Client(timeout=20) as client:  # one client, kept alive as long as allowed
            for _ in range(120):
                answer = client.post(url + "/v1/chat/completions", json={"messages": PROMPT})
                assert answer.status_code == 200

        def per_worker() -> list[float]:
            samples = scrape(url)
            return [
                value(samples, "pawlette_worker_requests_total", worker=str(index))
                for index in range(2)
            ]

        counts: list[float] = []

        def counted() -> bool:
            counts[:] = per_worker()
            return sum(counts) >= 120

        assert wait_until(counted, 20), f"the workers counted {counts}"
        assert min(counts) >= 0.2 * sum(counts), f"the requests split {counts}"
    finally:
        supervisor.send_signal(signal.SIGTERM)
        supervisor.wait(60)
