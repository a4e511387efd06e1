"""Which requests a browser may not make: the ``Host`` a client addresses, the ``Origin`` of a
browser's request, and the type of a chat request's body.

Without an API key (the default), any web page a user opens could otherwise drive a server
on the user's machine: a page may POST a ``text/plain`` body to ``http://127.0.0.1:8000``
without asking (no CORS preflight for such "simple" requests), and with DNS rebinding (its
own name made to resolve to 127.0.0.1) it can read the answers as well.  Three checks stop
that, none of which a program using the API (the openai SDK, curl, httpx) ever trips:

- ``Host`` must be one of the allowed names (``--allowed-host``; by default the loopback
  names when the server listens on a loopback address, any name otherwise): a rebound name
  is not one (400, ``invalid_host``);
- a request with an ``Origin`` (browsers send it on every cross-site request and on every
  POST) must come from an allowed host too, or from the host it addresses when any host is
  allowed (403, ``forbidden_origin``);
- a chat request's body, when it declares a type, must declare JSON (``application/json`` or
  ``+json``), as FastAPI-based servers require: the types a page may send without a preflight
  (``text/plain``, forms) are refused (415, ``unsupported_media_type``).

``GET /health`` and ``GET /metrics`` are exempt from the ``Host`` check: health probes (a
load balancer's, a kubelet's) and Prometheus address the server by whatever name or address
they know it by (``/metrics`` takes no key either: keep it on a private network).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from .errors import ServerError

EXEMPT_PATHS = frozenset({"/health", "/metrics"})
"""Paths answered whatever the ``Host``."""


def host_name(value: str) -> str:
    """A ``Host`` header's name: no port, no IPv6 brackets, lower case, no final dot."""
    value = value.strip().lower()
    if value.startswith("["):
        name = value[1:].partition("]")[0]
    else:
        name = value.rpartition(":")[0] if value.count(":") == 1 else value
    return name.rstrip(".")


class RequestPolicy:
    """The allowed hosts (``*``: any; ``.example.com``: it and its subdomains)."""

    __slots__ = ("_any", "_exact", "_suffixes")

    def __init__(self, hosts: tuple[str, ...]) -> None:
        names = [host.strip().lower().rstrip(".") for host in hosts]
        self._any = "*" in names
        self._exact = frozenset(host_name(name) for name in names if not name.startswith("."))
        self._suffixes = tuple(name for name in names if name.startswith(".") and name != ".")

    def allows(self, name: str) -> bool:
        """Whether ``name`` (a host name, as :func:`host_name` gives it) is allowed."""
        if self._any or name in self._exact:
            return True
        return any(name == suffix[1:] or name.endswith(suffix) for suffix in self._suffixes)

    def check(self, host: bytes | None, origin: bytes | None, exempt: bool) -> ServerError | None:
        """The refusal of a request with these ``Host`` and ``Origin`` headers, or None
        (``exempt``: a path answered whatever the ``Host``, :data:`EXEMPT_PATHS`)."""
        name = host_name(host.decode("latin-1")) if host is not None else ""
        if not exempt and not self.allows(name):
            shown = host.decode("latin-1")[:100] if host is not None else "no Host header"
            return ServerError(
                400,
                f"Host: {shown!r} is not a name this server answers to; expected one of its "
                "allowed hosts (--allowed-host)",
                code="invalid_host",
                close=True,
            )
        if origin is None:
            return None
        text = origin.decode("latin-1").strip()
        try:
            origin_name = host_name(urlsplit(text).netloc) if text != "null" else ""
        except ValueError:
            origin_name = ""
        allowed = origin_name == name if self._any else self.allows(origin_name)
        if origin_name and allowed:
            return None
        return ServerError(
            403,
            f"Origin: {text[:100]!r}: a browser request from another site; expected requests "
            "from programs, or from a page on an allowed host (--allowed-host)",
            code="forbidden_origin",
        )

    @staticmethod
    def check_body(content_type: str | None) -> None:
        """Raise the 415 for a body declared as something other than JSON."""
        if content_type is None:
            return
        kind = content_type.partition(";")[0].strip().lower()
        if kind == "application/json" or (
            kind.startswith("application/") and kind.endswith("+json")
        ):
            return
        raise ServerError(
            415,
            f"content-type: {content_type[:100]!r}; expected application/json (or none)",
            code="unsupported_media_type",
        )
