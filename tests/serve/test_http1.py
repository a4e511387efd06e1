"""The engine client (serve/http1.py) and its answer parser (serve/http1_response.py)
against correct and hostile engines.

The parser is fed bodies split at every byte and at random places and must give the same
bytes; the client talks to scripted engines on loopback that split their chunks byte by
byte, drop the connection mid-answer, stay silent, answer a bad status, send a huge line, or
close a kept-alive connection when it is reused.
"""

from __future__ import annotations

import asyncio
import gzip
import ssl
from collections.abc import Awaitable, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.serve.http1 import EngineClient
from pawlette.serve.http1_response import MAX_HEAD_BYTES, ResponseParser
from pawlette.serve.transport import (
    EngineDisconnected,
    EngineInvalid,
    EngineSaturated,
    EngineTimeout,
    EngineTooLarge,
    EngineUnreachable,
)


def chunked(pieces: list[bytes], trailer: bytes = b"") -> bytes:
    body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces if piece)
    return body + b"0\r\n" + trailer + b"\r\n"


def head(extra: str) -> bytes:
    return ("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n" + extra + "\r\n").encode()


def parse(data: bytes, splits: list[int]) -> tuple[ResponseParser, bytes]:
    parser = ResponseParser()
    body = b""
    start = 0
    for end in [*sorted(splits), len(data)]:
        body += parser.feed(data[start:end])
        start = end
    return parser, body


EVENTS = [b'data: {"choices": [{"text": "h\xc3\xa9"}]}\n\n', b"data: [DONE]\n\n", b"x" * 300]


def test_a_chunked_body_split_at_every_byte() -> None:
    answer = head("transfer-encoding: chunked\r\n") + chunked(EVENTS, b"x-trailer: 1\r\n")
    for split in range(len(answer) + 1):
        parser, body = parse(answer, [split])
        assert body == b"".join(EVENTS) and parser.done and parser.keep_alive, split
    parser, body = parse(answer, list(range(len(answer))))  # one byte per read
    assert body == b"".join(EVENTS) and parser.done and parser.status == 200


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.binary(min_size=1, max_size=40), max_size=8),
    st.lists(st.integers(min_value=0, max_value=600), max_size=12),
    st.sampled_from(["chunked", "length", "close", "gzip"]),
)
def test_any_split_gives_the_same_body(pieces: list[bytes], splits: list[int], kind: str) -> None:
    whole = b"".join(pieces)
    if kind == "chunked":
        answer = head("transfer-encoding: chunked\r\n") + chunked(pieces)
    elif kind == "gzip":
        packed = gzip.compress(whole)
        answer = head(f"content-encoding: gzip\r\ncontent-length: {len(packed)}\r\n") + packed
    elif kind == "length":
        answer = head(f"content-length: {len(whole)}\r\n") + whole
    else:
        answer = head("connection: close\r\n") + whole
    parser, body = parse(answer, [split for split in splits if split <= len(answer)])
    if kind == "close":
        assert not parser.done and not parser.keep_alive
        body += parser.close()
    assert body == whole and parser.done


def test_framing_errors_and_edges() -> None:
    with pytest.raises(EngineInvalid, match="chunk size"):
        ResponseParser().feed(head("transfer-encoding: chunked\r\n") + b"zz\r\n")
    with pytest.raises(EngineInvalid, match="line end"):
        ResponseParser().feed(head("transfer-encoding: chunked\r\n") + b"1\r\nab\r\n")
    with pytest.raises(EngineInvalid, match="status line"):
        ResponseParser().feed(b"SSH-2.0-OpenSSH\r\n\r\n")
    with pytest.raises(EngineInvalid, match=r"head \(with its interim answers\) over"):
        ResponseParser().feed(b"HTTP/1.1 200 OK\r\nx: " + b"y" * MAX_HEAD_BYTES)
    with pytest.raises(EngineInvalid, match="encoded as 'br'"):
        ResponseParser().feed(head("content-encoding: br\r\ncontent-length: 0\r\n"))
    # An interim answer, then the answer; bytes after it make the connection not reusable.
    parser, body = parse(
        b"HTTP/1.1 100 Continue\r\n\r\n" + head("content-length: 2\r\n") + b"okX", []
    )
    assert (parser.status, body, parser.done, parser.keep_alive) == (200, b"ok", True, False)
    cut = ResponseParser()
    cut.feed(head("content-length: 9\r\n") + b"abc")
    with pytest.raises(EngineDisconnected, match="closed the connection in the middle of its"):
        cut.close()


# ---------------------------------------------------------------------------------- live

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[bool]]
"""An engine's answer to the request numbered so on its connection; False closes it."""


async def read_request(reader: asyncio.StreamReader) -> bytes | None:
    try:
        request_head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    length = int(request_head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
    return await reader.readexactly(length)


async def with_engine(handler: Handler, work: Callable[[str], Awaitable[None]]) -> int:
    """Run ``work(url)`` against an engine answering with ``handler``; the connections made."""
    connections = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        number = 0
        try:
            while await read_request(reader) is not None:
                if not await handler(reader, writer, number):
                    break
                number += 1
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        await work(f"http://127.0.0.1:{port}/v1/completions")
    return connections


def client(
    timeout: float = 5.0, max_connections: int = 8, max_answer_bytes: int | None = None
) -> EngineClient:
    return EngineClient(
        timeout=timeout,
        connect_timeout=2.0,
        max_connections=max_connections,
        verify=ssl.create_default_context(),
        keepalive_seconds=2.0,
        max_answer_bytes=max_answer_bytes,
    )


async def read_all(http: EngineClient, url: str) -> tuple[int, bytes]:
    answer = await http.post(url, b'{"stream": true}', {"content-type": "application/json"})
    try:
        return answer.status_code, await answer.read()
    finally:
        await answer.aclose()


async def byte_by_byte(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int
) -> bool:
    answer = head("transfer-encoding: chunked\r\n") + chunked(EVENTS)
    for index in range(len(answer)):
        writer.write(answer[index : index + 1])
        await writer.drain()
        if index % 50 == 0:
            await asyncio.sleep(0)
    return True


def test_a_kept_alive_connection_carries_answers_split_at_every_byte() -> None:
    async def work(url: str) -> None:
        http = client()
        for _ in range(3):
            assert await read_all(http, url) == (200, b"".join(EVENTS))
        http.close()

    assert asyncio.run(with_engine(byte_by_byte, work)) == 1  # one connection, reused


def test_concurrent_requests_share_a_bounded_pool() -> None:
    async def work(url: str) -> None:
        http = client(max_connections=2)
        answers = await asyncio.gather(*(read_all(http, url) for _ in range(7)))
        assert answers == [(200, b"".join(EVENTS))] * 7
        assert http.count <= 2
        http.close()

    assert asyncio.run(with_engine(byte_by_byte, work)) <= 2


def test_a_connection_dropped_mid_answer_delivers_what_came_then_fails() -> None:
    async def drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int) -> bool:
        writer.write(head("transfer-encoding: chunked\r\n") + b"%x\r\n%s\r\n" % (5, b"first"))
        writer.write(b"20\r\nonly part")
        await writer.drain()
        return False

    async def work(url: str) -> None:
        http = client()
        answer = await http.post(url, b"{}", {})
        assert answer.status_code == 200
        received = b""
        with pytest.raises(EngineDisconnected, match="closed the connection"):
            while piece := await answer.next_piece():
                received += piece
        assert received == b"firstonly part"
        await answer.aclose()
        http.close()

    asyncio.run(with_engine(drop, work))


def test_a_silent_engine_times_out_but_a_slow_one_does_not() -> None:
    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int) -> bool:
        writer.write(head("transfer-encoding: chunked\r\n"))
        for _ in range(6):  # a piece every 0.1 s: 0.6 s in all, each gap under the 0.3 s timeout
            await asyncio.sleep(0.1)
            writer.write(b"1\r\nx\r\n")
        if number == 0:
            writer.write(b"0\r\n\r\n")
            return True
        await asyncio.sleep(3)  # then silent
        return False

    async def work(url: str) -> None:
        http = client(timeout=0.3)
        assert await read_all(http, url) == (200, b"xxxxxx")
        with pytest.raises(EngineTimeout, match=r"nothing from the engine for 0\.3 s"):
            await read_all(http, url)
        http.close()

    asyncio.run(with_engine(slow, work))


def test_a_bad_status_and_a_huge_line() -> None:
    line = b"data: " + b"y" * 3_000_000 + b"\n\n"

    async def engine(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int
    ) -> bool:
        if number == 0:
            body = b'{"error": {"message": "overloaded"}}'
            writer.write(
                b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: %d\r\n\r\n" % len(body)
            )
            writer.write(body)
        else:
            writer.write(
                head("transfer-encoding: chunked\r\n")
                + chunked([line[:1_000_001], line[1_000_001:]])
            )
        await writer.drain()
        return True

    async def work(url: str) -> None:
        http = client()
        assert await read_all(http, url) == (503, b'{"error": {"message": "overloaded"}}')
        assert await read_all(http, url) == (200, line)
        http.close()

    assert asyncio.run(with_engine(engine, work)) == 1


def test_a_slow_reader_pauses_the_socket_and_the_connection_is_reused() -> None:
    body = bytes(range(256)) * 12_000  # 3 MB: over the unread bytes held before pausing

    async def engine(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int
    ) -> bool:
        writer.write(head(f"content-length: {len(body)}\r\n") + body)
        await writer.drain()
        return True

    async def work(url: str) -> None:
        http = client()
        for _ in range(2):
            answer = await http.post(url, b"{}", {})
            await asyncio.sleep(0.3)  # the engine writes on while nobody reads
            assert await answer.read() == body
            await answer.aclose()
        http.close()

    assert asyncio.run(with_engine(engine, work)) == 1


def test_a_reused_connection_the_engine_closed_is_retried_once_on_a_new_one() -> None:
    async def one_each(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int
    ) -> bool:
        if number == 1:
            return False  # the second request on a connection: closed unanswered
        writer.write(head("content-length: 2\r\n") + b"ok")
        await writer.drain()
        return True

    async def work(url: str) -> None:
        http = client()
        for _ in range(4):
            assert await read_all(http, url) == (200, b"ok")
        http.close()

    assert asyncio.run(with_engine(one_each, work)) >= 4


def test_a_new_connection_closed_unanswered_is_not_retried() -> None:
    async def never(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int
    ) -> bool:
        return False

    async def work(url: str) -> None:
        http = client()
        with pytest.raises(EngineDisconnected, match="closed the connection without answering"):
            await read_all(http, url)
        http.close()

    assert asyncio.run(with_engine(never, work)) == 1


def test_a_refused_connect() -> None:
    async def work() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        http = client()
        with pytest.raises(EngineUnreachable, match="cannot connect") as refused:
            await read_all(http, f"http://127.0.0.1:{port}/v1/completions")
        assert http.count == 0
        http.close()
        # The message reaches clients: no address in it (asyncio's loop, unlike uvloop, writes
        # the address into the system's error: "Connect call failed ('127.0.0.1', PORT)").
        message = str(refused.value)
        assert "refused" in message.lower(), message
        assert "127.0.0.1" not in message and str(port) not in message, message

    asyncio.run(work())


# ------------------------------------------------------------------ bounds (each failed before)


def test_a_big_answer_stops_at_max_answer_bytes() -> None:
    """A 300 MB answer was read whole (1.26 GB for the worker); it stops at the bound."""
    whole = b"x" * 5_000_000

    async def engine(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(head(f"content-length: {len(whole)}\r\n"))
        for start in range(0, len(whole), 65536):
            writer.write(whole[start : start + 65536])
            try:
                await writer.drain()
            except ConnectionError:
                return False
        return True

    async def work(url: str) -> None:
        http = client(max_answer_bytes=1_000_000)
        answer = await http.post(url, b"{}", {})
        with pytest.raises(EngineTooLarge, match="over 1000000 bytes"):
            await answer.read()
        await answer.aclose()
        assert http.count == 0  # the connection is closed, not reused
        http.close()

    asyncio.run(with_engine(engine, work))


def test_a_gzip_bomb_is_inflated_no_further_than_the_bound() -> None:
    """1 MB of gzip that inflates to 1 GiB cost 3.1 GB and froze the worker for 10.8 s: the
    body is inflated no further than the bound, whatever it would inflate to."""
    bomb = gzip.compress(b"\0" * (64 << 20), 9)  # 64 MiB of zeros in about 64 KB

    def parse_bomb(splits: list[int]) -> None:
        data = head(f"content-encoding: gzip\r\ncontent-length: {len(bomb)}\r\n") + bomb
        parser = ResponseParser(max_body=1 << 20)
        received = 0
        with pytest.raises(EngineTooLarge):
            for start, end in zip([0, *splits], [*splits, len(data)], strict=True):
                received += len(parser.feed(data[start:end]))
        assert received <= 1 << 20
        assert parser.body_bytes <= (1 << 20) + 1

    parse_bomb([])  # the whole bomb in one read
    parse_bomb(list(range(200, 60_000, 4_096)))
    # Under the bound a gzip body still comes out whole.
    small = gzip.compress(b"y" * 100_000)
    parser, body = parse(
        head(f"content-encoding: gzip\r\ncontent-length: {len(small)}\r\n") + small, []
    )
    assert body == b"y" * 100_000 and parser.done


def test_a_head_trickled_a_line_at_a_time_or_endless_interim_answers_time_out() -> None:
    """The timeout counted only silences: a head sent a line every 0.1 s, or a 103 answer
    every 0.1 s, never reached it.  The head now has a deadline."""

    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        if n == 0:
            writer.write(b"HTTP/1.1 200 OK\r\n")
            line = b"x-slow: 1\r\n"
        else:
            line = b"HTTP/1.1 103 Early Hints\r\n\r\n"
        for _ in range(40):
            await asyncio.sleep(0.1)
            try:
                writer.write(line)
                await writer.drain()
            except ConnectionError:
                return False
        return False

    async def work(url: str) -> None:
        http = client(timeout=0.5)
        for _ in range(2):
            with pytest.raises(EngineTimeout, match=r"no answer head within 0\.5 s"):
                await asyncio.wait_for(read_all(http, url), 3)  # it waited 4 s and more before
        http.close()

    asyncio.run(with_engine(trickle, work))


def test_a_flood_of_interim_answers_is_refused_as_one_long_head() -> None:
    flood = b"HTTP/1.1 100 Continue\r\n\r\n" * 3000 + head("content-length: 2\r\n") + b"ok"
    with pytest.raises(EngineInvalid, match="interim answers"):
        parse(flood, list(range(0, len(flood), 1000)))


def test_a_request_waiting_for_a_busy_pool_waits_no_longer_than_the_timeout() -> None:
    """With every connection held (by clients that read nothing), another request waited for a
    free one as long as they held it (40 s and more with --timeout 5)."""

    async def held(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(head("transfer-encoding: chunked\r\n") + chunked([b"a"])[:-5])
        await writer.drain()
        await asyncio.sleep(5)
        return False

    async def work(url: str) -> None:
        http = client(timeout=0.4, max_connections=1)
        first = await http.post(url, b"{}", {})
        assert await first.next_piece() == b"a"
        with pytest.raises(EngineSaturated, match="stayed busy"):
            await asyncio.wait_for(http.post(url, b"{}", {}), 3)
        await first.aclose()
        http.close()

    asyncio.run(with_engine(held, work))


def test_an_answer_framed_twice_is_read_by_chunks_and_its_connection_not_reused() -> None:
    """An answer with both content-length and chunked framing may smuggle a second answer
    after it (RFC 9112 6.3): its connection was put back in the pool and reused."""

    async def twice(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(
            head("content-length: 3\r\ntransfer-encoding: chunked\r\n") + chunked([b"abc", b"de"])
        )
        await writer.drain()
        return True

    async def work(url: str) -> None:
        http = client()
        for _ in range(3):
            assert await read_all(http, url) == (200, b"abcde")
        http.close()

    assert asyncio.run(with_engine(twice, work)) == 3  # a new connection each time
