"""The server's HTTP/1.1 client to the engines, on asyncio's Protocol.

Why not a library (measured, ``python -m bench.serve --clients``; the table is in
:mod:`bench.serve`): with aiohttp to the engine the server spent about 1.4x the CPU time per
streamed chunk it spends with this client (its request and response objects, the
connector's bookkeeping, a timer re-armed on every read), and 4x with httpx; this client
keeps the server's CPU per chunk at or below a bare aiohttp pass-through proxy's.  A
streamed request only needs a POST written in one write and a body read as it arrives:

- **one write per request**: the head (built once per URL and headers) and the body;
- **the answer parsed as it arrives** (:mod:`pawlette.serve.http1_response`, sans-IO): the
  status line and headers, then a chunked, ``content-length`` or read-until-close body,
  decoded (``gzip``, ``deflate``) when the engine compresses it a bounded step at a time
  in a thread of its own (the loop serves other requests meanwhile), bounded (the head at
  64 KiB; a body the caller holds whole at ``max_answer_bytes``, decoded); handed on at
  most :data:`FAIR_SHARE` bytes at a time, the loop running other work between two shares;
- **deadlines, not only silences**: the answer's head must come within ``timeout`` of the
  request's start (waiting for a free connection and connecting included), so a head
  trickled a line at a time or an endless run of interim ``1xx`` answers ends too; after it
  the engine may stay silent at most ``timeout`` between two pieces, and the whole answer
  must end by the request's ``deadline`` (``--request-timeout``).  One timer per answer, not
  per read: on firing it looks at when data last came and re-arms itself for the rest;
- **a keep-alive pool** per engine (LIFO: the connection used last is warm), at most
  ``max_connections`` open, idle ones closed after ``keepalive_seconds`` (by a timer, so
  they do not stay open on the engine until the next request); a request that finds every
  connection busy waits at most until its head deadline (:class:`EngineSaturated`);
- **one retry**: a request sent on a reused connection that dies before any byte of the
  answer (the engine had just closed it as idle, so it read nothing) is sent once more on a
  new connection; a request that reached an engine otherwise is never sent twice.

Failures are the :class:`~pawlette.serve.transport.EngineError` kinds.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import os
import socket
import ssl
import zlib
from typing import Any
from urllib.parse import urlsplit

from .http1_response import ResponseParser, decompressor
from .transport import (
    Answer,
    EngineDeadline,
    EngineDisconnected,
    EngineError,
    EngineInvalid,
    EngineSaturated,
    EngineTimeout,
    EngineTooLarge,
    EngineUnreachable,
)

HIGH_WATER = 1 << 20
"""Unread body bytes held before the socket's reading is paused (the consumer is slow)."""
INFLATE_STEP = 1 << 18
"""The most a compressed body is inflated at a time (one step in the inflating thread): a
gzip bomb is refused once a step passes the bound, whatever it would inflate to."""
INFLATE_INPUT = 1 << 16
"""The most compressed bytes handed to one inflate step.  zlib hands back the input a step
did not use as a new bytes object: given all that was buffered (up to a megabyte of a bomb),
every step copied it again, which cost more than the inflating."""
FAIR_SHARE = 1 << 16
"""The most of a body handed on at once, and without letting the loop run other work: an
engine that floods a stream (faster than its client takes it) gets the loop a share at a
time.  A share of a stream costs the server a few milliseconds to parse and write again, so
with several floods at once a loop turn (and ``/health``, which needs about three) waits for
a share of each: 256 KiB shares let five floods hold a probe past 100 ms."""

_inflating: concurrent.futures.ThreadPoolExecutor | None = None


def _inflating_thread() -> concurrent.futures.ThreadPoolExecutor:
    """The process's one thread that inflates compressed answers, made when first needed.

    Inflating is the heaviest work a misbehaving engine can ask of the server (four clients
    asking for gzip bombs kept its loop inflating most of the time), and zlib lets go of the
    interpreter lock while it inflates: in a thread of its own the loop serves other requests
    meanwhile, and on a busy machine the kernel still runs the loop's thread promptly when a
    request comes (a thread that works all the time waits its turn behind other work; one
    that sleeps mostly does not).  One thread: bombs wait for each other, not for a core
    each."""
    global _inflating
    if _inflating is None:
        _inflating = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="pawlette-inflate")
    return _inflating


class Connection(asyncio.Protocol):
    """One connection to an engine; carries one :class:`EngineAnswer` at a time."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.answer: EngineAnswer | None = None
        self.closed = False
        self.idle_since = 0.0
        self.paused = False
        self.answer_started = False
        """Whether any byte of the last answer arrived before the exchange failed."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        answer = self.answer
        if answer is None:  # an idle connection that talks: not reusable
            self.close()
            return
        answer.received(data)

    def eof_received(self) -> bool:
        return False  # close the transport: connection_lost follows

    def connection_lost(self, error: Exception | None) -> None:
        self.closed = True
        self.pool.lost(self)
        answer = self.answer
        if answer is not None:
            answer.lost(error)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self.transport is not None:
                self.transport.close()


class EngineAnswer(Answer):
    """An engine's answer read from one :class:`Connection`.

    ``head_deadline``: the loop time by which the head must have come; ``deadline``: by which
    the whole answer must have (None: no bound but the silences)."""

    def __init__(
        self,
        connection: Connection,
        timeout: float,
        loop: asyncio.AbstractEventLoop,
        *,
        head_deadline: float,
        deadline: float | None,
        max_body: int | None,
    ) -> None:
        self.connection = connection
        self.parser = ResponseParser(max_body, decode=False)
        self.max_body = max_body
        self.loop = loop
        self.timeout = timeout
        self.head_deadline = head_deadline
        self.deadline = deadline
        self.status_code = 0
        self.content = b""
        self.whole = False
        self.any_byte = False
        self._pieces: list[bytes] = []
        self._buffered = 0
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        now = loop.time()
        self._last_data = now
        self._wait_started = now
        self._timer: asyncio.TimerHandle | None = loop.call_at(head_deadline, self._check_timeout)
        self._released = False
        self._inflater: Any = None
        """A compressed body's decompressor (made with the head)."""
        self._input = b""
        """Compressed body bytes taken from :attr:`_pieces`, inflated up to :attr:`_input_at`."""
        self._input_at = 0
        self._decoded = 0
        self._stepped = False
        self._unbroken = 0
        """Body bytes handed on since the reader last waited for the engine."""

    # ------------------------------------------------------------------ events

    def received(self, data: bytes) -> None:
        self._last_data = self.loop.time()
        self.any_byte = True
        parser = self.parser
        try:
            body = parser.feed(data)
        except EngineError as error:
            # The answer cannot go on (its connection is closed).  Never raised out of
            # data_received: asyncio would close the transport with the parser done, and
            # nothing would wake the reader (it waited forever, the timer stopped).
            self._fail(error)
            return
        except Exception as error:  # a parser bug: still an error the reader sees, not a hang
            self._fail(EngineInvalid(f"an unreadable answer ({type(error).__name__})"))
            return
        if body:
            self._pieces.append(body)
            self._buffered += len(body)
            connection = self.connection
            slow = self._buffered > HIGH_WATER and not parser.done and not connection.paused
            if slow and connection.transport is not None:  # the reader is behind: wait for it
                connection.transport.pause_reading()
                connection.paused = True
        if parser.done:
            self._release()
        if parser.head_done or body:
            self._wake()

    def lost(self, error: Exception | None) -> None:
        if self.parser.done:
            return
        try:
            tail = self.parser.close()
        except EngineDisconnected as failure:
            if error is not None:
                why = getattr(error, "strerror", None) or error
                failure = EngineDisconnected(f"{failure} ({why})")
            self._error = failure
        except EngineError as failure:
            self._error = failure
        else:
            if tail:
                self._pieces.append(tail)
            self._release()
        self._wake()

    def _fail(self, error: BaseException) -> None:
        self._error = error
        if not self._released:  # a released connection is the pool's (maybe another answer's)
            self._released = True
            self.connection.answer = None
            self.connection.close()
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def _check_timeout(self) -> None:
        self._timer = None
        if self.parser.done or self._error is not None:
            return
        now = self.loop.time()
        deadline = self.deadline
        if not self.parser.head_done:
            # Before the head: a deadline, whatever trickles in (a head a line at a time, a
            # stream of interim answers).
            if now >= self.head_deadline:
                if deadline is not None and self.head_deadline >= deadline:
                    self._fail(EngineDeadline("no answer head by the request's deadline"))
                else:
                    self._fail(
                        EngineTimeout(f"no answer head within {self.timeout:g} s (--timeout)")
                    )
                return
            self._timer = self.loop.call_at(self.head_deadline, self._check_timeout)
            return
        if deadline is not None and now >= deadline:
            self._fail(EngineDeadline("the answer did not end by the request's deadline"))
            return
        since = max(self._last_data, self._wait_started)
        if self._waiter is not None and now - since >= self.timeout:
            self._fail(EngineTimeout(f"nothing from the engine for {self.timeout:g} s (--timeout)"))
            return
        # Data came since (or nobody waits): the rest of the time from the last data or wait.
        when = since + self.timeout
        if when <= now:
            when = now + self.timeout
        if deadline is not None and deadline < when:
            when = deadline
        self._timer = self.loop.call_at(when, self._check_timeout)

    def _release(self) -> None:
        """The answer is whole: its connection goes back to the pool."""
        if self._released:
            return
        self._released = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        connection = self.connection
        connection.answer = None
        if connection.paused and connection.transport is not None:
            connection.paused = False  # the answer is whole: the next one reads at once
            connection.transport.resume_reading()
        if self.parser.keep_alive and not connection.closed:
            connection.pool.put_back(connection)
        else:
            connection.close()
            connection.pool.lost(connection)

    # ------------------------------------------------------------------ reading

    async def wait_head(self) -> None:
        while not self.parser.head_done:
            if self._error is not None:
                raise self._error
            await self._wait()
        if self.parser.encoding is not None:
            self._inflater = decompressor(self.parser.encoding)
        if self._timer is not None:
            # From the head on, the silences and the request's deadline count.
            self._timer.cancel()
            self._check_timeout()

    async def _wait(self) -> None:
        waiter = self.loop.create_future()
        self._waiter = waiter
        self._wait_started = self.loop.time()
        try:
            await waiter
        finally:
            self._waiter = None

    async def next_piece(self) -> bytes:
        if self._inflater is not None:
            return await self._next_inflated()
        while True:
            if self._pieces:
                if self._unbroken >= FAIR_SHARE:
                    # An engine faster than its reader (a flood, a burst): the loop runs other
                    # requests' work (a health check) between two shares of this one's.
                    self._unbroken = 0
                    await asyncio.sleep(0)
                    continue
                piece = self._take(FAIR_SHARE)
                self._unbroken += len(piece)
                return piece
            if self._error is not None:
                raise self._error
            if self.parser.done:
                return b""
            self._unbroken = 0
            await self._wait()

    def _take(self, most: int) -> bytes:
        """At most ``most`` of the body bytes received and not read yet (the socket reads on
        once the buffer is under :data:`HIGH_WATER`).  A read from the socket may be larger
        (a quarter of a megabyte): it is handed on a share at a time."""
        pieces = self._pieces
        if self._buffered <= most:
            piece = pieces[0] if len(pieces) == 1 else b"".join(pieces)
            pieces.clear()
        else:
            taken: list[bytes] = []
            size = 0
            while size < most:
                first = pieces[0]
                if size + len(first) <= most:
                    taken.append(pieces.pop(0))
                    size += len(first)
                else:
                    cut = most - size
                    taken.append(first[:cut])
                    pieces[0] = first[cut:]
                    size = most
            piece = taken[0] if len(taken) == 1 else b"".join(taken)
        self._buffered -= len(piece)
        if self._buffered <= HIGH_WATER:
            self._resume()
        return piece

    def _resume(self) -> None:
        connection = self.connection
        if connection.paused and not self._released and connection.transport is not None:
            connection.paused = False  # read: the socket may fill the buffer again
            connection.transport.resume_reading()

    async def _next_inflated(self) -> bytes:
        """A compressed body, inflated a step at a time in the inflating thread (at most
        :data:`INFLATE_INPUT` bytes in, :data:`INFLATE_STEP` out), counted against
        ``max_body`` before the next step: a bomb is refused one step past the bound."""
        inflater = self._inflater
        inflate = inflater.decompress
        loop = self.loop
        while True:
            if self._input_at >= len(self._input) and self._pieces:
                self._input = self._take(HIGH_WATER)
                self._input_at = 0
            at = self._input_at
            if at < len(self._input) or self._stepped:
                # Input left, or a full step before it (zlib may hold more output).
                room = INFLATE_STEP
                if self.max_body is not None:
                    room = min(room, self.max_body - self._decoded + 1)
                data = memoryview(self._input)[at : at + INFLATE_INPUT]
                try:
                    out: bytes = await loop.run_in_executor(
                        _inflating_thread(), inflate, data, room
                    )
                except zlib.error as error:
                    raise self._undecodable(error) from error
                self._input_at = at + len(data) - len(inflater.unconsumed_tail)
                self._stepped = len(out) >= room
            elif self.parser.done or self._error is not None:
                if self._error is not None:
                    raise self._error
                try:
                    out = inflater.flush()  # the last step was not full: little or nothing
                except zlib.error as error:
                    raise self._undecodable(error) from error
                self._inflater = None
                self._count(len(out))
                return out
            else:
                await self._wait()
                continue
            self._count(len(out))
            if out:
                return out

    def _count(self, size: int) -> None:
        self._decoded += size
        if self.max_body is not None and self._decoded > self.max_body:
            # Never raised from a local name: the frame in its traceback would hold it (a
            # reference cycle that keeps the answer's buffers until the collector runs).
            self._fail(EngineTooLarge(f"an answer over {self.max_body} bytes (--max-answer-bytes)"))
            assert self._error is not None
            raise self._error

    def _undecodable(self, error: zlib.error) -> EngineInvalid:
        encoding = self.parser.encoding
        failure = EngineInvalid(f"the answer's {encoding} body does not decode ({error})")
        self._fail(failure)
        return failure

    def at_end(self) -> bool:
        return self.parser.done and not self._pieces and self._inflater is None

    async def aclose(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self.parser.done:
            # Cut short: close the connection, which cancels the engine's work.
            connection = self.connection
            connection.answer = None
            connection.close()
            self._released = True
        # Let go of what the answer held: a failure raised from here holds this answer in its
        # traceback's frames, a reference cycle only the collector frees (rarely: the server
        # collects every 10,000 allocations), which kept megabytes of a refused body alive.
        self._pieces = []
        self._input = b""
        self._inflater = None
        if self._error is not None:
            self._error = _Closed()


class Pool:
    """The keep-alive connections to one engine (scheme, host, port)."""

    def __init__(
        self,
        client: EngineClient,
        host: str,
        port: int,
        tls: ssl.SSLContext | None,
    ) -> None:
        self.client = client
        self.host = host
        self.port = port
        self.tls = tls
        self.idle: collections.deque[Connection] = collections.deque()
        self.open: set[Connection] = set()

    def put_back(self, connection: Connection) -> None:
        connection.idle_since = self.client.loop.time()
        self.client.sweep_later()
        waiters = self.client.waiters
        while waiters:  # a request waiting for a free connection takes this one
            waiter = waiters.popleft()
            if not waiter.done():
                self.idle.append(connection)
                waiter.set_result(None)
                return
        self.idle.append(connection)

    def lost(self, connection: Connection) -> None:
        if connection in self.open:
            self.open.discard(connection)
            self.client.count -= 1
            self.client.wake_one()
        if connection in self.idle:
            self.idle.remove(connection)

    def drop_stale(self, oldest: float) -> None:
        """Close the idle connections unused since before ``oldest`` (the left end of
        :attr:`idle` is the one idle longest)."""
        idle = self.idle
        while idle and idle[0].idle_since < oldest:
            stale = idle.popleft()
            stale.close()
            self.lost(stale)

    def take_idle(self) -> Connection | None:
        idle = self.idle
        if not idle:
            return None
        self.drop_stale(self.client.loop.time() - self.client.keepalive_seconds)
        while idle:
            connection = idle.pop()  # the one used last
            if not connection.closed:
                return connection
            self.lost(connection)
        return None

    async def connect(self, seconds: float) -> Connection:
        """A new connection within ``seconds`` (the connect timeout, or less when the request's
        head deadline comes first)."""
        client = self.client
        try:
            _, connection = await asyncio.wait_for(
                client.loop.create_connection(
                    lambda: Connection(self),
                    self.host,
                    self.port,
                    ssl=self.tls,
                    server_hostname=self.host if self.tls is not None else None,
                ),
                max(0.0, seconds),
            )
        except asyncio.TimeoutError as error:
            raise EngineUnreachable(f"no connection within {seconds:.3g} s") from error
        except OSError as error:
            raise EngineUnreachable(f"cannot connect ({_connect_failure(error)})") from error
        if connection.closed:  # closed at once by the engine
            raise EngineUnreachable("the engine closed the connection at once")
        self.open.add(connection)
        return connection


def _connect_failure(error: OSError) -> str:
    """What went wrong connecting, in words that reach clients: never the system's message
    itself, which may name the engine's address (asyncio's loop writes "Connect call failed
    ('10.0.0.5', 8001)", a failed certificate check names the host the certificate is for).
    The log names the engine by its address."""
    if isinstance(error, ssl.SSLError):
        return f"TLS failed: {error.reason or type(error).__name__}"
    if isinstance(error, socket.gaierror):
        return "the engine's name does not resolve"
    if error.errno:
        return os.strerror(error.errno)
    return "no address of the engine accepted the connection"


class EngineClient:
    """Requests to engines over kept-alive HTTP/1.1 connections, up to ``max_connections``.

    ``timeout``: the longest wait for an answer's head (from the request's start) and the
    longest silence in its body; ``max_answer_bytes``: the most decoded body bytes read of an
    answer the caller holds whole (``bounded``, the default; a stream's caller bounds its own
    pieces)."""

    def __init__(
        self,
        *,
        timeout: float,
        connect_timeout: float,
        max_connections: int,
        verify: ssl.SSLContext,
        keepalive_seconds: float,
        max_answer_bytes: int | None = None,
    ) -> None:
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_connections = max_connections
        self.verify = verify
        self.keepalive_seconds = keepalive_seconds
        self.max_answer_bytes = max_answer_bytes
        self.loop = asyncio.get_running_loop()
        self.pools: dict[str, Pool] = {}
        self.heads: dict[tuple[str, str, tuple[tuple[str, str], ...]], tuple[Pool, bytes]] = {}
        self.count = 0
        """Connections open (idle or busy), across the pools."""
        self.waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._sweep: asyncio.TimerHandle | None = None

    def sweep_later(self) -> None:
        """Close idle connections once they pass ``keepalive_seconds``, even when no request
        comes to find them stale: an engine that never closes idle connections (llama.cpp
        and uvicorn do after 5 s; others need not) would otherwise keep every connection of
        the last burst open, up to ``max_connections``.  One timer for all pools."""
        if self._sweep is None:
            self._sweep = self.loop.call_later(self.keepalive_seconds, self._sweep_idle)

    def _sweep_idle(self) -> None:
        self._sweep = None
        now = self.loop.time()
        soonest: float | None = None
        for pool in self.pools.values():
            pool.drop_stale(now - self.keepalive_seconds)
            if pool.idle:
                since = pool.idle[0].idle_since
                soonest = since if soonest is None else min(soonest, since)
        if soonest is not None:
            self._sweep = self.loop.call_at(soonest + self.keepalive_seconds, self._sweep_idle)

    def wake_one(self) -> None:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _target(self, method: str, url: str, headers: dict[str, str]) -> tuple[Pool, bytes]:
        key = (method, url, tuple(headers.items()))
        known = self.heads.get(key)
        if known is not None:
            return known
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EngineUnreachable("not an http(s) URL")
        tls = self.verify if parts.scheme == "https" else None
        port = parts.port or (443 if tls is not None else 80)
        name = f"{parts.scheme}://{parts.hostname}:{port}"
        pool = self.pools.get(name)
        if pool is None:
            pool = self.pools[name] = Pool(self, parts.hostname, port, tls)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        host = parts.netloc.rpartition("@")[2]  # credentials go in a header, never here
        lines = [f"{method} {path} HTTP/1.1", f"host: {host}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        head = "\r\n".join(lines) + ("\r\ncontent-length: " if method == "POST" else "\r\n\r\n")
        self.heads[key] = (pool, head.encode("latin-1"))
        return self.heads[key]

    async def _connection(self, pool: Pool, head_deadline: float) -> tuple[Connection, bool]:
        """A connection to ``pool``'s engine and whether it was used before."""
        loop = self.loop
        while True:
            connection = pool.take_idle()
            if connection is not None:
                return connection, True
            if self.count < self.max_connections:
                self.count += 1
                seconds = min(self.connect_timeout, head_deadline - loop.time())
                try:
                    return await pool.connect(seconds), False
                except BaseException:
                    self.count -= 1
                    self.wake_one()
                    raise
            # Every connection busy: wait for one to come back or close (another pool's
            # idle connection is closed to make room), until the head deadline.
            if self._close_an_idle_elsewhere(pool):
                continue
            waiter = loop.create_future()
            self.waiters.append(waiter)
            timer = loop.call_at(head_deadline, _expire, waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    # Woken, then cancelled before it ran (its client went away): the wake
                    # (a connection free or room for one) passes on, else the next waiter
                    # sleeps on while a connection sits idle.
                    self.wake_one()
                raise
            except _Expired:
                raise EngineSaturated(
                    f"all {self.max_connections} connections to the engines stayed busy for "
                    f"{self.timeout:g} s (--timeout; --max-upstream-connections)"
                ) from None
            finally:
                timer.cancel()

    def _close_an_idle_elsewhere(self, pool: Pool) -> bool:
        for other in self.pools.values():
            if other is not pool and other.idle:
                connection = other.idle.popleft()
                connection.close()
                other.lost(connection)
                return True
        return False

    async def post(
        self,
        url: str,
        content: bytes,
        headers: dict[str, str],
        *,
        deadline: float | None = None,
        bounded: bool = True,
    ) -> EngineAnswer:
        """POST ``content``: the answer's head read (its body not yet).  ``deadline``: the
        loop time by which the whole answer must have come (None: no bound); ``bounded``:
        its body is held whole, so at most ``max_answer_bytes`` of it is read."""
        limit = self.max_answer_bytes if bounded else None
        return await self._request("POST", url, content, headers, deadline, limit)

    async def get(self, url: str, headers: dict[str, str], *, timeout: float) -> EngineAnswer:
        """GET ``url`` (discovery and health probes): the head read within ``timeout``."""
        deadline = self.loop.time() + timeout
        return await self._request("GET", url, b"", headers, deadline, self.max_answer_bytes)

    async def _request(
        self,
        method: str,
        url: str,
        content: bytes,
        headers: dict[str, str],
        deadline: float | None,
        max_body: int | None,
    ) -> EngineAnswer:
        pool, head = self._target(method, url, headers)
        message = b"%s%d\r\n\r\n%s" % (head, len(content), content) if method == "POST" else head
        head_deadline = self.loop.time() + self.timeout
        if deadline is not None and deadline < head_deadline:
            head_deadline = deadline
        connection, reused = await self._connection(pool, head_deadline)
        try:
            return await self._exchange(connection, message, head_deadline, deadline, max_body)
        except EngineDisconnected:
            # Not a timeout: an engine slow to its first byte (a long prompt) is not retried.
            if not reused or connection.answer_started:
                raise
        # The reused connection died before any byte of the answer: a connection the engine
        # had closed as idle (it read nothing).  Once more, on a new connection.
        self.count += 1
        try:
            connection = await pool.connect(
                min(self.connect_timeout, head_deadline - self.loop.time())
            )
        except BaseException:
            self.count -= 1
            self.wake_one()
            raise
        return await self._exchange(connection, message, head_deadline, deadline, max_body)

    async def _exchange(
        self,
        connection: Connection,
        message: bytes,
        head_deadline: float,
        deadline: float | None,
        max_body: int | None,
    ) -> EngineAnswer:
        answer = EngineAnswer(
            connection,
            self.timeout,
            self.loop,
            head_deadline=head_deadline,
            deadline=deadline,
            max_body=max_body,
        )
        connection.answer = answer
        connection.answer_started = False
        transport = connection.transport
        if connection.closed or transport is None or transport.is_closing():
            connection.answer = None
            answer.lost(None)
        else:
            transport.write(message)
        try:
            await answer.wait_head()
        except EngineError:
            connection.answer_started = answer.any_byte
            await answer.aclose()
            raise
        except BaseException:
            await answer.aclose()
            raise
        answer.status_code = answer.parser.status
        answer.headers = answer.parser.headers
        return answer

    def close(self) -> None:
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        for pool in self.pools.values():
            for connection in list(pool.open):
                connection.close()
            pool.idle.clear()


class _Closed(EngineError):
    """Raised by an answer read after it was closed."""

    def __init__(self) -> None:
        super().__init__("the answer was closed")


class _Expired(Exception):
    """A pool wait reached its request's head deadline."""


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(_Expired())
