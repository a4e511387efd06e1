"""The client that sends completion requests to the engines: pawlette's own lean HTTP/1.1
client (:mod:`pawlette.serve.http1`) by default; aiohttp or httpx on request (:data:`CLIENT`).

Chosen by measurement (``python -m bench.serve --stacks``, README): a bare pass-through proxy
spends about a third of the CPU per streamed chunk with an aiohttp client that it spends with
httpx (httpx's pool, httpcore and anyio layers run per read), and pawlette's server less again
with the lean client than with aiohttp (aiohttp's per-request machinery).  Every client's answer is
handed over as an :class:`Answer`: the status, then the body piece by piece straight from the
client's own reader (no ``httpx.Response`` around an aiohttp answer: it cost about 7 µs a
request, and its stream layers a call per piece).  Failures are raised as the httpx
exceptions they correspond to (a refused connect is ``httpx.ConnectError``, a silent engine
``httpx.ReadTimeout``, a broken stream ``httpx.ReadError``), so error answers do not depend
on the client.  Discovery and health probes (rare) stay on httpx.

**Idle connections.**  An engine closes a kept-alive connection that stays idle: llama.cpp's
server after 5 s (cpp-httplib's ``CPPHTTPLIB_KEEPALIVE_TIMEOUT_SECOND``, which llama.cpp does
not change), vLLM and SGLang (uvicorn) after 5 s too.  aiohttp keeps idle connections 15 s by
default, so a request could go out on a connection the engine had just closed and fail with no
answer.  Two guards: idle connections are dropped after :data:`KEEPALIVE_SECONDS` (below every
engine's), and a request whose connection dies before any byte of the answer arrived (what a
connection the engine closed as idle does) is sent once more, on a new connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from typing import Any, Protocol

import httpx

try:
    import aiohttp
except ImportError:  # the serve extra installs it; httpx alone still works
    aiohttp = None  # type: ignore[assignment]

CLIENT = "lean"
"""The engine client: ``"lean"`` (:mod:`pawlette.serve.http1`), ``"aiohttp"`` (when installed)
or ``"httpx"``; set before the server starts (the benchmark's and tests' variants)."""

KEEPALIVE_SECONDS = 2.0
"""How long an idle engine connection is kept for reuse: below the 5 s after which llama.cpp's
server (cpp-httplib) and uvicorn-based engines close theirs."""


class Answer:
    """An engine's answer with its head read: ``status_code``, then the body.

    ``next_piece()`` returns the body as it arrives, ``b""`` at its end; ``read()`` the rest
    at once (kept in ``content``); ``at_end()`` whether the body is read to its end (so the
    connection is free again); ``aclose()`` frees the connection, or closes it when the body
    was cut short (which cancels the engine's work).
    """

    status_code: int
    content: bytes
    whole = False
    """Whether :meth:`read` has read the body (then ``content`` holds it)."""

    async def next_piece(self) -> bytes:
        raise NotImplementedError

    async def read(self) -> bytes:
        if self.whole:
            return self.content  # read before (the answer may be closed since)
        pieces = []
        while piece := await self.next_piece():
            pieces.append(piece)
        self.content = b"".join(pieces)
        self.whole = True
        return self.content

    def at_end(self) -> bool:
        return False

    async def aclose(self) -> None:
        raise NotImplementedError


class AiohttpAnswer(Answer):
    def __init__(self, answer: Any) -> None:
        self._answer = answer
        self._body = answer.content
        self.status_code: int = answer.status
        self.content = b""

    async def next_piece(self) -> bytes:
        body = self._body
        try:
            piece: bytes = await body.readany()
            return piece
        except asyncio.TimeoutError as error:
            raise httpx.ReadTimeout(str(error) or "no data") from error
        except (aiohttp.ClientError, OSError) as error:
            # aiohttp raises a dead connection's error before the data that arrived ahead of
            # it (still in its buffer): that data comes first, as httpx delivers it (the
            # error stays set, so the next call raises it).
            rest = _buffered(body)
            if rest:
                return rest
            raise httpx.ReadError(str(error) or type(error).__name__) from error

    def at_end(self) -> bool:
        return bool(self._body.at_eof())

    async def aclose(self) -> None:
        answer = self._answer
        if answer.content.at_eof():
            answer.release()  # read to the end: the connection goes back to the pool
        else:
            answer.close()  # cut short: close the connection, which cancels the engine's work


class HttpxAnswer(Answer):
    """An ``httpx.Response`` opened with ``stream=True`` (the client without aiohttp)."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.status_code = response.status_code
        self.content = b""
        self._pieces = response.aiter_bytes()
        self._ended = False

    async def next_piece(self) -> bytes:
        if self._ended:
            return b""
        try:
            return await self._pieces.__anext__()
        except StopAsyncIteration:
            self._ended = True
            return b""

    def at_end(self) -> bool:
        return self._ended

    async def aclose(self) -> None:
        await self.response.aclose()


def _buffered(content: Any) -> bytes:
    """What aiohttp's reader holds unread (its private buffer; empty if that changes)."""
    try:
        return bytes(content._read_nowait(-1)) if content._buffer else b""
    except (AttributeError, TypeError):
        return b""


def _stale_errors() -> tuple[type[BaseException], ...]:
    """aiohttp's errors for a connection that died before the answer's head."""
    if aiohttp is None:
        return ()
    names = ("ServerDisconnectedError", "ClientOSError", "ClientConnectionResetError")
    return tuple(getattr(aiohttp, name) for name in names if hasattr(aiohttp, name))


_STALE = _stale_errors()


class Sender(Protocol):
    async def open(self, url: str, content: bytes, headers: dict[str, str]) -> Answer:
        """POST ``content``; the answer's head read, its body not yet."""
        ...


class LeanSender:
    """POSTs with pawlette's lean HTTP/1.1 client (one pool per engine)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def open(self, url: str, content: bytes, headers: dict[str, str]) -> Answer:
        answer: Answer = await self.client.post(url, content, headers)
        return answer


@contextlib.asynccontextmanager
async def engine_sender(
    *,
    timeout: float,
    connect_timeout: float,
    max_connections: int,
    verify: ssl.SSLContext,
    keepalive_seconds: float = KEEPALIVE_SECONDS,
) -> AsyncIterator[Sender | None]:
    """The sender of :data:`CLIENT` for the server's lifetime; None for httpx (the caller's)."""
    options: dict[str, Any] = {
        "timeout": timeout,
        "connect_timeout": connect_timeout,
        "max_connections": max_connections,
        "verify": verify,
        "keepalive_seconds": keepalive_seconds,
    }
    if CLIENT == "lean":
        from .http1 import LeanClient  # http1 builds on this module's Answer

        client = LeanClient(**options)
        try:
            yield LeanSender(client)
        finally:
            client.close()
        return
    if CLIENT == "aiohttp":
        async with aiohttp_sender(**options) as sender:
            yield sender
        return
    yield None


class AiohttpSender:
    """POSTs with one aiohttp session (one pool of up to ``max_connections``)."""

    def __init__(self, session: Any, fresh: Any = None) -> None:
        self.session = session
        self.fresh = fresh
        """A session that opens a new connection for every request (the one retry)."""

    async def open(self, url: str, content: bytes, headers: dict[str, str]) -> AiohttpAnswer:
        """The answer's head read, its body not yet."""
        try:
            try:
                answer = await self.session.post(url, data=content, headers=headers)
            except _STALE as error:
                if isinstance(error, aiohttp.ClientConnectorError) or self.fresh is None:
                    raise
                # The connection died before any byte of the answer came: a pooled connection
                # the engine had closed as idle (the engine read nothing).  Once more, anew.
                answer = await self.fresh.post(url, data=content, headers=headers)
        except aiohttp.ClientConnectorError as error:
            raise httpx.ConnectError(str(error) or type(error).__name__) from error
        except asyncio.TimeoutError as error:  # aiohttp's connect and read timeouts both
            if isinstance(error, aiohttp.ConnectionTimeoutError):
                raise httpx.ConnectTimeout(str(error) or "connect timeout") from error
            raise httpx.ReadTimeout(str(error) or "no answer head") from error
        except (aiohttp.ClientError, OSError) as error:
            raise httpx.RemoteProtocolError(str(error) or type(error).__name__) from error
        return AiohttpAnswer(answer)


@contextlib.asynccontextmanager
async def aiohttp_sender(
    *,
    timeout: float,
    connect_timeout: float,
    max_connections: int,
    verify: ssl.SSLContext,
    keepalive_seconds: float = KEEPALIVE_SECONDS,
) -> AsyncIterator[AiohttpSender | None]:
    """An aiohttp sender for the server's lifetime, or None without aiohttp."""
    if aiohttp is None:
        yield None
        return
    # connect: the wait for a connection; sock_read: for each piece of the answer.
    client_timeout = aiohttp.ClientTimeout(total=None, connect=connect_timeout, sock_read=timeout)
    connector = aiohttp.TCPConnector(
        limit=max_connections, limit_per_host=0, ssl=verify, keepalive_timeout=keepalive_seconds
    )
    fresh_connector = aiohttp.TCPConnector(limit=0, ssl=verify, force_close=True)
    options: dict[str, Any] = {
        "timeout": client_timeout,
        # Engines stream events; compressed answers are decoded by aiohttp.
        "auto_decompress": True,
        "trust_env": False,  # the engine is reached directly, never through a proxy
    }
    session = aiohttp.ClientSession(connector=connector, **options)
    fresh = aiohttp.ClientSession(connector=fresh_connector, **options)
    async with session, fresh:
        yield AiohttpSender(session, fresh)
