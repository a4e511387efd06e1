"""The client that sends completion requests to the engines: aiohttp when installed, else httpx.

Chosen by measurement (``python -m bench.serve --stacks``, README): a bare pass-through proxy
spends about a third of the CPU per streamed chunk with an aiohttp client that it spends with
httpx (httpx's pool, httpcore and anyio layers run per read).  The rest of the server keeps
httpx's types: an aiohttp answer is handed over as an ``httpx.Response`` whose body streams
from aiohttp, and aiohttp's failures are raised as the httpx exceptions they correspond to
(a refused connect is ``httpx.ConnectError``, a silent engine ``httpx.ReadTimeout``, a broken
stream ``httpx.ReadError``), so error answers do not depend on the client.  Discovery and
health probes (rare) stay on httpx.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx

try:
    import aiohttp
except ImportError:  # the serve extra installs it; httpx alone still works
    aiohttp = None  # type: ignore[assignment]


class AiohttpSender:
    """POSTs with one aiohttp session (one pool of up to ``max_connections``)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        # An httpx.Request parses its URL (about 20 µs): one per replica, shared by answers
        # (the server reads only its URL).
        self._requests: dict[str, httpx.Request] = {}

    async def open(self, url: str, content: bytes, headers: dict[str, str]) -> httpx.Response:
        """The answer's head read, its body not yet: an ``httpx.Response`` streaming it."""
        try:
            answer = await self.session.post(url, data=content, headers=headers)
        except aiohttp.ClientConnectorError as error:
            raise httpx.ConnectError(str(error) or type(error).__name__) from error
        except asyncio.TimeoutError as error:  # aiohttp's connect and read timeouts both
            if isinstance(error, aiohttp.ConnectionTimeoutError):
                raise httpx.ConnectTimeout(str(error) or "connect timeout") from error
            raise httpx.ReadTimeout(str(error) or "no answer head") from error
        except (aiohttp.ClientError, OSError) as error:
            raise httpx.RemoteProtocolError(str(error) or type(error).__name__) from error
        return httpx.Response(
            answer.status,
            headers=[
                (key.decode("latin-1"), value.decode("latin-1"))
                for key, value in answer.raw_headers
            ],
            stream=_Body(answer),
            request=self._request(url),
        )

    def _request(self, url: str) -> httpx.Request:
        request = self._requests.get(url)
        if request is None:
            request = self._requests[url] = httpx.Request("POST", url)
        return request


class _Body(httpx.AsyncByteStream):
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def __aiter__(self) -> AsyncIterator[bytes]:
        content = self.answer.content
        while True:
            try:
                piece = await content.readany()
            except asyncio.TimeoutError as error:
                raise httpx.ReadTimeout(str(error) or "no data") from error
            except (aiohttp.ClientError, OSError) as error:
                # aiohttp raises a dead connection's error before the data that arrived
                # ahead of it (still in its buffer): deliver that data first, as httpx does.
                rest = _buffered(content)
                if rest:
                    yield rest
                raise httpx.ReadError(str(error) or type(error).__name__) from error
            if not piece:
                return
            yield piece

    async def aclose(self) -> None:
        answer = self.answer
        if answer.content.at_eof():
            answer.release()  # read to the end: the connection goes back to the pool
        else:
            answer.close()  # cut short: close the connection, which cancels the engine's work


def _buffered(content: Any) -> bytes:
    """What aiohttp's reader holds unread (its private buffer; empty if that changes)."""
    try:
        return bytes(content._read_nowait(-1)) if content._buffer else b""
    except (AttributeError, TypeError):
        return b""


@contextlib.asynccontextmanager
async def aiohttp_sender(
    *, timeout: float, connect_timeout: float, max_connections: int, verify: ssl.SSLContext
) -> AsyncIterator[AiohttpSender | None]:
    """An aiohttp sender for the server's lifetime, or None without aiohttp."""
    if aiohttp is None:
        yield None
        return
    connector = aiohttp.TCPConnector(limit=max_connections, limit_per_host=0, ssl=verify)
    session = aiohttp.ClientSession(
        connector=connector,
        # connect: the wait for a connection; sock_read: for each piece of the answer.
        timeout=aiohttp.ClientTimeout(total=None, connect=connect_timeout, sock_read=timeout),
        auto_decompress=False,  # the httpx.Response decodes, as it reads content-encoding
        trust_env=False,  # the engine is reached directly, never through a proxy
    )
    async with session:
        yield AiohttpSender(session)
