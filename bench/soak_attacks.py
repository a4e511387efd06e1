"""``pawlette serve`` under attack: how fast ``/health`` answers while a hostile client or a
misbehaving engine does its worst, and what it costs the server.

Processes on loopback: a scripted engine (``--role engine``), ``pawlette serve -f pcml`` in
front of it with its default settings, helper processes that hold idle sockets (``--role
idler``), and this driver.  Each phase runs one attack for ``--seconds`` while a prober asks
``GET /health`` every 50 ms on a new connection each time (as a load balancer does), with a
5 s timeout; a probe that fails or times out counts as a failure.  The attacks:

- ``quiet``: none (the floor);
- ``header``: a request head with one header of ``--header-mib`` MiB (128 by default), sent
  as fast as the server takes it, again and again;
- ``idle``: ``--idle`` idle sockets (20,000 by default, held by helper processes), opened
  at the phase's start and held;
- ``slowloris``: 500 connections each sending a head a byte a second;
- ``bomb``: four clients asking, back to back, for completions the engine answers with a
  1 MB gzip body that inflates to 1 GiB (streamed and not, in turn);
- ``stalled``: ``--stalled`` clients (5 by default) asking for streams the engine floods
  (hundreds of megabytes a second, far faster than a model writes), reading none of it, and
  asking again once the server drops them (``--send-timeout``, 30 s).

Printed per phase: the probes' latency (p50, p99, max, in ms) and failures, the server's peak
resident memory (RSS, MB) and file descriptors, and its CPU seconds during the phase.  The
load average is printed too: the machine may be shared.  So is the *floor*: a second prober
asks a bare asyncio server in a process of its own (``--role floor``, no pawlette, no attack
aimed at it) the same way at the same times; its p99 and max are what the machine's
scheduling alone adds to a probe while the attack (and anything else running) takes the CPUs.
``--baseline-src DIR`` runs the same phases against pawlette from DIR (e.g. 1dcafa3's
``src``); careful: there a gzip bomb costs the server gigabytes, and the header attack minutes
of CPU (pass smaller sizes).

Usage, from the repository root:
    python -m bench.soak_attacks [--seconds 20] [--attacks quiet header idle slowloris bomb
    stalled] [--header-mib 128] [--idle 20000] [--stalled 5] [--baseline-src DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHAT_HEAD = (
    b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
)


# ---------------------------------------------------------------------- the engine


def _bomb() -> bytes:
    """1 GiB of zeros, gzip-compressed (about 1 MB), made a MiB at a time."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = b"0" * (1 << 20)
    parts = [packer.compress(zeros) for _ in range(1024)]
    return b"".join(parts) + packer.flush()


async def _engine(port_file: str) -> None:
    bomb = _bomb()
    flood = (
        b"data: "
        + json.dumps({"choices": [{"index": 0, "text": "word " * 400}]}).encode()
        + b"\n\n"
    ) * 16
    flood_chunk = b"%x\r\n%s\r\n" % (len(flood), flood)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = json.loads(await reader.readexactly(length)) if length else {}
                if head.startswith(b"GET"):
                    data = b'{"object": "list", "data": [{"id": "m"}]}'
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(data), data)
                    )
                    await writer.drain()
                    continue
                prompt = json.dumps(body.get("prompt", ""))
                stream = bool(body.get("stream"))
                if "mode:bomb" in prompt:
                    kind = b"text/event-stream" if stream else b"application/json"
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-encoding: gzip\r\n"
                        b"content-length: %d\r\n\r\n" % (kind, len(bomb))
                    )
                    writer.write(bomb)
                    await writer.drain()
                    continue
                if "mode:flood" in prompt:
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                        b"transfer-encoding: chunked\r\n\r\n"
                    )
                    for _ in range(20_000):  # up to about 1 GB: the server stops reading first
                        writer.write(flood_chunk)
                        await writer.drain()
                    return
                piece = {"choices": [{"index": 0, "text": "Hi", "finish_reason": "stop"}]}
                if stream:
                    data = f"data: {json.dumps(piece)}\n\ndata: [DONE]\n\n".encode()
                    kind = b"text/event-stream"
                else:
                    data, kind = json.dumps(piece).encode(), b"application/json"
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n%s"
                    % (kind, len(data), data)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    with open(port_file, "w") as handle_file:
        handle_file.write(str(server.sockets[0].getsockname()[1]))
    async with server:
        await server.serve_forever()


def _idler(port: int, count: int) -> None:
    """Open ``count`` idle connections to ``port`` and hold them until stdin closes; print
    how many the server closed (read at exit)."""
    _raise_files()
    sockets: list[socket.socket] = []
    for _ in range(count):
        try:
            sock = socket.socket()
            sock.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                sock.connect(("127.0.0.1", port))
            sockets.append(sock)
        except OSError:
            break
    print(f"opened {len(sockets)}", flush=True)
    sys.stdin.read()
    closed = 0
    for sock in sockets:
        with contextlib.suppress(OSError):  # BlockingIOError: still open
            closed += sock.recv(1) == b""
        sock.close()
    print(f"closed {closed}", flush=True)


def _raise_files() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def _floor(port_file: str) -> None:
    """A bare HTTP server answering every request 200 (the probes' floor)."""
    answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            await reader.readuntil(b"\r\n\r\n")
            writer.write(answer)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    with open(port_file + ".tmp", "w") as handle_file:
        handle_file.write(str(server.sockets[0].getsockname()[1]))
    os.replace(port_file + ".tmp", port_file)
    await server.serve_forever()


# ---------------------------------------------------------------------- the attacks


@dataclass
class Phase:
    name: str
    latencies: list[float] = field(default_factory=list)
    failures: int = 0
    floor: list[float] = field(default_factory=list)
    """The floor server's probe latencies, taken at the same times."""
    rss_mb: float = 0.0
    fds: int = 0
    cpu: float = 0.0
    load: float = 0.0
    note: str = ""


def _probe(port: int, stop: threading.Event, phase: Phase, floor: bool = False) -> None:
    request = b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n"
    latencies = phase.floor if floor else phase.latencies
    while not stop.is_set():
        started = time.monotonic()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(request)
                answer = b""
                while b"\r\n\r\n" not in answer:
                    piece = sock.recv(4096)
                    if not piece:
                        break
                    answer += piece
            if answer.startswith(b"HTTP/1.1 200"):
                latencies.append(time.monotonic() - started)
            elif not floor:
                phase.failures += 1
        except OSError:
            phase.failures += not floor
        stop.wait(max(0.0, 0.05 - (time.monotonic() - started)))


def _watch(pids: Callable[[], list[int]], stop: threading.Event, phase: Phase) -> None:
    while not stop.is_set():
        rss = fds = 0
        for pid in pids():
            with contextlib.suppress(OSError):
                with open(f"/proc/{pid}/status") as handle:
                    for line in handle:
                        if line.startswith("VmRSS:"):
                            rss += int(line.split()[1])
                fds += len(os.listdir(f"/proc/{pid}/fd"))
        phase.rss_mb = max(phase.rss_mb, rss / 1024)
        phase.fds = max(phase.fds, fds)
        stop.wait(0.2)


def _header_attack(port: int, stop: threading.Event, mib: int, phase: Phase) -> None:
    block = b"a" * 65536
    attempts = refused = 0
    while not stop.is_set():
        attempts += 1
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                sock.sendall(CHAT_HEAD + b"x-big: ")
                for _ in range(mib * 16):
                    if stop.is_set():
                        break
                    sock.sendall(block)
                with contextlib.suppress(OSError):
                    refused += sock.recv(16).startswith(b"HTTP/1.1 431")
        except OSError:
            refused += 1  # closed by the server while sending
    phase.note = f"{attempts} heads sent, {refused} refused"


def _chat(port: int, content: str, stream: bool, read: bool, timeout: float) -> bytes:
    body = json.dumps(
        {"messages": [{"role": "user", "content": content}], "stream": stream}
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        if not read:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(
            CHAT_HEAD + b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body)
        )
        if not read:
            # Read nothing: wait for the server to drop the connection.
            sock.settimeout(timeout)
            with contextlib.suppress(OSError):
                while True:
                    time.sleep(0.5)
                    sock.send(b"\r\n")  # blank lines between requests: raises once dropped
            return b""
        data = b""
        while piece := sock.recv(65536):
            data += piece
        return data


def _bomb_attack(port: int, stop: threading.Event, phase: Phase) -> None:
    statuses: dict[str, int] = {}
    lock = threading.Lock()

    def loop(stream: bool) -> None:
        while not stop.is_set():
            try:
                answer = _chat(port, "mode:bomb", stream, True, 120)
                status = answer[9:12].decode() if answer else "closed"
                if stream and b'"upstream_too_large"' in answer:
                    status = "200+error"
            except OSError:
                status = "error"
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
            stream = not stream

    threads = [threading.Thread(target=loop, args=(n % 2 == 0,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    phase.note = "answers " + ", ".join(
        f"{key}: {value}" for key, value in sorted(statuses.items())
    )


def _stalled_attack(port: int, stop: threading.Event, count: int, phase: Phase) -> None:
    dropped = [0]

    def loop() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                _chat(port, "mode:flood", True, False, 120)
            dropped[0] += 1

    threads = [threading.Thread(target=loop, daemon=True) for _ in range(count)]
    for thread in threads:
        thread.start()
    stop.wait()
    phase.note = f"{dropped[0]} stalled clients dropped by the server"


def _slowloris_attack(port: int, stop: threading.Event, phase: Phase) -> None:
    sockets: list[socket.socket] = []
    for _ in range(500):
        with contextlib.suppress(OSError):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.setblocking(False)
            sock.send(CHAT_HEAD)
            sockets.append(sock)
    closed = 0
    while not stop.wait(1.0):
        for sock in list(sockets):
            try:
                sock.send(b"x")
            except OSError:
                sockets.remove(sock)
                sock.close()
                closed += 1
    for sock in sockets:
        sock.close()
    phase.note = f"500 slow heads, {closed} closed by the server"


# ---------------------------------------------------------------------- the driver


def _wait_for(predicate: Callable[[], object], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise SystemExit(f"bench.soak_attacks: {what} did not start")


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
            return sock.recv(100).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def _cpu_seconds(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_phases(
    arguments: argparse.Namespace, engine_port: int, floor_port: int, source: str | None
) -> list[Phase]:
    port = _free_port()
    environment = dict(os.environ)
    if source:
        environment["PYTHONPATH"] = os.path.abspath(source)
    command = [
        sys.executable,
        "-c",
        "import sys; from pawlette.cli import main; sys.exit(main(sys.argv[1:]))",
        "serve",
        *("-f", "pcml", "--upstream", f"http://127.0.0.1:{engine_port}", "--model", "m"),
        *("--port", str(port), "--log-level", "warning"),
    ]
    server = subprocess.Popen(command, cwd=ROOT, env=environment, stderr=subprocess.DEVNULL)
    phases: list[Phase] = []
    try:
        _wait_for(lambda: _answers(port), "the server")
        for name in arguments.attacks:
            phase = Phase(name)
            stop = threading.Event()
            cpu_before = _cpu_seconds(server.pid)
            watcher = threading.Thread(target=_watch, args=(lambda: [server.pid], stop, phase))
            watcher.start()
            idlers: list[subprocess.Popen[str]] = []
            attack: threading.Thread | None = None
            if name == "header":
                attack = threading.Thread(
                    target=_header_attack, args=(port, stop, arguments.header_mib, phase)
                )
            elif name == "bomb":
                attack = threading.Thread(target=_bomb_attack, args=(port, stop, phase))
            elif name == "stalled":
                attack = threading.Thread(
                    target=_stalled_attack, args=(port, stop, arguments.stalled, phase)
                )
            elif name == "slowloris":
                attack = threading.Thread(target=_slowloris_attack, args=(port, stop, phase))
            elif name == "idle":
                share = (arguments.idle + 1) // 2
                for _ in range(2):
                    idlers.append(
                        subprocess.Popen(
                            [
                                *(sys.executable, "-m", "bench.soak_attacks", "--role", "idler"),
                                *("--port", str(port), "--count", str(share)),
                            ],
                            cwd=ROOT,
                            stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE,
                            text=True,
                        )
                    )
                opened = sum(int(idler.stdout.readline().split()[1]) for idler in idlers)  # type: ignore[union-attr]
                phase.note = f"{opened} idle sockets opened"
            if attack is not None:
                attack.start()
            time.sleep(0.5)  # the attack under way
            prober = threading.Thread(target=_probe, args=(port, stop, phase))
            floor_prober = threading.Thread(target=_probe, args=(floor_port, stop, phase, True))
            prober.start()
            floor_prober.start()
            # Stalled readers are dropped after --send-timeout (30 s): long enough to see it.
            time.sleep(max(arguments.seconds, 40.0) if name == "stalled" else arguments.seconds)
            stop.set()
            prober.join()
            floor_prober.join()
            if attack is not None:
                attack.join(120)
            for idler in idlers:
                assert idler.stdin is not None and idler.stdout is not None
                idler.stdin.close()
                closed = idler.stdout.read().split()
                idler.wait(60)
                phase.note += f", {closed[-1] if closed else '?'} closed by the server"
            watcher.join()
            phase.cpu = _cpu_seconds(server.pid) - cpu_before
            phase.load = os.getloadavg()[0]
            phases.append(phase)
            print(_row(phase), flush=True)
            time.sleep(2)  # let the server settle (evictions, timeouts) before the next
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
    return phases


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


HEADER = (
    f"{'phase':<11}{'probes':>7}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'failed':>8}"
    f"{'floor p99':>10}{'floor max':>10}{'RSS MB':>8}{'FDs':>7}{'CPU s':>7}{'load':>6}  note"
)


def _row(phase: Phase) -> str:
    values = phase.latencies
    return (
        f"{phase.name:<11}{len(values) + phase.failures:>7}"
        f"{_quantile(values, 0.5) * 1000:>9.1f}{_quantile(values, 0.99) * 1000:>9.1f}"
        f"{(max(values) if values else float('nan')) * 1000:>9.1f}{phase.failures:>8}"
        f"{_quantile(phase.floor, 0.99) * 1000:>10.1f}"
        f"{(max(phase.floor) if phase.floor else float('nan')) * 1000:>10.1f}"
        f"{phase.rss_mb:>8.0f}{phase.fds:>7}{phase.cpu:>7.1f}{phase.load:>6.1f}  {phase.note}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=["driver", "engine", "idler", "floor"], default="driver")
    parser.add_argument("--port-file")
    parser.add_argument("--port", type=int)
    parser.add_argument("--count", type=int)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--attacks",
        nargs="*",
        default=["quiet", "header", "idle", "slowloris", "bomb", "stalled"],
    )
    parser.add_argument("--header-mib", type=int, default=128)
    parser.add_argument("--idle", type=int, default=20_000)
    parser.add_argument("--stalled", type=int, default=5)
    parser.add_argument("--baseline-src", help="also run the phases against pawlette from DIR")
    arguments = parser.parse_args()
    if arguments.role == "engine":
        asyncio.run(_engine(arguments.port_file))
        return 0
    if arguments.role == "idler":
        _idler(arguments.port, arguments.count)
        return 0
    if arguments.role == "floor":
        asyncio.run(_floor(arguments.port_file))
        return 0
    _raise_files()
    port_file = f"/tmp/pawlette-attack-engine-{os.getpid()}"
    engine = subprocess.Popen(
        [sys.executable, "-m", "bench.soak_attacks", "--role", "engine", "--port-file", port_file],
        cwd=ROOT,
    )
    floor_file = f"/tmp/pawlette-attack-floor-{os.getpid()}"
    floor = subprocess.Popen(
        [sys.executable, "-m", "bench.soak_attacks", "--role", "floor", "--port-file", floor_file],
        cwd=ROOT,
    )
    try:
        _wait_for(lambda: _read(port_file), "the engine")
        _wait_for(lambda: _read(floor_file), "the floor server")
        engine_port, floor_port = int(_read(port_file)), int(_read(floor_file))
        results = {}
        for label, source in [("pawlette", None), ("baseline", arguments.baseline_src)]:
            if label == "baseline" and not source:
                continue
            print(f"\n{label}: {os.cpu_count()} CPUs, {arguments.seconds:g} s per phase")
            print(HEADER)
            results[label] = run_phases(arguments, engine_port, floor_port, source)
    finally:
        for process in (engine, floor):
            process.terminate()
            process.wait(10)
        for path in (port_file, floor_file):
            with contextlib.suppress(OSError):
                os.remove(path)
    failures = sum(phase.failures for phase in results.get("pawlette", []))
    worst = max(
        (_quantile(phase.latencies, 0.99) for phase in results.get("pawlette", [])), default=0.0
    )
    print(
        f"\npawlette: {failures} failed probes; the worst phase's p99 /health latency "
        f"{worst * 1000:.1f} ms; medians: "
        + ", ".join(
            f"{phase.name} {statistics.median(phase.latencies) * 1000:.1f} ms"
            for phase in results.get("pawlette", [])
            if phase.latencies
        )
    )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
