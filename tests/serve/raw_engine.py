"""An engine on loopback whose answers are raw bytes the test writes: quirky framing (LF-only
heads, odd chunk sizes, answers split at every byte) that the scripted
:class:`~tests.serve.upstream.FakeUpstream` cannot send.  It runs its own event loop in a
thread, counts the connections it accepted and closed, and answers ``GET /v1/models``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

Play = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bool]]
"""Answers one completion request; False closes the connection after it."""


def events(*payloads: Any) -> bytes:
    """Server-sent events: ``data: <json>`` and a blank line each (bytes are sent as given)."""
    out = b""
    for payload in payloads:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        out += b"data: " + data + b"\n\n"
    return out


def piece(text: str, finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "text": text, "finish_reason": finish}]}


def chunked(pieces: list[bytes], size: bytes = b"%x", trailer: bytes = b"") -> bytes:
    """``pieces`` as a chunked body, each size written with ``size`` (``b"%X"``, ``b"00%x"``)."""
    body = b"".join(size % len(part) + b"\r\n" + part + b"\r\n" for part in pieces if part)
    return body + b"0\r\n" + trailer + b"\r\n"


def answer(*parts: bytes, every_byte: bool = False, close: bool = False) -> Play:
    """A play writing ``parts`` (each byte in its own write with ``every_byte``)."""

    async def play(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        for part in parts:
            if every_byte:
                for index in range(len(part)):
                    writer.write(part[index : index + 1])
                    await writer.drain()
                    await asyncio.sleep(0)
            else:
                writer.write(part)
                await writer.drain()
        return not close

    return play


class RawEngine:
    def __init__(self) -> None:
        self.plays: deque[Play] = deque()
        self.accepted = 0
        self.closed = 0
        self.heads: list[bytes] = []
        """The head of every request received (the tests read its headers)."""
        self._loop = asyncio.new_event_loop()
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._connection, "127.0.0.1", 0)
        )
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        self._tasks: set[asyncio.Task[None]] = set()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        loop = self._loop
        loop.run_forever()
        loop.run_until_complete(self._shutdown())
        loop.close()

    async def _shutdown(self) -> None:
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    @property
    def open(self) -> int:
        """Connections accepted and not closed yet (by either side)."""
        return self.accepted - self.closed

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lowered = head.lower()
                length = 0
                if b"content-length:" in lowered:
                    length = int(lowered.split(b"content-length:")[1].split(b"\r\n")[0])
                if length:
                    await reader.readexactly(length)
                self.heads.append(head)
                if head.startswith(b"GET"):
                    body = b'{"data": [{"id": "raw"}]}'
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 25\r\n\r\n" + body)
                    await writer.drain()
                    continue
                play = self.plays.popleft()
                if not await play(reader, writer):
                    return
        except (ConnectionError, asyncio.CancelledError):
            return
        finally:
            writer.close()
            self.closed += 1
            self._tasks.discard(task)

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
