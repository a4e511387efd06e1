"""The server's JSON reading and writing: orjson when installed (the ``serve`` extra), and
``json`` for whatever orjson refuses, so no answer and no error message depends on orjson.

One :class:`JsonCodec` per server, chosen by its settings (``fast=False``: ``json`` alone, for
comparisons; nothing here is module state a test has to patch).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

try:
    import orjson
except ImportError:  # optional (the serve extra installs it): json reads alone
    orjson = None  # type: ignore[assignment]

_DIGITS_AS_ZERO = bytes(48 if 48 <= byte <= 57 else 32 for byte in range(256))
_LONG_DIGITS = b"0" * 19
"""19 digits: the shortest integer orjson may turn into a float (below -2**63).  Found by
mapping every digit to ``0`` and searching (about 1.5 ns a byte; a regex took 17)."""
_KEY_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


class JsonCodec:
    __slots__ = ("loads",)

    def __init__(self, fast: bool = True) -> None:
        self.loads: Any = orjson.loads if fast and orjson is not None else None
        """orjson's reader, or None (``json`` alone)."""

    def load_event(self, payload: str) -> Any:
        """An engine's stream event (``json.loads``, through orjson when installed: a third
        of the time per event).  What orjson refuses and json reads (NaN, a lone surrogate's
        escape, an integer over 64 bits): json decides."""
        if self.loads is not None:
            with contextlib.suppress(ValueError):  # orjson.JSONDecodeError
                return self.loads(payload)
        return json.loads(payload)

    def load_body(self, raw: bytes) -> Any:
        """The client's request body, or an engine's answer (UTF-8, checked).  A body with a
        run of 19 digits or more is read by json alone: orjson reads an integer beyond 64 bits
        as a float, silently (a tool's ``"enum": [12345678901234567890123]`` reached the
        prompt as ``1.2345678901234568e+22``)."""
        if self.loads is not None and raw.translate(_DIGITS_AS_ZERO).find(_LONG_DIGITS) < 0:
            with contextlib.suppress(ValueError):
                return self.loads(raw)
        return json.loads(raw.decode("utf-8"))

    def dump_body(self, body: dict[str, Any]) -> bytes:
        """The upstream request's body as JSON: orjson when installed (a tenth of the time),
        json for what orjson refuses (an integer over 64 bits)."""
        if self.loads is not None:
            try:
                return orjson.dumps(body)
            except TypeError:  # orjson.JSONEncodeError
                pass
        return json.dumps(body, ensure_ascii=False).encode()

    def key(self, value: object) -> str | None:
        """``value``'s JSON text, exact (key order kept; ``1`` and ``1.0`` differ): a cache key
        by content.  None when it cannot be written (the request is refused elsewhere)."""
        if value is None:
            return "null"
        if self.loads is not None:
            with contextlib.suppress(TypeError):  # orjson.JSONEncodeError
                return str(orjson.dumps(value).decode())
        try:
            return _KEY_JSON.encode(value)
        except (TypeError, ValueError):
            return None
