"""The server's error answers: OpenAI's body ``{"error": {"message", "type", "param",
"code"}}`` with the right status, as a response or as a stream's last event.

An answer that ends the connection (a 413 whose upload is not read on, a refused ``Host``)
says so with ``connection: close``, so the server does not read the rest of the request.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse

from .chunks import utf8


class ServerError(Exception):
    """An error answer: HTTP status and OpenAI's error object."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        kind: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        close: bool = False,
    ) -> None:
        # Messages quote what the client sent; a lone surrogate in it is escaped, so the body
        # can always be encoded (it is refused long before, but an answer must never fail).
        message = message.encode("utf-8", "backslashreplace").decode("utf-8")
        if param is not None:
            param = param.encode("utf-8", "backslashreplace").decode("utf-8")
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.param = param
        self.code = code
        self.close = close
        """Whether the connection closes after the answer (the rest of the upload unread)."""

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "type": self.kind,
                "param": self.param,
                "code": self.code,
            }
        }

    def response(self) -> JSONResponse:
        headers: dict[str, str] = {}
        if self.status == 401:
            headers["www-authenticate"] = "Bearer"
        if self.close:
            headers["connection"] = "close"
        return ErrorResponse(self.body(), status_code=self.status, headers=headers or None)

    def event(self) -> bytes:
        """The error as the last server-sent event of a stream."""
        return utf8(f"data: {json.dumps(self.body(), ensure_ascii=False)}\n\n")

    def raw(self) -> bytes:
        """The whole HTTP/1.1 answer, for a connection no ASGI request runs on (a head too
        long or too slow): it closes the connection."""
        body = json.dumps(self.body(), ensure_ascii=True).encode()
        reason = {408: "Request Timeout", 431: "Request Header Fields Too Large"}
        return (
            b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n%s"
            % (self.status, reason.get(self.status, "Error").encode(), len(body), body)
        )


def upstream_failure(status: int, message: str, code: str) -> ServerError:
    return ServerError(status, message, kind="server_error", code=code)


class ErrorResponse(JSONResponse):
    """Starlette's JSON response, with a lone surrogate from the engine kept as its escape
    (see :func:`.chunks.utf8`) instead of failing to encode."""

    def render(self, content: Any) -> bytes:
        return utf8(json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")))
