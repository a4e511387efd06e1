"""An incremental reader of server-sent events (the upstream's ``stream: true`` answer).

Sans-IO: ``feed(bytes)`` returns the ``data`` payloads of the events it completed; ``finish()``
returns an event the stream ended inside.  Comments (``: keep-alive``) and the ``event``,
``id`` and ``retry`` fields are skipped; lines may end in LF, CRLF or a lone CR (the spec's
three; a CR at the end of a read waits for the next, which may bring its LF); a ``data`` line
without a colon is an empty value.

The bytes are split into lines before they are decoded (a line end is never part of a UTF-8
sequence), and each payload is decoded as UTF-8, strictly: a payload that is not UTF-8 raises
:class:`NotUtf8`, which carries the payloads completed before it, as the server's answer
without streaming refuses a body that is not UTF-8 (the two modes agree).  The cost is linear
in the stream's length however long its lines are: a line that has not ended yet is kept as
its pieces and joined once, when its end comes (joining it again on every read made a 64 MB
line fed in 64 KiB reads take about a minute).  ``max_line`` bounds a line, and an event's
data with the line ends that join its lines, held at once (the server's
``--max-answer-bytes``): past it :class:`LineTooLong`.  An event's data is held as the one
buffer it becomes, so what it holds is what it counts (held as a list of lines, an event of
empty ``data`` lines cost a list entry per five bytes of stream and was never over the bound).

>>> decoder = SSEDecoder()
>>> decoder.feed(b'data: {"a": 1}\\n\\nda'), decoder.feed(b"ta: [DONE]\\n\\n")
(['{"a": 1}'], ['[DONE]'])
"""

from __future__ import annotations


class NotUtf8(ValueError):
    """A payload that is not UTF-8; ``before`` holds the payloads completed before it."""

    def __init__(self, before: list[str], error: UnicodeDecodeError) -> None:
        super().__init__(f"a stream event is not UTF-8 ({error.reason} at byte {error.start})")
        self.before = before


class LineTooLong(ValueError):
    """An event (or a line of one) over the decoder's ``max_line`` bytes."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"a stream event over {limit} bytes (--max-answer-bytes)")


class SSEDecoder:
    __slots__ = ("_data", "_held_cr", "_pending", "_pending_size", "max_line")

    def __init__(self, max_line: int | None = None) -> None:
        self.max_line = max_line
        self._pending: list[bytes] = []
        """The pieces of the line not ended yet."""
        self._pending_size = 0
        self._held_cr = False
        self._data: bytearray | None = None
        """The data of the event not ended yet, its lines joined by line ends."""

    def feed(self, chunk: bytes) -> list[str]:
        if self._held_cr:
            chunk = b"\r" + chunk
            self._held_cr = False
        if b"\n" not in chunk and b"\r" not in chunk:
            if chunk:
                self._pending.append(chunk)  # no line ended: nothing to join yet
                self._pending_size += len(chunk)
                if self.max_line is not None and self._pending_size > self.max_line:
                    raise LineTooLong(self.max_line)
            return []
        if self._pending:
            self._pending.append(chunk)
            chunk = b"".join(self._pending)
            self._pending = []
            self._pending_size = 0
        if self._data is None and b"\r" not in chunk:
            # The common shape, ``data: X`` and a blank line per event, split by events
            # rather than lines (a third of the time); anything else takes the line reader.
            blocks = chunk.split(b"\n\n")
            rest = blocks[-1]
            if b"\n" not in rest and all(
                block.startswith(b"data: ") and b"\n" not in block for block in blocks[:-1]
            ):
                self._keep(rest)
                return self._decode([block[6:] for block in blocks[:-1]])
        if b"\r" in chunk:
            if chunk.endswith(b"\r"):  # a CR ending this read: is an LF coming next?
                chunk = chunk[:-1]
                self._held_cr = True
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = chunk.split(b"\n")
        self._keep(lines.pop())
        return self._decode(self._events(lines))

    def _keep(self, rest: bytes) -> None:
        """The start of a line whose end has not come."""
        if rest:
            if self.max_line is not None and len(rest) > self.max_line:
                raise LineTooLong(self.max_line)
            self._pending.append(rest)
            self._pending_size = len(rest)

    def finish(self) -> list[str]:
        """The end of the stream: an event still open (no blank line after it) completes."""
        text = b"".join(self._pending)
        self._pending = []
        self._held_cr = False
        lines = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        return self._decode(self._events([*lines, b""]))

    def _events(self, lines: list[bytes]) -> list[bytes]:
        events: list[bytes] = []
        for line in lines:
            if not line:
                if self._data is not None:
                    events.append(bytes(self._data))
                    self._data = None
                continue
            if line.startswith(b"data:"):
                value = line[6:] if line.startswith(b"data: ") else line[5:]
            elif line == b"data":  # a field name alone: its value is empty
                value = b""
            else:
                continue
            data = self._data
            if data is None:
                data = self._data = bytearray(value)
            else:
                data += b"\n"
                data += value
            if self.max_line is not None and len(data) > self.max_line:
                raise LineTooLong(self.max_line)
        return events

    @staticmethod
    def _decode(payloads: list[bytes]) -> list[str]:
        decoded: list[str] = []
        try:
            for payload in payloads:
                decoded.append(payload.decode("utf-8"))
        except UnicodeDecodeError as error:
            raise NotUtf8(decoded, error) from error
        return decoded
