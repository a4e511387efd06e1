"""The answer half of :mod:`pawlette.serve.http1`: one HTTP/1.1 answer parsed as its bytes
arrive (sans-IO), so the client's protocol only hands bytes on and the parser is tested alone,
split at every byte.

The status line and headers, then a chunked, ``content-length`` or read-until-close body,
decoded (``gzip``, ``deflate``) when the engine compresses it; interim ``1xx`` answers are
skipped.  Whatever is not HTTP/1.x is an :class:`~pawlette.serve.transport.EngineInvalid`, a
connection closed before the answer's end an
:class:`~pawlette.serve.transport.EngineDisconnected`.

Bounded: the head (with any interim answers before it) at :data:`MAX_HEAD_BYTES`, a chunked
body's lines at :data:`MAX_LINE_BYTES`, the decoded body at ``max_body`` bytes
(:class:`~pawlette.serve.transport.EngineTooLarge` past it): a compressed body is inflated no
further than that, so a small gzip answer that would inflate to gigabytes costs at most
``max_body`` bytes of memory.  An answer framed both by ``content-length`` and
``transfer-encoding`` is read by the latter and its connection is not reused (RFC 9112 6.3:
such a message may be an attempt at request smuggling).
"""

from __future__ import annotations

import re
import zlib
from typing import Any

from .transport import EngineDisconnected, EngineInvalid, EngineTooLarge

MAX_HEAD_BYTES = 65536
"""The longest answer head (status line and headers, with the interim answers before it)."""
MAX_LINE_BYTES = 4096
"""The longest chunk-size or trailer line of a chunked body."""

_HEX = re.compile(rb"[0-9A-Fa-f]{1,15}")
"""A chunk size: at most 15 digits after any leading zeros (llhttp reads any number)."""
_BLANK_LINE = re.compile(rb"\n\r?\n")
_STATUS = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?: [^\r\n]*)?")

# Parser states.
_HEAD, _CHUNK_SIZE, _CHUNK_DATA, _CHUNK_END, _TRAILER, _LENGTH, _UNTIL_CLOSE, _DONE = range(8)


def decompressor(encoding: str) -> Any:
    """A zlib decompressor for ``gzip`` or ``deflate``."""
    return zlib.decompressobj(16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS)


class ResponseParser:
    """One HTTP/1.1 answer, fed the bytes as they arrive (sans-IO).

    ``feed(data)`` returns the body bytes that ``data`` completed (decoded); ``status``,
    ``headers`` and ``keep_alive`` are set once ``head_done``; ``done`` once the body ended;
    ``close()`` tells it the connection closed (the end of a read-until-close body, else an
    :class:`~pawlette.serve.transport.EngineDisconnected`).  Bytes after the answer make the
    connection not reusable.  ``max_body``: the most decoded body bytes read (None: no bound).
    ``decode=False``: a compressed body comes out as it is (:attr:`encoding` names it), for a
    caller that inflates it a step at a time (the client, which must not block its loop for
    the time a bomb takes to inflate); it then counts the decoded bytes itself.
    """

    __slots__ = (
        "_decoder",
        "_head_seen",
        "_partial",
        "_remaining",
        "body_bytes",
        "decode",
        "done",
        "encoding",
        "head_done",
        "headers",
        "keep_alive",
        "max_body",
        "state",
        "status",
    )

    def __init__(self, max_body: int | None = None, *, decode: bool = True) -> None:
        self.decode = decode
        self.encoding: str | None = None
        """``gzip`` or ``deflate`` when the body is compressed (set with the head)."""
        self.state = _HEAD
        self._partial = b""
        self._remaining = 0
        self._decoder: Any = None
        self._head_seen = 0
        self.status = 0
        self.headers: dict[str, str] = {}
        self.keep_alive = True
        self.head_done = False
        self.done = False
        self.max_body = max_body
        self.body_bytes = 0
        """Decoded body bytes handed out so far."""

    def feed(self, data: bytes) -> bytes:
        if self._partial:
            data = self._partial + data
            self._partial = b""
        state = self.state
        if _CHUNK_SIZE <= state <= _TRAILER:
            body = self._chunks(data)  # the hot path
        elif state == _HEAD:
            body = self._head(data)
        elif state == _LENGTH:
            body = self._length(data)
        elif state == _UNTIL_CLOSE:
            body = data
        else:  # _DONE: bytes after the answer
            self.keep_alive = bool(self.keep_alive and not data)
            return b""
        if self._decoder is not None:
            body = self._inflate(body)
        elif body and self.encoding is None:
            self._count(len(body))
        return body

    def _count(self, size: int) -> None:
        self.body_bytes += size
        if self.max_body is not None and self.body_bytes > self.max_body:
            self.keep_alive = False
            raise EngineTooLarge(f"an answer over {self.max_body} bytes (--max-answer-bytes)")

    def _inflate(self, body: bytes) -> bytes:
        """``body`` decoded, inflated no further than the bytes left under ``max_body`` (one
        more shows it is over): a bomb stops there, whatever it would inflate to."""
        decoder = self._decoder
        room = -1 if self.max_body is None else self.max_body - self.body_bytes + 1
        try:
            out: bytes = decoder.decompress(body, max(room, 0)) if body else b""
            if self.done and not (room > 0 and len(out) >= room):
                out += decoder.flush()
                self._decoder = None
        except zlib.error as error:
            raise self._undecodable(error) from error
        self._count(len(out))
        return out

    def _undecodable(self, error: zlib.error) -> EngineInvalid:
        """A body its ``content-encoding`` does not decode: the answer cannot go on, so the
        connection is not reused either."""
        self._decoder = None
        self.keep_alive = False
        encoding = self.headers.get("content-encoding", "")
        return EngineInvalid(f"the answer's {encoding} body does not decode ({error})")

    def close(self) -> bytes:
        """The connection closed: the end of the body, or a broken answer."""
        if self.state == _UNTIL_CLOSE:
            self.state = _DONE
            self.done = True
            self.keep_alive = False
            if self._decoder is None:
                return b""
            try:
                tail: bytes = self._decoder.flush()
            except zlib.error as error:
                raise self._undecodable(error) from error
            self._decoder = None
            self._count(len(tail))
            return tail
        if self.state != _DONE:
            where = "head" if self.state == _HEAD else "body"
            raise EngineDisconnected(
                f"the engine closed the connection in the middle of its answer's {where}"
                if self.state != _HEAD or self._partial or self._head_seen
                else "the engine closed the connection without answering"
            )
        return b""

    # ------------------------------------------------------------------ head

    def _head(self, data: bytes) -> bytes:
        while True:
            # The first blank line ends the head, whatever mix of CRLF and LF its lines end
            # in (as h11 and llhttp read it): searching CRLF CRLF first would find one in the
            # body after an LF-only head (a chunked body's last line), or none at all.
            blank = _BLANK_LINE.search(data)
            end = len(data) if blank is None else blank.start()
            if self._head_seen + end > MAX_HEAD_BYTES:
                # Interim answers count too: a stream of them is as long a head.
                raise EngineInvalid(
                    f"an answer head (with its interim answers) over {MAX_HEAD_BYTES} bytes"
                )
            if blank is None:
                self._partial = data
                return b""
            head, data = data[:end], data[blank.end() :]
            self._head_seen += blank.end()
            if head.endswith(b"\r"):
                head = head[:-1]
            status = self._read_head(head)
            if 100 <= status < 200:  # an interim answer (100 Continue, 103): the real one follows
                self.headers = {}
                continue
            return self._start_body(status, data)

    def _read_head(self, head: bytes) -> int:
        lines = head.replace(b"\r\n", b"\n").split(b"\n")
        match = _STATUS.fullmatch(lines[0])
        if match is None:
            shown = lines[0][:80].decode("latin-1")
            raise EngineInvalid(f"not an HTTP/1.x status line: {shown!r}")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon or not name or name != name.strip():
                shown = line[:80].decode("latin-1")
                raise EngineInvalid(f"not a header line: {shown!r}")
            key = name.decode("latin-1").lower()
            text = value.strip().decode("latin-1")
            # Repeated headers join with commas (RFC 9110 5.3), content-length excepted.
            if key in headers and key != "content-length":
                headers[key] += ", " + text
            elif key in headers and headers[key] != text:
                raise EngineInvalid("two different content-length headers")
            else:
                headers[key] = text
        self.headers = headers
        self.keep_alive = match.group(1) == b"1"
        connection = headers.get("connection", "").lower()
        if "close" in connection:
            self.keep_alive = False
        elif "keep-alive" in connection:
            self.keep_alive = True
        return int(match.group(2))

    def _start_body(self, status: int, data: bytes) -> bytes:
        self.status = status
        self.head_done = True
        headers = self.headers
        encoding = headers.get("content-encoding", "identity").strip().lower()
        if encoding in ("gzip", "x-gzip", "deflate"):
            self.encoding = "deflate" if encoding == "deflate" else "gzip"
            if self.decode:
                self._decoder = decompressor(self.encoding)
        elif encoding not in ("identity", ""):
            raise EngineInvalid(f"an answer encoded as {encoding[:40]!r}")
        transfer = headers.get("transfer-encoding")
        if status in (204, 304):
            self._finish()
            return b""
        if transfer is not None:
            if "content-length" in headers:
                # Framed twice: read by transfer-encoding, and never reuse the connection
                # (RFC 9112 6.3; the bytes after may be a smuggled answer).
                self.keep_alive = False
            codings = [coding.strip().lower() for coding in transfer.split(",")]
            if codings[-1] != "chunked":
                # Not chunked last: the body runs to the connection's end (RFC 9112 6.3).
                self.keep_alive = False
                self.state = _UNTIL_CLOSE
                return data
            self.state = _CHUNK_SIZE
            return self._chunks(data) if data else b""
        length = headers.get("content-length")
        if length is not None:
            if not length.isdigit() or not length.isascii():
                raise EngineInvalid(f"a content-length of {length[:40]!r}")
            self._remaining = int(length)
            self.state = _LENGTH
            return self._length(data)
        self.keep_alive = False
        self.state = _UNTIL_CLOSE
        return data

    def _finish(self) -> None:
        self.state = _DONE
        self.done = True

    # ------------------------------------------------------------------ bodies

    def _length(self, data: bytes) -> bytes:
        remaining = self._remaining
        available = len(data)
        if available < remaining:
            self._remaining = remaining - available
            return data
        self._remaining = 0
        self._finish()
        if available > remaining:
            self.keep_alive = False  # bytes after the answer: this connection is not reused
            return data[:remaining]
        return data

    def _chunks(self, data: bytes) -> bytes:
        pieces: list[bytes] = []
        position = 0
        size = len(data)
        state = self.state
        while position < size:
            if state == _CHUNK_DATA:
                remaining = self._remaining
                end = position + remaining
                if end > size:
                    pieces.append(data[position:])
                    self._remaining = remaining - (size - position)
                    position = size
                    break
                pieces.append(data[position:end])
                position = end
                state = _CHUNK_END
                continue
            line_end = data.find(b"\n", position)
            if line_end < 0:
                rest = data[position:]
                if len(rest) > MAX_LINE_BYTES:
                    raise EngineInvalid("a chunked body's line is too long")
                if state == _CHUNK_END and rest != b"\r":
                    raise EngineInvalid("a chunk not followed by its line end")
                self._partial = rest
                position = size
                break
            line = data[position:line_end]
            if line_end - position > MAX_LINE_BYTES:
                raise EngineInvalid("a chunked body's line is too long")
            if line.endswith(b"\r"):
                line = line[:-1]
            position = line_end + 1
            if state == _CHUNK_SIZE:
                digits = line.split(b";", 1)[0].strip(b" \t")
                if len(digits) > 15:  # leading zeros do not count (checked only when long)
                    digits = digits.lstrip(b"0") or b"0"
                if _HEX.fullmatch(digits) is None:
                    shown = line[:40].decode("latin-1")
                    raise EngineInvalid(f"not a chunk size: {shown!r}")
                chunk = int(digits, 16)
                if chunk:
                    self._remaining = chunk
                    state = _CHUNK_DATA
                else:
                    state = _TRAILER
            elif state == _CHUNK_END:
                if line:
                    raise EngineInvalid("a chunk not followed by its line end")
                state = _CHUNK_SIZE
            elif not line:  # _TRAILER: the empty line after the (skipped) trailer fields
                state = _DONE
                self.done = True
                if position < size:
                    self.keep_alive = False
                break
        self.state = state
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)
