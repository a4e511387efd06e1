"""``pawlette serve``: its settings, its command-line options, and its entry point.

Importing this module needs no optional dependency; :func:`serve_main` imports the server
(Starlette, uvicorn, httptools: the ``serve`` extra) only when it runs.  Every setting is a
field of :class:`ServeConfig`, which the server is built from (nothing is read from module
state); ``pawlette serve --help`` lists them with their defaults, and docs/guides/serving.md
says why each default is what it is.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from .engines import ENGINES, GrammarSetting

MIB = 1024 * 1024
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
"""The ``Host`` names allowed by default when the server listens on a loopback address."""


@dataclass(frozen=True)
class ServeConfig:
    """Settings of one server.  ``upstream`` is the engine's base URL (``/v1`` optional)."""

    format: str
    upstream: str
    engine: str = "generic"
    grammar_syntax: GrammarSetting | None = None
    """The syntax of the forced grammars sent to the engine.  None: the engine's default,
    ``"auto"`` for ``llamacpp`` (each replica asked once whether it has llguidance: Lark to those
    that do, GBNF to the others), the one syntax it reads for the others; ``"lark"`` or
    ``"gbnf"`` for every replica (a llama.cpp without llguidance aborts on a Lark grammar).  A
    lazy grammar (``tool_choice: auto``) stays GBNF.  See :mod:`pawlette.serve.engines`."""
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
    log_level: str = "info"
    stream_arguments: bool = False
    """Stream call arguments as the model writes them, not once each call is known valid
    (the docs' output contracts: a malformed call may then reach the client partly)."""
    strict_schemas: bool = True
    """Grammars refuse object properties a tool's schema does not declare unless the schema
    allows them (``additionalProperties``), as OpenAI's strict function calling does; False
    follows JSON Schema's default (undeclared properties allowed)."""
    refuse_losses: tuple[str, ...] = ()
    """Loss fields (``tools``, ``messages.name``, ``all``: :mod:`pawlette.tokenization.losses`)
    whose loss from the prompt is a 400 naming its path; other losses are reported
    (:mod:`pawlette.serve.losses`)."""

    # ------------------------------------------------------------ the engine side
    timeout: float = 600.0
    """The longest wait for an engine's answer head (from the request's start, waiting for a
    free connection included), and the longest silence between two pieces of its answer."""
    connect_timeout: float = 10.0
    max_connections: int = 1024
    """Connections to the engines, pooled and reused (``--max-upstream-connections``)."""
    upstream_keep_alive: float = 2.0
    """How long an idle engine connection is kept for reuse: below the 5 s after which
    llama.cpp's server (cpp-httplib) and uvicorn-based engines close theirs."""
    max_answer_bytes: int = 16 * MIB
    """The most of an engine's answer held at once (decoded): a whole answer not streamed,
    one event of a stream (a stream's length is bounded by ``request_timeout``)."""
    replicas: tuple[str, ...] = ()
    """Further engine replicas (``--upstream`` given again), balanced with ``upstream``."""
    eject_seconds: float = 5.0
    """How long a failed replica is out of the rotation at first (doubling in a row)."""

    # ------------------------------------------------------------ the client side
    max_body_bytes: int = 8 * MIB
    max_head_bytes: int = 16 * 1024
    """The longest request head (request line and headers); longer is a 431."""
    head_timeout: float = 10.0
    """A new connection's first request head must be complete within this; a later request's
    head within this of its first byte (408 or a close otherwise)."""
    keep_alive: float = 5.0
    """How long an idle kept-alive client connection waits for its next request."""
    body_timeout: float = 60.0
    """A request body must have arrived whole within this of its head (408 otherwise)."""
    send_timeout: float = 30.0
    """A client that takes none of its answer for this long is disconnected (its engine
    request cancelled)."""
    request_timeout: float = 3600.0
    """The longest a request may take, from its head to the answer's last byte."""
    max_client_connections: int = 2048
    """Client connections held at once (per worker); past it the idlest is closed, or the new
    one refused with a 503 when none is idle."""
    max_requests_per_connection: int = 100
    """Requests answered on one client connection before it is closed (``connection:
    close``), so that with ``--workers`` clients reconnect and spread over the workers."""
    allowed_hosts: tuple[str, ...] | None = None
    """``Host`` names clients may address (``*``: any; ``.example.com``: it and its
    subdomains).  None: the loopback names when ``host`` is a loopback address, else any."""
    max_tokens: int | None = None
    """The output budget for requests that set none (None: per engine, see
    :mod:`pawlette.serve.engines`)."""
    workers: int = 1
    """Server processes sharing the port (``--workers``)."""
    fast_json: bool = True
    """Read and write JSON with orjson when it is installed (``json`` decides whatever orjson
    refuses, so answers do not depend on it); False: ``json`` alone (for comparisons)."""

    @property
    def upstreams(self) -> tuple[str, ...]:
        return (self.upstream, *self.replicas)

    @property
    def hosts(self) -> tuple[str, ...]:
        """The ``Host`` names allowed (see :attr:`allowed_hosts`)."""
        if self.allowed_hosts is not None:
            return self.allowed_hosts
        return LOOPBACK_NAMES if is_loopback(self.host) else ("*",)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _size(text: str) -> int:
    """A size: bytes, or with a K, M or G suffix (binary)."""
    units = {"k": 1024, "m": MIB, "g": 1024 * MIB}
    value = text.strip().lower().removesuffix("ib").removesuffix("b")
    factor = units.get(value[-1:], 1)
    if value[-1:] in units:
        value = value[:-1]
    try:
        return int(float(value) * factor)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a size: {text!r}; expected bytes, e.g. 65536, 64K or 8M"
        ) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``serve`` options, for a parser the caller owns (the ``pawlette`` CLI's subparser)."""
    parser.add_argument("-f", "--format", required=True, help="the chat format to serve")
    engine = parser.add_argument_group("the engine")
    engine.add_argument(
        "--upstream",
        required=True,
        action="append",
        help="base URL of a raw completion engine with POST /v1/completions; repeat it for "
        "replicas (least outstanding requests, failed replicas ejected for a while); "
        "credentials in it (http://user:password@host) are sent as HTTP basic auth",
    )
    engine.add_argument(
        "--engine",
        choices=sorted(ENGINES),
        default="generic",
        help="the upstream's kind: which extra fields it takes (default: generic)",
    )
    engine.add_argument(
        "--grammar-syntax",
        choices=("auto", "gbnf", "lark"),
        default=None,
        help="the syntax of forced tool-call grammars (default: the engine's; llamacpp: auto). "
        "auto: each llamacpp replica is asked once at start-up whether it is built with "
        "llguidance (asked again while it cannot answer), then gets llguidance's Lark (far "
        "cheaper per token) if it is, gbnf if not; lark: every replica is built with "
        "llguidance (one without aborts on a Lark grammar); grammars under tool_choice auto "
        "stay gbnf",
    )
    engine.add_argument("--model", help="model name to send upstream and list in /v1/models")
    engine.add_argument(
        "--tokenizer", help="tokenizer.json: send prompts as token ids (markers by id)"
    )
    engine.add_argument(
        "--upstream-api-key",
        default=os.environ.get("PAWLETTE_UPSTREAM_API_KEY"),
        help="key sent to the upstream (default: $PAWLETTE_UPSTREAM_API_KEY, else none)",
    )
    engine.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds within which the engine's answer must begin (waiting for a free "
        "connection included), and the longest silence inside it (default: 600)",
    )
    engine.add_argument(
        "--connect-timeout",
        type=float,
        default=10.0,
        help="seconds to wait to connect to the upstream (default: 10)",
    )
    engine.add_argument(
        "--max-upstream-connections",
        type=int,
        default=1024,
        help="connections to the engines per worker, pooled (default: 1024)",
    )
    engine.add_argument(
        "--upstream-keep-alive",
        type=float,
        default=2.0,
        help="seconds an idle engine connection is kept for reuse (default: 2, below "
        "llama.cpp's and uvicorn's 5)",
    )
    engine.add_argument(
        "--max-answer-bytes",
        type=_size,
        default=16 * MIB,
        help="the most of an engine answer held at once, decoded: a whole answer not "
        "streamed, one event of a stream; more is a 502 (default: 16M)",
    )
    engine.add_argument(
        "--eject-seconds",
        type=float,
        default=5.0,
        help="with several --upstream: how long a replica is out of the rotation after a "
        "refused connect or 5 failed answers in a row, doubled for each ejection in a row up "
        "to 60 s (default: 5)",
    )
    engine.add_argument(
        "--max-tokens",
        type=int,
        help="output budget for requests that set none (default: per engine; see the docs)",
    )
    engine.add_argument(
        "--schema-default",
        choices=["strict", "json-schema"],
        default="strict",
        help="grammar-constrained calls: 'strict' refuses object properties a tool's schema "
        "does not declare unless it allows them (additionalProperties), as OpenAI's strict "
        "mode; 'json-schema' allows them, JSON Schema's default (default: strict)",
    )
    engine.add_argument(
        "--stream-arguments",
        action="store_true",
        help="stream tool-call arguments as they are generated (default: send each call once "
        "it is known valid; see the docs' output contracts)",
    )
    engine.add_argument(
        "--refuse-losses",
        default=None,
        metavar="FIELDS",
        help="answer 400 when the format leaves one of these request fields out of the prompt, "
        "as its model's template does (comma-separated: tools, messages.name, "
        "messages.reasoning_content, ...; a field covers those under it; all: every loss); "
        "default: serve the request and report the losses in the x-pawlette-losses header",
    )
    client = parser.add_argument_group("the clients")
    client.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    client.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    client.add_argument(
        "--api-key",
        default=os.environ.get("PAWLETTE_API_KEY"),
        help="require 'Authorization: Bearer KEY' (default: $PAWLETTE_API_KEY, else none)",
    )
    client.add_argument(
        "--allowed-host",
        action="append",
        dest="allowed_hosts",
        metavar="NAME",
        help="a Host name clients may address (repeat it; '*': any; '.example.com': it and "
        "its subdomains); default: localhost, 127.0.0.1 and ::1 when --host is a loopback "
        "address, else any",
    )
    client.add_argument(
        "--max-body-bytes",
        type=_size,
        default=8 * MIB,
        help="largest request body accepted; larger is a 413 (default: 8M)",
    )
    client.add_argument(
        "--max-head-bytes",
        type=_size,
        default=16 * 1024,
        help="largest request head (request line and headers); larger is a 431 (default: 16K)",
    )
    client.add_argument(
        "--head-timeout",
        type=float,
        default=10.0,
        help="seconds within which a request's head must arrive whole, from the connection's "
        "start or the request's first byte; else 408 and closed (default: 10)",
    )
    client.add_argument(
        "--keep-alive",
        type=float,
        default=5.0,
        help="seconds an idle client connection waits for its next request (default: 5)",
    )
    client.add_argument(
        "--body-timeout",
        type=float,
        default=60.0,
        help="seconds within which a request's body must arrive whole; else 408 (default: 60)",
    )
    client.add_argument(
        "--send-timeout",
        type=float,
        default=30.0,
        help="seconds a client may take none of its answer before it is disconnected and its "
        "engine request cancelled (default: 30)",
    )
    client.add_argument(
        "--request-timeout",
        type=float,
        default=3600.0,
        help="the longest one request may take, head to last byte of the answer (default: 3600)",
    )
    client.add_argument(
        "--max-client-connections",
        type=int,
        default=2048,
        help="client connections per worker; past it the idlest is closed, or the new one "
        "refused (503) when none is idle (default: 2048)",
    )
    client.add_argument(
        "--max-requests-per-connection",
        type=int,
        default=100,
        help="requests answered on one client connection before it is closed, so clients "
        "reconnect and spread over --workers (default: 100)",
    )
    server = parser.add_argument_group("the server")
    server.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning"],
        help="how much the log says (info: a line per request and each render's losses)",
    )
    server.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes sharing the port (SO_REUSEPORT; default: 1)",
    )


def config_from_arguments(arguments: argparse.Namespace) -> ServeConfig:
    return ServeConfig(
        format=arguments.format,
        upstream=arguments.upstream[0],
        replicas=tuple(arguments.upstream[1:]),
        workers=arguments.workers,
        eject_seconds=arguments.eject_seconds,
        engine=arguments.engine,
        grammar_syntax=arguments.grammar_syntax,
        model=arguments.model,
        tokenizer=arguments.tokenizer,
        host=arguments.host,
        port=arguments.port,
        api_key=arguments.api_key or None,
        upstream_api_key=arguments.upstream_api_key or None,
        timeout=arguments.timeout,
        connect_timeout=arguments.connect_timeout,
        max_connections=arguments.max_upstream_connections,
        upstream_keep_alive=arguments.upstream_keep_alive,
        max_answer_bytes=arguments.max_answer_bytes,
        max_body_bytes=arguments.max_body_bytes,
        max_head_bytes=arguments.max_head_bytes,
        head_timeout=arguments.head_timeout,
        keep_alive=arguments.keep_alive,
        body_timeout=arguments.body_timeout,
        send_timeout=arguments.send_timeout,
        request_timeout=arguments.request_timeout,
        max_client_connections=arguments.max_client_connections,
        max_requests_per_connection=arguments.max_requests_per_connection,
        allowed_hosts=tuple(arguments.allowed_hosts) if arguments.allowed_hosts else None,
        max_tokens=arguments.max_tokens,
        log_level=arguments.log_level,
        stream_arguments=arguments.stream_arguments,
        strict_schemas=arguments.schema_default == "strict",
        refuse_losses=tuple(arguments.refuse_losses.split(",")) if arguments.refuse_losses else (),
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
    for number, upstream in enumerate(config.upstreams):
        try:
            parts = urlsplit(upstream)
            valid = parts.scheme in ("http", "https") and bool(parts.hostname)
            parts.port  # noqa: B018 (raises on a port that is not a number)
        except ValueError:
            valid = False
        if not valid:
            # Never the URL itself: it may hold a password.
            raise RequestError(
                f"--upstream #{number + 1}", "not a URL", "an http:// or https:// URL"
            )
        if (parts.username or parts.password) and config.upstream_api_key:
            raise RequestError(
                f"--upstream #{number + 1}",
                "credentials in the URL and --upstream-api-key both",
                "one way to authenticate to the engine",
            )
    if config.workers < 1:
        raise RequestError("--workers", repr(config.workers), "at least 1")
    from ..tokenization.losses import parse_loss_fields

    parse_loss_fields(config.refuse_losses, "--refuse-losses")
    for option, value in (
        ("--timeout", config.timeout),
        ("--connect-timeout", config.connect_timeout),
        ("--eject-seconds", config.eject_seconds),
        ("--upstream-keep-alive", config.upstream_keep_alive),
        ("--head-timeout", config.head_timeout),
        ("--keep-alive", config.keep_alive),
        ("--body-timeout", config.body_timeout),
        ("--send-timeout", config.send_timeout),
        ("--request-timeout", config.request_timeout),
    ):
        if not value > 0:
            raise RequestError(option, repr(value), "a number of seconds above 0")
    for option, count, least in (
        ("--max-upstream-connections", config.max_connections, 1),
        ("--max-answer-bytes", config.max_answer_bytes, 1024),
        ("--max-body-bytes", config.max_body_bytes, 1),
        ("--max-head-bytes", config.max_head_bytes, 1024),
        ("--max-client-connections", config.max_client_connections, 1),
        ("--max-requests-per-connection", config.max_requests_per_connection, 1),
    ):
        if count < least:
            raise RequestError(option, repr(count), f"at least {least}")
    for name in config.hosts:
        if not name or any(character.isspace() or character in "/@" for character in name):
            raise RequestError("--allowed-host", repr(name), "a host name, '.domain' or '*'")


def run_config(config: ServeConfig) -> int:
    """Run the server for ``config``; errors are one line on stderr and status 2."""
    from ..errors import PawletteError

    try:
        from .app import run
        from .workers import run_workers
    except ImportError as error:
        sys.stderr.write(
            f"pawlette serve: needs the serve extra ({error.name or error}); "
            "pip install -e '.[serve]' in pawlette's repository\n"
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
