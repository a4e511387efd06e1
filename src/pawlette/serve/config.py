"""``pawlette serve``: its settings, its command-line options, and its entry point.

Importing this module needs no optional dependency; :func:`serve_main` imports the server
(Starlette, uvicorn, httpx: the ``serve`` extra) only when it runs.

    pawlette serve -f FORMAT --upstream URL [--engine generic|vllm|vllm-0.9|sglang|llamacpp|tgi]
                   [--model NAME] [--tokenizer PATH] [--host 127.0.0.1] [--port 8000]
                   [--api-key KEY] [--upstream-api-key KEY] [--timeout S]
                   [--connect-timeout S] [--max-body-bytes N] [--max-tokens N]
                   [--upstream URL ...] [--workers N] [--eject-seconds S]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from .engines import ENGINES


@dataclass(frozen=True)
class ServeConfig:
    """Settings of one server.  ``upstream`` is the engine's base URL (``/v1`` optional)."""

    format: str
    upstream: str
    engine: str = "generic"
    model: str | None = None
    """The model name sent upstream and listed by ``/v1/models``; asked of the upstream's
    ``/v1/models`` at start-up when not given."""
    tokenizer: str | None = None
    """A ``tokenizer.json``: prompts are sent as token ids."""
    host: str = "127.0.0.1"
    port: int = 8000
    api_key: str | None = None
    """Clients must send ``Authorization: Bearer KEY`` (401 otherwise)."""
    upstream_api_key: str | None = None
    timeout: float = 600.0
    """The longest wait for the upstream: for its answer, and between two pieces of a stream."""
    connect_timeout: float = 10.0
    max_body_bytes: int = 8 * 1024 * 1024
    max_tokens: int | None = None
    """The output budget for requests that set none (None: per engine, see
    :mod:`pawlette.serve.engines`)."""
    max_connections: int = 1024
    """Connections to the upstream, pooled and reused."""
    log_level: str = "info"
    stream_arguments: bool = False
    """Stream call arguments as the model writes them, not once each call is known valid
    (README, "Contracts": a malformed call may then reach the client partly)."""
    # Scale-out (pawlette.serve.balancer and .workers).
    replicas: tuple[str, ...] = ()
    """Further engine replicas (``--upstream`` given again), balanced with ``upstream``."""
    workers: int = 1
    """Server processes sharing the port (``--workers``)."""
    eject_seconds: float = 5.0
    """How long a failed replica is out of the rotation at first (doubling in a row)."""

    @property
    def upstreams(self) -> tuple[str, ...]:
        return (self.upstream, *self.replicas)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``serve`` options, for a parser the caller owns (the ``pawlette`` CLI's subparser)."""
    parser.add_argument("-f", "--format", required=True, help="the chat format to serve")
    parser.add_argument(
        "--upstream",
        required=True,
        action="append",
        help="base URL of a raw completion engine with POST /v1/completions; repeat it for "
        "replicas (least outstanding requests, failed replicas ejected for a while)",
    )
    parser.add_argument(
        "--engine",
        choices=sorted(ENGINES),
        default="generic",
        help="the upstream's kind: which extra fields it takes (default: generic)",
    )
    parser.add_argument("--model", help="model name to send upstream and list in /v1/models")
    parser.add_argument(
        "--tokenizer", help="tokenizer.json: send prompts as token ids (markers by id)"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--api-key",
        default=os.environ.get("PAWLETTE_API_KEY"),
        help="require 'Authorization: Bearer KEY' (default: $PAWLETTE_API_KEY, else none)",
    )
    parser.add_argument(
        "--upstream-api-key",
        default=os.environ.get("PAWLETTE_UPSTREAM_API_KEY"),
        help="key sent to the upstream (default: $PAWLETTE_UPSTREAM_API_KEY, else none)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds to wait for the upstream's answer or its next piece (default: 600)",
    )
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=10.0,
        help="seconds to wait to connect to the upstream (default: 10)",
    )
    parser.add_argument(
        "--max-body-bytes",
        type=int,
        default=8 * 1024 * 1024,
        help="largest request body accepted; larger is a 413 (default: 8 MiB)",
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        help="output budget for requests that set none (default: per engine; see the docs)",
    )
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes sharing the port (SO_REUSEPORT; default: 1)",
    )
    parser.add_argument(
        "--eject-seconds",
        type=float,
        default=5.0,
        help="with several --upstream: how long a replica is out of the rotation after a "
        "refused connect or 5 failed answers in a row, doubled for each ejection in a row up "
        "to 60 s (default: 5)",
    )
    parser.add_argument(
        "--stream-arguments",
        action="store_true",
        help="stream tool-call arguments as they are generated (default: send each call once "
        "it is known valid; see the README's Contracts)",
    )


def config_from_arguments(arguments: argparse.Namespace) -> ServeConfig:
    return ServeConfig(
        format=arguments.format,
        upstream=arguments.upstream[0],
        replicas=tuple(arguments.upstream[1:]),
        workers=arguments.workers,
        eject_seconds=arguments.eject_seconds,
        engine=arguments.engine,
        model=arguments.model,
        tokenizer=arguments.tokenizer,
        host=arguments.host,
        port=arguments.port,
        api_key=arguments.api_key or None,
        upstream_api_key=arguments.upstream_api_key or None,
        timeout=arguments.timeout,
        connect_timeout=arguments.connect_timeout,
        max_body_bytes=arguments.max_body_bytes,
        max_tokens=arguments.max_tokens,
        log_level=arguments.log_level,
        stream_arguments=arguments.stream_arguments,
    )


def serve_main(argv: Sequence[str]) -> int:
    """``pawlette serve ARGS``: run the server until interrupted.

    Returns 0 after a clean shutdown (130 after Ctrl-C), 2 after a one-line error on stderr
    (unknown format, unusable tokenizer, missing ``serve`` extra); argparse exits 2 itself on
    a bad option.
    """
    parser = argparse.ArgumentParser(
        prog="pawlette serve",
        description="An OpenAI-compatible chat server over a raw completion engine.",
    )
    add_arguments(parser)
    config = config_from_arguments(parser.parse_args(list(argv)))
    return run_config(config)


def check_config(config: ServeConfig) -> None:
    """Refuse settings no server can run with, before any socket or process is made (a port
    out of range started one worker and crashed the next; an upstream that is not a URL made
    every request fail)."""
    from urllib.parse import urlsplit

    from ..errors import RequestError

    if not 0 <= config.port <= 65535:
        raise RequestError("--port", repr(config.port), "a port number from 0 to 65535")
    for upstream in config.upstreams:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise RequestError("--upstream", repr(upstream), "an http:// or https:// URL")
    if config.workers < 1:
        raise RequestError("--workers", repr(config.workers), "at least 1")
    for option, value in (
        ("--timeout", config.timeout),
        ("--connect-timeout", config.connect_timeout),
        ("--eject-seconds", config.eject_seconds),
    ):
        if not value > 0:
            raise RequestError(option, repr(value), "a number of seconds above 0")


def run_config(config: ServeConfig) -> int:
    """Run the server for ``config``; errors are one line on stderr and status 2."""
    from ..errors import PawletteError

    try:
        from .app import run
        from .workers import run_workers
    except ImportError as error:
        sys.stderr.write(
            f"pawlette serve: needs the serve extra ({error.name or error}); "
            "pip install 'pawlette[serve]'\n"
        )
        return 2
    try:
        check_config(config)
        if config.workers != 1:
            return run_workers(config)
        run(config)
    except PawletteError as error:
        sys.stderr.write(f"pawlette serve: {error}\n")
        return 2
    except KeyboardInterrupt:  # uvicorn re-raises Ctrl-C after its graceful shutdown
        return 130
    return 0
