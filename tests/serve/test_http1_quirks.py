"""An outsider's audit of the lean engine client (serve/http1.py, serve/http1_response.py) and
the SSE reader (serve/sse.py) against quirky engines, with httpx's parser (h11) and the
event-stream spec as the references.

Each test here failed before its fix:

- a head whose lines end in LF (or a mix of LF and CRLF) was cut at the first CRLF CRLF,
  which a chunked body holds (its last line): a 502 where httpx and aiohttp read the answer,
  or, with no CRLF CRLF anywhere, a wait for the timeout (504);
- a chunk size with 16 or more digits (leading zeros) was refused (aiohttp reads it);
- idle pooled connections stayed open until the next request found them stale (an engine
  that keeps idle connections kept every connection of the last burst);
- a request waiting for a pool slot that was woken and cancelled in the same turn of the
  loop took the wake with it: the next waiter slept while a connection sat idle;
- a lone CR (the spec's third line end) and a ``data`` line without a colon were misread.
"""

from __future__ import annotations

import asyncio
import json
import re
import ssl
import time
from collections.abc import Iterator

import h11
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.export.grammar import grammar_formats
from pawlette.serve.config import ServeConfig
from pawlette.serve.http1 import EngineClient
from pawlette.serve.http1_response import ResponseParser
from pawlette.serve.sse import SSEDecoder
from pawlette.serve.transport import EngineInvalid

from .conftest import LiveServer
from .raw_engine import RawEngine, answer, chunked, events, piece

HELLO = events(piece("Hel"), piece("lo"), piece(" world", "stop"), b"[DONE]")


def parse(data: bytes, splits: list[int]) -> tuple[int, bytes, bool]:
    """Our parser fed ``data`` cut at ``splits``; the connection closed at the end if the
    answer is not done: (status, body, done)."""
    parser = ResponseParser()
    body = b""
    for start, end in zip([0, *splits], [*splits, len(data)], strict=True):
        body += parser.feed(data[start:end])
    if not parser.done:
        body += parser.close()
    return parser.status, body, parser.done


def parse_h11(data: bytes, splits: list[int]) -> tuple[int, bytes, bool]:
    """The same through h11 (httpx's HTTP/1.1 parser), the reference."""
    connection = h11.Connection(h11.CLIENT)
    connection.send(h11.Request(method="POST", target="/", headers=[("host", "x")]))
    connection.send(h11.EndOfMessage())
    status, body, ended = 0, b"", False
    for start, end in zip([0, *splits, len(data)], [*splits, len(data), len(data)], strict=True):
        connection.receive_data(data[start:end])  # the last, empty: the connection closed
        while not ended:
            event = connection.next_event()
            if event is h11.NEED_DATA or isinstance(event, h11.ConnectionClosed):
                break
            if isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                ended = True
    return status, body, ended


def test_a_head_in_lf_lines_then_a_chunked_body() -> None:
    body = chunked([HELLO[:20], HELLO[20:]])  # ends in CRLF CRLF
    for head in (
        b"HTTP/1.1 200 OK\ntransfer-encoding: chunked\n\n",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\n\r\n",
        b"HTTP/1.1 200 OK\ntransfer-encoding: chunked\r\n\n",
    ):
        data = head + body
        for split in range(len(data) + 1):
            assert parse(data, [split]) == (200, HELLO, True), (head, split)
    # No CRLF CRLF anywhere: the head was never found (the client waited for its timeout).
    data = b"HTTP/1.1 200 OK\r\ncontent-length: 2\n\r\nok"
    assert parse(data, []) == (200, b"ok", True)


def test_chunk_sizes_with_leading_zeros_hex_case_and_extensions() -> None:
    for size in (b"%x", b"%X", b"0%x", b"0000000000000000000%X", b"%x;name=value; flag"):
        data = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + chunked(
            [HELLO[:7], HELLO[7:8], HELLO[8:]], size=size
        )
        assert parse(data, list(range(1, len(data)))) == (200, HELLO, True), size
    with pytest.raises(EngineInvalid, match="not a chunk size"):
        parse(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1000000000000000\r\n", [])


@st.composite
def quirky_answers(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    """An answer with any mix of line ends in its head, interim answers, chunk sizes with
    extensions and leading zeros, trailers, a body holding blank lines; cut anywhere."""
    body = draw(st.binary(max_size=60)) + draw(st.sampled_from([b"", b"\r\n\r\n", b"\n\n"]))
    lines = [b"HTTP/1.1 %d %s" % (draw(st.sampled_from([200, 400, 503])), b"Reason")]
    if draw(st.booleans()):
        lines = [b"HTTP/1.1 100 Continue", b"", *lines]
    lines += [b"x-h%d: v" % number for number in range(draw(st.integers(0, 3)))]
    framing = draw(st.sampled_from(["chunked", "length", "close"]))
    if framing == "chunked":
        lines.append(b"Transfer-Encoding: " + draw(st.sampled_from([b"chunked", b"Chunked"])))
        payload = b""
        position = 0
        while position < len(body):
            part = body[position : position + draw(st.integers(1, 25))]
            position += len(part)
            size = draw(st.sampled_from([b"%x", b"%X", b"00%x", b"%x;a=b", b"%x; q"]))
            payload += size % len(part) + b"\r\n" + part + b"\r\n"
        payload += b"0\r\n" + draw(st.sampled_from([b"", b"t: 1\r\n"])) + b"\r\n"
    elif framing == "length":
        lines.append(b"Content-Length: %d" % len(body))
        payload = body
    else:
        lines.append(b"Connection: close")
        payload = body
    ends = draw(st.lists(st.sampled_from([b"\r\n", b"\n"]), min_size=len(lines) + 1))
    head = b"".join(line + end for line, end in zip(lines, ends, strict=False))
    data = head + ends[len(lines)] + payload
    splits = sorted(set(draw(st.lists(st.integers(1, max(1, len(data) - 1)), max_size=5))))
    return data, splits


@settings(max_examples=150, deadline=None)
@given(quirky_answers())
def test_the_answer_parser_reads_what_h11_reads(case: tuple[bytes, list[int]]) -> None:
    data, splits = case
    assert parse(data, splits) == parse_h11(data, splits)


# ------------------------------------------------------------------------------ SSE


def spec_events(data: bytes) -> list[str]:
    """The data of each event per the event-stream spec (lines end in CRLF, LF or CR; a
    field name alone has an empty value), and an event left open at the end dispatched
    (pawlette's leniency)."""
    lines = re.split(r"\r\n|\r|\n", data.decode("utf-8", "replace"))
    found: list[str] = []
    values: list[str] | None = None
    for number, line in enumerate(lines):
        if not line and number < len(lines) - 1:
            if values is not None:
                found.append("\n".join(values))
                values = None
            continue
        name, _, value = line.partition(":")
        if name == "data":
            value = value.removeprefix(" ")
            values = [value] if values is None else [*values, value]
    if values is not None:
        found.append("\n".join(values))
    return found


def decoded(data: bytes, splits: list[int]) -> list[str]:
    decoder = SSEDecoder()
    found: list[str] = []
    for start, end in zip([0, *splits], [*splits, len(data)], strict=True):
        found += decoder.feed(data[start:end])
    return found + decoder.finish()


def test_sse_line_ends_and_bare_fields() -> None:
    crlf = HELLO.replace(b"\n", b"\r\n")
    lone_cr = HELLO.replace(b"\n", b"\r")
    payloads = [json.dumps(piece("Hel")), json.dumps(piece("lo")), "", "[DONE]"]
    payloads[2] = json.dumps(piece(" world", "stop"))
    for data in (HELLO, crlf, lone_cr):
        for split in range(len(data) + 1):
            assert decoded(data, [split]) == payloads, (data[:20], split)
    # A field name alone is an empty value; a CR inside a line ends it (not part of the value).
    assert decoded(b"data\ndata: x\n\ndata: a\r: comment\rdata: b\r\r", []) == ["\nx", "a\nb"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["data: ", "data:", "data:  ", "data", ": c", "event: e", "id: 1", ""]),
            st.sampled_from(['{"a": 1}', "x y", "", "é€😀", "[DONE]"]),
            st.sampled_from(["\n", "\r\n", "\r"]),
        ),
        max_size=8,
    ),
    st.lists(st.integers(1, 200), max_size=5),
)
def test_the_sse_reader_follows_the_spec(
    lines: list[tuple[str, str, str]], splits: list[int]
) -> None:
    data = "".join(
        field + (value if field not in ("", "data") else "") + end for field, value, end in lines
    ).encode()
    cuts = sorted({split for split in splits if split < len(data)})
    assert decoded(data, cuts) == spec_events(data)


# ------------------------------------------------------------------------------ the pool


def lean(keepalive_seconds: float = 2.0, max_connections: int = 8) -> EngineClient:
    return EngineClient(
        timeout=5,
        connect_timeout=2,
        max_connections=max_connections,
        verify=ssl.create_default_context(),
        keepalive_seconds=keepalive_seconds,
    )


def test_idle_connections_are_closed_after_keepalive_without_another_request() -> None:
    engine = RawEngine()
    ok = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
    try:

        async def work() -> None:
            http = lean(keepalive_seconds=0.2)
            engine.plays.extend(answer(ok) for _ in range(3))
            answers = await asyncio.gather(*(http.post(engine.url, b"{}", {}) for _ in range(3)))
            assert [await each.read() for each in answers] == [b"ok"] * 3
            assert http.count == 3
            for _ in range(100):  # the sweep comes 0.2 s after the last use
                if http.count == 0 and engine.open == 0:
                    break
                await asyncio.sleep(0.05)
            assert (http.count, engine.open) == (0, 0)
            engine.plays.append(answer(ok))  # and the pool works on
            assert await (await http.post(engine.url, b"{}", {})).read() == b"ok"
            http.close()

        asyncio.run(work())
    finally:
        engine.stop()


def test_a_waiter_woken_then_cancelled_passes_the_wake_on() -> None:
    engine = RawEngine()

    async def held(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(0.3)  # the body comes later: the one connection stays busy
        writer.write(b"ok")
        await writer.drain()
        return True

    ok = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
    engine.plays.extend([held, answer(ok), answer(ok)])
    try:

        async def work() -> None:
            http = lean(max_connections=1)
            first = await http.post(engine.url, b"{}", {})
            second = asyncio.ensure_future(http.post(engine.url, b"{}", {}))
            third = asyncio.ensure_future(http.post(engine.url, b"{}", {}))
            while len(http.waiters) < 2:
                await asyncio.sleep(0)
            woken = http.waiters[0]
            reading = asyncio.ensure_future(first.read())
            while not woken.done():  # the body came: the connection is back, the second woken
                await asyncio.sleep(0)
            second.cancel()  # before it ran: its client went away
            assert await reading == b"ok"
            third_answer = await asyncio.wait_for(third, 3)  # it slept for good before the fix
            assert await third_answer.read() == b"ok"
            assert second.cancelled()
            http.close()

        asyncio.run(work())
    finally:
        engine.stop()


# ------------------------------------------------------------------------------ the server


@pytest.fixture(scope="module")
def quirky() -> Iterator[RawEngine]:
    engine = RawEngine()
    yield engine
    engine.stop()


@pytest.fixture(scope="module")
def server(quirky: RawEngine) -> Iterator[LiveServer]:
    live = LiveServer(ServeConfig(format="pcml", upstream=quirky.url, model="m", timeout=2))
    yield live
    live.stop()


SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
QUIRKS = {
    "LF-only head, chunked": b"HTTP/1.1 200 OK\ntransfer-encoding: chunked\n\n" + chunked([HELLO]),
    "mixed line ends in the head": b"HTTP/1.1 200 OK\r\ncontent-length: %d\n\r\n" % len(HELLO)
    + HELLO,
    "chunk sizes with 16 leading zeros": SSE_HEAD
    + b"transfer-encoding: chunked\r\n\r\n"
    + chunked([HELLO[:9], HELLO[9:]], size=b"0000000000000000%x"),
    "CRLF events split at every byte": SSE_HEAD
    + b"transfer-encoding: chunked\r\n\r\n"
    + chunked([HELLO.replace(b"\n", b"\r\n")]),
    "lone-CR events": SSE_HEAD
    + b"content-length: %d\r\n\r\n" % len(HELLO)
    + HELLO.replace(b"\n", b"\r"),
}


@pytest.mark.parametrize("quirk", list(QUIRKS))
def test_the_server_streams_a_quirky_engines_answer(
    server: LiveServer, quirky: RawEngine, quirk: str
) -> None:
    quirky.plays.append(answer(QUIRKS[quirk], every_byte="every byte" in quirk))
    started = time.monotonic()
    response = httpx.post(
        server.url + "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "hi"}], "stream": True},
        timeout=20,
    )
    assert response.status_code == 200, response.text
    assert response.text.endswith("data: [DONE]\n\n"), response.text
    text = ""
    for line in response.text.split("\n"):
        if line.startswith("data: {"):
            for choice in json.loads(line[6:])["choices"]:
                text += choice["delta"].get("content") or ""
    assert text == "Hello world"
    assert time.monotonic() - started < 20  # answered, not timed out (a bound, not a speed)


def test_the_upstream_framing_fuzz_target_finds_nothing() -> None:
    """The bounded run of ``python -m bench.fuzz --targets upstream`` (every format's
    completions streamed with odd framing, read as the server reads them); it lost the end
    of the stream or the whole text before the fixes above."""
    from bench import fuzz

    targets = [target for target in fuzz.TARGETS if target.name == "upstream"]
    tallies = fuzz.run(targets, grammar_formats(), 60, 3)
    assert not any(sum((tally.counts or {}).values()) for tally in tallies.values()), fuzz.report(
        tallies
    )


def test_a_body_that_does_not_decode_is_an_error_not_a_hang() -> None:
    """A ``content-encoding: gzip`` body that is not gzip raised zlib's error out of the
    client's ``data_received``: asyncio closed the connection with the answer's parser done,
    nothing woke the reader, and the request waited forever (its read timer had stopped)."""
    head = b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\n"
    with pytest.raises(EngineInvalid, match="gzip body does not decode"):
        parse(head + b"content-length: 9\r\n\r\nnot gzip!", [])
    with pytest.raises(EngineInvalid, match="gzip body does not decode"):
        parse(head + b"connection: close\r\n\r\nnot gzip!", [])  # at the close
    engine = RawEngine()
    try:

        async def work() -> None:
            http = lean()
            for body in (b"content-length: 9\r\n\r\nnot gzip!", b"\r\nnot gzip!"):
                engine.plays.append(answer(head + body, close=body.startswith(b"\r\n")))
                response = await http.post(engine.url, b"{}", {})
                with pytest.raises(EngineInvalid):
                    await asyncio.wait_for(response.read(), 10)  # it hung here before
                await response.aclose()
            for _ in range(100):
                if engine.open == 0:
                    break
                await asyncio.sleep(0.05)
            assert (http.count, engine.open) == (0, 0)  # closed, not back in the pool
            http.close()

        asyncio.run(work())
    finally:
        engine.stop()
