"""Several engine replicas behind one server: least outstanding requests, with ejection.

Policy (per server process; with ``--workers`` each process balances its own requests):

- **choice**: the replica with the fewest requests in progress from this process (a stream
  counts until its last byte is read); ties go round robin.  An engine's cost per request
  varies by orders of magnitude (prompt and output lengths), so counting what is in progress
  follows the real load where round robin would not.
- **ejection**: a replica whose connect is refused or times out is out of the rotation at
  once (nothing answers there); one that answers a 5xx, times out reading, or breaks off a
  stream is out only after ``EJECT_AFTER`` (5, Envoy's ``consecutive_5xx`` default) such
  failures in a row, so one bad answer from a working engine does not take it away.  Out
  means for ``--eject-seconds`` (default 5), doubled after each ejection in a row up to 60 s;
  a successful answer resets both counts.  A lone ``--upstream`` is never ejected: there is
  nowhere else to send, so each request tries it and its failure is the answer (502 or 504).
- **recovery**: once its time is up, an ejected replica is probed with ``GET /v1/models``
  (every engine serves it); any answer below 500 puts it back, anything else ejects it again
  for twice as long.  No client request is spent on finding out.
- **retry**: a request whose connect fails (nothing was sent) goes to the next replica;
  one that reached an engine is never sent twice (the engine may have done the work).
- **names**: a replica is known by its URL without credentials (``scheme://host:port``)
  in the log and ``/metrics``, and by its number (``engine replica 2``, the order of
  ``--upstream``) in what clients are told; credentials in its URL go to it as HTTP basic
  auth.
- **all out** (Envoy's panic routing): when every replica is out, a request goes to the one
  whose ejection ends soonest (then the next, while connects are refused); a successful
  answer from it puts it back.  The answer is a 503 (``upstream_unavailable``, OpenAI's error
  body) only when no replica accepts the connection.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

import anyio

from ..errors import PawletteError
from .http1 import EngineClient
from .metrics import Registry
from .observe import RequestContext, current
from .transport import Answer, EngineError, EngineSaturated, EngineTimeout

logger = logging.getLogger("pawlette.serve")

MAX_EJECT_SECONDS = 60.0
EJECT_AFTER = 5
"""Failed answers in a row (5xx, read timeout, broken stream) that eject a replica."""
_USAGE_TOKENS = re.compile(rb'"completion_tokens"\s*:\s*(\d+)')
_TEXT_KEY = b'"text":'
_TAIL = 64


class NoReplica(Exception):
    """Every replica is out of the rotation."""


class ReplicaError(Exception):
    """A failure talking to one replica (``cause`` says what happened)."""

    def __init__(self, replica: Replica, cause: EngineError) -> None:
        super().__init__(str(cause))
        self.replica = replica
        self.cause = cause


@dataclass(eq=False)
class Replica:
    base_url: str
    """The engine's base URL without credentials (the log's and ``/metrics``' name)."""
    completions_url: str
    number: int = 1
    """Its place in ``--upstream`` (from 1): what clients are told."""
    headers: dict[str, str] = field(default_factory=dict)
    """Sent with every request to it (basic auth from credentials in its URL)."""
    name: str = "the engine"
    """How error messages to clients name it (never its address)."""
    outstanding: int = 0
    ejected_until: float | None = None
    ejections: int = 0
    """Ejections in a row (the backoff doubles with each); reset by a successful answer."""
    failures: int = 0
    """Failed answers in a row; reset by a successful answer."""


def base_of(url: str) -> str:
    """The base URL of an engine: no credentials, no trailing slash, no ``/v1``."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    base = f"{parts.scheme}://{netloc}{parts.path}".rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def credentials_of(url: str) -> dict[str, str]:
    """The ``authorization`` header for credentials in ``url`` (none: empty)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return {}
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    return {"authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii")}


class Balancer:
    def __init__(
        self,
        urls: list[str],
        registry: Registry,
        *,
        eject_seconds: float = 5.0,
        eject_after: int = EJECT_AFTER,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not urls:
            raise ValueError("at least one upstream URL")
        if not eject_seconds > 0:
            raise PawletteError(
                f"--eject-seconds: found {eject_seconds:g}; expected a positive number of seconds"
            )
        unique = list({base_of(url): url for url in reversed(urls)}.items())[::-1]
        several = len(unique) > 1
        self.replicas = [
            Replica(
                base,
                base + "/v1/completions",
                number,
                credentials_of(url),
                f"engine replica {number}" if several else "the engine",
            )
            for number, (base, url) in enumerate(unique, 1)
        ]
        self.registry = registry
        self.eject_seconds = eject_seconds
        self.eject_after = eject_after
        self.clock = clock
        self.client: EngineClient | None = None
        """The client for every request to the engines (set when the server starts)."""
        self._turn = 0
        for replica in self.replicas:
            self._gauges(replica)

    # ------------------------------------------------------------------ choice

    def pick(self, exclude: set[Replica] | frozenset[Replica] = frozenset()) -> Replica | None:
        """The replica for the next request: in the rotation, fewest in progress; when every
        replica not in ``exclude`` is out, the one whose ejection ends soonest."""
        replicas = self.replicas
        lone = len(replicas) == 1
        count = len(replicas)
        self._turn = (self._turn + 1) % count
        chosen: Replica | None = None
        for offset in range(count):
            replica = replicas[(self._turn + offset) % count]
            if replica in exclude or (replica.ejected_until is not None and not lone):
                continue
            if chosen is None or replica.outstanding < chosen.outstanding:
                chosen = replica
        if chosen is None:
            ejected = [replica for replica in replicas if replica not in exclude]
            if ejected:
                return min(ejected, key=lambda replica: replica.ejected_until or 0.0)
        return chosen

    def unavailable(self) -> NoReplica:
        now = self.clock()
        waits = [
            replica.ejected_until - now
            for replica in self.replicas
            if replica.ejected_until is not None
        ]
        soonest = max(0.0, min(waits)) if waits else 0.0
        return NoReplica(
            f"no engine available: every replica ({len(self.replicas)}) failed and is out of "
            f"rotation; the next is probed in {soonest:.1f} s"
        )

    # ------------------------------------------------------------------ health

    def failed(self, replica: Replica, kind: str) -> None:
        """Count a failure of ``kind`` (connect, status, timeout, broken, invalid, too_large,
        deadline: counted, never ejecting); a refused or
        timed-out connect ejects at once, a failed answer after ``eject_after`` in a row."""
        self.registry.add("upstream_failures_total", upstream=replica.base_url, kind=kind)
        if kind == "deadline":
            return  # the request's own deadline passed: no sign the engine is failing
        replica.failures += 1
        if len(self.replicas) == 1 or replica.ejected_until is not None:
            return
        if kind == "connect":
            self._eject(replica, "connect failure")
        elif replica.failures >= self.eject_after:
            self._eject(replica, f"{replica.failures} failures in a row (the last: {kind})")

    def succeeded(self, replica: Replica, ejected: bool = False) -> None:
        """A successful answer; ``ejected``: the request was sent while the replica was out
        (every replica was), so the answer puts it back like a passing probe."""
        if ejected and replica.ejected_until is not None:
            self._readmit(replica)
        if replica.ejected_until is None:
            replica.ejections = 0
            replica.failures = 0

    def _eject(self, replica: Replica, why: str) -> None:
        seconds = min(MAX_EJECT_SECONDS, self.eject_seconds * 2**replica.ejections)
        replica.ejections += 1
        replica.failures = 0
        replica.ejected_until = self.clock() + seconds
        self.registry.add("upstream_ejections_total", upstream=replica.base_url)
        self._gauges(replica)
        logger.warning(
            "upstream %s out of rotation for %g s after a %s", replica.base_url, seconds, why
        )

    def _readmit(self, replica: Replica) -> None:
        replica.ejected_until = None
        self._gauges(replica)
        logger.warning("upstream %s back in rotation", replica.base_url)

    def _gauges(self, replica: Replica) -> None:
        registry, url = self.registry, replica.base_url
        registry.set("upstream_outstanding", replica.outstanding, upstream=url)
        registry.set("upstream_ejected", 0 if replica.ejected_until is None else 1, upstream=url)

    async def probe_forever(self, timeout: float) -> None:
        """Probe ejected replicas whose time is up (run in the server's lifespan)."""
        if len(self.replicas) == 1:
            return
        interval = max(0.05, min(1.0, self.eject_seconds / 4))
        while True:
            await anyio.sleep(interval)
            now = self.clock()
            for replica in self.replicas:
                until = replica.ejected_until
                if until is not None and now >= until:
                    await self._probe(replica, timeout)

    async def _probe(self, replica: Replica, timeout: float) -> None:
        client = self.client
        if client is None:
            return
        try:
            answer = await client.get(
                replica.base_url + "/v1/models", replica.headers, timeout=timeout
            )
            status = answer.status_code
            await answer.aclose()
        except EngineError as error:
            why = f"failed probe ({type(error).__name__}: {error})"
        else:
            if status < 500:
                self._readmit(replica)
                return
            why = f"failed probe (HTTP {status})"
        replica.ejected_until = None
        self._eject(replica, why)

    # ------------------------------------------------------------------ sending

    async def send(
        self,
        content: bytes | Callable[[Replica], Awaitable[bytes]],
        headers: dict[str, str],
        *,
        stream: bool,
        deadline: float | None = None,
    ) -> Tracked:
        """POST ``content`` to a replica's ``/v1/completions``; the answer's head (and its
        body, unless ``stream`` or not a 200) read.  ``content`` may be made for the replica
        chosen (its grammar syntax: :mod:`~pawlette.serve.grammar_syntax`); what it raises is
        raised here.  The replica counts as busy until the answer is closed.  ``deadline``: the
        loop time by which the answer must have ended.  Raises :class:`NoReplica` or
        :class:`ReplicaError`."""
        client = self.client
        if client is None:
            raise RuntimeError("the server is not started (lifespan not run)")
        tried: set[Replica] = set()
        context = current()
        while True:
            replica = self.pick(tried)
            if replica is None:
                raise self.unavailable()
            tried.add(replica)
            ejected = replica.ejected_until is not None and len(self.replicas) > 1
            if context is not None:
                context.replica = replica
            self._busy(replica, 1)
            if isinstance(content, bytes):
                data = content
            else:
                try:
                    data = await content(replica)
                except BaseException:
                    self._busy(replica, -1)
                    raise
            self.registry.add("upstream_requests_total", upstream=replica.base_url)
            sent = time.monotonic()
            answer: Answer
            request_headers = {**headers, **replica.headers} if replica.headers else headers
            try:
                # A stream is not held whole: its events are bounded one by one (app._relay).
                answer = await client.post(
                    replica.completions_url,
                    data,
                    request_headers,
                    deadline=deadline,
                    bounded=not stream,
                )
            except EngineSaturated as error:
                # The pool is this worker's, shared by every replica: no other would do.
                self._busy(replica, -1)
                raise ReplicaError(replica, error) from error
            except EngineError as error:
                self._busy(replica, -1)
                self.failed(replica, error.kind)
                if not error.sent:
                    if self.pick(tried) is not None:
                        continue  # nothing reached the engine: the next replica may serve it
                    if len(self.replicas) > 1:
                        raise self.unavailable() from error
                raise ReplicaError(replica, error) from error
            except BaseException:
                self._busy(replica, -1)
                raise
            self.registry.observe(
                "upstream_latency_seconds", time.monotonic() - sent, upstream=replica.base_url
            )
            status = answer.status_code
            if status == 200 or 400 <= status < 500:
                # A 4xx is the request's fault (or a rate limit): the engine works.
                self.succeeded(replica, ejected)
            else:
                self.failed(replica, "status")  # a 5xx, a redirect, a 2xx with no completion
            tracked = Tracked(self, replica, answer, stream, context)
            # An error answer's body is read by the caller, bounded (app._error_body): an
            # engine dripping an endless error page would hold the request here.
            if not stream and status == 200:
                try:
                    await tracked.read()
                except EngineError as error:
                    raise ReplicaError(replica, error) from error
                finally:
                    await tracked.aclose()  # read whole: the replica is free again
            return tracked

    def _busy(self, replica: Replica, change: int) -> None:
        replica.outstanding += change
        self.registry.set("upstream_outstanding", replica.outstanding, upstream=replica.base_url)


class Tracked(Answer):
    """An engine's answer that frees its replica when closed, reports a broken stream as the
    replica's failure, and counts the time to the first piece, text events and usage."""

    def __init__(
        self,
        balancer: Balancer,
        replica: Replica,
        inner: Answer,
        streaming: bool,
        context: RequestContext | None = None,
    ) -> None:
        self.balancer = balancer
        self.replica = replica
        self.inner = inner
        self.status_code = inner.status_code
        self.headers = inner.headers
        self.content = b""
        self.streaming = streaming
        self.context = context
        self.closed = False
        self._first = streaming
        self._tail = b""

    async def next_piece(self) -> bytes:
        try:
            piece = await self.inner.next_piece()
        except EngineTimeout:
            self.balancer.failed(self.replica, "timeout")
            raise
        except EngineError as error:
            self.balancer.failed(self.replica, error.kind)
            raise
        if not piece:
            return piece
        registry = self.balancer.registry
        if self.streaming:
            if self._first:
                self._first = False
                if self.context is not None:
                    registry.observe(
                        "time_to_first_token_seconds", time.monotonic() - self.context.started
                    )
            registry.add("upstream_events_total", piece.count(_TEXT_KEY))
        window = self._tail + piece
        if b"completion_tokens" in window:
            for match in _USAGE_TOKENS.finditer(window):
                # Counted once: not in the last piece's pass (it ended in its tail), and not
                # at the window's end (the number may go on in the next piece).
                if len(self._tail) <= match.end() < len(window):
                    registry.add("completion_tokens_total", int(match.group(1)))
        self._tail = window[-_TAIL:]
        return piece

    def at_end(self) -> bool:
        return self.inner.at_end()

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            self.balancer._busy(self.replica, -1)
        with contextlib.suppress(EngineError):
            await self.inner.aclose()
