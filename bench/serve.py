"""``pawlette serve`` under load: concurrent streaming clients through pawlette, through a bare
pass-through proxy, and direct to the engine; one and two worker processes.

Processes on loopback: a fast scripted engine (``POST /v1/completions``, streaming ``--chunks``
pieces per request, each carrying the engine's send time), the servers in front of it, and
this driver with ``--clients`` concurrent streaming clients (a minimal asyncio HTTP/1.1
client, so the driver costs little CPU).  Every chunk's latency is its arrival time minus the
engine's send time (one machine, one monotonic clock).  The targets:

- ``direct``: the engine itself (the floor);
- ``proxy``: a bare pass-through proxy over the same engine (uvicorn, Starlette, an aiohttp
  client), relaying the engine's bytes without parsing them: what any Python server in front
  costs;
- ``proxy asgi``: the same relay as a plain ASGI app, no Starlette on the request's path
  (pawlette serves its chat route that way, serve/asgi.py): the leaner floor;
- ``proxy httpx`` (with ``--stacks``): the Starlette proxy with httpx instead of aiohttp;
- ``pawlette``: ``pawlette serve`` as it runs (uvicorn with the guarded httptools protocol,
  serve/inbound.py, and uvloop; its own HTTP/1.1 client to the engine, serve/http1.py;
  orjson reading the engine's events), and with ``--stacks`` also on uvicorn's httptools
  protocol without the bounds (``pawlette unguarded``: what the guard costs), on h11 and
  asyncio's loop (``pawlette h11``: h11 bounds the head itself, 16 KiB), reading JSON with
  ``json`` (``pawlette json``), and a projection, ``pawlette lexer cached``: the parsers'
  lexer tables built once per format (patched in), not a configuration one can choose;
- ``pawlette baseline`` (with ``--baseline-src DIR``): pawlette from another source tree,
  e.g. the commit before a change, interleaved with the current one like every target; with
  ``--baseline-clients`` also that tree with its aiohttp and httpx engine clients
  (``pawlette baseline aiohttp``/``httpx``; 1dcafa3 had three clients);
- ``... x2``: two worker processes on one port (``SO_REUSEPORT``; ``pawlette x2 shared``:
  one shared listening socket, as uvicorn's ``--workers`` does).

A "chunk" is one of the engine's pieces (a token, for a real engine), counted by the stamp
it carries wherever it arrives: pawlette joins the pieces that came in one read from the
engine into one OpenAI chunk, so it sends fewer, larger events than it receives.

Phases:

- **throughput**: the engine sends its pieces back to back; chunks/s is the result, and the
  servers' CPU time per chunk (user + system, from ``/proc`` for the server process and its
  workers); ``--rounds`` rounds, the targets in a different order each round (sides
  interleaved: the machine's other load falls on every side alike), the median round kept;
- **paced N ms** (direct, proxy, pawlette, and the baseline and aiohttp variants when run):
  the engine sends a piece every N ms per stream,
  like a model decoding, and the clients start spread over one request's duration; the added
  p50/p99 is the target's latency per chunk minus the direct one, and the CPU per chunk is
  the cost where every engine event arrives in a read of its own (a chunk per token).

The scripted engine samples nothing, so the driver passes the pacing in the request's
``temperature`` (seconds between pieces) and the chunk count in ``max_tokens``; pawlette
forwards both as it forwards any sampling field.  The load average is printed with every row:
the machine may be shared.

Errors (a non-200 answer, an error event, a stream without ``[DONE]``, a lost chunk) are
counted and must be 0.  Bounded loops, loopback only.

Usage, from the repository root: python -m bench.serve [--format pcml] [--clients 50]
    [--requests 16] [--chunks 16] [--rounds 3] [--interval-ms 250] [--stacks]
    [--no-workers] [--baseline-src DIR [--baseline-clients]]

**The engine client, chosen by this benchmark.**  One client talks to the engines: a library
unless a table here shows pawlette's own is needed.  It does: with aiohttp the server spends
1.4x the CPU per streamed chunk, which puts it 1.4x over the Starlette proxy (the goal is
within 1.1x), and with httpx 4.2x.  Two runs at 1dcafa3, which had all three clients (the
median of the rounds; 2 cores, load average 1.4-2.8; CPU µs per chunk, user + system):

| run | proxy (aiohttp) | pawlette, own client | pawlette, aiohttp | pawlette, httpx |
|---|---:|---:|---:|---:|
| ``--stacks --no-workers``, 3 rounds | 38 | 37 | 53 | 156 |
| ``--aiohttp --no-workers``, 5 rounds | 38 | 38 | 53 | |
| paced 250 ms, 3 rounds | 247 | 288 | 303 | |

(own / aiohttp: 0.70x and 0.72x the CPU per chunk, 1.28x the chunks/s in both runs; paced,
where every token is a read of its own for both, 0.95x.)  aiohttp 3.14.5 also hangs on a
malformed chunk size in the middle of a body (its C parser drops the payload's error, and
the read waits for the request's total timeout), which pawlette's client reports at once.
Re-run: ``python -m bench.serve --no-workers --baseline-src DIR --baseline-clients`` with
DIR holding 1dcafa3's ``src`` (``git archive 1dcafa3 src | tar -x -C DIR``).

**The inbound stack, chosen by this benchmark.**  uvicorn's httptools protocol sets no bound
on a request's head, so pawlette runs it guarded (serve/inbound.py: head size and time,
keep-alive, body time, stalled readers, a connection cap); uvicorn's h11 protocol bounds the
head itself.  ``--stacks --no-workers --interval-ms`` (throughput only, 3 rounds, the median
kept; load average 11.5 on 2 cores, so chunks/s varied 3x between rounds and only the CPU per
chunk is read here; CPU µs per chunk, user + system):

| pawlette, guarded httptools | unguarded httptools | h11 (asyncio loop) | proxy (aiohttp) |
|---:|---:|---:|---:|
| 27 | 23 | 35 | 28 |

The bounds cost 1.17x the CPU per chunk of bare httptools; h11 would cost 1.30x the guarded
httptools, so the guarded httptools protocol stays.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
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
    port: int, completions: bool, clients: int, requests: int, chunks: int, interval: float
) -> tuple[Results, float]:
    if completions:
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


# ---------------------------------------------------------------------- the proxy


def _proxy(engine_port: int, port: int, client_kind: str, reuse_port: bool, bare: bool) -> None:
    """A bare pass-through proxy: ``POST /v1/completions`` relayed to the engine, bytes as
    they come, nothing parsed (the floor for any Python server in the same stacks)."""
    import contextlib

    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    url = f"http://127.0.0.1:{engine_port}/v1/completions"
    headers = {"content-type": "application/json"}
    clients: list[object] = []
    turn = [0]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):  # type: ignore[no-untyped-def]
        async with contextlib.AsyncExitStack() as stack:
            if client_kind == "httpx":
                import httpx

                # As pawlette: several small pools (httpcore's pool bookkeeping is quadratic).
                limits = httpx.Limits(max_connections=32, max_keepalive_connections=32)
                for _ in range(32):
                    client = httpx.AsyncClient(limits=limits, timeout=600, trust_env=False)
                    clients.append(await stack.enter_async_context(client))
            else:
                import aiohttp

                connector = aiohttp.TCPConnector(limit=1024)
                session = aiohttp.ClientSession(connector=connector, auto_decompress=False)
                clients.append(await stack.enter_async_context(session))
            yield

    async def relay(request: Request) -> StreamingResponse:
        body = await request.body()
        turn[0] = (turn[0] + 1) % len(clients)
        client = clients[turn[0]]
        if client_kind == "httpx":
            outgoing = client.build_request("POST", url, content=body, headers=headers)  # type: ignore[attr-defined]
            response = await client.send(outgoing, stream=True)  # type: ignore[attr-defined]

            async def pieces():  # type: ignore[no-untyped-def]
                try:
                    async for piece in response.aiter_raw():
                        yield piece
                finally:
                    await response.aclose()

            status = response.status_code
        else:
            answer = await client.post(url, data=body, headers=headers)  # type: ignore[attr-defined]

            async def pieces():  # type: ignore[no-untyped-def]
                try:
                    async for piece in answer.content.iter_any():
                        yield piece
                finally:
                    answer.release()

            status = answer.status
        return StreamingResponse(pieces(), status_code=status, media_type="text/event-stream")

    app = Starlette(routes=[Route("/v1/completions", relay, methods=["POST"])], lifespan=lifespan)
    sock = _listening(port, reuse_port)
    if not bare:
        uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(
            sockets=[sock]
        )
        return

    async def bare_app(scope, receive, send):  # type: ignore[no-untyped-def]
        """The relay in plain ASGI (no Starlette on the request's path), as pawlette's chat
        route is served (serve/asgi.py); the lifespan still through Starlette."""
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        answer = await clients[0].post(url, data=body, headers=headers)  # type: ignore[attr-defined]
        await send(
            {
                "type": "http.response.start",
                "status": answer.status,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        try:
            async for piece in answer.content.iter_any():
                await send({"type": "http.response.body", "body": piece, "more_body": True})
        finally:
            answer.release()
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    uvicorn.Server(uvicorn.Config(bare_app, log_level="warning", access_log=False)).run(
        sockets=[sock]
    )


def _listening(port: int, reuse_port: bool) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(2048)
    return sock


# ---------------------------------------------------------------------- the driver


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Target:
    name: str
    path: str  # "completions" (the engine's own request) or "chat" (pawlette's)
    commands: list[list[str]]  # processes to start (empty: the engine itself)
    port: int = 0
    listeners: int = 1
    """Listening sockets on the port once every process is ready (SO_REUSEPORT: one each)."""
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    environment: dict[str, str] | None = None
    """The processes' environment (None: this one's)."""


def _pawlette_command(
    fmt: str, engine_port: int, port: int, workers: int, stack: str, reuse_port: bool
) -> list[str]:
    fast = "False" if stack == "json" else "True"
    config = (
        f"ServeConfig(format={fmt!r}, upstream='http://127.0.0.1:{engine_port}', "
        f"port={port}, log_level='warning', workers={workers}"
        + (f", fast_json={fast})" if stack == "json" else ")")
    )
    if workers > 1:
        code = (
            "import sys; from pawlette.serve.config import ServeConfig; "
            "from pawlette.serve.workers import run_workers; "
            f"sys.exit(run_workers({config}, reuse_port={reuse_port}))"
        )
        return [sys.executable, "-c", code]
    # "h11": uvicorn's h11 protocol and asyncio's loop; "unguarded": uvicorn's httptools
    # protocol without pawlette's bounds (serve/inbound.py), what the server ran before them;
    # "json": the JSON without orjson (a setting); "lexer": a projection, not a configuration:
    # each format's lexer tables built once (copies of one lexer per marker set), patched in.
    # "aiohttp", "httpx": an older source tree's engine clients (--baseline-clients; the
    # current tree has one client).
    options = {
        "h11": "http='h11', loop='asyncio'",
        "unguarded": "http='httptools'",
    }.get(stack, "")
    patches = {
        "httpx": "import pawlette.serve.transport as t; t.aiohttp = None; t.CLIENT = 'httpx'; ",
        "aiohttp": "import pawlette.serve.transport as t; t.CLIENT = 'aiohttp'; ",
        "lexer": "import copy, pawlette.engine.machine as m; made = {}; "
        "build = m.Lexer; "
        "m.Lexer = lambda markers, *, escape: copy.copy(made.get((frozenset(markers), escape)) "
        "or made.setdefault((frozenset(markers), escape), build(markers, escape=escape))); ",
    }
    # As `pawlette serve` runs (serve.app.run: the collector tuned, no access log at level
    # warning).  A source tree whose ServeConfig has no fast_json gets the plain config.
    code = (
        patches.get(stack, "") + "import uvicorn; from pawlette.serve.config import ServeConfig; "
        "import pawlette.serve.app as a; "
        f"config = {config}; "
        f"a.run(config, {options})"
    )
    return [sys.executable, "-c", code]


def _proxy_command(
    engine_port: int, port: int, client: str, reuse_port: bool, bare: bool = False
) -> list[str]:
    command = [sys.executable, "-m", "bench.serve", "--role", "proxy"]
    command += ["--engine-port", str(engine_port), "--port", str(port), "--client", client]
    return command + (["--reuse-port"] if reuse_port else []) + (["--bare"] if bare else [])


def _targets(arguments: argparse.Namespace, engine_port: int) -> list[Target]:
    fmt = arguments.format
    targets = [Target("direct", "completions", [], engine_port)]

    def add(
        name: str,
        path: str,
        build: Callable[[int], list[list[str]]],
        listeners: int = 1,
        environment: dict[str, str] | None = None,
    ) -> None:
        port = _free_port()
        targets.append(Target(name, path, build(port), port, listeners, environment=environment))

    # The proxy uses pawlette's engine client: aiohttp when installed (see serve/transport.py).
    client = "aiohttp" if _has("aiohttp") else "httpx"
    add("proxy", "completions", lambda port: [_proxy_command(engine_port, port, client, False)])
    if client == "aiohttp":
        # Without Starlette on the request's path, as pawlette serves its chat route.
        add(
            "proxy asgi",
            "completions",
            lambda port: [_proxy_command(engine_port, port, client, False, bare=True)],
        )
    add(
        "pawlette",
        "chat",
        lambda port: [_pawlette_command(fmt, engine_port, port, 1, "default", False)],
    )
    if arguments.baseline_src:
        environment = dict(os.environ, PYTHONPATH=os.path.abspath(arguments.baseline_src))
        variants = ["default", *(["aiohttp", "httpx"] if arguments.baseline_clients else [])]
        for variant in variants:
            add(
                "pawlette baseline" + ("" if variant == "default" else f" {variant}"),
                "chat",
                lambda port, variant=variant: [
                    _pawlette_command(fmt, engine_port, port, 1, variant, False)
                ],
                environment=environment,
            )
    if arguments.stacks:
        add(
            "proxy httpx",
            "completions",
            lambda port: [_proxy_command(engine_port, port, "httpx", False)],
        )
        for variant in ("unguarded", "h11", "json", "lexer"):
            add(
                f"pawlette {variant}" if variant != "lexer" else "pawlette lexer cached",
                "chat",
                lambda port, variant=variant: [
                    _pawlette_command(fmt, engine_port, port, 1, variant, False)
                ],
            )
    if arguments.workers:
        add(
            "proxy x2",
            "completions",
            lambda port: [_proxy_command(engine_port, port, client, True) for _ in range(2)],
            2,
        )
        add(
            "pawlette x2",
            "chat",
            lambda port: [_pawlette_command(fmt, engine_port, port, 2, "default", True)],
            2,
        )
        add(
            "pawlette x2 shared",
            "chat",
            lambda port: [_pawlette_command(fmt, engine_port, port, 2, "default", False)],
        )
    return targets


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(predicate: Callable[[], object], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise SystemExit(f"bench.serve: {what} did not start")


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""


def _answers(port: int, path: str) -> bool:
    """Whether a server answers on ``port`` (any HTTP status: the proxy has no /health)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(
                f"GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n".encode()
            )
            return sock.recv(100).startswith(b"HTTP/1.1 ")
    except OSError:
        return False


def _listeners(port: int) -> int:
    """Sockets listening on loopback ``port`` (Linux /proc/net/tcp; state 0A is LISTEN)."""
    count = 0
    with open("/proc/net/tcp") as handle:
        for line in handle.readlines()[1:]:
            fields = line.split()
            if fields[1].endswith(f":{port:04X}") and fields[3] == "0A":
                count += 1
    return count


def _tree(pids: list[int]) -> list[int]:
    """``pids`` and all their descendants (Linux /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parents[int(entry)] = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found = list(pids)
    for pid in found:
        found.extend(child for child, parent in parents.items() if parent == pid)
    return found


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of these processes (Linux /proc; 0 elsewhere)."""
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _has(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def _stack() -> str:
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
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


@dataclass
class Row:
    phase: str
    target: str
    results: Results
    seconds: float
    cpu: float | None
    load: float

    @property
    def chunks_per_second(self) -> float:
        return len(self.results.latencies) / self.seconds

    @property
    def cpu_per_chunk(self) -> float | None:
        if self.cpu is None:
            return None
        return self.cpu / max(1, len(self.results.latencies)) * 1e6


def _run(target: Target, phase: str, interval: float, arguments: argparse.Namespace) -> Row:
    pids = _tree([process.pid for process in target.processes]) if target.processes else []
    cpu_before = _cpu_seconds(pids)
    results, seconds = asyncio.run(
        _load(
            target.port,
            target.path == "completions",
            arguments.clients,
            # Paced runs last chunks x interval per request: 4 requests are plenty there.
            arguments.requests if not interval else min(arguments.requests, 4),
            arguments.chunks,
            interval,
        )
    )
    if results.first_error:
        print(f"{phase}/{target.name}: first error: {results.first_error}", file=sys.stderr)
    cpu = _cpu_seconds(pids) - cpu_before if pids else None
    return Row(phase, target.name, results, seconds, cpu, os.getloadavg()[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", default="pcml")
    parser.add_argument("--clients", type=int, default=50)
    # 16 requests x 50 clients x 16 chunks: a run of a few seconds, so the CPU times read from
    # /proc (10 ms ticks) are within about 1% (4 requests made runs of about 1 s: 15%).
    parser.add_argument("--requests", type=int, default=16, help="per client, round and target")
    parser.add_argument("--chunks", type=int, default=16, help="per completion")
    parser.add_argument("--rounds", type=int, default=3, help="throughput rounds (median kept)")
    parser.add_argument(
        "--interval-ms",
        type=float,
        nargs="*",
        default=[250.0],
        help="pacing of the latency phases, ms between chunks (default: 250)",
    )
    parser.add_argument(
        "--stacks",
        action="store_true",
        help="also the stack variants (unguarded httptools, h11, json, lexer cached)",
    )
    parser.add_argument(
        "--baseline-clients",
        action="store_true",
        help="with --baseline-src: also the baseline with its aiohttp and httpx engine "
        "clients (a tree that had them, e.g. 1dcafa3): the measure that chose the client",
    )
    parser.add_argument(
        "--no-workers", dest="workers", action="store_false", help="no two-worker targets"
    )
    parser.add_argument("--role", choices=["driver", "engine", "proxy"], default="driver")
    parser.add_argument("--port-file")
    parser.add_argument("--engine-port", type=int)
    parser.add_argument("--port", type=int)
    parser.add_argument("--client", choices=["httpx", "aiohttp"], default="httpx")
    parser.add_argument("--reuse-port", action="store_true")
    parser.add_argument("--bare", action="store_true", help="proxy: plain ASGI, no Starlette")
    parser.add_argument(
        "--baseline-src",
        help="also run pawlette from this source tree (a src/ directory, e.g. an older "
        "commit's: git archive COMMIT src | tar -x -C DIR), interleaved with the current one",
    )
    arguments = parser.parse_args()
    if arguments.role == "engine":
        asyncio.run(_engine(arguments.port_file))
        return 0
    if arguments.role == "proxy":
        _proxy(
            arguments.engine_port,
            arguments.port,
            arguments.client,
            arguments.reuse_port,
            arguments.bare,
        )
        return 0

    port_file = f"/tmp/pawlette-bench-engine-{os.getpid()}"
    engine = subprocess.Popen(
        [sys.executable, "-m", "bench.serve", "--role", "engine", "--port-file", port_file],
        cwd=ROOT,
    )
    targets: list[Target] = []
    rows: list[Row] = []
    try:
        _wait_for(lambda: _read(port_file), "the engine")
        engine_port = int(_read(port_file))
        targets = _targets(arguments, engine_port)
        for target in targets:
            if not target.commands:
                continue  # the engine: ready since it wrote its port
            for command in target.commands:
                target.processes.append(subprocess.Popen(command, cwd=ROOT, env=target.environment))
            probe = "/health" if target.path == "chat" else "/"
            _wait_for(lambda target=target, probe=probe: _answers(target.port, probe), target.name)
            _wait_for(
                lambda target=target: _listeners(target.port) >= target.listeners, target.name
            )
        # A shared socket shows one listener however many workers accept on it: give the
        # workers of such a target time to finish starting.
        time.sleep(3.0)
        for number in range(arguments.rounds):
            shift = number % len(targets)
            for target in targets[shift:] + targets[:shift]:
                rows.append(_run(target, "throughput", 0.0, arguments))
        for interval in arguments.interval_ms:
            for target in targets:
                if target.name in _PACED:
                    rows.append(_run(target, f"paced {interval:g} ms", interval / 1000, arguments))
    finally:
        for target in targets:
            for process in target.processes:
                process.terminate()
        for target in targets:
            for process in target.processes:
                process.wait(20)
        engine.terminate()
        engine.wait(10)
        if os.path.exists(port_file):
            os.remove(port_file)
    return _report(arguments, targets, rows)


_PACED = ("direct", "proxy", "pawlette", "pawlette baseline", "pawlette baseline aiohttp")
"""The targets of the paced phases."""


def _report(arguments: argparse.Namespace, targets: list[Target], rows: list[Row]) -> int:
    print(
        f"\npawlette serve -f {arguments.format}: {arguments.clients} concurrent streaming "
        f"clients x {arguments.requests} requests x {arguments.chunks} chunks per run; "
        f"{os.cpu_count()} CPUs; uvicorn default stack here: {_stack()}\n"
    )
    width = 2 + 7 * arguments.rounds  # the rounds' numbers, a space apart
    header = (
        f"{'phase':<15}{'target':<20}{'chunks/s':>10}{'(rounds)':>{width}}{'cpu us/chunk':>14}"
        f"{'p50 ms':>9}{'p99 ms':>9}{'load':>6}{'errors':>8}"
    )
    print(header)
    print("-" * len(header))
    total_errors = sum(row.results.errors for row in rows)
    throughput: dict[str, float] = {}
    cpu_cost: dict[str, float] = {}
    for target in targets:
        mine = [row for row in rows if row.phase == "throughput" and row.target == target.name]
        if not mine:
            continue
        ordered = sorted(mine, key=lambda row: row.chunks_per_second)
        median = ordered[len(ordered) // 2]
        throughput[target.name] = median.chunks_per_second
        spread = " ".join(f"{row.chunks_per_second:.0f}" for row in mine)
        cpus = [row.cpu_per_chunk for row in mine if row.cpu_per_chunk is not None]
        cpu = f"{_quantile(cpus, 0.5):.0f}" if cpus else "-"
        if cpus:
            cpu_cost[target.name] = _quantile(cpus, 0.5)
        print(
            f"{'throughput':<15}{target.name:<20}{median.chunks_per_second:>10.0f}"
            f"{spread:>{width}}{cpu:>14}"
            f"{_quantile(median.results.latencies, 0.5) * 1000:>9.1f}"
            f"{_quantile(median.results.latencies, 0.99) * 1000:>9.1f}"
            f"{median.load:>6.1f}{sum(row.results.errors for row in mine):>8}"
        )
    direct: dict[str, tuple[float, float]] = {}
    for row in rows:
        if row.phase == "throughput":
            continue
        p50 = _quantile(row.results.latencies, 0.50) * 1000
        p99 = _quantile(row.results.latencies, 0.99) * 1000
        note = ""
        if row.target == "direct":
            direct[row.phase] = (p50, p99)
        else:
            base = direct.get(row.phase, (p50, p99))
            note = f"  added p50 {p50 - base[0]:+.2f} ms, p99 {p99 - base[1]:+.2f} ms"
        cpu = "-" if row.cpu_per_chunk is None else f"{row.cpu_per_chunk:.0f}"
        print(
            f"{row.phase:<15}{row.target:<20}{row.chunks_per_second:>10.0f}{'':>{width}}{cpu:>14}"
            f"{p50:>9.2f}{p99:>9.2f}{row.load:>6.1f}{row.results.errors:>8}{note}"
        )
    print()
    # A pacing given several times (--interval-ms 250 250 250) is several interleaved rounds:
    # the median of each target's CPU per chunk over them.
    paced_rounds: dict[tuple[str, str], list[float]] = {}
    for row in rows:
        if row.phase != "throughput" and row.cpu_per_chunk is not None:
            paced_rounds.setdefault((row.phase, row.target), []).append(row.cpu_per_chunk)
    paced = {key: statistics.median(values) for key, values in paced_rounds.items()}
    for (phase, target), values in paced_rounds.items():
        if target == "pawlette":
            for versus in ("proxy", "pawlette baseline", "pawlette baseline aiohttp"):
                if paced.get((phase, versus)):
                    ratio = paced[phase, target] / paced[phase, versus]
                    print(
                        f"{phase}: pawlette / {versus}: {ratio:.2f}x the CPU time per chunk "
                        f"(median of {len(values)}: {paced[phase, target]:.0f} µs against "
                        f"{paced[phase, versus]:.0f})"
                    )
    for name, versus in (
        ("pawlette", "proxy"),
        ("pawlette x2", "pawlette"),
        ("proxy x2", "proxy"),
        ("pawlette x2", "pawlette x2 shared"),
        ("proxy", "proxy httpx"),
        ("pawlette", "pawlette unguarded"),
        ("pawlette", "pawlette h11"),
        ("pawlette", "proxy asgi"),
        ("pawlette", "pawlette baseline"),
        ("pawlette baseline", "pawlette baseline aiohttp"),
        ("pawlette baseline", "pawlette baseline httpx"),
        ("pawlette", "pawlette baseline aiohttp"),
        ("pawlette", "pawlette json"),
        ("pawlette lexer cached", "proxy"),
        ("pawlette lexer cached", "proxy asgi"),
        ("proxy asgi", "proxy"),
    ):
        if name in throughput and versus in throughput:
            line = f"{name} / {versus}: {throughput[name] / throughput[versus]:.2f}x chunks/s"
            if cpu_cost.get(name) and cpu_cost.get(versus):
                # CPU per chunk: what a loaded machine changes least (capacity per core).
                line += f", {cpu_cost[name] / cpu_cost[versus]:.2f}x the CPU time per chunk"
            print(line)
    print(
        "cpu: the target's processes' CPU time (user + system) per chunk delivered, the median "
        "of the rounds; load: the 1-minute load average after the run"
    )
    print(f"errors: {total_errors}")
    return 1 if total_errors else 0


if __name__ == "__main__":
    from bench import pages

    PAGE = pages.Page(
        measure="serve",
        title="The server under load",
        what=(
            "50 concurrent streaming clients against a fast scripted engine: directly, "
            "through two bare pass-through proxies (Starlette's `StreamingResponse` and a "
            "plain ASGI app, both with an aiohttp client), and through `pawlette serve` (one "
            "and two workers). chunks/s is the median round; CPU per chunk is the server "
            "processes' CPU time over the chunks delivered, the figure a loaded machine "
            "changes least. The paced phase sends one engine event per 250 ms per stream, as "
            "a decoding model does."
        ),
        peer="a pass-through proxy on the same HTTP stack (uvicorn with httptools and uvloop)",
    )
    raise SystemExit(pages.run(main, PAGE))
