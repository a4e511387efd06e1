"""The engine client through the server: answers, error statuses, a stream broken off after
some pieces, a silent engine, a refused connect, a connection the engine closed as idle."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from pawlette.serve.config import ServeConfig

from .conftest import LiveServer
from .scenarios import PROMPT
from .upstream import FakeUpstream, Script


def post(server: LiveServer, **body: Any) -> httpx.Response:
    return httpx.post(
        server.url + "/v1/chat/completions", json={"messages": PROMPT, **body}, timeout=20
    )


def streamed_content(response: httpx.Response) -> str:
    text = ""
    for line in response.text.splitlines():
        if line.startswith("data: {") and '"choices"' in line:
            for choice in json.loads(line[len("data: ") :])["choices"]:
                text += choice["delta"].get("content") or ""
    return text


@pytest.fixture(scope="module")
def server(upstream: FakeUpstream) -> Iterator[LiveServer]:
    live = LiveServer(ServeConfig(format="pcml", upstream=upstream.url, model="m", timeout=2))
    yield live
    live.stop()


def test_answers(server: LiveServer, upstream: FakeUpstream) -> None:
    upstream.push(Script(text="Hello there<end>", sizes=(2,)))
    answer = post(server)
    assert answer.status_code == 200
    assert answer.json()["choices"][0]["message"]["content"] == "Hello there"
    upstream.push(Script(text="Hello there<end>", sizes=(2,)))
    streamed = post(server, stream=True)
    assert streamed.text.endswith("data: [DONE]\n\n")
    assert streamed_content(streamed) == "Hello there"


@pytest.mark.parametrize(("status", "code"), [(500, "upstream_error"), (429, "upstream_busy")])
def test_error_statuses(server: LiveServer, upstream: FakeUpstream, status: int, code: str) -> None:
    upstream.push(Script(status=status, error="no luck"))
    answer = post(server)
    assert answer.status_code == (502 if status == 500 else 429)
    assert answer.json()["error"]["code"] == code
    assert "no luck" in answer.json()["error"]["message"]


def test_a_broken_stream_delivers_what_came_before(
    server: LiveServer, upstream: FakeUpstream
) -> None:
    upstream.push(Script(text="Hello there, general Kenobi<end>", sizes=(4,), crash_after=3))
    answer = post(server, stream=True)
    assert streamed_content(answer) == "Hello there,"
    last = answer.text.strip().splitlines()[-1]
    assert json.loads(last[len("data: ") :])["error"]["code"] == "upstream_disconnected"


def test_a_silent_engine_is_a_504(server: LiveServer, upstream: FakeUpstream) -> None:
    upstream.push(Script(first_delay=8))
    answer = post(server)
    assert answer.status_code == 504
    assert answer.json()["error"]["code"] == "upstream_timeout"
    upstream.push(Script(text="Hello there<end>", sizes=(2,), delay=8))
    streamed = post(server, stream=True)
    last = streamed.text.strip().splitlines()[-1]
    assert json.loads(last[len("data: ") :])["error"]["code"] == "upstream_timeout"


def test_a_refused_connect_is_a_502() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    live = LiveServer(ServeConfig(format="pcml", upstream=f"http://127.0.0.1:{port}", model="m"))
    try:
        answer = post(live)
    finally:
        live.stop()
    assert answer.status_code == 502
    error = answer.json()["error"]
    assert error["code"] == "upstream_unreachable" and "cannot connect" in error["message"]
    assert str(port) not in error["message"]  # the engine's address is not the client's business


class ClosingEngine:
    """An engine that answers the first request of each connection and closes the connection
    when a second request arrives on it, unanswered: what a request meets on a pooled
    connection the engine has just closed as idle (llama.cpp's server closes idle ones after
    5 s), with the race always lost."""

    def __init__(self) -> None:
        self.answered = 0
        self.dropped = 0
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection, connection.makefile("rb") as reader:
            for number in range(2):
                head = b""
                while not head.endswith(b"\r\n\r\n"):
                    byte = reader.read(1)
                    if not byte:
                        return
                    head += byte
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                stream = json.loads(reader.read(length)).get("stream")
                if number == 1:
                    self.dropped += 1
                    return  # the second request on this connection: closed, nothing answered
                self.answered += 1
                event = {"choices": [{"index": 0, "text": "Hi", "finish_reason": "stop"}]}
                if stream:
                    body = f"data: {json.dumps(event)}\n\ndata: [DONE]\n\n".encode()
                    kind = b"text/event-stream"
                else:
                    body, kind = json.dumps(event).encode(), b"application/json"
                connection.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n%s"
                    % (kind, len(body), body)
                )

    def close(self) -> None:
        self.listener.close()


def test_a_connection_the_engine_closed_is_not_the_clients_failure() -> None:
    assert ServeConfig("pcml", "http://x").upstream_keep_alive < 5  # llama.cpp, uvicorn: 5 s
    engine = ClosingEngine()
    live = LiveServer(ServeConfig(format="pcml", upstream=engine.url, model="m", timeout=5))
    try:
        for stream in (False, True, False, True, True, False):
            answer = post(live, stream=stream)
            assert answer.status_code == 200, answer.text
            if stream:
                assert answer.text.endswith("data: [DONE]\n\n") and '"error"' not in answer.text
                assert streamed_content(answer) == "Hi"
            else:
                assert answer.json()["choices"][0]["message"]["content"] == "Hi"
    finally:
        live.stop()
        engine.close()
    assert engine.answered == 6 and engine.dropped >= 1  # the pooled connection was tried
