"""``pawlette serve`` under load: concurrent streaming clients, through pawlette and direct.

Three processes on loopback: a fast scripted engine (``POST /v1/completions``, streaming
``--chunks`` pieces per request, each carrying the engine's send time), the pawlette server in
front of it, and this driver with ``--clients`` concurrent streaming clients (a minimal asyncio
HTTP/1.1 client, so the driver costs little CPU).  Every chunk's latency is its arrival time
minus the engine's send time (one machine, one monotonic clock).  Each phase runs against the
engine directly, then through pawlette, ``--requests`` requests per client:

- **throughput**: the engine sends its pieces back to back; requests/s is the result (under
  this load, pieces queue, and latencies measure the queue);
- **paced N ms**: the engine sends a piece every N ms per stream, like a model decoding, and
  the clients start spread over one request's duration (as independent users would); the
  added p50/p99 is pawlette's latency per chunk minus the direct one.  While the total chunk
  rate (clients x 1000 / N) stays under the server's capacity (the throughput phase's
  chunks/s), this is pawlette's own cost; above it, it is queueing.

The scripted engine samples nothing, so the driver passes the pacing in the request's
``temperature`` (seconds between pieces) and the chunk count in ``max_tokens``; pawlette
forwards both as it forwards any sampling field.

Errors (a non-200 answer, an error event, a stream without ``[DONE]``, a lost chunk) are
counted and must be 0.  Bounded loops, loopback only.

Usage: python bench/serve.py [--format pcml] [--clients 200] [--requests 3] [--chunks 16]
                             [--interval-ms 250 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

STAMP = re.compile(rb"T(\d+\.\d+)")


# ---------------------------------------------------------------------- the engine


async def _engine(port_file: str) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = json.loads(await reader.readexactly(length)) if length else {}
                if head.startswith(b"GET /v1/models"):
                    data = b'{"object": "list", "data": [{"id": "bench-model"}]}'
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                        b"content-length: %d\r\n\r\n%s" % (len(data), data)
                    )
                    continue
                chunks = int(body.get("max_tokens", 16))
                interval = float(body.get("temperature", 0.0))  # the driver's pacing, in s
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"transfer-encoding: chunked\r\n\r\n"
                )
                for number in range(chunks + 2):
                    if number < chunks:
                        if interval:
                            await asyncio.sleep(interval)
                        text = f"T{time.monotonic():.6f} "
                        payload = (
                            '{"id":"cmpl-1","object":"text_completion","choices":'
                            f'[{{"index":0,"text":"{text}","finish_reason":null}}]}}'
                        )
                    elif number == chunks:
                        payload = (
                            '{"id":"cmpl-1","object":"text_completion","choices":'
                            '[{"index":0,"text":"","finish_reason":"stop"}]}'
                        )
                    else:
                        payload = "[DONE]"
                    event = f"data: {payload}\n\n".encode()
                    writer.write(b"%x\r\n%s\r\n" % (len(event), event))
                    if interval:
                        await writer.drain()
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    with open(port_file, "w") as handle_file:
        handle_file.write(str(server.sockets[0].getsockname()[1]))
    async with server:
        await server.serve_forever()


# ---------------------------------------------------------------------- the client


@dataclass
class Results:
    latencies: list[float] = field(default_factory=list)
    requests: int = 0
    errors: int = 0
    first_error: str = ""


async def _client(
    port: int,
    path: bytes,
    body: bytes,
    requests: int,
    chunks: int,
    results: Results,
    delay: float,
) -> None:
    await asyncio.sleep(delay)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (
        b"POST %s HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n\r\n" % (path, len(body))
    )
    try:
        for _ in range(requests):
            writer.write(head + body)
            status = await reader.readuntil(b"\r\n\r\n")
            buffer = b""
            seen = 0
            done = False
            failed = not status.startswith(b"HTTP/1.1 200")
            while True:
                size = int((await reader.readuntil(b"\r\n"))[:-2], 16)
                data = await reader.readexactly(size + 2)
                if size == 0:
                    break
                now = time.monotonic()
                buffer += data[:-2]
                *events, buffer = buffer.split(b"\n\n")
                for event in events:
                    if event == b"data: [DONE]":
                        done = True
                    elif b'"error"' in event[:20]:
                        failed = True
                        results.first_error = results.first_error or event.decode()[:300]
                    for stamp in STAMP.finditer(event):
                        results.latencies.append(now - float(stamp.group(1)))
                        seen += 1
            if failed or not done or seen != chunks:
                results.errors += 1
                results.first_error = results.first_error or (
                    f"status {status[:40]!r}, done={done}, chunks {seen}/{chunks}"
                )
            results.requests += 1
    finally:
        writer.close()


async def _load(
    port: int, direct: bool, clients: int, requests: int, chunks: int, interval: float
) -> tuple[Results, float]:
    if direct:
        path = b"/v1/completions"
        request = {"prompt": "x", "max_tokens": chunks, "temperature": interval, "stream": True}
    else:
        path = b"/v1/chat/completions"
        request = {
            "model": "bench-model",
            "messages": [{"role": "user", "content": "Count for me."}],
            "max_tokens": chunks,
            "temperature": interval,
            "stream": True,
        }
    body = json.dumps(request).encode()
    results = Results()
    started = time.monotonic()
    # Paced clients start spread over one request's duration, as independent users would;
    # started together they would move in lockstep, every request start at the same moment.
    spread = chunks * interval
    await asyncio.gather(
        *(
            _client(port, path, body, requests, chunks, results, spread * number / clients)
            for number in range(clients)
        )
    )
    return results, time.monotonic() - started


# ---------------------------------------------------------------------- the driver


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(predicate: Callable[[], object], what: str, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise SystemExit(f"bench/serve.py: {what} did not start")


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""


def _healthy(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            return sock.recv(100).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc; 0 elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _uvicorn_kind() -> str:
    """What uvicorn's ``auto`` picks here: httptools and uvloop when installed, else h11."""
    try:
        import httptools  # noqa: F401
    except ImportError:
        return "h11 (asyncio loop)"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "httptools (asyncio loop)"
    return "httptools (uvloop)"


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", default="pcml")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--requests", type=int, default=3, help="per client, phase and target")
    parser.add_argument("--chunks", type=int, default=16, help="per completion")
    parser.add_argument(
        "--interval-ms",
        type=float,
        nargs="*",
        default=[250.0, 50.0],
        help="pacing of the latency phases, ms between chunks (default: 250 50)",
    )
    parser.add_argument("--role", choices=["driver", "engine"], default="driver")
    parser.add_argument("--port-file")
    arguments = parser.parse_args()
    if arguments.role == "engine":
        asyncio.run(_engine(arguments.port_file))
        return 0

    port_file = f"/tmp/pawlette-bench-engine-{os.getpid()}"
    engine = subprocess.Popen(
        [sys.executable, __file__, "--role", "engine", "--port-file", port_file]
    )
    server: subprocess.Popen[bytes] | None = None
    try:
        _wait_for(lambda: _read(port_file), "the engine")
        engine_port = int(_read(port_file))
        server_port = _free_port()
        code = (
            "from pawlette.serve.config import ServeConfig, run_config; import sys; "
            f"sys.exit(run_config(ServeConfig(format={arguments.format!r}, "
            f"upstream='http://127.0.0.1:{engine_port}', port={server_port}, "
            "log_level='warning')))"
        )
        server = subprocess.Popen([sys.executable, "-c", code])
        _wait_for(lambda: _healthy(server_port), "the pawlette server")

        rows = []
        phases = [("throughput", 0.0)] + [
            (f"paced {interval:g} ms", interval / 1000) for interval in arguments.interval_ms
        ]
        for phase, interval in phases:
            for target, port in (("direct", engine_port), ("pawlette", server_port)):
                cpu_before = _cpu_seconds(server.pid)
                results, seconds = asyncio.run(
                    _load(
                        port,
                        target == "direct",
                        arguments.clients,
                        arguments.requests,
                        arguments.chunks,
                        interval,
                    )
                )
                if results.first_error:
                    print(f"{phase}/{target}: first error: {results.first_error}", file=sys.stderr)
                cpu = _cpu_seconds(server.pid) - cpu_before
                rows.append((phase, target, results, seconds, cpu))
    finally:
        for process in (server, engine):
            if process is not None:
                process.terminate()
                process.wait(10)
        if os.path.exists(port_file):
            os.remove(port_file)

    print(
        f"\npawlette serve -f {arguments.format}: {arguments.clients} concurrent streaming "
        f"clients x {arguments.requests} requests x {arguments.chunks} chunks per phase and "
        f"target; {os.cpu_count()} CPUs; uvicorn http={_uvicorn_kind()}\n"
    )
    header = (
        f"{'phase':<15}{'target':<10}{'requests':>9}{'req/s':>8}{'chunks/s':>10}"
        f"{'p50 ms':>9}{'p99 ms':>9}{'added p50':>11}{'added p99':>11}{'cpu us/chunk':>14}"
        f"{'errors':>8}"
    )
    print(header)
    print("-" * len(header))
    direct: dict[str, tuple[float, float]] = {}
    total_errors = 0
    for phase, target, results, seconds, cpu in rows:
        p50 = _quantile(results.latencies, 0.50) * 1000
        p99 = _quantile(results.latencies, 0.99) * 1000
        total_errors += results.errors
        if target == "direct":
            direct[phase] = (p50, p99)
            added = f"{'':>11}{'':>11}{'':>14}"
        else:
            chunk_cpu = cpu / max(1, len(results.latencies)) * 1e6
            added = (
                f"{p50 - direct[phase][0]:>+11.2f}{p99 - direct[phase][1]:>+11.2f}"
                f"{chunk_cpu:>14.0f}"
            )
        print(
            f"{phase:<15}{target:<10}{results.requests:>9}{results.requests / seconds:>8.0f}"
            f"{len(results.latencies) / seconds:>10.0f}{p50:>9.2f}{p99:>9.2f}{added}"
            f"{results.errors:>8}"
        )
    print(
        "\nadded: pawlette's latency per chunk minus the direct one; cpu: the pawlette server's "
        "CPU time per chunk delivered"
    )
    print(f"errors: {total_errors}")
    return 1 if total_errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
