"""Fixtures: one scripted upstream for the session, and pawlette servers on loopback."""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest
import uvicorn

from pawlette.serve.app import uvicorn_config
from pawlette.serve.config import ServeConfig

from .upstream import FakeUpstream


class LiveServer:
    """A pawlette server (uvicorn, in a thread) on a free loopback port."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self._clients: dict[str, openai.OpenAI] = {}
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says
        # TCP, and accepted sockets inherit the listening socket's (else: 40 ms delayed ACKs).
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.socket.bind(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        # The stack `pawlette serve` runs: the guarded httptools protocol, uvloop.
        self.server = uvicorn.Server(uvicorn_config(config, log_level="warning"))
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the pawlette server did not start")
            time.sleep(0.01)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, api_key: str = "unused") -> openai.OpenAI:
        """An SDK client for this server (one per key, closed with the server)."""
        client = self._clients.get(api_key)
        if client is None:
            client = self._clients[api_key] = openai.OpenAI(
                base_url=self.url + "/v1", api_key=api_key, max_retries=0, timeout=20
            )
        return client

    def stop(self) -> None:
        for client in self._clients.values():
            client.close()
        self.server.should_exit = True
        self.thread.join(10)
        self.socket.close()


@pytest.fixture(scope="session")
def upstream() -> Iterator[FakeUpstream]:
    fake = FakeUpstream().start()
    yield fake
    fake.stop()


@pytest.fixture(autouse=True)
def _fresh_queue(upstream: FakeUpstream) -> Iterator[None]:
    upstream.queue.clear()
    yield
    upstream.queue.clear()


ServerFactory = Callable[..., LiveServer]


@pytest.fixture(scope="session")
def serve(upstream: FakeUpstream) -> Iterator[ServerFactory]:
    """``serve(format, **options)``: a server for these settings (shared by equal settings)."""
    servers: dict[ServeConfig, LiveServer] = {}

    def factory(format_name: str = "pcml", **options: Any) -> LiveServer:
        options.setdefault("upstream", upstream.url)
        # The SDK's clients keep idle connections with no expiry of their own: a server that
        # closes one after its 5 s keep-alive just as a request goes out on it answers nothing
        # ("Server disconnected without sending a response", seen once in CI under load).
        # Tests of the keep-alive itself set their own.
        options.setdefault("keep_alive", 120.0)
        config = ServeConfig(format=format_name, **options)
        server = servers.get(config)
        if server is None:
            server = servers[config] = LiveServer(config)
        return server

    yield factory
    # Every server is told to exit before any is waited for: each takes a few polls of its
    # loop (0.1-0.2 s) to wind down, and a session makes a hundred or more of them.
    for server in servers.values():
        server.server.should_exit = True
    for server in servers.values():
        server.stop()


def replace_config(config: ServeConfig, **changes: Any) -> ServeConfig:
    return dataclasses.replace(config, **changes)
