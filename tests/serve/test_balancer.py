"""Several ``--upstream`` replicas: least outstanding requests, ejection after failures,
recovery by probe, and the answer when every replica is out."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from pawlette.errors import PawletteError
from pawlette.serve.balancer import EJECT_AFTER, Balancer, Tracked
from pawlette.serve.config import ServeConfig
from pawlette.serve.metrics import Registry
from pawlette.serve.transport import Answer

from .conftest import LiveServer
from .prometheus import scrape, value
from .scenarios import PROMPT
from .upstream import FakeUpstream, Script

_HELD: list[socket.socket] = []


def dead_url() -> str:
    """A loopback URL nobody listens on (connects are refused).  Its port stays bound, never
    listening, until the test's servers have stopped (the ``start`` fixture closes it): a
    port given back sooner could be taken by another test's server (a replica meant dead then
    answers, seen once in CI as a 502 for the expected 503)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    _HELD.append(sock)
    return f"http://127.0.0.1:{sock.getsockname()[1]}"


def post(server: LiveServer, **body: Any) -> httpx.Response:
    return httpx.post(
        server.url + "/v1/chat/completions", json={"messages": PROMPT, **body}, timeout=20
    )


def wait_until(condition: Callable[[], bool], seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


@pytest.fixture(scope="module")
def engines() -> Iterator[tuple[FakeUpstream, FakeUpstream]]:
    first, second = FakeUpstream().start(), FakeUpstream().start()
    yield first, second
    first.stop()
    second.stop()


@pytest.fixture(autouse=True)
def _healthy(engines: tuple[FakeUpstream, FakeUpstream]) -> None:
    for engine in engines:
        engine.queue.clear()
        engine.default = Script()


@pytest.fixture
def start() -> Iterator[Callable[..., LiveServer]]:
    servers: list[LiveServer] = []

    def factory(*urls: str, **options: Any) -> LiveServer:
        options.setdefault("model", "m")
        config = ServeConfig(format="pcml", upstream=urls[0], replicas=tuple(urls[1:]), **options)
        servers.append(LiveServer(config))
        return servers[-1]

    yield factory
    for server in servers:
        server.stop()
    while _HELD:  # (the dead replicas' ports, no server left to connect to them)
        _HELD.pop().close()


# ---------------------------------------------------------------------- the policy


def test_least_outstanding_with_ties_in_turn() -> None:
    balancer = Balancer(["http://a/v1", "http://b/", "http://c"], Registry())
    a, b, c = balancer.replicas
    assert [replica.base_url for replica in balancer.replicas] == [
        "http://a",
        "http://b",
        "http://c",
    ]
    assert {id(balancer.pick()) for _ in range(6)} == {id(a), id(b), id(c)}  # ties rotate
    a.outstanding, b.outstanding, c.outstanding = 2, 1, 3
    assert all(balancer.pick() is b for _ in range(5))
    b.outstanding = 4
    assert all(balancer.pick() is a for _ in range(5))
    assert balancer.pick(exclude={a}) is c


def test_ejection_backs_off_and_a_lone_upstream_stays() -> None:
    now = [100.0]
    registry = Registry()
    balancer = Balancer(["http://a", "http://b"], registry, eject_seconds=2, clock=lambda: now[0])
    a, b = balancer.replicas
    balancer.failed(a, "connect")
    assert a.ejected_until == 102.0 and all(balancer.pick() is b for _ in range(4))
    balancer.failed(a, "status")  # already out: counted, not ejected again
    assert a.ejected_until == 102.0
    a.ejected_until = None  # what a good probe does
    balancer.failed(a, "connect")
    assert a.ejected_until == 104.0  # twice as long, in a row
    a.ejected_until = None
    balancer.succeeded(a)
    balancer.failed(a, "connect")
    assert a.ejected_until == 102.0  # a success resets the doubling
    balancer.failed(b, "connect")
    assert balancer.pick() is a  # every replica out: the one whose time ends soonest
    assert balancer.pick(exclude={a}) is b and balancer.pick(exclude={a, b}) is None
    assert "every replica" in str(balancer.unavailable())
    assert registry.value("upstream_ejections_total", upstream="http://a") == 3
    assert registry.value("upstream_failures_total", upstream="http://a", kind="status") == 1
    with pytest.raises(PawletteError, match="--eject-seconds: found 0"):
        Balancer(["http://a", "http://b"], Registry(), eject_seconds=0)
    lone = Balancer(["http://solo"], Registry())
    lone.failed(lone.replicas[0], "connect")
    assert lone.replicas[0].ejected_until is None and lone.pick() is lone.replicas[0]


def test_failed_answers_eject_only_after_several_in_a_row() -> None:
    registry = Registry()
    balancer = Balancer(["http://a", "http://b"], registry, clock=lambda: 100.0)
    a, _ = balancer.replicas
    assert balancer.eject_after == EJECT_AFTER == 5
    for kind in ("status", "timeout", "broken", "status"):  # four in a row: still in
        balancer.failed(a, kind)
    assert a.ejected_until is None
    balancer.succeeded(a)  # a success starts the count again
    for _ in range(EJECT_AFTER - 1):
        balancer.failed(a, "status")
    assert (
        a.ejected_until is None
        and registry.value("upstream_ejections_total", upstream="http://a") == 0
    )
    balancer.failed(a, "status")
    assert a.ejected_until == 105.0
    assert registry.value("upstream_ejections_total", upstream="http://a") == 1
    assert registry.value("upstream_failures_total", upstream="http://a", kind="status") == 7
    # A request sent while it was out (every replica was) that succeeds puts it back; a
    # request sent before the ejection whose answer arrives after it does not.
    balancer.succeeded(a)
    assert a.ejected_until == 105.0
    balancer.succeeded(a, ejected=True)
    assert a.ejected_until is None and registry.value("upstream_ejected", upstream="http://a") == 0


# ---------------------------------------------------------------------- live


def test_requests_go_to_the_replica_with_fewer_in_progress(
    engines: tuple[FakeUpstream, FakeUpstream], start: Callable[..., LiveServer]
) -> None:
    first, second = engines
    server = start(first.url, second.url)
    base = [len(first.records), len(second.records)]
    # A slow stream holds one replica (whichever the tie gives it) busy ...
    for engine in engines:
        engine.push(Script(first_delay=15))
    slow = socket.create_connection(("127.0.0.1", server.port))
    body = json.dumps({"messages": PROMPT, "stream": True}).encode()
    slow.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    )
    try:
        assert wait_until(lambda: len(first.records) + len(second.records) > sum(base))
        busy, idle = engines if len(first.records) > base[0] else engines[::-1]
        idle.queue.clear()
        busy_before, idle_before = len(busy.records), len(idle.records)
        # ... so every other request goes to the other one.
        for _ in range(4):
            assert post(server).status_code == 200
        assert len(busy.records) == busy_before
        assert len(idle.records) == idle_before + 4
        samples = scrape(server.url)
        assert value(samples, "pawlette_upstream_outstanding", upstream=busy.url) == 1
        assert value(samples, "pawlette_upstream_outstanding", upstream=idle.url) == 0
    finally:
        slow.close()
    # The client's disconnect cancels the slow request, which frees its replica.
    record = busy.records[busy_before - 1]
    assert busy.wait_closed(record, 10)
    assert wait_until(
        lambda: value(scrape(server.url), "pawlette_upstream_outstanding", upstream=busy.url) == 0
    )


def test_a_refused_connect_is_retried_on_another_replica_and_ejects(
    engines: tuple[FakeUpstream, FakeUpstream], start: Callable[..., LiveServer]
) -> None:
    live = engines[0]
    dead = dead_url()
    server = start(dead, live.url, eject_seconds=60)
    before = len(live.records)
    for stream in (False, True, False, True):
        response = post(server, stream=stream)
        assert response.status_code == 200 and '"error"' not in response.text
    assert len(live.records) == before + 4
    samples = scrape(server.url)
    assert value(samples, "pawlette_upstream_ejected", upstream=dead) == 1
    # The model name is asked of the first replica that answers.
    named = start(dead, live.url, model=None)
    models = httpx.get(named.url + "/v1/models", timeout=10).json()
    assert models["data"][0]["id"] == "fake-model"
    assert value(samples, "pawlette_upstream_failures_total", upstream=dead, kind="connect") == 1
    assert value(samples, "pawlette_upstream_ejections_total", upstream=dead) == 1
    assert value(samples, "pawlette_upstream_ejected", upstream=live.url) == 0


def test_a_failing_replica_is_ejected_then_probed_back(
    engines: tuple[FakeUpstream, FakeUpstream], start: Callable[..., LiveServer]
) -> None:
    first, second = engines
    server = start(first.url, second.url, eject_seconds=60)
    first.default = Script(status=500, error="out of memory")
    # Ties alternate: the failing replica answers 502s until EJECT_AFTER of them in a row.
    statuses = [post(server).status_code for _ in range(2 * EJECT_AFTER)]
    assert sorted(statuses) == [200] * EJECT_AFTER + [502] * EJECT_AFTER
    samples = scrape(server.url)
    assert value(samples, "pawlette_upstream_ejected", upstream=first.url) == 1
    assert value(samples, "pawlette_upstream_ejections_total", upstream=first.url) == 1
    failures = "pawlette_upstream_failures_total"
    assert value(samples, failures, upstream=first.url, kind="status") == EJECT_AFTER
    # While it is out, nothing is sent to it.
    before = len(first.records)
    assert all(post(server).status_code == 200 for _ in range(3))
    assert len(first.records) == before
    # The engine recovers and its time is up (moved forward here rather than waited for):
    # the probe (GET /v1/models) puts it back, and it gets requests again.
    first.default = Script()
    balancer = server.server.config.app.state.server.upstreams
    replica = next(r for r in balancer.replicas if r.base_url == first.url)
    replica.ejected_until = 0.0
    assert wait_until(
        lambda: value(scrape(server.url), "pawlette_upstream_ejected", upstream=first.url) == 0
    )
    assert all(post(server).status_code == 200 for _ in range(4))
    assert len(first.records) > before


@pytest.mark.parametrize("stream", [False, True])
def test_one_dead_replica_and_one_bad_answer_do_not_stop_service(
    engines: tuple[FakeUpstream, FakeUpstream], start: Callable[..., LiveServer], stream: bool
) -> None:
    """The audit's case: one replica dead, the live one answers one 500 (or times out once):
    the live one stays in, and even once both are out requests still reach it."""
    live = engines[0]
    dead = dead_url()
    server = start(dead, live.url, eject_seconds=60, timeout=1.0)
    assert post(server, stream=stream).status_code == 200  # ejects the dead one
    live.push(Script(status=500, error="one bad answer"))
    assert post(server, stream=stream).status_code == 502
    live.push(Script(first_delay=3))  # slower than the read timeout: a 504
    assert post(server, stream=stream).status_code == 504
    assert [post(server, stream=stream).status_code for _ in range(4)] == [200] * 4
    samples = scrape(server.url)
    assert value(samples, "pawlette_upstream_ejected", upstream=live.url) == 0
    assert value(samples, "pawlette_upstream_ejections_total", upstream=live.url) == 0
    # Both out (the live one taken out by hand): the request goes to the one whose time ends
    # soonest that accepts a connection, and its answer puts it back.
    balancer = server.server.config.app.state.server.upstreams
    replica = next(r for r in balancer.replicas if r.base_url == live.url)
    balancer._eject(replica, "test")
    assert value(scrape(server.url), "pawlette_upstream_ejected", upstream=live.url) == 1
    before = len(live.records)
    response = post(server, stream=stream)
    assert response.status_code == 200 and '"error"' not in response.text
    assert len(live.records) == before + 1
    assert value(scrape(server.url), "pawlette_upstream_ejected", upstream=live.url) == 0
    assert value(scrape(server.url), "pawlette_upstream_ejected", upstream=dead) == 1


@pytest.mark.parametrize("stream", [False, True])
def test_all_replicas_down_is_an_openai_503(start: Callable[..., LiveServer], stream: bool) -> None:
    server = start(dead_url(), dead_url(), eject_seconds=60)
    for _ in range(2):  # the first finds them down, the second is answered at once
        response = post(server, stream=stream)
        assert response.status_code == 503
        body = response.json()
        assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}
        assert body["error"]["code"] == "upstream_unavailable"
        assert body["error"]["type"] == "server_error"
        assert "every replica" in body["error"]["message"]
    samples = scrape(server.url)
    assert (
        value(samples, "pawlette_request_errors_total", status="503", code="upstream_unavailable")
        == 2
    )


def test_usage_split_across_pieces_is_counted_once() -> None:
    body = (
        b'data: {"choices": [{"text": "Hi"}]}\n\ndata: {"choices": [], "usage": '
        b'{"prompt_tokens": 5, "completion_tokens": 123, "total_tokens": 128}}\n\n'
    )

    class Pieces(Answer):
        def __init__(self, cuts: list[int]) -> None:
            self.status_code = 200
            self.content = b""
            self.pieces = [
                body[start:end] for start, end in zip([0, *cuts], [*cuts, len(body)], strict=True)
            ]

        async def next_piece(self) -> bytes:
            return self.pieces.pop(0) if self.pieces else b""

        async def aclose(self) -> None:
            pass

    async def count(cuts: list[int]) -> tuple[float, float]:
        registry = Registry()
        balancer = Balancer(["http://a"], registry)
        replica = balancer.replicas[0]
        replica.outstanding = 1
        tracked = Tracked(balancer, replica, Pieces(cuts), True)
        received = await tracked.read()
        await tracked.aclose()
        assert received == body and replica.outstanding == 0
        return (
            registry.value("completion_tokens_total"),
            registry.value("upstream_events_total"),
        )

    where = body.index(b"123")
    for cuts in ([], [where + 1], [where + 2], [where + 3], [where - 5], [10, where, where + 2]):
        assert asyncio.run(count(cuts)) == (123, 1), cuts
