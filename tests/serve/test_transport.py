"""The engine client: aiohttp when installed, httpx without it; the same answers either way
(content, error statuses, a stream broken off after some pieces, a silent engine)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import pawlette.serve.transport as transport
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


@pytest.fixture(scope="module", params=["aiohttp", "httpx"])
def server(request: pytest.FixtureRequest, upstream: FakeUpstream) -> Iterator[LiveServer]:
    saved = transport.aiohttp
    if request.param == "httpx":
        transport.aiohttp = None  # type: ignore[assignment]
    try:
        live = LiveServer(ServeConfig(format="pcml", upstream=upstream.url, model="m", timeout=2))
    finally:
        transport.aiohttp = saved
    sender = live.server.config.app.state.server.upstreams.sender
    assert (sender is not None) == (request.param == "aiohttp")
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
    assert error["code"] == "upstream_unreachable" and "ConnectError" in error["message"]
