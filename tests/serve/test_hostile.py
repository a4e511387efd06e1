"""``pawlette serve`` against hostile clients and a misbehaving engine, over real sockets.

Each test here failed before its fix (the audit of 1dcafa3, run as an attacker and as a
broken engine would): a huge request head stalled a worker; idle, trickled and stalled
connections were held forever and could use up the file descriptors; an engine's answer was
read whole however large (a gzip bomb inflated to gigabytes); credentials in ``--upstream``
reached clients and ``/metrics``; a request waited for a busy pool past ``--timeout``; invalid
UTF-8 from the engine was a 502 unstreamed but a 200 with U+FFFD streamed; a redirect, a 204
or an HTML page answering a stream became a 200 and a vague error event; a cut or malformed
answer was "unreachable"; an engine head trickled a line at a time or a stream of interim
answers never timed out, nor did an answer that dripped forever; a 413 left the connection
open; a foreign ``Host``, a cross-site ``Origin`` and a ``text/plain`` body were served.

Nothing here asserts a duration: an attack is checked by what the server does (the answer,
the close) and by ``/health`` answering while it runs (with a generous timeout);
``python -m bench.soak_attacks`` measures how fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import logging
import re
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from pawlette.serve.config import ServeConfig

from .conftest import LiveServer
from .prometheus import scrape, value
from .raw_engine import Play, RawEngine, answer, chunked, events, piece

HELLO = events(piece("Hel"), piece("lo", "stop"), b"[DONE]")
SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
CHAT = {"messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def engine() -> Iterator[RawEngine]:
    raw = RawEngine()
    yield raw
    raw.stop()


@pytest.fixture(autouse=True)
def _no_plays_left(engine: RawEngine) -> Iterator[None]:
    engine.plays.clear()
    engine.heads.clear()
    yield
    engine.plays.clear()


@pytest.fixture
def start(engine: RawEngine) -> Iterator[Callable[..., LiveServer]]:
    servers: list[LiveServer] = []

    def factory(**options: Any) -> LiveServer:
        options.setdefault("upstream", engine.url)
        options.setdefault("model", "m")
        servers.append(LiveServer(ServeConfig(format="pcml", **options)))
        return servers[-1]

    yield factory
    for server in servers:
        server.stop()


def post(server: LiveServer, stream: bool = False, **headers: str) -> httpx.Response:
    return httpx.post(
        server.url + "/v1/chat/completions",
        json={**CHAT, "stream": stream},
        headers=headers,
        timeout=30,
    )


def error_of(response: httpx.Response) -> dict[str, Any]:
    """The error of an answer: its body's, or a stream's last event's."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        last = response.text.strip().split("\n")[-1]
        assert last.startswith('data: {"error"'), response.text
        error: dict[str, Any] = json.loads(last[6:])["error"]
        return error
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


def healthy(server: LiveServer) -> bool:
    try:
        return httpx.get(server.url + "/health", timeout=20).status_code == 200
    except httpx.HTTPError:
        return False


def connect(server: LiveServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=20)


def read_to_close(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a timeout fails)."""
    data = b""
    while piece := sock.recv(65536):
        data += piece
    return data


CHAT_HEAD = (
    b"POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n"
)


# ---------------------------------------------------------------------- hostile clients


def test_a_huge_request_head_is_refused_while_health_answers(
    start: Callable[..., LiveServer],
) -> None:
    """A 128 MiB header took 26.7 s of a worker's CPU (more with the square of its size) and
    /health timed out meanwhile: a head over --max-head-bytes is answered 431 and closed."""
    server = start()
    sock = connect(server)
    stop = threading.Event()

    def attack() -> None:
        sock.sendall(CHAT_HEAD + b"x-big: ")
        try:
            for _ in range(256):  # up to 16 MiB, never ended
                if stop.is_set():
                    return
                sock.sendall(b"a" * 65536)
        except OSError:
            return  # closed by the server: what it should do

    thread = threading.Thread(target=attack, daemon=True)
    thread.start()
    try:
        assert healthy(server)
        answer = read_to_close(sock)
    finally:
        stop.set()
        thread.join(20)
        sock.close()
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert body["error"]["code"] == "request_header_too_large"
    assert healthy(server)
    samples = scrape(server.url)
    assert value(samples, "pawlette_refused_total", code="request_header_too_large") == 1


def test_a_body_read_with_the_next_head_is_not_counted_as_head(
    start: Callable[..., LiveServer],
) -> None:
    """Pipelined requests: one read held a request's 20 KiB body and the start of the next
    request's head, and the whole read was counted against --max-head-bytes (a 431 for a
    head of 60 bytes, and the first request's answer never sent)."""
    server = start()
    body = json.dumps({"messages": [], "padding": "x" * 20000}).encode()
    first = CHAT_HEAD + b"content-length: %d\r\n\r\n" % len(body) + body
    second = b"GET /health HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n"
    with connect(server) as sock:
        sock.sendall(first + second[:20])  # on the loopback: one read of the server's
        time.sleep(0.3)
        sock.sendall(second[20:])
        answer = read_to_close(sock)
    assert re.findall(rb"HTTP/1\.1 (\d{3}) ", answer) == [b"400", b"200"], answer[-300:]


def test_idle_and_trickled_connections_are_closed(start: Callable[..., LiveServer]) -> None:
    """Connections that send nothing, a head trickled a byte at a time and a body trickled
    so were held forever: --head-timeout, --keep-alive and --body-timeout close them."""
    server = start(head_timeout=0.5, keep_alive=0.5, body_timeout=0.5)
    with connect(server) as idle:
        assert read_to_close(idle) == b""  # nothing came: closed without an answer
    with connect(server) as trickle:
        trickle.sendall(CHAT_HEAD)
        answer = b""
        trickle.settimeout(0.1)
        for _ in range(200):  # 20 s at most: a header byte every 0.1 s
            try:
                trickle.sendall(b"x")
            except OSError:
                break
            try:
                answer += trickle.recv(65536)
            except TimeoutError:
                continue
            if b"\r\n\r\n" in answer:
                break
        trickle.settimeout(20)
        answer += read_to_close(trickle)
        assert answer.startswith(b"HTTP/1.1 408 ") and b'"head_timeout"' in answer, answer
    with connect(server) as slow_body:
        slow_body.sendall(CHAT_HEAD + b"content-length: 1000\r\n\r\n{")
        slow_body.settimeout(0.1)
        answer = b""
        for _ in range(200):
            try:
                slow_body.sendall(b" ")
                answer += slow_body.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if b"\r\n\r\n" in answer:
                break
        slow_body.settimeout(20)
        answer += read_to_close(slow_body)
        assert answer.startswith(b"HTTP/1.1 408 ") and b'"body_timeout"' in answer, answer
    with connect(server) as kept:
        kept.sendall(b"GET /health HTTP/1.1\r\nhost: localhost\r\n\r\n")
        assert read_to_close(kept).startswith(b"HTTP/1.1 200 ")  # then closed when idle
    assert healthy(server)
    # Counted by the code the client was told (the metrics guide lists them).
    samples = scrape(server.url)
    assert value(samples, "pawlette_refused_total", code="head_timeout") == 1
    assert value(samples, "pawlette_refused_total", code="body_timeout") == 1


def test_a_refusal_reaches_a_client_still_sending(start: Callable[..., LiveServer]) -> None:
    """A client still sending its body when --body-timeout refuses it reads the whole 408
    and then the close: the server stops sending, keeps reading (and dropping) for a while,
    and closes after the client.  A socket closed while the client sends answers it with a
    reset, which threw the 408 away unread."""
    server = start(body_timeout=0.3)
    with connect(server) as sender:
        sender.sendall(CHAT_HEAD + b"content-length: 100000\r\n\r\n{")
        deadline = time.monotonic() + 1.0  # well past the timeout, sending all along
        while time.monotonic() < deadline:
            sender.sendall(b" ")
            time.sleep(0.01)
        answer = read_to_close(sender)
    assert answer.startswith(b"HTTP/1.1 408 ") and b'"body_timeout"' in answer, answer


def test_past_the_connection_cap_the_idlest_connections_are_closed(
    start: Callable[..., LiveServer],
) -> None:
    """About 20,000 idle sockets used up a worker's file descriptors and new clients were
    dropped unseen: past --max-client-connections the idlest are closed to make room."""
    # --head-timeout far past the waits below: the sockets are closed by the cap or not at
    # all (with 60 s, the head timeout closed them too, and the test passed without the cap).
    server = start(max_client_connections=20, head_timeout=600)
    sockets = [connect(server) for _ in range(60)]
    try:
        assert healthy(server)  # a new client is served (an idle one made room)
        closed = 0
        deadline = time.monotonic() + 20
        for sock in sockets:
            sock.settimeout(max(0.2, deadline - time.monotonic()) if closed < 40 else 0.2)
            with contextlib.suppress(TimeoutError):
                closed += sock.recv(1) == b""
        assert closed >= 40, closed  # 60 + the health check's against a cap of 20
        assert value(scrape(server.url), "pawlette_refused_total", code="evicted") >= 40
    finally:
        for sock in sockets:
            sock.close()


def test_a_413_closes_the_connection_without_reading_the_rest(
    start: Callable[..., LiveServer],
) -> None:
    """After a 413 the connection stayed open and the rest of the upload was read."""
    server = start(max_body_bytes=1024)
    with connect(server) as sock:
        sock.sendall(CHAT_HEAD + b"content-length: 50000000\r\n\r\n" + b" " * 2048)
        answer = read_to_close(sock)
    assert answer.startswith(b"HTTP/1.1 413 ") and b"connection: close" in answer.lower()


def test_a_foreign_host_a_cross_site_origin_and_a_form_body_are_refused(
    start: Callable[..., LiveServer], engine: RawEngine
) -> None:
    """With no key (the default), any web page could drive a local server (a text/plain
    POST needs no preflight) and, with DNS rebinding, read its answers."""
    server = start()
    rebound = httpx.post(
        server.url + "/v1/chat/completions",
        json=CHAT,
        headers={"host": "attacker.example:8000"},
        timeout=20,
    )
    assert rebound.status_code == 400 and error_of(rebound)["code"] == "invalid_host"
    models = httpx.get(server.url + "/v1/models", headers={"host": "attacker.example"})
    assert models.status_code == 400
    page = post(server, origin="http://attacker.example")
    assert page.status_code == 403 and error_of(page)["code"] == "forbidden_origin"
    form = httpx.post(
        server.url + "/v1/chat/completions",
        content=json.dumps(CHAT),
        headers={"content-type": "text/plain"},
        timeout=20,
    )
    assert form.status_code == 415 and error_of(form)["code"] == "unsupported_media_type"
    assert not engine.heads  # none of them reached the engine
    samples = scrape(server.url)
    assert value(samples, "pawlette_refused_total", code="invalid_host") == 2
    assert value(samples, "pawlette_refused_total", code="forbidden_origin") == 1
    # What programs send is served: no Origin, a JSON body, the loopback name; a page on the
    # server's own allowed host too; /health answers whatever Host a probe uses.
    engine.plays.extend([answer(SSE_HEAD + b"\r\n" + chunked([HELLO]))] * 2)
    assert post(server, stream=True).status_code == 200
    assert post(server, stream=True, origin=f"http://localhost:{server.port}").status_code == 200
    for path in ("/health", "/metrics"):  # probes and Prometheus use any name or address
        probe = httpx.get(server.url + path, headers={"host": "10.0.0.7:8000"})
        assert probe.status_code == 200


# ---------------------------------------------------------------------- a misbehaving engine


def gzip_bomb(stream: bool, size: int = 64 << 20) -> Play:
    """A small gzip answer that inflates to ``size`` bytes (64 MiB)."""
    body = gzip.compress(b"0" * size, 9)
    if stream:
        head = SSE_HEAD + b"content-encoding: gzip\r\n\r\n"
        return answer(head + chunked([body[i : i + 4096] for i in range(0, len(body), 4096)]))
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
    return answer(head + b"content-length: %d\r\n\r\n" % len(body) + body)


@pytest.mark.parametrize("stream", [False, True])
def test_an_engine_answer_is_read_no_further_than_max_answer_bytes(
    start: Callable[..., LiveServer], engine: RawEngine, stream: bool
) -> None:
    """A 1 MB gzip body that inflates to 1 GiB cost 3.1 GB and froze the worker; a 300 MB
    answer cost 1.26 GB.  Past --max-answer-bytes the answer is a 502 (or the stream's error
    event), upstream_too_large."""
    server = start(max_answer_bytes=1 << 20)
    engine.plays.append(gzip_bomb(stream))
    response = post(server, stream=stream)
    assert response.status_code == (200 if stream else 502)
    assert error_of(response)["code"] == "upstream_too_large"
    big = b"x" * (3 << 20)
    plain = (
        answer(SSE_HEAD + b"\r\n" + chunked([b"data: " + big + b"\n\n"]))
        if stream
        else answer(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(big) + big)
    )
    engine.plays.append(plain)
    response = post(server, stream=stream)
    assert error_of(response)["code"] == "upstream_too_large"
    assert healthy(server)


class _WatchedInflater:
    """A gzip decompressor that records each step's input and output bounds; its first step
    waits (at most 10 s) for ``answered``, the sign that ``/health`` was answered meanwhile."""

    def __init__(self, inflating: threading.Event, answered: threading.Event) -> None:
        self.inner = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.inflating = inflating
        self.answered = answered
        self.steps: list[tuple[int, int]] = []
        self.health_answered_meanwhile: bool | None = None

    def decompress(self, data: bytes, most: int = 0) -> bytes:
        if not self.inflating.is_set():
            self.inflating.set()
            self.health_answered_meanwhile = self.answered.wait(10)
        self.steps.append((len(data), most))
        out: bytes = self.inner.decompress(data, most)
        return out

    @property
    def unconsumed_tail(self) -> bytes:
        return self.inner.unconsumed_tail

    def flush(self) -> bytes:
        return self.inner.flush()


@pytest.mark.parametrize("stream", [False, True])
def test_health_answers_while_a_gzip_bomb_is_inflated(
    start: Callable[..., LiveServer],
    engine: RawEngine,
    monkeypatch: pytest.MonkeyPatch,
    stream: bool,
) -> None:
    """Four clients asking for gzip bombs kept the loop inflating most of the time, and a
    health probe waited behind them (up to 1.2 s on a busy machine).  The bomb is inflated in
    a thread of its own a bounded step at a time (64 KiB in, 256 KiB out): ``/health`` is
    answered while a step runs, and the bomb is still refused one step past the bound."""
    import pawlette.serve.http1 as http1

    inflating, answered = threading.Event(), threading.Event()
    inflaters: list[_WatchedInflater] = []

    def watched(encoding: str) -> _WatchedInflater:
        assert encoding == "gzip"
        inflaters.append(_WatchedInflater(inflating, answered))
        return inflaters[-1]

    monkeypatch.setattr(http1, "decompressor", watched)
    server = start(max_answer_bytes=1 << 20)
    engine.plays.append(gzip_bomb(stream, 8 << 20))
    with ThreadPoolExecutor(1) as pool:
        request = pool.submit(post, server, stream)
        assert inflating.wait(20)
        assert healthy(server)
        answered.set()
        response = request.result()
    assert error_of(response)["code"] == "upstream_too_large"
    assert response.status_code == (200 if stream else 502)
    (inflater,) = inflaters
    assert inflater.health_answered_meanwhile  # not after the step that waited for it
    assert max(size for size, _ in inflater.steps) <= 1 << 16
    assert max(most for _, most in inflater.steps) <= 1 << 18
    assert sum(most for _, most in inflater.steps) <= (1 << 20) + (1 << 18)


def test_a_flooded_stream_is_handed_on_in_small_shares(
    start: Callable[..., LiveServer], engine: RawEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five clients whose engine floods their streams held a health probe past 100 ms: a
    loop turn waited for a quarter of a megabyte of each stream to be parsed and written
    again.  A stream is handed on 64 KiB at a time however much one read brought, and every
    event of it still arrives once, in order."""
    import pawlette.serve.app as app

    sizes: list[int] = []

    class Recording(app.SSEDecoder):  # type: ignore[misc]
        def feed(self, chunk: bytes) -> list[str]:
            sizes.append(len(chunk))
            return super().feed(chunk)

    monkeypatch.setattr(app, "SSEDecoder", Recording)
    server = start()
    words = [f"w{index} " * 100 for index in range(600)]  # about 400 KB of events at once
    flood = events(*(piece(word) for word in words), piece("", "stop"), b"[DONE]")
    engine.plays.append(answer(SSE_HEAD + b"\r\n" + chunked([flood])))
    response = post(server, stream=True)
    assert response.status_code == 200
    texts = [
        json.loads(line[6:])["choices"][0]["delta"].get("content") or ""
        for line in response.text.split("\n")
        if line.startswith("data: {")
    ]
    assert "".join(texts) == "".join(words)
    assert sum(sizes) == len(flood) and max(sizes) <= 1 << 16
    assert healthy(server)


def test_credentials_in_the_upstream_url_reach_the_engine_and_nobody_else(
    start: Callable[..., LiveServer], engine: RawEngine, caplog: pytest.LogCaptureFixture
) -> None:
    """With http://admin:s3cret@host the password was in every 502/504 message and in the
    unauthenticated /metrics, and never sent to the engine; every error also told clients
    the engine's internal URL.  The log names the engine by its address, never its
    credentials."""
    caplog.set_level(logging.INFO, logger="pawlette.serve")
    port = engine.url.rsplit(":", 1)[1]
    server = start(upstream=f"http://admin:s3cret@127.0.0.1:{port}", timeout=1)
    body = b'{"error": {"message": "overloaded"}}'
    engine.plays.append(answer(b"HTTP/1.1 503 X\r\ncontent-length: %d\r\n\r\n" % len(body) + body))
    failed = post(server)
    assert failed.status_code == 502 and "overloaded" in error_of(failed)["message"]
    # The engine got them as basic auth (admin:s3cret).
    assert b"authorization: Basic YWRtaW46czNjcmV0" in engine.heads[-1]

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(3)
        return False

    engine.plays.append(silent)
    timed_out = post(server, stream=True)
    assert timed_out.status_code == 504
    dead = start(upstream="http://admin:s3cret@127.0.0.1:9", connect_timeout=1)
    unreachable = post(dead)
    assert unreachable.status_code == 502
    for response in (failed, timed_out, unreachable):
        message = error_of(response)["message"]
        for secret in ("s3cret", "admin", port, "127.0.0.1"):
            assert secret not in message, message
    for running in (server, dead):
        exposition = httpx.get(running.url + "/metrics").text
        assert "s3cret" not in exposition and "admin" not in exposition
        assert 'upstream="http://127.0.0.1:' in exposition  # named without credentials
    logged = caplog.text
    assert f"127.0.0.1:{port}" in logged and "127.0.0.1:9" in logged  # the failures logged
    assert "s3cret" not in logged and "admin" not in logged


def test_a_busy_pool_is_waited_for_no_longer_than_the_timeout(
    start: Callable[..., LiveServer], engine: RawEngine
) -> None:
    """With the pool held, another request waited over 40 s with --timeout 5."""
    server = start(max_connections=1, timeout=1)

    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(SSE_HEAD + b"\r\n")
        for _ in range(40):  # 8 s, never silent for the timeout
            writer.write(chunked([events(piece("x"))])[:-5])
            await writer.drain()
            await asyncio.sleep(0.2)
        writer.write(chunked([events(piece("", "stop"), b"[DONE]")]))
        await writer.drain()
        return True

    engine.plays.append(slow)
    results: list[int] = []
    holder = threading.Thread(target=lambda: results.append(post(server, stream=True).status_code))
    holder.start()
    deadline = time.monotonic() + 20
    while len(engine.heads) < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    waiting = post(server)
    assert waiting.status_code == 503, waiting.text  # not a wait for the other stream's end
    assert error_of(waiting)["code"] == "upstream_saturated"
    holder.join(30)
    assert results == [200]


def test_a_client_that_stops_reading_is_dropped_and_frees_the_engine(
    start: Callable[..., LiveServer], engine: RawEngine
) -> None:
    """Nothing timed out a client that stopped reading: it held its engine connection (and
    the pool) for as long as it liked."""
    server = start(max_connections=1, timeout=3, send_timeout=0.5)
    closed_before = engine.closed

    async def flood(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(SSE_HEAD + b"\r\n")
        event = chunked([events(*(piece("word " * 200) for _ in range(20)))])[:-5]
        try:
            for _ in range(2000):  # about 80 MB, far more than the sockets buffer
                writer.write(event)
                await writer.drain()
        except ConnectionError:
            return False
        return False

    engine.plays.append(flood)
    reader = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    reader.connect(("127.0.0.1", server.port))
    body = json.dumps({**CHAT, "stream": True}).encode()
    reader.sendall(CHAT_HEAD + b"content-length: %d\r\n\r\n" % len(body) + body)
    try:
        # It reads nothing: the server drops it and cancels its engine request.
        deadline = time.monotonic() + 20
        while engine.closed == closed_before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert engine.closed > closed_before
        engine.plays.append(answer(SSE_HEAD + b"\r\n" + chunked([HELLO])))
        assert post(server, stream=True).status_code == 200  # the pool is free again
        assert healthy(server)
    finally:
        reader.close()


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_that_is_not_utf8_is_refused_alike_streamed_or_not(
    start: Callable[..., LiveServer], engine: RawEngine, stream: bool
) -> None:
    """Streamed, invalid UTF-8 was a 200 with U+FFFD; not streamed, a 502."""
    server = start()
    if stream:
        bad = events(piece("Hello ")) + b'data: {"choices": [{"text": "l\xff"}]}\n\n'
        engine.plays.append(answer(SSE_HEAD + b"\r\n" + chunked([bad, events(b"[DONE]")])))
    else:
        bad = b'{"choices": [{"text": "Hel\xff", "finish_reason": "stop"}]}'
        engine.plays.append(
            answer(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(bad) + bad)
        )
    response = post(server, stream=stream)
    assert response.status_code == (200 if stream else 502)
    error = error_of(response)
    assert error["code"] == "upstream_invalid" and "not UTF-8" in error["message"]
    assert "\ufffd" not in response.text
    if stream:
        assert '"content":"Hello "' in response.text  # what came before it is delivered


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 302 Found\r\nlocation: http://elsewhere/\r\ncontent-length: 0\r\n\r\n",
        b"HTTP/1.1 204 No Content\r\n\r\n",
        b"HTTP/1.1 304 Not Modified\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 26\r\n\r\n"
        b"<html>Please log in</html>",
    ],
    ids=["302", "204", "304", "html"],
)
def test_a_stream_answered_without_an_event_stream_is_a_502_with_the_engines_status(
    start: Callable[..., LiveServer], engine: RawEngine, head: bytes
) -> None:
    """A redirect, a 204/304 or an HTML 200 to a stream request was an HTTP 200 then "stream
    ended without a finish_reason or [DONE]", hiding the engine's status; 3xx counted as a
    success in both modes."""
    server = start()
    engine.plays.append(answer(head))
    response = post(server, stream=True)
    assert response.status_code == 502, response.text
    error = error_of(response)
    assert error["code"] == "upstream_invalid"
    status = head.split(b" ")[1].decode()
    assert f"HTTP {status}" in error["message"] or "text/html" in error["message"]
    if status != "200":
        engine.plays.append(answer(head))
        assert post(server).status_code == 502
        samples = scrape(server.url)
        failures = value(
            samples, "pawlette_upstream_failures_total", upstream=engine.url, kind="status"
        )
        assert failures == 2  # not a success for the balancer


@pytest.mark.parametrize(
    ("raw", "code", "kind"),
    [
        (
            b"HTTP/1.1 200 OK\r\ncontent-length: 200\r\n\r\n" + b'{"choices": [',
            "upstream_disconnected",
            "broken",
        ),
        (
            b'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\n{"ch\r\nzz\r\n',
            "upstream_invalid",
            "invalid",
        ),
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "upstream_invalid", "invalid"),
    ],
    ids=["cut", "bad-chunk", "not-http"],
)
def test_an_answer_that_arrived_cut_or_malformed_is_not_unreachable(
    start: Callable[..., LiveServer], engine: RawEngine, raw: bytes, code: str, kind: str
) -> None:
    """A cut or malformed answer that did arrive was labelled upstream_unreachable, in the
    message and in /metrics."""
    server = start()
    engine.plays.append(answer(raw, close=True))
    response = post(server)
    assert response.status_code == 502
    error = error_of(response)
    assert error["code"] == code and "unreachable" not in error["message"], error
    samples = scrape(server.url)
    assert value(samples, "pawlette_request_errors_total", status="502", code=code) == 1
    assert value(samples, "pawlette_upstream_failures_total", upstream=engine.url, kind=kind) == 1


def trickle(first: bytes, line: bytes, seconds: float = 20) -> Play:
    async def play(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        try:
            writer.write(first)
            for _ in range(int(seconds / 0.1)):
                await asyncio.sleep(0.1)
                writer.write(line)
                await writer.drain()
        except ConnectionError:
            pass
        return False

    return play


@pytest.mark.parametrize(
    "play",
    [
        trickle(b"HTTP/1.1 200 OK\r\n", b"x-slow: 1\r\n"),
        trickle(b"", b"HTTP/1.1 103 Early Hints\r\n\r\n"),
    ],
    ids=["head-a-line-at-a-time", "interim-answers"],
)
def test_an_engine_head_that_never_ends_times_out(
    start: Callable[..., LiveServer], engine: RawEngine, play: Play
) -> None:
    """The timeout counted silences only: a head trickled a line at a time, or a stream of
    1xx answers, never reached the 504."""
    server = start(timeout=0.5)
    for stream in (False, True):
        engine.plays.append(play)
        response = post(server, stream=stream)
        assert response.status_code == 504, response.text
        assert error_of(response)["code"] == "upstream_timeout"


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_that_drips_forever_ends_at_the_request_timeout(
    start: Callable[..., LiveServer], engine: RawEngine, stream: bool
) -> None:
    """A body dripping a piece at a time, never silent for --timeout, had no total deadline."""
    server = start(timeout=5, request_timeout=1)
    if stream:
        engine.plays.append(trickle(SSE_HEAD + b"\r\n", chunked([events(piece("x"))])[:-5]))
    else:
        engine.plays.append(trickle(b"HTTP/1.1 200 OK\r\ncontent-length: 999\r\n\r\n", b" "))
    response = post(server, stream=stream)
    assert response.status_code == (200 if stream else 504)
    error = error_of(response)
    assert error["code"] == "request_timeout" and "--request-timeout" in error["message"]


def test_an_answer_framed_twice_does_not_reuse_its_connection(
    start: Callable[..., LiveServer], engine: RawEngine
) -> None:
    """An answer with content-length and chunked framing was read and its connection reused
    (a smuggled answer after it would have answered the next request)."""
    server = start()
    accepted = engine.accepted
    twice = SSE_HEAD + b"content-length: 5\r\n\r\n" + chunked([HELLO])
    for _ in range(3):
        engine.plays.append(answer(twice))
        response = post(server, stream=True)
        assert response.status_code == 200 and response.text.endswith("data: [DONE]\n\n")
    assert engine.accepted - accepted == 3


@pytest.mark.parametrize("stream", [False, True])
def test_a_refused_answer_is_let_go_of_without_waiting_for_the_collector(
    start: Callable[..., LiveServer], engine: RawEngine, stream: bool
) -> None:
    """A refused answer's failure held, in its traceback's frames, the answer and what it had
    read (a reference cycle): with the server's collector run every 10,000 allocations, four
    clients asking for gzip bombs kept 1.5 GB alive.  Each is let go of at once now."""
    import gc
    import tracemalloc

    server = start(max_answer_bytes=2 << 20)
    gc.disable()
    tracemalloc.start()
    try:
        for _ in range(6):
            engine.plays.append(gzip_bomb(stream))
            assert error_of(post(server, stream=stream))["code"] == "upstream_too_large"
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        gc.enable()
    assert held < 4 << 20, held  # six refused answers of 2 MiB each, none of them kept
