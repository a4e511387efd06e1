"""The HTTP server: OpenAI's chat-completions API over a raw completion engine.

Routes::

    POST /v1/chat/completions   stream true or false
    GET  /v1/models             the one model served
    GET  /health                200 {"status": "ok"} while the server runs (no upstream call)
    GET  /metrics               Prometheus text format (:mod:`~pawlette.serve.metrics`)

A request is checked (:mod:`~pawlette.serve.request`), rendered with the format (with the
generation prompt, plus any forced prefix from :mod:`~pawlette.serve.tool_choice`), sent to
the upstream's ``POST /v1/completions`` (fields per :mod:`~pawlette.serve.engines`), and the
upstream's text goes through the format's incremental parser
(:mod:`~pawlette.serve.pipeline`) back to the client as OpenAI chunks or one message.

Errors, always OpenAI's body ``{"error": {"message", "type", "param", "code"}}``:

=====  ==============================================================================
400    invalid request (``param`` names the field), a ``tool_choice`` that cannot be
       honoured (a forced call to tools the format leaves out included), a field the
       format leaves out under ``--refuse-losses`` (:mod:`~pawlette.serve.losses`), a
       request the upstream rejected with a 400/413/422, or a ``Host`` not in
       ``--allowed-host``
401    ``--api-key`` set and the key is missing or wrong
403    a browser request from another site (its ``Origin`` is not an allowed host)
404    no such route
408    a request head or body slower than ``--head-timeout``/``--body-timeout``
413    a body over ``--max-body-bytes`` (the connection is closed: the rest is not read)
415    a body declared as something other than JSON (``text/plain``, a form)
429    the upstream answered 429
431    a request head over ``--max-head-bytes``
502    the engine: unreachable, a 5xx or another status that is no completion, a broken or
       malformed answer, one that is not UTF-8, or one over ``--max-answer-bytes`` (the
       ``code`` says which)
503    every replica is out of rotation after failures (:mod:`~pawlette.serve.balancer`),
       every connection to the engines stayed busy for ``--timeout``, or the server holds
       ``--max-client-connections`` busy connections
504    no answer head within ``--timeout``, a silence of ``--timeout`` inside it, or the
       request's ``--request-timeout`` passed
=====  ==============================================================================

Error messages name what happened and which engine ("the engine", "engine replica 2"),
never an engine's address or credentials (the log has the address).

No tools, no tool calls: a request that declares no functions (no ``tools``, or only omni's
actions), like one with ``tool_choice: "none"``, never gets ``tool_calls`` back, streamed or
not.  A call the model writes anyway ends the answer where it begins (the upstream request is
cancelled): the text before it is the content and ``finish_reason`` is ``"stop"``.

Hostile input gets a 400 naming the field, never a 500: unknown top-level keys, text with a lone
surrogate anywhere (``"\\ud800"``), ``NaN``, integers too long to print, JSON nested deeper than
:data:`~pawlette.json_values.MAX_JSON_DEPTH` (a body nested 100,000 deep included).  A 500 is
a bug: it is answered as OpenAI's error body like the others, on a connection kept alive.

Once a stream has started, a failure upstream (the connection dies, a read times out, an
error event, garbage) ends it with one ``data: {"error": {...}}`` event and no ``[DONE]``.
A client that disconnects cancels its upstream request at once, streaming or not: the server
listens for the disconnect while it waits, and closes the upstream connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import functools
import gc
import hmac
import json
import logging
import os
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ..emit.tool_choice import ToolChoice
from ..errors import PawletteError, RequestError
from ..formats import get_format
from ..json_values import MAX_JSON_DEPTH
from ..openai import tools_from_openai
from ..tokenization import ConversationEncoder, load_backend
from ..tokenization.losses import loss_field, parse_loss_fields
from ..types import Rendering, Tool
from .asgi import WATCH, App, DisconnectWatch, watched
from .balancer import Balancer, NoReplica, Replica, ReplicaError
from .chunks import Delta
from .config import ServeConfig
from .engines import ENGINES, Engine
from .errors import ErrorResponse, ServerError, upstream_failure
from .grammar_syntax import GrammarSyntaxes
from .http1 import EngineClient
from .json_codec import JsonCodec
from .losses import HEADER, forced_without_tools, header_value, refused_loss
from .metrics import CONTENT_TYPE, SharedMetrics
from .observe import current, instrument
from .pipeline import ChunkPipeline, Completion, encode_events
from .policy import RequestPolicy
from .request import ChatRequest, parse_chat_request
from .sse import LineTooLong, NotUtf8, SSEDecoder
from .tool_choice import ToolPlan, plan_tool_choice
from .transport import Answer, EngineError, EngineTimeout

logger = logging.getLogger("pawlette.serve")

T = TypeVar("T")
Write = Callable[[bytes, bool], Awaitable[None]]
"""``write(data, end)``: send ``data``; ``end`` ends the answer's body in the same write."""

_DONE = b"data: [DONE]\n\n"
_ERROR_DETAIL_CHARS = 500
_ERROR_BODY_BYTES = 65536
"""The most of an engine's error body read (its message is shown up to 500 characters)."""
_DRAIN_SECONDS = 1.0
_PLANS = 64
"""Tool plans kept (distinct tool lists in use; a full cache starts again)."""
_EVENT_STREAM = "text/event-stream"


_YOUNG_COLLECTION = 10_000


def tune_collector() -> None:
    """Collect the youngest generation every 10,000 allocations instead of 700.

    Fifty streams in flight keep a few thousand young objects alive (parsers, chunks,
    tasks): at 700 the collector walks them again and again, and now and then the whole
    heap (measured with ``gc.callbacks`` over 48,000 streamed chunks: 0.13 s in the
    collector, 2.8 µs a chunk, against 0.03 s at 10,000).  Only cyclic garbage waits
    longer; everything else is freed by reference counts as before.
    """
    young, middle, old = gc.get_threshold()
    if 0 < young < _YOUNG_COLLECTION:
        gc.set_threshold(_YOUNG_COLLECTION, middle, old)


def _too_large(limit: int) -> ServerError:
    return ServerError(
        413,
        f"request body: over {limit} bytes; expected at most {limit} (--max-body-bytes)",
        code="request_too_large",
        close=True,  # the rest of the upload is not read
    )


def _engine_failure(replica: Replica, error: EngineError, config: ServeConfig) -> ServerError:
    """What the client is told of an engine's failure: what happened and which engine, never
    its address (the log has it)."""
    name = replica.name
    if error.code == "request_timeout":
        return upstream_failure(
            504,
            f"{name}: {error}; the request took longer than {config.request_timeout:g} s "
            "(--request-timeout)",
            "request_timeout",
        )
    if isinstance(error, EngineTimeout):
        return upstream_failure(504, f"{name}: {error}", error.code)
    if error.code == "upstream_saturated":
        return upstream_failure(503, f"{error}", error.code)
    what = {
        "upstream_unreachable": "unreachable",
        "upstream_disconnected": "the answer broke off",
        "upstream_invalid": "a malformed answer",
        "upstream_too_large": "an answer too large",
    }.get(error.code, "failed")
    return upstream_failure(error.status, f"{name}: {what} ({error})", error.code)


@dataclass
class Prepared:
    """A checked request, ready to send: the upstream body and the tool plan."""

    chat: ChatRequest
    plan: ToolPlan
    tools: tuple[Tool, ...]
    body: dict[str, Any]
    rendering: Rendering | None = None
    """Kept when the body depends on the replica's grammar syntax (``--grammar-syntax auto``
    with a forced grammar): the body, plan and tools are then made again for the replica the
    request goes to (:meth:`Server._content_for`), and are that replica's once it is sent."""
    prompts: dict[str, str | list[int]] = field(default_factory=dict)
    """The engine prompt per forced prefix (a prompt in token ids is encoded once)."""
    losses: tuple[str, ...] = ()
    """What the format left out of the prompt (the render's losses): told to the client in
    the ``x-pawlette-losses`` header (:mod:`~pawlette.serve.losses`)."""


class EventStream(Response):
    """A ``text/event-stream`` answer written by ``produce(write)``.

    It listens for the client's disconnect the whole time, whatever the spec version the
    ASGI server reports, and cancels ``produce`` at once when it comes, so the upstream
    request is closed even while the upstream is silent.
    """

    media_type = _EVENT_STREAM
    _HEADERS = (
        (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"),
        (b"content-type", b"text/event-stream; charset=utf-8"),
    )

    def __init__(
        self,
        produce: Callable[[Write], Awaitable[None]],
        headers: tuple[tuple[bytes, bytes], ...] = (),
    ) -> None:
        self.status_code = 200
        self.background = None
        self.produce = produce
        self.raw_headers = [*self._HEADERS, *headers]  # what init_headers made, made once
        self.last_write: Callable[[bytes], None] | None = None
        """Shown the body's last write (the metrics count an error event there)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})

        ended = False

        watch: DisconnectWatch | None = scope.get(WATCH)
        last_write = self.last_write

        async def write(data: bytes, end: bool) -> None:
            nonlocal ended
            if not ended:
                ended = end
                if end:
                    if watch is not None:
                        watch.close()  # uvicorn's receive reports a disconnect once the body ends
                    if last_write is not None:
                        last_write(data)
                await send({"type": "http.response.body", "body": data, "more_body": not end})

        # produce ends the body with its last write when the engine's answer is read to its
        # end (its connection back in the pool before the client can send its next request);
        # else the body ends here, after produce has drained the engine's answer.
        disconnected, _ = await watched(scope, receive, self.produce(write))
        if not disconnected and not ended:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


class Server:
    """One format over one upstream; :func:`build_app` wraps it in a Starlette app."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.format = get_format(config.format)
        engine = ENGINES.get(config.engine)
        if engine is None:
            raise RequestError(
                "--engine", f"found {config.engine!r}", "one of " + ", ".join(ENGINES)
            )
        if config.grammar_syntax is not None and engine.grammar_syntax is None:
            raise PawletteError(
                f"--grammar-syntax: engine {engine.name!r} takes no grammar; "
                "expected no --grammar-syntax with it"
            )
        self.encoder: ConversationEncoder | None = None
        if config.tokenizer is not None:
            if not engine.token_ids:
                raise PawletteError(
                    f"--tokenizer: engine {engine.name!r} takes text prompts only; "
                    "expected no --tokenizer with it"
                )
            # The training encoder: prompts get exactly the ids the model was trained on.
            backend = load_backend(config.tokenizer, source=f"--tokenizer {config.tokenizer}")
            self.encoder = ConversationEncoder(self.format, backend)
        self.json = JsonCodec(config.fast_json)
        # Scale-out (pawlette.serve.balancer, .metrics, .workers): replicas and numbers.
        self.metrics = SharedMetrics.from_environment()
        self.upstreams = Balancer(
            list(config.upstreams), self.metrics.registry, eject_seconds=config.eject_seconds
        )
        self.syntaxes = GrammarSyntaxes(
            engine, config.grammar_syntax, self.upstreams.replicas, self.metrics.registry
        )
        self.engine = self.syntaxes.default
        """The engine for plans made before a replica is chosen (GBNF grammars under
        ``--grammar-syntax auto``)."""
        self.policy = RequestPolicy(config.hosts)
        self.refused_losses = parse_loss_fields(config.refuse_losses, "--refuse-losses")
        self.model = config.model
        self.created = int(time.time())
        self._plans: dict[
            tuple[str | None, ToolChoice, bool, str | None, str | None],
            tuple[tuple[Tool, ...], ToolPlan],
        ]
        self._plans = {}
        self._headers = {"content-type": "application/json"}
        if config.upstream_api_key:
            self._headers["authorization"] = f"Bearer {config.upstream_api_key}"

    @property
    def replica(self) -> Replica:
        """The replica serving the current request (else the first)."""
        context = current()
        if context is not None and context.replica is not None:
            return context.replica
        return self.upstreams.replicas[0]

    @property
    def advertised_model(self) -> str:
        return self.model or self.format.name

    # ------------------------------------------------------------------ lifecycle

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        config = self.config
        client = EngineClient(
            timeout=config.timeout,
            connect_timeout=config.connect_timeout,
            max_connections=config.max_connections,
            verify=ssl.create_default_context(),
            keepalive_seconds=config.upstream_keep_alive,
            max_answer_bytes=config.max_answer_bytes,
        )
        self.upstreams.client = client
        try:
            if self.model is None:
                await self._discover_model()
            logger.info(
                "serving format %r as model %r over %s (engine %s, %s prompts, %s)",
                self.format.name,
                self.advertised_model,
                ", ".join(replica.base_url for replica in self.upstreams.replicas),
                self.engine.name,
                "token-id" if self.encoder else "text",
                self._grammars_said(),
            )
            async with anyio.create_task_group() as group:
                self.syntaxes.start(group, client, self._headers, config.timeout)
                group.start_soon(self._scale_out_chores)
                try:
                    yield
                finally:
                    group.cancel_scope.cancel()
        finally:
            self.upstreams.client = None
            client.close()

    def _grammars_said(self) -> str:
        """What the start-up log says of the grammars sent."""
        if self.syntaxes.asking:
            return "forced grammars in Lark to replicas built with llguidance, else GBNF"
        syntax = self.engine.grammar_syntax
        return "no grammars" if syntax is None else f"forced grammars in {syntax.upper()}"

    async def _scale_out_chores(self) -> None:
        """Probe ejected replicas; with ``--workers``, write this worker's metrics each second."""
        async with anyio.create_task_group() as group:
            group.start_soon(self.upstreams.probe_forever, min(5.0, self.config.connect_timeout))
            if self.metrics.directory is not None:
                group.start_soon(self.metrics.dump_forever)

    async def _discover_model(self) -> None:
        """Ask the upstream's ``/v1/models`` for its model name (best effort; with several
        replicas, the first that answers)."""
        client = self.upstreams.client
        failure: Exception | None = None
        for replica in self.upstreams.replicas:
            try:
                assert client is not None
                answer = await client.get(
                    replica.base_url + "/v1/models",
                    {**self._headers, **replica.headers},
                    timeout=min(5.0, self.config.timeout),
                )
                try:
                    body = await answer.read()
                finally:
                    await answer.aclose()
                if answer.status_code != 200:
                    raise ValueError(f"HTTP {answer.status_code}")
                name = self.json.load_body(body)["data"][0]["id"]
            except (EngineError, ValueError, LookupError, TypeError) as error:
                failure = error
                continue
            if isinstance(name, str) and name:
                self.model = name
            return
        logger.warning(
            "upstream /v1/models: no model name (%s); serving as %r and sending no "
            "model upstream (set --model to choose)",
            failure,
            self.format.name,
        )

    # ------------------------------------------------------------------ routes

    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def prometheus(self, request: Request) -> Response:
        return Response(self.metrics.exposition(), media_type=CONTENT_TYPE)

    async def models(self, request: Request) -> Response:
        try:
            self._authorize(request)
        except ServerError as error:
            return error.response()
        return JSONResponse(
            {
                "object": "list",
                "data": [
                    {
                        "id": self.advertised_model,
                        "object": "model",
                        "created": self.created,
                        "owned_by": "pawlette",
                    }
                ],
            }
        )

    async def chat_completions(self, request: Request) -> Response:
        try:
            self._authorize(request)
            self.policy.check_body(request.headers.get("content-type"))
            chat = parse_chat_request(await self._read_json(request))
            prepared = await self._prepare(chat)
            if chat.stream:
                return await self._stream(request, prepared)
            return await self._complete(request, prepared)
        except RequestError as error:
            return ServerError(400, str(error), param=error.path or None).response()
        except ServerError as error:
            return error.response()
        except ClientDisconnect:
            return Response(status_code=499)  # gone while sending its body: nobody to answer
        except Exception as error:
            # A bug.  Answered here rather than re-raised to Starlette, which would answer the
            # same 500 and then raise to the ASGI server, which drops the keep-alive connection.
            logger.exception("internal error on %s %s", request.method, request.url.path)
            return ServerError(
                500,
                f"internal error ({type(error).__name__}); see the server log",
                kind="server_error",
            ).response()

    # ------------------------------------------------------------------ request

    def _authorize(self, request: Request) -> None:
        key = self.config.api_key
        if key is None:
            return
        header = request.headers.get("authorization")
        if not header:
            raise ServerError(
                401,
                "no API key: send it as 'Authorization: Bearer <key>'",
                code="invalid_api_key",
            )
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            token.strip().encode(), key.encode()
        ):
            raise ServerError(401, "incorrect API key", code="invalid_api_key")

    async def _read_json(self, request: Request) -> object:
        limit = self.config.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise _too_large(limit)
        pieces: list[bytes] = []
        size = 0
        receive = request.receive  # read directly: Starlette's stream() is a generator more
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientDisconnect()
            piece = message.get("body", b"")
            size += len(piece)
            if size > limit:
                raise _too_large(limit)
            pieces.append(piece)
            if not message.get("more_body", False):
                break
        try:
            return self.json.load_body(b"".join(pieces))
        except (ValueError, UnicodeDecodeError) as error:
            raise ServerError(
                400, f"request body: not valid JSON ({error}); expected a JSON object"
            ) from error
        except RecursionError as error:  # the C decoder's own limit, far beyond MAX_JSON_DEPTH
            raise ServerError(
                400,
                f"request body: JSON nested too deeply; expected at most {MAX_JSON_DEPTH} levels",
            ) from error

    async def _prepare(self, chat: ChatRequest) -> Prepared:
        rendering = self.format.render(chat.messages, chat.tools, add_generation_prompt=True)
        losses = rendering.losses
        if losses:
            refused_loss(losses, self.refused_losses, self.format.name)
        tools, plan = self._tool_plan(chat, rendering.text, self.engine)
        if losses:
            forced_without_tools(losses, chat.tool_choice, self.format.name)
            self._note_losses(losses)
        prompts: dict[str, str | list[int]] = {}
        body = await self._body(chat, rendering, plan, prompts)
        # Only a forced grammar's syntax depends on the replica (a lazy one is always GBNF).
        if self.syntaxes.asking and plan.grammar is not None and chat.tool_choice.mode != "auto":
            return Prepared(chat, plan, tools, body, rendering, prompts, losses)
        return Prepared(chat, plan, tools, body, losses=losses)

    def _note_losses(self, losses: tuple[str, ...]) -> None:
        """Log and count what the format left out of a request's prompt."""
        registry = self.metrics.registry
        for loss in losses:
            registry.add("render_losses_total", field=loss_field(loss))
        logger.info(
            "format %r left %d field(s) out of the prompt, as its template does: %s",
            self.format.name,
            len(losses),
            "; ".join(losses),
        )

    async def _body(
        self,
        chat: ChatRequest,
        rendering: Rendering,
        plan: ToolPlan,
        prompts: dict[str, str | list[int]],
    ) -> dict[str, Any]:
        """The engine request for ``plan`` (``prompts``: made before, by forced prefix)."""
        prompt = prompts.get(plan.prefix)
        if prompt is None:
            if self.encoder is not None:
                prompt = await anyio.to_thread.run_sync(
                    self.encoder.prompt_ids, rendering, plan.prefix
                )
            else:
                prompt = rendering.text + plan.prefix
            prompts[plan.prefix] = prompt
        return self.engine.body(
            prompt=prompt,
            model=self.model,
            stop=list(dict.fromkeys((*(plan.stop or self.format.stop), *chat.stop))),
            sampling=chat.sampling,
            stream=chat.stream,
            include_usage=chat.include_usage,
            grammar=plan.grammar,
            trigger=plan.trigger,
            max_tokens=self.config.max_tokens,
        )

    async def _content_for(self, prepared: Prepared, replica: Replica) -> bytes:
        """The engine request for ``replica``, in the grammar syntax it reads; ``prepared``
        takes that request's plan and tools (the answer is read with them)."""
        assert prepared.rendering is not None
        chat, prompt = prepared.chat, prepared.rendering.text
        tools, plan = self._tool_plan(chat, prompt)  # the GBNF one, kept since _prepare
        syntax = await self.syntaxes.syntax(replica)
        if syntax != self.engine.grammar_syntax:
            # A grammar the other syntax cannot write (a marker it cannot name) stays GBNF:
            # never a weaker plan, nor a refusal, than the one every llama.cpp reads.
            with contextlib.suppress(RequestError):
                other = self._tool_plan(chat, prompt, self.syntaxes.engine(syntax))
                if other[1].grammar is not None:
                    tools, plan = other
        if plan is not prepared.plan:
            prepared.body = await self._body(chat, prepared.rendering, plan, prepared.prompts)
            prepared.tools, prepared.plan = tools, plan
        return self.json.dump_body(prepared.body)

    def _tool_plan(
        self, chat: ChatRequest, prompt: str, engine: Engine | None = None
    ) -> tuple[tuple[Tool, ...], ToolPlan]:
        """The request's tools and tool plan for ``engine`` (the server's by default), made
        once per distinct (tools, choice, parallel, the state the generation prompt ``prompt``
        leaves the model in, the grammar syntax).

        Both depend on nothing else, and a plan with tools exports the format's grammar
        bundle (milliseconds): they are kept by the tools' JSON text (exact content, key
        order included, since formats print definitions as given), never by the identity of
        a request's mutable dicts.  A request whose tools are refused is never kept.
        """
        engine = engine or self.engine
        start = self.format.start_after(prompt)
        key = (
            self.json.key(chat.tools),
            chat.tool_choice,
            chat.parallel_tool_calls,
            start,
            engine.grammar_syntax,
        )
        cache = self._plans
        known = cache.get(key) if key[0] is not None else None
        if known is not None:
            return known
        # Kept tools are read from the key's text: their own dicts, which no caller holds.
        tools = tools_from_openai(chat.tools if key[0] is None else json.loads(key[0]))
        plan = plan_tool_choice(
            self.format,
            engine,
            tools,
            chat.tool_choice,
            chat.parallel_tool_calls,
            token_ids=None if self.encoder is None else self.encoder.marker_ids,
            strict=self.config.strict_schemas,
            prompt=prompt,
        )
        if not any(tool.kind == "function" for tool in tools):
            # No functions declared: no call may come back, whatever the model writes.  As
            # under tool_choice "none", the answer ends before a call (finish_reason "stop").
            plan = dataclasses.replace(plan, max_calls=0)
        if key[0] is not None:
            if len(cache) >= _PLANS:
                cache.clear()
            cache[key] = (tools, plan)
        return tools, plan

    # ------------------------------------------------------------------ upstream

    async def _unless_disconnected(
        self, request: Request, work: Callable[[], Coroutine[Any, Any, T]]
    ) -> tuple[bool, T | None]:
        """Run ``work`` unless the client goes away first: ``(disconnected, result)``.

        The request body has been read, so the next ASGI message is the disconnect.
        """
        return await watched(request.scope, request.receive, work())

    def _deadline(self) -> float:
        """The loop time by which the current request's answer must have ended."""
        context = current()
        loop = asyncio.get_running_loop()
        if context is None:
            return loop.time() + self.config.request_timeout
        return loop.time() + self.config.request_timeout - (time.monotonic() - context.started)

    async def _send(self, prepared: Prepared, *, stream: bool) -> Answer:
        content: bytes | Callable[[Replica], Awaitable[bytes]]
        if prepared.rendering is None:
            content = self.json.dump_body(prepared.body)
        else:
            content = functools.partial(self._content_for, prepared)
        try:
            response = await self.upstreams.send(
                content, self._headers, stream=stream, deadline=self._deadline()
            )
        except NoReplica as error:
            raise upstream_failure(503, str(error), "upstream_unavailable") from error
        except ReplicaError as failure:
            logger.warning(
                "upstream %s: %s: %s",
                failure.replica.base_url,
                type(failure.cause).__name__,
                failure.cause,
            )
            raise _engine_failure(failure.replica, failure.cause, self.config) from failure
        if response.status_code != 200:
            raise await self._status_error(response)
        if stream:
            kind = response.headers.get("content-type", _EVENT_STREAM).partition(";")[0]
            if kind.strip().lower() not in (_EVENT_STREAM, ""):
                # An HTML page, a JSON body: no event stream, whatever its status says.
                raw = await _error_body(response, self.config.timeout)
                await response.aclose()
                detail = _error_detail(raw)
                raise upstream_failure(
                    502,
                    f"{self.replica.name}: a malformed answer (HTTP 200 with "
                    f"{kind[:60]!r} instead of an event stream: {detail})",
                    "upstream_invalid",
                )
        return response

    async def _status_error(self, response: Answer) -> ServerError:
        try:
            raw = await _error_body(response, self.config.timeout)
        finally:
            await response.aclose()  # cut short (an endless body): the connection is closed
        detail = _error_detail(raw)
        status = response.status_code
        name = self.replica.name
        if status in (400, 413, 422):
            return ServerError(
                400,
                f"the upstream rejected the request (HTTP {status}): {detail}",
                code="upstream_rejected",
            )
        if status == 429:
            return ServerError(
                429, f"the upstream is busy (HTTP 429): {detail}", code="upstream_busy"
            )
        if status < 400:
            # A redirect (not followed: the engine's address is the operator's to set), a 204,
            # a 304: no completion in it.
            return upstream_failure(
                502,
                f"{name}: a malformed answer (HTTP {status}, which holds no completion)",
                "upstream_invalid",
            )
        return upstream_failure(502, f"{name} answered HTTP {status}: {detail}", "upstream_error")

    async def _post(self, prepared: Prepared) -> tuple[str, str | None, Any]:
        response = await self._send(prepared, stream=False)
        name = self.replica.name
        try:
            text_body = response.content.decode("utf-8")
        except UnicodeDecodeError as error:
            raise upstream_failure(
                502,
                f"{name}: a malformed answer (not UTF-8: {error.reason} at byte {error.start})",
                "upstream_invalid",
            ) from error
        try:
            data = json.loads(text_body)
            choice = data["choices"][0]
            text = choice["text"]
            reason = choice.get("finish_reason")
            if not isinstance(text, str) or not (reason is None or isinstance(reason, str)):
                raise TypeError("choices[0].text is not a string")
        except (ValueError, LookupError, TypeError, AttributeError) as error:
            raise upstream_failure(
                502,
                f"{name}: a malformed answer (not an OpenAI completion: "
                f"{type(error).__name__}: {error}): {_error_detail(response.content)}",
                "upstream_invalid",
            ) from error
        usage = data.get("usage")
        return text, reason, usage if isinstance(usage, dict) else None

    # ------------------------------------------------------------------ answers

    async def _complete(self, request: Request, prepared: Prepared) -> Response:
        disconnected, result = await self._unless_disconnected(
            request, lambda: self._post(prepared)
        )
        if disconnected or result is None:
            logger.info("client went away; upstream request cancelled")
            return Response(status_code=499)
        text, reason, usage = result
        completion = Completion(self.format, prepared.plan, prepared.tools)
        message = completion.message(text, reason)
        message.setdefault("refusal", None)
        _log_warnings(completion)
        answer: dict[str, Any] = {
            "id": "chatcmpl-" + os.urandom(12).hex(),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.advertised_model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": completion.finish_reason,
                }
            ],
        }
        if usage is not None:
            answer["usage"] = usage
        if prepared.losses:
            return ErrorResponse(answer, headers={HEADER: header_value(prepared.losses)})
        return ErrorResponse(answer)

    async def _stream(self, request: Request, prepared: Prepared) -> Response:
        disconnected, response = await self._unless_disconnected(
            request, lambda: self._send(prepared, stream=True)
        )
        if disconnected or response is None:
            if response is not None:
                await response.aclose()
            logger.info("client went away; upstream request cancelled")
            return Response(status_code=499)
        pipeline = ChunkPipeline(
            self.format,
            prepared.plan,
            prepared.tools,
            model=self.advertised_model,
            stream_arguments=self.config.stream_arguments,
        )
        include_usage = prepared.chat.include_usage
        # The replica for the stream's error messages, read now: the body is written after
        # the handler returned, when the request's context (which names the replica the
        # balancer chose) is no longer current, and the first replica would be named instead.
        replica = self.replica

        async def produce(write: Write) -> None:
            try:
                await self._relay(response, pipeline, include_usage, write, replica)
            except Exception as error:  # a bug: still end the stream with an error event
                logger.exception("internal error while streaming")
                failure = ServerError(
                    500,
                    f"internal error ({type(error).__name__}); see the server log",
                    kind="server_error",
                )
                await write(failure.event(), True)
            finally:
                # A cancelled task (the client went away) awaits normally again once the
                # cancellation is delivered: the upstream answer is closed either way.
                await response.aclose()

        if prepared.losses:
            header = header_value(prepared.losses).encode("ascii")
            return EventStream(produce, ((HEADER.encode("ascii"), header),))
        return EventStream(produce)

    async def _relay(
        self,
        response: Answer,
        pipeline: ChunkPipeline,
        include_usage: bool,
        write: Write,
        replica: Replica,
    ) -> None:
        """Upstream SSE in, client SSE out; a failure becomes one error event (naming the
        replica)."""
        decoder = SSEDecoder(self.config.max_answer_bytes)
        state = _StreamState()
        failure: ServerError | None = None
        encode = pipeline.encoder.encode
        # The role chunk goes out with the first text (one write less per request; OpenAI
        # sends them together too), or at the engine's first piece when that gives no text
        # (a call is held until it is known valid: a client would otherwise see nothing until
        # the whole call was written), or before an error event, or with the last chunk.
        pending = encode(pipeline.start_deltas())
        next_piece = response.next_piece
        read = self._read_events
        try:
            try:
                while data := await next_piece():
                    deltas = read(decoder.feed(data), state, pipeline, replica)
                    if state.done or pipeline.cut:
                        # The end came in this read: its text goes out with the last chunk,
                        # in one write (nothing waits: the end is written right after).
                        if deltas:
                            pending += encode(deltas)
                        break
                    if deltas:
                        await write(pending + encode(deltas) if pending else encode(deltas), False)
                        pending = b""
                    elif pending:
                        await write(pending, False)
                        pending = b""
                else:
                    deltas = read(decoder.finish(), state, pipeline, replica)
                    if deltas:
                        pending += encode(deltas)
            except NotUtf8 as error:
                # The events before the undecodable one count, as if they had come alone.
                deltas = read(error.before, state, pipeline, replica)
                if deltas:
                    pending += encode(deltas)
                if not (state.done or pipeline.cut):
                    raise upstream_failure(
                        502, f"{replica.name}: a malformed answer ({error})", "upstream_invalid"
                    ) from error
            except LineTooLong as error:
                raise upstream_failure(
                    502, f"{replica.name}: an answer too large ({error})", "upstream_too_large"
                ) from error
        except ServerError as error:
            failure = error
        except EngineError as error:
            logger.warning(
                "upstream %s: stream failed: %s: %s",
                replica.base_url,
                type(error).__name__,
                error,
            )
            failure = _engine_failure(replica, error, self.config)
            failure.message += "; the completion is incomplete"
        done, reason = state.done, state.reason
        if failure is None and not (done or pipeline.cut or reason is not None):
            failure = upstream_failure(
                502,
                f"{replica.name}: the stream ended without a finish_reason "
                "or [DONE]; the completion may be incomplete",
                "upstream_disconnected",
            )
        if failure is not None:
            logger.warning("stream failed: %s", failure.message)
            if state.unsent:
                pending += encode(state.unsent)
            event = failure.event()
            # Not kept past here: a failure caught in this frame holds the frame in its
            # traceback, a cycle that kept the decoder's pending megabytes until a collection.
            failure = None
            await write(pending + event, True)
            return
        final = pending + encode(pipeline.finish_deltas(reason))
        if include_usage and state.usage is not None:
            final += encode_events([pipeline.stream.usage_chunk(state.usage)])
        _log_warnings(pipeline.completion)
        if not done or response.at_end():
            # The engine's answer is read to its end (its connection is back in the pool) or
            # cut short (closed after this): the last chunk, [DONE] and the body's end go out
            # in one write.
            await write(final + _DONE, True)
            return
        await write(final + _DONE, False)
        # Read the end of the upstream's answer, so its connection goes back to the pool before
        # the body ends (and the client sends its next request).
        with anyio.move_on_after(_DRAIN_SECONDS), contextlib.suppress(EngineError):
            while await next_piece():
                pass

    def _read_events(
        self, payloads: list[str], state: _StreamState, pipeline: ChunkPipeline, replica: Replica
    ) -> list[Delta]:
        """The deltas for the events of one read from the upstream.

        The texts of the events that arrived together go through the parser as one piece,
        so they make one chunk where they were several (OpenAI's chunks are pieces of the
        text of any length; only what has already arrived is joined, nothing waits).
        """
        if state.done or pipeline.cut:
            return []
        texts: list[str] = []
        loads = self.json.loads
        try:
            for payload in payloads:
                if payload == "[DONE]":
                    state.done = True
                    break
                if loads is not None:
                    # The common event (a text, maybe a finish reason, nothing else to note)
                    # read inline; any other goes through _stream_item, which decides.
                    try:
                        data = loads(payload)
                    except ValueError:
                        data = None
                    if type(data) is dict and "error" not in data and "usage" not in data:
                        choices = data.get("choices")
                        if type(choices) is list and choices and type(choices[0]) is dict:
                            text = choices[0].get("text")
                            finish = choices[0].get("finish_reason")
                            if type(text) is str and (finish is None or type(finish) is str):
                                if finish is not None:
                                    state.reason = finish
                                if text:
                                    texts.append(text)
                                continue
                text = self._stream_item(payload, replica, state)
                if text:
                    texts.append(text)
        except ServerError:
            # As if fed one by one: the texts before the bad event count and reach the client
            # ahead of the error (as they do when the bad event comes in a later read), and
            # an answer already cut short never sees it.
            deltas = pipeline.feed_deltas("".join(texts))
            if pipeline.cut:
                return deltas
            state.unsent = deltas
            raise
        if not texts:
            return []
        return pipeline.feed_deltas(texts[0] if len(texts) == 1 else "".join(texts))

    def _stream_item(self, payload: str, replica: Replica, state: _StreamState) -> str:
        """One upstream ``data:`` payload: returns its text; notes finish reason and usage."""
        name = replica.name
        try:
            data = self.json.load_event(payload)
        except ValueError as error:
            raise upstream_failure(
                502,
                f"{name}: a malformed answer (a stream event is not JSON ({error}): "
                f"{payload[:200]!r})",
                "upstream_invalid",
            ) from error
        if not isinstance(data, dict):
            raise upstream_failure(
                502,
                f"{name}: a malformed answer (a stream event is not an object: {payload[:200]!r})",
                "upstream_invalid",
            )
        if data.get("error"):
            raise upstream_failure(
                502,
                f"{name}: error in the stream: {_error_detail(payload.encode())}",
                "upstream_error",
            )
        usage = data.get("usage")
        if isinstance(usage, dict):
            state.usage = usage
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return ""
        choice = choices[0]
        finish = choice.get("finish_reason")
        if isinstance(finish, str):
            state.reason = finish
        text = choice.get("text")
        return text if isinstance(text, str) else ""


class _StreamState:
    """What the upstream's stream has said so far besides text."""

    __slots__ = ("done", "reason", "unsent", "usage")

    def __init__(self) -> None:
        self.done = False
        self.reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.unsent: list[Delta] = []
        """The deltas of the texts that came in the same read before a bad event."""


async def _error_body(response: Answer, seconds: float) -> bytes:
    """The start of an error answer's body: at most :data:`_ERROR_BODY_BYTES`, read for at most
    ``seconds`` in all.  An engine (or a proxy before it) that drips an endless error page
    would otherwise hold the request for as long as it drips, whatever ``--timeout`` says
    (the timeout is per silence, and the page is never silent)."""
    pieces: list[bytes] = []
    size = 0
    with anyio.move_on_after(seconds), contextlib.suppress(EngineError):
        while size < _ERROR_BODY_BYTES:
            piece = await response.next_piece()
            if not piece:
                break
            pieces.append(piece)
            size += len(piece)
    return b"".join(pieces)[:_ERROR_BODY_BYTES]


def _error_detail(raw: bytes) -> str:
    """The message of an upstream error body (OpenAI's, FastAPI's, TGI's) or its text."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            for key in ("message", "detail", "error"):
                if isinstance(error.get(key), str):
                    text = error[key]
                    break
        elif isinstance(error, str):
            text = error
        if isinstance(data.get("detail"), str):
            text = data["detail"]
    if len(text) > _ERROR_DETAIL_CHARS:
        text = text[:_ERROR_DETAIL_CHARS] + "..."
    return text or "(empty body)"


def _log_warnings(completion: Completion) -> None:
    if completion.warnings:
        logger.info(
            "model output did not fit format %r in %d place(s), kept as text: %s",
            completion.format.name,
            len(completion.warnings),
            "; ".join(warning.message for warning in completion.warnings[:3]),
        )


# ---------------------------------------------------------------------- the app


async def _http_error(request: Request, error: Exception) -> Response:
    if isinstance(error, HTTPException):
        code = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code)
        return ServerError(
            error.status_code, f"{request.method} {request.url.path}: {error.detail}", code=code
        ).response()
    return ServerError(500, "internal error", kind="server_error").response()


async def _internal_error(request: Request, error: Exception) -> Response:
    logger.exception("internal error on %s %s", request.method, request.url.path)
    return ServerError(
        500, f"internal error ({type(error).__name__}); see the server log", kind="server_error"
    ).response()


def build_app(config: ServeConfig) -> App:
    """The Starlette app for ``config``; loads the format and tokenizer now (errors raise
    :class:`~pawlette.errors.PawletteError`), connects to the upstream on start-up."""
    server = Server(config)
    chat_completions = instrument(server.chat_completions, server.metrics)
    app = Starlette(
        routes=[
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/models", server.models, methods=["GET"]),
            Route("/health", server.health, methods=["GET"]),
            Route("/metrics", server.prometheus, methods=["GET"]),
        ],
        exception_handlers={HTTPException: _http_error, Exception: _internal_error},
        lifespan=server.lifespan,
    )
    app.state.server = server
    return App(
        app, chat_completions, "/v1/chat/completions", server.policy, server.metrics.registry
    )


def uvicorn_config(config: ServeConfig, app: App | None = None, **options: Any) -> uvicorn.Config:
    """uvicorn's settings for ``config``: the guarded HTTP/1.1 protocol (head size and time,
    keep-alive, connection cap, stalled readers: :mod:`pawlette.serve.inbound`), no access
    log unless it can print.  ``options``: more of ``uvicorn.Config``'s (``loop``, ...)."""
    from .inbound import guarded_protocol

    options.setdefault("log_level", config.log_level)
    options.setdefault("log_config", log_config(options["log_level"]))
    # uvicorn builds every access-log line's arguments even when the level drops it
    # (about 2% of the CPU time per request): no access log unless it can be printed.
    options.setdefault("access_log", access_log(config.log_level))
    if app is None:
        app = build_app(config)
    # ``http``: another protocol instead of the guarded one (the benchmark's comparisons).
    if "http" not in options:
        options["http"] = guarded_protocol(config, app.state.server.metrics.registry)
    return uvicorn.Config(
        app,
        timeout_keep_alive=config.keep_alive,  # type: ignore[arg-type]
        lifespan="on",
        **options,
    )


def run(config: ServeConfig, **uvicorn_options: Any) -> None:
    """Serve ``config`` with uvicorn until interrupted (``uvicorn_options``: more of
    ``uvicorn.Config``'s, e.g. ``loop``)."""
    from .inbound import raise_file_limit

    raise_file_limit(config)
    server = uvicorn.Server(
        uvicorn_config(config, host=config.host, port=config.port, **uvicorn_options)
    )
    tune_collector()  # the server owns this process; an app mounted elsewhere leaves gc be
    server.run()


def log_config(log_level: str | int) -> dict[str, Any]:
    """uvicorn's logging, with the server's own log (``pawlette.serve``: the grammar syntax
    each replica gets, replicas ejected, ...) printed beside uvicorn's at ``log_level``.
    Without a handler of its own that log reached only Python's last resort, which prints
    warnings and drops everything at info."""
    settings: dict[str, Any] = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    level = log_level.upper() if isinstance(log_level, str) else log_level
    # Propagating too: a handler an embedding program puts on the root logger (pytest's
    # caplog among them) still sees these records; ``pawlette serve`` puts none there.
    settings["loggers"]["pawlette"] = {"handlers": ["default"], "level": level, "propagate": True}
    return settings


def access_log(log_level: str) -> bool:
    """Whether uvicorn's access log (level info) can print at ``log_level``."""
    return log_level.lower() in ("trace", "debug", "info")
