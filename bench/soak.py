"""A long soak of ``pawlette serve --workers 2`` at a bounded rate, with misbehaving engines
and hostile clients mixed into ordinary traffic: memory and file descriptors must stay flat,
no answer may be a 500, and the requests must spread over the workers.

Processes on loopback: a scripted engine (``--role engine``) whose behaviour each request
chooses by a word in its prompt, ``pawlette serve -f pcml --workers 2`` with short timeouts
(so a misbehaving peer is cut within seconds: ``--timeout 3 --request-timeout 15
--send-timeout 3 --head-timeout 3 --body-timeout 3``, ``--max-answer-bytes 4M``), and this
driver.  ``--clients`` threads (each an httpx client keeping its connection alive, as an SDK
does) send ``--rate`` requests a second in all, drawn from this mix:

=====================  ====  ==========================================================
request                 share  expected answer
=====================  ====  ==========================================================
ordinary, streamed      30%   200 with ``[DONE]``
ordinary, not           25%   200
with tools, forced      5%    200
engine 500              4%    502 ``upstream_error``
engine 429              3%    429 ``upstream_busy``
stream cut by engine    4%    200 then an error event (``upstream_disconnected``)
gzip bomb               2%    502 / error event ``upstream_too_large``
answer over the bound   2%    502 ``upstream_too_large``
not UTF-8               2%    502 / error event ``upstream_invalid``
redirect / HTML page    3%    502 ``upstream_invalid``
silent engine           2%    504 ``upstream_timeout``
dripping forever        1%    504 / error event ``request_timeout``
invalid request         8%    400
foreign Host            2%    400 ``invalid_host``
client leaves early     5%    (none: the client closes mid-stream)
client stops reading    2%    (none: the server drops it after --send-timeout)
=====================  ====  ==========================================================

Beside that traffic, all the time: 40 idle sockets (re-opened when the server closes them),
20 heads trickled a byte a second, and a 1 MiB request head every 10 s.

Every 10 s the workers' resident memory (RSS) and open file descriptors are sampled (Linux
``/proc``).  Printed: the samples a minute apart, the answers by kind (any 500, or an answer
other than expected, is a failure), the requests per worker from ``/metrics``, and whether
memory and descriptors stayed flat (the last fifth's peak against the second fifth's: the first
fifth warms caches and pools).

Usage, from the repository root: python -m bench.soak [--seconds 1800] [--rate 8]
    [--clients 8] [--format pcml]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]

# ---------------------------------------------------------------------- the engine


def _event(text: str, finish: str | None = None) -> bytes:
    payload = {"choices": [{"index": 0, "text": text, "finish_reason": finish}]}
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


async def _engine(port_file: str) -> None:
    bomb = gzip.compress(b"0" * (256 << 20), 9)
    huge = b"x" * (6 << 20)

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
                if not await _answer(body, writer, bomb, huge):
                    return
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    with open(port_file, "w") as handle_file:
        handle_file.write(str(server.sockets[0].getsockname()[1]))
    async with server:
        await server.serve_forever()


async def _answer(
    body: dict[str, object], writer: asyncio.StreamWriter, bomb: bytes, huge: bytes
) -> bool:
    """Answer one completion request as its prompt's mode says; False closes the connection."""
    prompt = json.dumps(body.get("prompt", ""))
    stream = bool(body.get("stream"))
    mode = next((word for word in _MODES if f"mode:{word}" in prompt), "ok")
    sse = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    if mode in ("e500", "e429"):
        data = b'{"error": {"message": "engine says no"}}'
        status = b"500 Internal Server Error" if mode == "e500" else b"429 Too Many Requests"
        writer.write(b"HTTP/1.1 %s\r\ncontent-length: %d\r\n\r\n%s" % (status, len(data), data))
    elif mode == "redirect":
        writer.write(
            b"HTTP/1.1 302 Found\r\nlocation: http://elsewhere/\r\ncontent-length: 0\r\n\r\n"
        )
    elif mode == "html":
        data = b"<html><body>Please log in</body></html>"
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: %d\r\n\r\n%s"
            % (len(data), data)
        )
    elif mode == "bomb":
        kind = b"text/event-stream" if stream else b"application/json"
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-encoding: gzip\r\n"
            b"content-length: %d\r\n\r\n%s" % (kind, len(bomb), bomb)
        )
    elif mode == "huge":
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(huge), huge))
    elif mode == "badutf8":
        if stream:
            writer.write(sse + _chunk(_event("Hi ") + b'data: {"choices": [{"text": "\xff"}]}\n\n'))
            writer.write(_chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
        else:
            data = b'{"choices": [{"text": "Hi \xff", "finish_reason": "stop"}]}'
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(data), data))
    elif mode == "silent":
        await asyncio.sleep(6)
        return False
    elif mode == "drip":
        writer.write(sse)
        for _ in range(200):  # 40 s, never silent for the 3 s timeout
            writer.write(_chunk(_event("x")))
            await writer.drain()
            await asyncio.sleep(0.2)
        return False
    elif mode in ("cut", "flood", "leave") or stream:
        writer.write(sse)
        count = 2000 if mode == "flood" else 12
        for number in range(count):
            if mode == "cut" and number == 4:
                writer.transport.abort()
                return False
            text = "word " * 200 if mode == "flood" else f"token{number} "
            writer.write(_chunk(_event(text)))
            await writer.drain()
            if mode != "flood":
                await asyncio.sleep(0.01)
        writer.write(_chunk(_event("", "stop") + b"data: [DONE]\n\n") + b"0\r\n\r\n")
    else:
        data = json.dumps(
            {
                "choices": [{"index": 0, "text": "Sunny today.", "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
            }
        ).encode()
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
            % (len(data), data)
        )
    await writer.drain()
    return True


_MODES = ("e500", "e429", "redirect", "html", "bomb", "huge", "badutf8", "silent", "drip")
_MODES += ("cut", "flood", "leave")


# ---------------------------------------------------------------------- the traffic


@dataclass(frozen=True)
class Kind:
    name: str
    share: float
    mode: str | None  # the engine's mode (None: an ordinary answer)
    stream: bool
    expect: tuple[str, ...]
    """Acceptable outcomes: a status, or ``200+CODE`` for a stream ended by that error."""


KINDS = [
    Kind("stream", 0.30, None, True, ("200",)),
    Kind("complete", 0.25, None, False, ("200",)),
    Kind("tools", 0.05, None, False, ("200",)),
    Kind("engine 500", 0.04, "e500", False, ("502",)),
    Kind("engine 429", 0.03, "e429", True, ("429",)),
    Kind("cut stream", 0.04, "cut", True, ("200+upstream_disconnected",)),
    Kind("gzip bomb", 0.02, "bomb", False, ("502", "200+upstream_too_large")),
    Kind("too large", 0.02, "huge", False, ("502",)),
    Kind("not utf-8", 0.02, "badutf8", True, ("200+upstream_invalid", "502")),
    Kind("redirect/html", 0.03, "redirect", True, ("502",)),
    Kind("silent", 0.02, "silent", False, ("504",)),
    Kind("drip", 0.01, "drip", True, ("200+request_timeout", "504")),
    Kind("invalid", 0.08, None, False, ("400",)),
    Kind("foreign host", 0.02, None, False, ("400",)),
    Kind("leaves early", 0.05, "leave", True, ("left",)),
    Kind("stops reading", 0.02, "flood", True, ("dropped",)),
]


@dataclass
class Tally:
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, kind: Kind, outcome: str, detail: str = "") -> None:
        with self.lock:
            self.outcomes[kind.name, outcome] += 1
            if outcome not in kind.expect and len(self.failures) < 30:
                self.failures.append(f"{kind.name}: {outcome} {detail[:300]}")


def _outcome(response: httpx.Response) -> str:
    status = str(response.status_code)
    if status == "200" and response.headers.get("content-type", "").startswith("text/event"):
        last = response.text.strip().split("\n")[-1]
        if last.startswith('data: {"error"'):
            return "200+" + str(json.loads(last[6:])["error"]["code"])
        if not last.startswith("data: [DONE]"):
            return "200+no end"
    return status


def _one(client: httpx.Client, url: str, kind: Kind, port: int, tally: Tally) -> None:
    content = f"mode:{kind.mode} please" if kind.mode else "What is the weather?"
    if kind.name == "redirect/html" and random.random() < 0.5:
        content = "mode:html please"
    body: dict[str, object] = {
        "messages": [{"role": "user", "content": content}],
        "stream": kind.stream,
    }
    if kind.name == "tools":
        body |= {"tools": TOOLS, "tool_choice": "required"}
    if kind.name == "invalid":
        body["temprature"] = 1
    headers = {"host": "attacker.example"} if kind.name == "foreign host" else {}
    if kind.name == "leaves early":
        with client.stream("POST", url, json=body, headers=headers) as response:
            for _ in response.iter_bytes():
                break
        tally.add(kind, "left")
        return
    if kind.name == "stops reading":
        tally.add(kind, _stall(port, body))
        return
    response = client.post(url, json=body, headers=headers)
    outcome = _outcome(response)
    tally.add(kind, outcome, response.text)


def _stall(port: int, body: dict[str, object]) -> str:
    data = json.dumps(body).encode()
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.settimeout(60)
        sock.connect(("127.0.0.1", port))
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n"
            b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(data), data)
        )
        time.sleep(8)  # read nothing past --send-timeout (3 s)
        try:
            while sock.recv(1 << 20):  # then take what was buffered: the server has closed
                pass
        except OSError:
            return "dropped"
    return "dropped"


def _client_loop(port: int, rate: float, stop: threading.Event, tally: Tally, seed: int) -> None:
    rng = random.Random(seed)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    shares = [kind.share for kind in KINDS]
    with httpx.Client(timeout=60) as client:
        next_at = time.monotonic()
        while not stop.is_set():
            next_at += rng.expovariate(rate)
            delay = next_at - time.monotonic()
            if delay > 0 and stop.wait(delay):
                return
            kind = rng.choices(KINDS, shares)[0]
            try:
                _one(client, url, kind, port, tally)
            except httpx.HTTPError as error:
                tally.add(kind, f"client error {type(error).__name__}", str(error))


def _background(port: int, stop: threading.Event, counts: Counter[str]) -> None:
    """Idle sockets, slow heads and big heads, all the time."""
    idle: list[socket.socket] = []
    slow: list[socket.socket] = []
    last_big = 0.0
    head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n"
    while not stop.wait(1.0):
        for group, size in ((idle, 40), (slow, 20)):
            for sock in list(group):
                try:
                    if group is slow:
                        sock.send(b"x")
                    elif sock.recv(1) == b"":
                        raise OSError
                except BlockingIOError:
                    pass
                except OSError:
                    group.remove(sock)
                    sock.close()
                    counts["closed by the server"] += 1
            while len(group) < size:
                with contextlib.suppress(OSError):
                    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                    sock.setblocking(False)
                    if group is slow:
                        sock.send(head)
                    group.append(sock)
                    counts["opened"] += 1
        if time.monotonic() - last_big > 10:
            last_big = time.monotonic()
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", port), 10) as sock,
            ):
                sock.sendall(head + b"x-big: ")
                with contextlib.suppress(OSError):
                    sock.sendall(b"a" * (1 << 20))
                answer = sock.recv(100)
                counts["big heads: " + answer[9:12].decode(errors="replace")] += 1
    for sock in idle + slow:
        sock.close()


# ---------------------------------------------------------------------- the driver


def _workers(supervisor: int) -> list[int]:
    from pawlette.serve.workers import worker_pids

    return worker_pids(supervisor)


def _sample(pids: list[int]) -> list[tuple[int, int, int]]:
    """(pid, RSS in KiB, open descriptors) of each process."""
    found = []
    for pid in pids:
        with contextlib.suppress(OSError):
            with open(f"/proc/{pid}/status") as handle:
                rss = next(int(line.split()[1]) for line in handle if line.startswith("VmRSS:"))
            found.append((pid, rss, len(os.listdir(f"/proc/{pid}/fd"))))
    return found


def _wait_for(predicate: Callable[[], object], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise SystemExit(f"bench.soak: {what} did not start")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _metrics(port: int) -> dict[str, float]:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    values: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, number = line.rpartition(" ")
            values[name] = float(number)
    return values


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=["driver", "engine"], default="driver")
    parser.add_argument("--port-file")
    parser.add_argument("--seconds", type=float, default=1800.0)
    parser.add_argument("--rate", type=float, default=8.0, help="requests a second, in all")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--format", default="pcml")
    arguments = parser.parse_args()
    if arguments.role == "engine":
        asyncio.run(_engine(arguments.port_file))
        return 0
    port_file = f"/tmp/pawlette-soak-engine-{os.getpid()}"
    engine = subprocess.Popen(
        [sys.executable, "-m", "bench.soak", "--role", "engine", "--port-file", port_file],
        cwd=ROOT,
    )
    port = _free_port()
    supervisor: subprocess.Popen[bytes] | None = None
    try:
        _wait_for(lambda: _read(port_file), "the engine")
        engine_port = int(_read(port_file))
        command = [
            sys.executable,
            "-c",
            "import sys; from pawlette.cli import main; sys.exit(main(sys.argv[1:]))",
            "serve",
            *("-f", arguments.format, "--upstream", f"http://127.0.0.1:{engine_port}"),
            *("--model", "m", "--port", str(port), "--workers", "2", "--log-level", "warning"),
            *("--timeout", "3", "--request-timeout", "15", "--send-timeout", "3"),
            *("--head-timeout", "3", "--body-timeout", "3", "--max-answer-bytes", "4M"),
        ]
        supervisor = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.DEVNULL)
        _wait_for(lambda: len(_workers(supervisor.pid)) == 2 and _healthy(port), "the server")
        time.sleep(2)
        stop = threading.Event()
        tally = Tally()
        background: Counter[str] = Counter()
        threads = [
            threading.Thread(
                target=_client_loop,
                args=(port, arguments.rate / arguments.clients, stop, tally, seed),
            )
            for seed in range(arguments.clients)
        ]
        threads.append(threading.Thread(target=_background, args=(port, stop, background)))
        for thread in threads:
            thread.start()
        started = time.monotonic()
        samples: list[tuple[float, list[tuple[int, int, int]]]] = []
        print(
            f"pawlette serve --workers 2, {arguments.seconds:g} s at {arguments.rate:g} "
            f"requests/s from {arguments.clients} kept-alive clients; {os.cpu_count()} CPUs\n"
        )
        print(
            f"{'minute':>6}{'requests':>10}{'RSS MB (workers)':>22}{'FDs (workers)':>17}{'load':>7}"
        )
        last_print = -60.0
        while time.monotonic() - started < arguments.seconds:
            time.sleep(10)
            elapsed = time.monotonic() - started
            sample = _sample(_workers(supervisor.pid))
            samples.append((elapsed, sample))
            if elapsed - last_print >= 60:
                last_print = elapsed
                total = sum(tally.outcomes.values())
                rss = " / ".join(f"{entry[1] / 1024:.0f}" for entry in sample)
                fds = " / ".join(str(entry[2]) for entry in sample)
                print(
                    f"{elapsed / 60:>6.1f}{total:>10}{rss:>22}{fds:>17}{os.getloadavg()[0]:>7.1f}",
                    flush=True,
                )
        stop.set()
        for thread in threads:
            thread.join(120)
        time.sleep(2)
        metrics = _metrics(port)
    finally:
        if supervisor is not None:
            supervisor.terminate()
            supervisor.wait(60)
        engine.terminate()
        engine.wait(10)
        with contextlib.suppress(OSError):
            os.remove(port_file)
    return _report(tally, background, samples, metrics)


def _report(
    tally: Tally,
    background: Counter[str],
    samples: list[tuple[float, list[tuple[int, int, int]]]],
    metrics: dict[str, float],
) -> int:
    print("\nanswers by kind (expected outcomes in brackets):")
    failures = 0
    for kind in KINDS:
        outcomes = {out: n for (name, out), n in tally.outcomes.items() if name == kind.name}
        bad = sum(n for out, n in outcomes.items() if out not in kind.expect)
        failures += bad
        shown = ", ".join(f"{out}: {n}" for out, n in sorted(outcomes.items()))
        print(
            f"  {kind.name:<15} [{' | '.join(kind.expect)}]  {shown}"
            + (f"  UNEXPECTED {bad}" if bad else "")
        )
    print("background: " + ", ".join(f"{key} {value}" for key, value in sorted(background.items())))
    server_500 = sum(
        value
        for name, value in metrics.items()
        if 'status="500"' in name and name.startswith("pawlette_requests_total")
    )
    per_worker = [
        metrics.get(f'pawlette_worker_requests_total{{worker="{index}"}}', 0.0)
        for index in range(2)
    ]
    spread = f"{per_worker[0]:.0f} / {per_worker[1]:.0f}"
    print(f"/metrics: requests per worker {spread}; 500s {server_500:.0f}")
    statuses = {
        name.split('"')[1]: value
        for name, value in metrics.items()
        if name.startswith("pawlette_requests_total{")
    }
    print(
        "/metrics: answers by status "
        + ", ".join(f"{k}: {v:.0f}" for k, v in sorted(statuses.items()))
    )
    flat = True
    if len(samples) >= 10:
        fifth = len(samples) // 5
        early, late = samples[fifth : 2 * fifth], samples[-fifth:]
        for index, what in ((1, "RSS"), (2, "FDs")):
            before = max(sum(entry[index] for entry in sample) for _, sample in early)
            after = max(sum(entry[index] for entry in sample) for _, sample in late)
            unit = 1024 if index == 1 else 1
            grew = after > before * 1.10 + (8 * 1024 if index == 1 else 20)
            flat &= not grew
            print(
                f"{what} of both workers, peak in the second fifth {before / unit:.0f}, "
                f"in the last fifth {after / unit:.0f}" + ("  GREW" if grew else "  (flat)")
            )
    for failure in tally.failures[:10]:
        print("  unexpected:", failure)
    ok = failures == 0 and server_500 == 0 and flat
    verdict = "PASS" if ok else "FAIL"
    print(f"\nunexpected answers {failures}, 500s {server_500:.0f}, flat {flat}: {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
