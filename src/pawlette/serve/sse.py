"""An incremental reader of server-sent events (the upstream's ``stream: true`` answer).

Sans-IO: ``feed(bytes)`` returns the ``data`` payloads of the events it completed; ``finish()``
returns an event the stream ended inside.  Comments (``: keep-alive``) and the ``event``,
``id`` and ``retry`` fields are skipped; lines may end in LF, CRLF or a lone CR (the spec's
three; a CR at the end of a read waits for the next, which may bring its LF); a ``data`` line
without a colon is an empty value; UTF-8 split across reads is held back.

>>> decoder = SSEDecoder()
>>> decoder.feed(b'data: {"a": 1}\\n\\nda'), decoder.feed(b"ta: [DONE]\\n\\n")
(['{"a": 1}'], ['[DONE]'])
"""

from __future__ import annotations

import codecs


class SSEDecoder:
    __slots__ = ("_data", "_decoder", "_tail")

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._tail = ""
        self._data: list[str] | None = None

    def feed(self, chunk: bytes) -> list[str]:
        text = self._tail + self._decoder.decode(chunk)
        if self._data is None and "\r" not in text:
            # The common shape, ``data: X`` and a blank line per event, split by events
            # rather than lines (a third of the time); anything else takes the line reader.
            blocks = text.split("\n\n")
            rest = blocks[-1]
            if "\n" not in rest:
                events = [block[6:] for block in blocks[:-1]]
                if all(block.startswith("data: ") and "\n" not in block for block in blocks[:-1]):
                    self._tail = rest
                    return events
        held = ""
        if "\r" in text:
            if text.endswith("\r"):  # a CR ending this read: is an LF coming next?
                text, held = text[:-1], "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        self._tail = lines.pop() + held
        return self._events(lines)

    def finish(self) -> list[str]:
        """The end of the stream: an event still open (no blank line after it) completes."""
        text = self._tail + self._decoder.decode(b"", final=True)
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self._tail = ""
        return self._events([*lines, ""])

    def _events(self, lines: list[str]) -> list[str]:
        events: list[str] = []
        for line in lines:
            if line.endswith("\r"):  # lines split at LF alone (feed splits at every line end)
                line = line[:-1]
            if not line:
                if self._data is not None:
                    events.append("\n".join(self._data))
                    self._data = None
                continue
            if line.startswith("data:"):
                value = line[6:] if line.startswith("data: ") else line[5:]
            elif line == "data":  # a field name alone: its value is empty
                value = ""
            else:
                continue
            if self._data is None:
                self._data = [value]
            else:
                self._data.append(value)
        return events
