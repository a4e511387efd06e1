"""A scripted raw completion engine on loopback: ``POST /v1/completions`` and ``GET /v1/models``,
and llama.cpp's ``POST /completion`` when told to play a llama.cpp (with or without llguidance).

It speaks just enough HTTP/1.1 (keep-alive, chunked server-sent events) and runs its own event
loop in a thread.  Tests queue :class:`Script` values; each completion request takes the next
one (or the default) and plays it: the text is cut at the request's ``stop`` strings (the stop
string removed, as engines do) and streamed in pieces of the script's sizes, so markers are
split across events.  A script can also be slow, crash mid-stream, answer an HTTP error, or
send malformed events.  Every request is recorded, with whether and when the client closed the
connection before the answer was complete (to observe cancellation).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

DEFAULT_USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
SCHEMA_GRAMMARS = {
    True: '%llguidance {}\nstart: %json {"type":"object"}',
    False: 'root ::= object\nobject ::= "{" space ( string ":" space value ( "," space string '
    '":" space value )* )? "}" space\n',
}
"""What llama.cpp's ``/completion`` shows as ``generation_settings.grammar`` for ``json_schema:
{}``, built with llguidance (the text the xllamacpp wheel answers) and without (GBNF rules from
``json_schema_to_grammar``; their beginning)."""


@dataclass
class Script:
    text: str = "Hello!"
    sizes: tuple[int, ...] = (3,)
    """Piece sizes in characters, cycled."""
    finish_reason: str | None = None
    """The engine's finish reason (default: ``stop``)."""
    delay: float = 0.0
    """Seconds before each piece."""
    first_delay: float = 0.0
    """Seconds before the answer's head (a slow engine)."""
    crash_after: int | None = None
    """Drop the connection after this many pieces."""
    status: int = 200
    error: str = "engine exploded"
    events: list[str] | None = None
    """Raw ``data:`` payloads to send instead of the text."""
    answer: str | None = None
    """A raw body to answer a non-streaming request with."""
    end_without_done: bool = False
    """End the stream cleanly with no finish reason and no ``[DONE]``."""
    usage: dict[str, int] | None = field(default_factory=lambda: dict(DEFAULT_USAGE))


@dataclass
class Record:
    path: str
    body: dict[str, Any]
    started: float
    completed: bool = False
    closed_by_client: bool = False
    closed_at: float | None = None


def cut_at_stop(text: str, stop: list[str]) -> str:
    """The text up to the earliest stop string (which is removed, as engines do)."""
    positions = [index for index in (text.find(s) for s in stop if s) if index >= 0]
    return text[: min(positions)] if positions else text


class FakeUpstream:
    def __init__(self) -> None:
        self.queue: deque[Script] = deque()
        self.default = Script()
        self.records: list[Record] = []
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.llguidance: bool | None = None
        """None: no ``POST /completion`` (404, not llama.cpp).  True or False: answer it as
        llama.cpp built with or without llguidance does; without, a grammar that starts
        ``%llguidance`` aborts the connection, as such a llama.cpp aborts its process."""
        self.completion_status = 200
        """The status of ``POST /completion`` answers (llama.cpp answers 503 while loading)."""
        self.questions: list[dict[str, Any]] = []
        """The bodies of ``POST /completion`` requests."""
        self.lark_aborts = 0
        """Lark grammars that reached it while it played a llama.cpp without llguidance."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def push(self, *scripts: Script) -> None:
        self.queue.extend(scripts)

    def last(self) -> Record:
        return self.records[-1]

    def wait_closed(self, record: Record, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if record.closed_by_client:
                return True
            time.sleep(0.01)
        return record.closed_by_client

    # ------------------------------------------------------------------ thread

    def start(self, port: int = 0) -> FakeUpstream:
        ready = threading.Event()

        def main() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            self._server = loop.run_until_complete(
                asyncio.start_server(self._connection, "127.0.0.1", port)
            )
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._shutdown())
            loop.close()

        self._thread = threading.Thread(target=main, name="fake-upstream", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    # ------------------------------------------------------------------ HTTP

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        key, value = line.split(":", 1)
                        headers[key.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                raw = await reader.readexactly(length) if length else b""
                keep_alive = await self._respond(method, path, raw, reader, writer)
                if not keep_alive:
                    return
        except (ConnectionError, asyncio.CancelledError):
            return
        finally:
            writer.close()
            self._tasks.discard(task)  # type: ignore[arg-type]

    @staticmethod
    def _head(status: int, content_type: str, extra: str = "") -> bytes:
        return f"HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\n{extra}\r\n".encode(
            "latin-1"
        )

    def _json(self, writer: asyncio.StreamWriter, status: int, value: Any, close: bool) -> None:
        data = json.dumps(value).encode()
        extra = f"content-length: {len(data)}\r\n" + ("connection: close\r\n" if close else "")
        writer.write(self._head(status, "application/json", extra) + data)

    async def _respond(
        self,
        method: str,
        path: str,
        raw: bytes,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        if method == "GET" and path == "/v1/models":
            self._json(writer, 200, {"object": "list", "data": [{"id": "fake-model"}]}, False)
            await writer.drain()
            return True
        if method == "POST" and path == "/completion" and self.llguidance is not None:
            return await self._llama_cpp_completion(json.loads(raw), writer)
        if method != "POST" or path != "/v1/completions":
            self._json(writer, 404, {"error": {"message": f"no route {path}"}}, False)
            await writer.drain()
            return True
        body = json.loads(raw)
        grammar = body.get("grammar")
        if self.llguidance is False and str(grammar).startswith("%llguidance"):
            self.lark_aborts += 1
            writer.transport.abort()
            return False
        record = Record(path, body, time.monotonic())
        self.records.append(record)
        script = self.queue.popleft() if self.queue else self.default
        slow = script.delay > 0 or script.first_delay > 0
        watcher = asyncio.ensure_future(reader.read(1)) if slow else None
        try:
            if script.first_delay and await self._closed_during(watcher, script.first_delay):
                self._mark_closed(record)
                return False
            if script.status != 200:
                self._json(writer, script.status, {"error": {"message": script.error}}, True)
                await writer.drain()
                return False
            text = cut_at_stop(script.text, list(body.get("stop") or []))
            reason = script.finish_reason or "stop"
            if not body.get("stream") and script.answer is not None:
                data = script.answer.encode()
                head = self._head(200, "application/json", f"content-length: {len(data)}\r\n")
                writer.write(head + data)
                await writer.drain()
                return True
            if not body.get("stream"):
                answer = {
                    "id": "cmpl-1",
                    "object": "text_completion",
                    "choices": [{"index": 0, "text": text, "finish_reason": reason}],
                }
                if script.usage is not None:
                    answer["usage"] = script.usage
                self._json(writer, 200, answer, slow)
                await writer.drain()
                record.completed = True
                return not slow
            return await self._stream(script, body, text, reason, record, writer, watcher)
        finally:
            if watcher is not None:
                watcher.cancel()

    async def _llama_cpp_completion(
        self, body: dict[str, Any], writer: asyncio.StreamWriter
    ) -> bool:
        """llama.cpp's native completion: its answer names the grammar it used."""
        self.questions.append(body)
        if self.completion_status != 200:
            # llama.cpp's error body (tools/server: format_error_response).
            error = {"code": self.completion_status, "message": "Loading model"}
            self._json(writer, self.completion_status, {"error": error}, False)
        else:
            assert self.llguidance is not None
            grammar = SCHEMA_GRAMMARS[self.llguidance] if "json_schema" in body else ""
            answer = {
                "index": 0,
                "content": "{",
                "stop": True,
                "stop_type": "limit",
                "tokens_predicted": 1,
                "generation_settings": {"n_predict": body.get("n_predict"), "grammar": grammar},
            }
            self._json(writer, 200, answer, False)
        await writer.drain()
        return True

    async def _closed_during(self, watcher: asyncio.Future[bytes] | None, seconds: float) -> bool:
        if watcher is None:
            await asyncio.sleep(seconds)
            return False
        done, _ = await asyncio.wait({watcher}, timeout=seconds)
        return bool(done)

    def _mark_closed(self, record: Record) -> None:
        record.closed_by_client = True
        record.closed_at = time.monotonic()

    async def _stream(
        self,
        script: Script,
        body: dict[str, Any],
        text: str,
        reason: str,
        record: Record,
        writer: asyncio.StreamWriter,
        watcher: asyncio.Future[bytes] | None,
    ) -> bool:
        slow = watcher is not None
        extra = "transfer-encoding: chunked\r\n" + ("connection: close\r\n" if slow else "")
        writer.write(self._head(200, "text/event-stream", extra))

        def event(payload: str) -> bytes:
            data = f"data: {payload}\n\n".encode()
            return b"%x\r\n%s\r\n" % (len(data), data)

        def piece(value: str, finish: str | None = None) -> str:
            return json.dumps(
                {
                    "id": "cmpl-1",
                    "object": "text_completion",
                    "choices": [{"index": 0, "text": value, "finish_reason": finish}],
                }
            )

        if script.events is not None:
            payloads = list(script.events)
        else:
            payloads = []
            position = 0
            for size in itertools.cycle(script.sizes):
                if position >= len(text):
                    break
                payloads.append(piece(text[position : position + size]))
                position += size
            if not script.end_without_done:
                payloads.append(piece("", reason))
                if script.usage is not None and (body.get("stream_options") or {}).get(
                    "include_usage"
                ):
                    payloads.append(
                        json.dumps({"id": "cmpl-1", "choices": [], "usage": script.usage})
                    )
                payloads.append("[DONE]")
        for number, payload in enumerate(payloads):
            if script.crash_after is not None and number >= script.crash_after:
                writer.transport.abort()
                return False
            if script.delay and await self._closed_during(watcher, script.delay):
                self._mark_closed(record)
                return False
            writer.write(event(payload))
            try:
                await writer.drain()
            except ConnectionError:
                self._mark_closed(record)
                return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        record.completed = True
        return not slow
