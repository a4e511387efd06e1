"""The clients' side of the server, bounded: uvicorn's httptools protocol with the limits a
server facing the internet needs, which uvicorn leaves out.

uvicorn with httptools (its fastest HTTP/1.1 stack here, ``python -m bench.serve --stacks``)
sets no bound on a request's head, no time limit on it, and no cap on connections: one
unauthenticated 128 MiB header took a worker 27 s of CPU (httptools joins a header's pieces
again on every read, so the cost grows with the square of its size), and about 20,000 idle
sockets used up a worker's file descriptors, after which new clients were dropped unseen.
:func:`guarded_protocol` makes the protocol class a server runs, with these bounds from its
:class:`~pawlette.serve.config.ServeConfig`:

- **head size** (``--max-head-bytes``): a head still unfinished past it is answered 431 and
  the connection closed, before the parser is fed more (counted by the reads that carry it;
  a pipelined head that begins in the read ending the request before it counts from the
  next read, so a head may go one read over before it is refused);
- **head time** (``--head-timeout``): a new connection's first request head must be whole
  within it (an idle socket and a head trickled a byte at a time alike), a later request's
  head within it of its first byte; else 408 (or a plain close when nothing came) and closed;
- **keep-alive** (``--keep-alive``): uvicorn's own timer closes a connection idle between
  requests;
- **body time** (``--body-timeout``): a body not whole within it of its head is answered 408
  and the connection closed (the request sees a disconnect);
- **refusals** (408, 431): the answer is written and the sending side closed, and what the
  client still sends is read and dropped until it closes or two seconds pass: closing a
  socket the client is still writing to answers it with a reset, which can throw the
  refusal away unread;
- **stalled readers** (``--send-timeout``): a client that takes none of its answer while the
  server's buffer for it is full is disconnected after it, which cancels its engine request
  (the buffer is full only when the client stops reading, so a steady reader never waits);
- **connections** (``--max-client-connections``): past the cap the connection waiting
  longest without a request in progress (idle, or still sending its head) is closed to make
  room, or the new one is answered 503 and closed when every connection has a request in
  progress; the cap is kept below the process's file limit;
- **requests per connection** (``--max-requests-per-connection``): the last one's answer says
  ``connection: close``, so a client reconnects (and, with ``--workers``, the kernel may hand
  the new connection to another worker: requests spread over the workers even when a client
  keeps few connections).

All of it runs in the protocol's callbacks: one timer per connection, nothing per byte but a
length added while a head is incomplete.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .config import ServeConfig
from .errors import ServerError
from .metrics import Registry

logger = logging.getLogger("pawlette.serve")

_RESERVED_FILES = 64
"""File descriptors kept for everything but client connections (logs, the listening socket,
the metrics directory, the tokenizer, ...)."""
_LOG_EVERY = 10.0

_LINGER = 2.0
"""Seconds a refused connection stays open for reading after its answer (see
:meth:`GuardedProtocol._refuse`)."""
"""Seconds between two log lines of the same refusal (an attack would flood the log)."""


def raise_file_limit(config: ServeConfig) -> None:
    """Raise the process's open-file limit to its hard limit (the server owns the process): a
    cap of thousands of connections needs as many descriptors, and many systems start
    processes at 1,024."""
    try:
        import resource
    except ImportError:  # not on Windows
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = config.max_client_connections + config.max_connections + _RESERVED_FILES
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
        if target > soft:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def connection_cap(config: ServeConfig) -> int:
    """``--max-client-connections``, lowered to fit the open-file limit (with the engine
    connections and a reserve): a cap past the limit would let idle sockets use up every
    descriptor, and new clients would be dropped before the server could see them."""
    cap = config.max_client_connections
    try:
        import resource
    except ImportError:
        return cap
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return cap
    room = soft - config.max_connections - _RESERVED_FILES
    if room < cap:
        fitted = max(16, room, soft // 2 if room < 16 else 0)
        logger.warning(
            "--max-client-connections %d: lowered to %d to fit the open-file limit %d "
            "(with --max-upstream-connections %d); raise the limit (ulimit -n) to allow more",
            cap,
            fitted,
            soft,
            config.max_connections,
        )
        return fitted
    return cap


class Guard:
    """One server's bookkeeping of its client connections (one per process); refusals are
    counted in ``registry`` (``refused_total{code}``) when given."""

    def __init__(self, config: ServeConfig, registry: Registry | None = None) -> None:
        self.config = config
        self.registry = registry
        self.cap = connection_cap(config)
        self.open = 0
        self.waiting: collections.OrderedDict[GuardedProtocol, None] = collections.OrderedDict()
        """Connections without a request in progress, the one waiting longest first."""
        self._logged: dict[str, float] = {}

    def note(self, what: str, message: str, *arguments: Any) -> None:
        """Count a refusal of kind ``what``; log ``message`` once per :data:`_LOG_EVERY`
        seconds per kind."""
        if self.registry is not None:
            self.registry.add("refused_total", code=what)
        now = time.monotonic()
        if now - self._logged.get(what, -_LOG_EVERY) >= _LOG_EVERY:
            self._logged[what] = now
            logger.warning(message, *arguments)


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the bounds above (made per server by
    :func:`guarded_protocol`, which sets :attr:`guard`)."""

    guard: Guard

    def __init__(self, *arguments: Any, **options: Any) -> None:
        super().__init__(*arguments, **options)
        self._timer: asyncio.TimerHandle | None = None
        self._stall: asyncio.TimerHandle | None = None
        self._in_head = True
        self._head_bytes = 0
        self._requests = 0
        self._counted = False
        self._lingering = False

    # ------------------------------------------------------------------ the connection

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        guard = self.guard
        guard.open += 1
        self._counted = True
        if guard.open > guard.cap:
            if guard.waiting:
                oldest, _ = guard.waiting.popitem(last=False)
                guard.note(
                    "evicted",
                    "%d client connections (--max-client-connections): closing the one "
                    "waiting longest without a request",
                    guard.cap,
                )
                oldest._close()
            else:
                guard.note(
                    "too_many_connections",
                    "%d client connections, all with a request in progress "
                    "(--max-client-connections): refusing new ones",
                    guard.cap,
                )
                refusal = ServerError(
                    503,
                    f"the server holds {guard.cap} connections, all busy; try again",
                    kind="server_error",
                    code="too_many_connections",
                )
                # Closed at once, not lingering: in a flood of connections each one kept
                # open for reading would hold a file descriptor the cap protects.
                transport.write(refusal.raw())
                self._close()
                return
        guard.waiting[self] = None
        # The first request's head must be whole within --head-timeout of the connection's
        # start: an idle socket and a slow head alike.
        self._timer = self.loop.call_later(self.guard.config.head_timeout, self._head_late)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timers()
        guard = self.guard
        guard.waiting.pop(self, None)
        if self._counted:
            self._counted = False
            guard.open -= 1
        super().connection_lost(exc)

    def _close(self) -> None:
        self._cancel_timers()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def _refuse(self, answer: bytes) -> None:
        """Write ``answer`` and close: the sending side at once, the connection when the
        client closes or :data:`_LINGER` seconds later, reading and dropping what it still
        sends.  A socket closed while the client is sending answers it with a reset, which
        can throw away the answer before the client reads it (the staged close RFC 9112
        section 9.6 asks of a server)."""
        self._cancel_timers()
        transport = self.transport
        transport.write(answer)
        if not transport.can_write_eof():
            self._close()
            return
        self._lingering = True
        transport.write_eof()
        self._timer = self.loop.call_later(_LINGER, self._close)

    def _cancel_timers(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None

    # ------------------------------------------------------------------ the head

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            return  # refused: what still comes is dropped until the close
        finished = self._requests
        super().data_received(data)
        if self._in_head and not self.transport.is_closing():
            if self._requests > finished:
                # A head ended in this read and the next one began: the read also held a
                # body (pipelined requests), and where the new head starts is unknown.  It
                # is counted from the next read on (it goes at most one read over).
                return
            self._head_bytes += len(data)
            limit = self.guard.config.max_head_bytes
            if self._head_bytes > limit:
                self._refuse_head(
                    ServerError(
                        431,
                        f"request head: over {limit} bytes; expected at most {limit} "
                        "(--max-head-bytes)",
                        code="request_header_too_large",
                    )
                )

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        if self._requests:
            # A later request: its head within --head-timeout of its first byte (the first
            # one's timer runs from the connection's start).
            self._head_bytes = 0
            self._restart(self.guard.config.head_timeout, self._head_late)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._requests += 1
        self.guard.waiting.pop(self, None)
        self._restart(self.guard.config.body_timeout, self._body_late)
        super().on_headers_complete()
        cycle = self.cycle
        if cycle is not None and self._requests >= self.guard.config.max_requests_per_connection:
            cycle.keep_alive = False  # the answer says connection: close

    def on_message_complete(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            # Waiting for its next request: uvicorn's keep-alive timer runs.
            self._in_head = True
            self._head_bytes = 0
            self.guard.waiting[self] = None
            self.guard.waiting.move_to_end(self)

    def _restart(self, seconds: float, callback: Any) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.loop.call_later(seconds, callback)

    def _head_late(self) -> None:
        self._timer = None
        if not self._in_head or self.transport.is_closing():
            return
        if self._head_bytes == 0:
            self._close()  # nothing came: nobody to answer
            return
        seconds = self.guard.config.head_timeout
        self._refuse_head(
            ServerError(
                408,
                f"request head: not whole within {seconds:g} s; expected it within "
                f"{seconds:g} s (--head-timeout)",
                code="head_timeout",
            )
        )

    def _refuse_head(self, error: ServerError) -> None:
        self.guard.note(error.code or "head", "refused a request head: %s", error.message)
        self._refuse(error.raw())

    # ------------------------------------------------------------------ the body and answer

    def _body_late(self) -> None:
        self._timer = None
        cycle = self.cycle
        if cycle is None or not cycle.more_body or self.transport.is_closing():
            return
        seconds = self.guard.config.body_timeout
        self.guard.note(
            "body_timeout", "a request body was not whole within %g s (--body-timeout)", seconds
        )
        # The request reads a disconnect now (and its answer goes nowhere).
        cycle.disconnected = True
        cycle.message_event.set()
        if cycle.response_started:
            self._close()
            return
        error = ServerError(
            408,
            f"request body: not whole within {seconds:g} s; expected it within "
            f"{seconds:g} s (--body-timeout)",
            code="body_timeout",
        )
        self._refuse(error.raw())

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._stall is None:
            self._stall = self.loop.call_later(self.guard.config.send_timeout, self._stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None

    def _stalled(self) -> None:
        self._stall = None
        if self.transport.is_closing():
            return
        self.guard.note(
            "stalled",
            "a client took none of its answer for %g s (--send-timeout): disconnecting it",
            self.guard.config.send_timeout,
        )
        # abort, not close: close would wait to send what the client does not take.
        self.transport.abort()


def guarded_protocol(
    config: ServeConfig, registry: Registry | None = None
) -> type[GuardedProtocol]:
    """The protocol class for one server (uvicorn's ``http`` setting), with its own
    :class:`Guard` (its refusals counted in ``registry``)."""
    made: type[GuardedProtocol] = type(
        "GuardedProtocol", (GuardedProtocol,), {"guard": Guard(config, registry)}
    )
    return made
