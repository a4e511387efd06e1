"""What the engine client (:mod:`pawlette.serve.http1`) hands back and raises.

An engine's answer is an :class:`Answer`: its status and headers, then its body piece by
piece.  Every way talking to an engine can fail is one :class:`EngineError` subclass, named
for what happened, so an error answer says what went wrong (and ``/metrics`` counts it by
that name), never "unreachable" for an answer that did arrive::

    EngineError                 (502 unless said otherwise)
      ├─ EngineUnreachable      no connection (refused, no route, connect timeout): nothing sent
      ├─ EngineSaturated        no free connection within --timeout (503): nothing sent
      ├─ EngineTimeout          no answer head within --timeout, or silence for --timeout (504)
      │    └─ EngineDeadline    the request's deadline (--request-timeout) passed first (504)
      ├─ EngineDisconnected     the engine closed the connection before its answer ended
      ├─ EngineInvalid          not HTTP/1.x, bad framing, a body that does not decode, an
      │                         answer that is not an OpenAI completion or not UTF-8
      └─ EngineTooLarge         an answer over --max-answer-bytes

Messages name what happened and never the engine's address or credentials: the server adds
which engine ("the engine", "engine replica 2") and logs the address for the operator.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType


class EngineError(Exception):
    """A failure talking to an engine.  ``kind`` is the ``/metrics`` label
    (``upstream_failures_total{kind}``), ``code`` the error code clients get, ``status`` the
    HTTP status of the answer (before a stream started)."""

    kind = "broken"
    code = "upstream_error"
    status = 502
    sent = True
    """Whether the request may have reached the engine (False: it may go to another replica)."""


class EngineUnreachable(EngineError):
    kind = "connect"
    code = "upstream_unreachable"
    sent = False


class EngineSaturated(EngineError):
    kind = "saturated"
    code = "upstream_saturated"
    status = 503
    sent = False


class EngineTimeout(EngineError):
    kind = "timeout"
    code = "upstream_timeout"
    status = 504


class EngineDeadline(EngineTimeout):
    """Not the engine's failure (it may simply have a long answer to write): the request's
    own deadline passed, so it does not count towards ejecting the replica."""

    kind = "deadline"
    code = "request_timeout"


class EngineDisconnected(EngineError):
    kind = "broken"
    code = "upstream_disconnected"


class EngineInvalid(EngineError):
    kind = "invalid"
    code = "upstream_invalid"


class EngineTooLarge(EngineError):
    kind = "too_large"
    code = "upstream_too_large"


class Answer:
    """An engine's answer with its head read: ``status_code``, ``headers`` (names in lower
    case), then the body.

    ``next_piece()`` returns the body as it arrives, ``b""`` at its end; ``read()`` the rest
    at once (kept in ``content``); ``at_end()`` whether the body is read to its end (so the
    connection is free again); ``aclose()`` frees the connection, or closes it when the body
    was cut short (which cancels the engine's work).
    """

    status_code: int
    headers: Mapping[str, str] = MappingProxyType({})
    content: bytes
    whole = False
    """Whether :meth:`read` has read the body (then ``content`` holds it)."""

    async def next_piece(self) -> bytes:
        raise NotImplementedError

    async def read(self) -> bytes:
        if self.whole:
            return self.content  # read before (the answer may be closed since)
        pieces = []
        try:
            while piece := await self.next_piece():
                pieces.append(piece)
        except BaseException:
            # The failure's traceback holds this frame: let go of what was read.
            pieces.clear()
            raise
        self.content = b"".join(pieces)
        self.whole = True
        return self.content

    def at_end(self) -> bool:
        return False

    async def aclose(self) -> None:
        raise NotImplementedError
