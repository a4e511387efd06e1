"""The ASGI plumbing of the hot path, in plain asyncio (measured, ``python -m bench.serve``).

- :func:`unless_disconnected` runs a coroutine while it listens for the client's disconnect
  and cancels the coroutine when it comes.  Two asyncio tasks: a quarter of the CPU time of
  an anyio task group doing the same (about 8 µs against 32 per use; a streamed request
  uses two).
- :class:`App` answers ``POST /v1/chat/completions`` itself and hands everything else (other
  routes, 404s and 405s, the lifespan) to the Starlette app: Starlette's middleware and
  router cost about 28 µs a request, and the chat handler answers every error itself.  It
  refuses a foreign ``Host`` or a cross-site ``Origin`` first, on every route
  (:mod:`pawlette.serve.policy`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.datastructures import State
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .metrics import Registry
from .policy import EXEMPT_PATHS, RequestPolicy

T = TypeVar("T")
Handler = Callable[[Request], Awaitable[Response]]


async def _disconnect(receive: Receive) -> None:
    """Returns when the client has gone (the request body has been read: nothing else comes)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def unless_disconnected(receive: Receive, work: Awaitable[T]) -> tuple[bool, T | None]:
    """``(False, result of work)``, or ``(True, None)`` when the client disconnects first
    (``work`` is then cancelled).  An exception of ``work`` is raised."""
    current = asyncio.current_task()
    if current is not None and hasattr(current, "uncancel"):
        return await _inline(receive, work, current)
    return await _two_tasks(receive, work)


async def _inline(
    receive: Receive, work: Awaitable[T], current: asyncio.Task[Any]
) -> tuple[bool, T | None]:
    """The work runs in the caller's task, the listener in one task that cancels the
    caller's on a disconnect (Python 3.11's ``uncancel`` tells that cancellation from any
    other): one task and no ``asyncio.wait`` per use, half the CPU time of two tasks."""
    state = {"active": True, "disconnected": False}

    def disconnected(listener: asyncio.Future[None]) -> None:
        if state["active"] and not listener.cancelled() and listener.exception() is None:
            state["disconnected"] = True
            current.cancel()

    listener = asyncio.ensure_future(_disconnect(receive))
    listener.add_done_callback(disconnected)
    try:
        result = await work
    except asyncio.CancelledError:
        # Ours (the client went away) unless the task was cancelled from outside as well.
        if state["disconnected"] and current.uncancel() == 0:  # type: ignore[attr-defined]
            return True, None
        raise
    finally:
        state["active"] = False
        listener.cancel()
    if state["disconnected"]:  # the work ended as the cancellation came: it is delivered here
        current.uncancel()  # type: ignore[attr-defined]
        return True, result
    return False, result


async def _two_tasks(receive: Receive, work: Awaitable[T]) -> tuple[bool, T | None]:
    """Python 3.10: the work in a task of its own, waited for with the listener."""
    task = asyncio.ensure_future(work)
    listener = asyncio.ensure_future(_disconnect(receive))
    try:
        await asyncio.wait((task, listener), return_when=asyncio.FIRST_COMPLETED)
    except BaseException:  # this request is cancelled (the server stops): so are both
        task.cancel()
        listener.cancel()
        raise
    if task.done():
        listener.cancel()
        return False, task.result()
    task.cancel()
    await asyncio.wait((task,))  # its clean-up (closing the upstream answer) runs now
    if not task.cancelled():
        task.exception()  # read: a failure while it was cancelled answers no one any more
    return True, None


WATCH = "pawlette.watch"
"""The scope key of a request's :class:`DisconnectWatch` (set by :class:`App`)."""


class DisconnectWatch:
    """The client's disconnect, listened for once for a whole request: one task, however many
    times :meth:`run` is used (a streamed request uses it twice: the upstream's head, then the
    stream), instead of a listener per use.

    Python 3.11's ``uncancel`` tells this cancellation from any other; Python 3.10 falls back
    to :func:`unless_disconnected`'s two tasks per use.
    """

    __slots__ = ("_cancelled", "_listener", "_task", "disconnected", "receive")

    def __init__(self, receive: Receive) -> None:
        self.receive = receive
        self.disconnected = False
        self._listener: asyncio.Future[None] | None = None
        self._task: asyncio.Task[Any] | None = None
        self._cancelled = False

    async def run(self, work: Awaitable[T]) -> tuple[bool, T | None]:
        """As :func:`unless_disconnected`."""
        current = asyncio.current_task()
        if current is None or not hasattr(current, "uncancel"):
            return await _two_tasks(self.receive, work)
        late: asyncio.Handle | None = None
        if self.disconnected:
            # Gone before this use: the work still starts and is cancelled where it first
            # waits, so its clean-up runs (closing the engine's answer), as with a listener.
            late = asyncio.get_running_loop().call_soon(self._cancel)
        elif self._listener is None:
            self._listener = asyncio.ensure_future(_disconnect(self.receive))
            self._listener.add_done_callback(self._heard)
        self._task = current
        self._cancelled = False
        try:
            result = await work
        except asyncio.CancelledError:
            # Ours (the client went away) unless the task was cancelled from outside as well.
            if self._cancelled and current.uncancel() == 0:
                return True, None
            raise
        finally:
            self._task = None
            if late is not None:
                late.cancel()
        if self._cancelled:  # the work ended as the cancellation came: it is delivered here
            current.uncancel()
            return True, result
        return False, result

    def _heard(self, listener: asyncio.Future[None]) -> None:
        if listener.cancelled() or listener.exception() is not None:
            return
        self.disconnected = True
        self._cancel()

    def _cancel(self) -> None:
        """Cancel the work in progress (called by the loop: its task is waiting)."""
        if self._task is not None:
            self._cancelled = True
            self._task.cancel()

    def close(self) -> None:
        """Stop listening (the answer is complete: uvicorn's ``receive`` now returns a
        disconnect, which is no client going away)."""
        if self._listener is not None:
            self._listener.cancel()
            self._listener = None


async def watched(scope: Scope, receive: Receive, work: Awaitable[T]) -> tuple[bool, T | None]:
    """:meth:`DisconnectWatch.run` with the request's watch, or :func:`unless_disconnected`."""
    watch: DisconnectWatch | None = scope.get(WATCH)
    if watch is None:
        return await unless_disconnected(receive, work)
    return await watch.run(work)


class App:
    """The server's ASGI app: the chat route directly, the rest through ``starlette``."""

    def __init__(
        self,
        starlette: Starlette,
        chat: Handler,
        path: str,
        policy: RequestPolicy | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.starlette = starlette
        self.chat = chat
        self.path = path
        self.policy = policy
        self.registry = registry
        """Where refusals are counted (``refused_total{code}``)."""

    @property
    def state(self) -> State:
        return self.starlette.state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        policy = self.policy
        if policy is not None and scope["type"] == "http":
            host = origin = None
            for name, value in scope["headers"]:
                if name == b"host":
                    host = value
                elif name == b"origin":
                    origin = value
            refusal = policy.check(host, origin, scope["path"] in EXEMPT_PATHS)
            if refusal is not None:
                if self.registry is not None:
                    self.registry.add("refused_total", code=refusal.code or "refused")
                await refusal.response()(scope, receive, send)
                return
        if (
            scope["type"] == "http"
            and scope["path"] == self.path
            and scope["method"] == "POST"
            and not scope.get("root_path")
        ):
            scope["app"] = self.starlette
            watch = scope[WATCH] = DisconnectWatch(receive)
            try:
                response = await self.chat(Request(scope, receive, send))
                await response(scope, receive, send)
            finally:
                watch.close()
            return
        await self.starlette(scope, receive, send)
