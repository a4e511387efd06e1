"""Per-request bookkeeping for the metrics: a context object per chat request, and the wrapper
that counts answers, errors, durations and streams' error events.

The context (a :class:`RequestContext` in a context variable, set when the request arrives)
is how the balancer tells the rest of the request which replica it chose (error messages name
that replica) and when the engine's first piece came (time to first token).
"""

from __future__ import annotations

import contextvars
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response

from .metrics import SharedMetrics

if TYPE_CHECKING:
    from .balancer import Replica

Handler = Callable[[Request], Awaitable[Response]]
Write = Callable[[bytes, bool], Awaitable[None]]
Produce = Callable[[Write], Awaitable[None]]

_ERROR_EVENT = b'data: {"error"'


@dataclass
class RequestContext:
    started: float
    replica: Replica | None = None
    """The replica serving this request, once chosen."""


CURRENT: contextvars.ContextVar[RequestContext | None] = contextvars.ContextVar(
    "pawlette_request", default=None
)


def current() -> RequestContext | None:
    return CURRENT.get()


def instrument(handler: Handler, metrics: SharedMetrics) -> Handler:
    """``handler`` with its answers counted: status, error code, duration, in-flight gauge.

    A streaming answer (an object with a ``produce(write)`` coroutine, the server's event
    stream) is counted when it ends, and its error event (if any) by code: the stream hands
    its last write to ``last_write`` (an error event always ends a stream), so the writes
    before it pass through no wrapper.
    """
    registry = metrics.registry
    worker = str(metrics.worker)

    async def counted(request: Request) -> Response:
        context = RequestContext(time.monotonic())
        token = CURRENT.set(context)
        registry.add("requests_in_flight", 1)
        registry.add("worker_requests_total", worker=worker)
        try:
            response = await handler(request)
        except BaseException:
            registry.add("requests_in_flight", -1)
            raise
        finally:
            CURRENT.reset(token)
        status = response.status_code
        registry.add("requests_total", status=str(status))
        if status >= 400 and status != 499:  # 499: the client went away, not an error
            registry.add("request_errors_total", status=str(status), code=_error_code(response))
        produce: Produce | None = getattr(response, "produce", None)
        if produce is None:
            _finished(metrics, context)
            return response

        def last_write(data: bytes) -> None:
            # An error event ends its stream: it is in the last write (after any chunks).
            if _ERROR_EVENT in data:
                event = data[data.rindex(_ERROR_EVENT) :]
                registry.add("stream_errors_total", code=_event_code(event))

        async def counted_produce(write: Write) -> None:
            try:
                await produce(write)
            finally:
                _finished(metrics, context)

        response.last_write = last_write  # type: ignore[attr-defined]
        response.produce = counted_produce  # type: ignore[attr-defined]
        return response

    return counted


def _finished(metrics: SharedMetrics, context: RequestContext) -> None:
    registry = metrics.registry
    registry.add("requests_in_flight", -1)
    registry.observe("request_duration_seconds", time.monotonic() - context.started)


def _error_code(response: Response) -> str:
    try:
        error = json.loads(bytes(response.body))["error"]
        code = error.get("code") or error.get("type")
    except (ValueError, LookupError, TypeError, AttributeError):
        return "none"
    return str(code) if code else "none"


def _event_code(data: bytes) -> str:
    try:
        error = json.loads(data[len(b"data: ") :].split(b"\n\n", 1)[0])["error"]
        code = error.get("code") or error.get("type")
    except (ValueError, LookupError, TypeError, AttributeError):
        return "none"
    return str(code) if code else "none"
