"""``pawlette serve --workers N``: N server processes that share nothing but the port.

Each worker is a whole server (its own event loop, upstream connection pools, balancer and
metrics) in a process of its own, so N workers use N cores.  By default every worker binds the
port itself with ``SO_REUSEPORT`` and the kernel spreads new connections over them by a hash
of the connection's addresses; with ``reuse_port=False`` they share one listening socket
opened here (what uvicorn's ``--workers`` does), and whichever worker wakes first accepts.
Measured here (two workers, 50 clients opening their connections at once, three trials each):
with a shared socket the less busy worker got 14%, 46% and 16% of the connections; with
``SO_REUSEPORT`` 48%, 30% and 44% (a hash spreads evenly on average, not exactly).

The kernel spreads connections, not requests: a client that keeps a few connections alive
sends all its requests to the workers those few landed on (a 10-minute soak through two
workers split its 7,200 requests 6,424 / 776).  So a connection is closed after
``--max-requests-per-connection`` answers (100 by default; its last answer says
``connection: close``), the client reconnects, and over many connections the hash evens the
requests out.

This process only supervises: it checks the settings (format, tokenizer) before starting
anything, restarts a worker that dies, stops them all on SIGINT or SIGTERM (each finishes its
requests: uvicorn's graceful shutdown), and gives up (status 2) when a worker dies within a
few seconds of its start three times in a row.  The workers' metrics are summed by whichever
worker answers ``/metrics`` (see :mod:`pawlette.serve.metrics`); the directory they share is
removed at exit.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import shutil
import signal
import socket
import tempfile
import time
from multiprocessing.process import BaseProcess
from types import FrameType

from ..errors import PawletteError
from .config import ServeConfig
from .metrics import DIRECTORY_VARIABLE, WORKER_VARIABLE

logger = logging.getLogger("pawlette.serve")

_BACKLOG = 2048
_QUICK_DEATH_SECONDS = 5.0
_QUICK_DEATHS = 3
_STOP_SECONDS = 15.0


def listening_socket(host: str, port: int, *, reuse_port: bool, listen: bool) -> socket.socket:
    """A TCP socket bound to ``host:port``, with ``SO_REUSEPORT`` if asked."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP,
    # and accepted sockets inherit it (else: 40 ms delayed ACKs on small writes).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        if listen:
            sock.listen(_BACKLOG)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _worker_main(
    config: ServeConfig, index: int, directory: str, shared: socket.socket | None, port: int
) -> None:
    """One worker: a whole server on the shared socket, or on its own SO_REUSEPORT socket."""
    import uvicorn

    from .app import tune_collector, uvicorn_config
    from .inbound import raise_file_limit

    os.environ[DIRECTORY_VARIABLE] = directory
    os.environ[WORKER_VARIABLE] = str(index)
    raise_file_limit(config)
    sock = shared or listening_socket(config.host, port, reuse_port=True, listen=True)
    server = uvicorn.Server(uvicorn_config(config))
    tune_collector()  # the worker owns its process (see app.tune_collector)
    server.run(sockets=[sock])


def run_workers(config: ServeConfig, *, reuse_port: bool = True) -> int:
    """Run ``config.workers`` servers until SIGINT or SIGTERM; 0 after a clean stop."""
    if config.workers < 1:
        raise PawletteError(f"--workers: found {config.workers}; expected at least 1")
    if not hasattr(socket, "SO_REUSEPORT"):
        reuse_port = False
    from ..formats import registered_in_this_process
    from .app import build_app

    build_app(config)  # unknown format, unusable tokenizer: one error now, not N
    if registered_in_this_process(config.format):
        # Workers are spawned interpreters: they import pawlette afresh and never run the
        # caller's register_format, so each would die on an unknown format.
        raise PawletteError(
            f"--workers {config.workers}: format {config.format!r} was registered with "
            "register_format in this process, which worker processes cannot see; declare it "
            "under the 'pawlette.formats' entry point group, or run one worker"
        )
    try:
        # With SO_REUSEPORT this socket only holds the port (and resolves port 0) for the
        # workers' own sockets: a socket that does not listen gets no connections.
        holder = listening_socket(
            config.host, config.port, reuse_port=reuse_port, listen=not reuse_port
        )
    except OSError as error:
        raise PawletteError(f"--port {config.port}: cannot listen ({error})") from error
    port = holder.getsockname()[1]
    directory = tempfile.mkdtemp(prefix="pawlette-metrics-")
    spawn = multiprocessing.get_context("spawn")
    shared = None if reuse_port else holder
    stopping: list[int] = []

    def stop(number: int, frame: FrameType | None) -> None:
        stopping.append(number)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}

    def start(index: int) -> tuple[BaseProcess, float]:
        process = spawn.Process(
            target=_worker_main,
            args=(config, index, directory, shared, port),
            name=f"pawlette-worker-{index}",
        )
        process.start()
        return process, time.monotonic()

    workers = [start(index) for index in range(config.workers)]
    logger.warning(
        "pawlette serve: %d workers on %s:%d (%s)",
        config.workers,
        config.host,
        port,
        "SO_REUSEPORT" if reuse_port else "one shared socket",
    )
    quick_deaths = [0] * config.workers
    status = 0
    try:
        while not stopping:
            for index, (process, started) in enumerate(workers):
                if process.is_alive():
                    continue
                lived = time.monotonic() - started
                quick_deaths[index] = quick_deaths[index] + 1 if lived < _QUICK_DEATH_SECONDS else 0
                if quick_deaths[index] >= _QUICK_DEATHS:
                    logger.error("worker %d keeps dying at start; stopping", index)
                    status = 2
                    stopping.append(0)
                    break
                logger.warning("worker %d exited (%s); restarting it", index, process.exitcode)
                workers[index] = start(index)
            time.sleep(0.2)
    finally:
        for process, _ in workers:
            if process.is_alive():
                process.terminate()  # SIGTERM: uvicorn finishes its requests and exits
        deadline = time.monotonic() + _STOP_SECONDS
        for process, _ in workers:
            process.join(max(0.1, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(5)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        holder.close()
        shutil.rmtree(directory, ignore_errors=True)
    if status == 0 and signal.SIGINT in stopping:
        return 130
    return status


def worker_pids(supervisor: int) -> list[int]:
    """The live worker processes of supervisor ``supervisor`` (Linux /proc), for the tests
    (multiprocessing's resource tracker, also a child, is left out)."""
    children: list[int] = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) != supervisor or fields[0] == "Z":
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    command = handle.read()
            except OSError:
                continue
            if b"spawn_main" in command:
                children.append(int(entry))
    return sorted(children)
