"""Parser events to OpenAI ``chat.completion.chunk`` objects: the only code that knows
``choices[0].delta``.

The shapes follow OpenAI's streaming exactly:

- the first chunk carries ``{"role": "assistant", "content": ""}``;
- text arrives as ``{"content": ...}``, reasoning as ``{"reasoning_content": ...}``;
- a tool call's first delta carries ``index``, ``id``, ``type`` and ``function.name`` (with
  ``arguments: ""``); later deltas carry ``index`` and ``function.arguments`` fragments
  (by default one: the parser holds a call until it is known valid); indexes count the
  calls of the whole completion, 0, 1, 2, ...;
- the last chunk has an empty delta and the ``finish_reason`` (``tool_calls`` exactly when a
  valid call was parsed, unless the engine stopped for ``length``); nothing follows it.

Non-text content parts (omni's voice, actions, image requests) are sent in the documented
extension ``delta.content_parts`` (a list of OpenAI-style parts) that stock clients ignore.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable
from typing import Any

from ..engine.call_text import PIECE_BYTES
from ..engine.machine import completion_finish_reason
from ..openai import part_to_openai
from ..types import (
    Event,
    MessageEnd,
    PartAdded,
    ReasoningDelta,
    ReasoningStepAdded,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

Delta = tuple[dict[str, Any], str | None]
"""A chunk's ``choices[0].delta`` and ``finish_reason``."""


class ChunkStream:
    """Turns one completion's events into chunk dicts, in order.

    >>> stream = ChunkStream(model="m", completion_id="chatcmpl-1", created=0)
    >>> [c["choices"][0]["delta"] for c in stream.chunks([TextDelta("Hi")])]
    [{'role': 'assistant', 'content': ''}, {'content': 'Hi'}]
    """

    def __init__(
        self,
        *,
        model: str,
        completion_id: str | None = None,
        created: int | None = None,
        stream_arguments: bool = False,
    ) -> None:
        self.model = model
        self.stream_arguments = stream_arguments
        """Send call deltas as they come; by default a call is sent once its ``ToolCallEnd``
        arrives (a call that never ends, which a parser with ``stream_arguments`` emits for a
        malformed call, is never sent: its text comes as content)."""
        self._held: dict[int, list[ToolCallStart | ToolCallDelta]] = {}
        # 24 random hex digits as before, without building a UUID (a fifth of the time).
        self.completion_id = completion_id or "chatcmpl-" + os.urandom(12).hex()
        self.created = int(time.time()) if created is None else created
        self._started = False
        self.finished = False
        self.saw_call = False
        self._indices: dict[int, int] = {}  # a parser's call index -> this stream's

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            ],
        }

    def chunks(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        """The chunks for these events (the role chunk comes first, once)."""
        return [self._chunk(delta, reason) for delta, reason in self.deltas(events)]

    def deltas(self, events: Iterable[Event]) -> list[Delta]:
        """What :meth:`chunks` returns, as ``(delta, finish_reason)`` pairs: the parts that
        differ from chunk to chunk (the server encodes the rest once, see :class:`ChunkEncoder`)."""
        result: list[Delta] = []
        if not self._started:
            self._started = True
            result.append(({"role": "assistant", "content": ""}, None))
        for event in events:
            if self.finished:
                # Nothing follows the finish chunk (a completion's parser ends its message
                # once, at its end; events of a second message would be a caller's mistake).
                break
            if not self.stream_arguments and isinstance(event, (ToolCallStart, ToolCallDelta)):
                self._held.setdefault(event.index, []).append(event)
                continue
            if isinstance(event, ToolCallEnd):
                result.extend(self._release(event.index))
                continue
            delta = self._delta(event)
            if delta is not None:
                result.append((delta, None))
            elif isinstance(event, MessageEnd):
                self._held.clear()  # calls that never ended are no calls
                result.append(self._finish(event.finish_reason))
        return result

    def _release(self, index: int) -> list[Delta]:
        """A held call, once it ended: its start, then its arguments in one delta (a big
        call's in pieces of about ``PIECE_BYTES`` characters, as a parser hands them on:
        joined whole they would be held twice)."""
        held = self._held.pop(index, [])
        starts = [event for event in held if isinstance(event, ToolCallStart)]
        if not starts:
            return []
        deltas: list[Delta] = [(self._delta(starts[-1]) or {}, None)]
        batch: list[str] = []
        size = 0
        for event in held:
            if not isinstance(event, ToolCallDelta) or not event.arguments:
                continue
            if batch and size + len(event.arguments) > PIECE_BYTES:
                deltas.append(self._arguments_delta(index, batch))
                batch = []
                size = 0
            batch.append(event.arguments)
            size += len(event.arguments)
        if size:
            deltas.append(self._arguments_delta(index, batch))
        return deltas

    def _arguments_delta(self, index: int, pieces: list[str]) -> Delta:
        return self._delta(ToolCallDelta(index, "".join(pieces))) or {}, None

    def finish_chunk(self, finish_reason: str | None) -> dict[str, Any]:
        """The closing chunk; ``finish_reason`` defaults from what was streamed."""
        return self._chunk(*self._finish(finish_reason))

    def _finish(self, finish_reason: str | None) -> Delta:
        self.finished = True
        if finish_reason is None:
            finish_reason = completion_finish_reason(None, int(self.saw_call))
        return {}, finish_reason

    def usage_chunk(self, usage: dict[str, Any]) -> dict[str, Any]:
        """OpenAI's trailing usage chunk (``stream_options.include_usage``)."""
        return {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": usage,
        }

    def _delta(self, event: Event) -> dict[str, Any] | None:
        if isinstance(event, TextDelta):
            return {"content": event.text} if event.text else None
        if isinstance(event, ReasoningDelta):
            return {"reasoning_content": event.text} if event.text else None
        if isinstance(event, ToolCallStart):
            # Calls are numbered in the order they start, across the whole completion, so
            # no two calls share an index (a client merges deltas by index).
            index = self._indices[event.index] = len(self._indices)
            self.saw_call = True
            return {
                "tool_calls": [
                    {
                        "index": index,
                        "id": event.id,
                        "type": "function",
                        "function": {"name": event.name, "arguments": ""},
                    }
                ]
            }
        if isinstance(event, ToolCallDelta):
            if not event.arguments:
                return None
            index = self._indices.get(event.index, event.index)
            return {"tool_calls": [{"index": index, "function": {"arguments": event.arguments}}]}
        if isinstance(event, PartAdded):
            return {"content_parts": [part_to_openai(event.part)]}
        if isinstance(event, ReasoningStepAdded):
            step = event.step
            return {
                "reasoning_steps": [
                    {
                        "title": step.title,
                        "reasoning": step.reasoning,
                        "conclusion": step.conclusion,
                    }
                ]
            }
        return None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8(json_text: str) -> bytes:
    """JSON text as UTF-8.  An engine may send a lone surrogate (``"\\ud800"``), which no
    UTF-8 spells; in JSON text it can only stand inside a string, so it is written back as
    the same escape: valid JSON, nothing replaced, no failure mid-answer."""
    try:
        return json_text.encode()
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", json_text).encode()


BIG_CHUNK = 1 << 16
"""A chunk's delta past this many characters of JSON is encoded to UTF-8 on its own (see
:meth:`ChunkEncoder.encode`)."""

# One encoder for every chunk: json.dumps with options builds a new encoder per call.
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_STRING = json.encoder.encode_basestring  # in C; what ensure_ascii=False writes


class ChunkEncoder:
    r"""One :class:`ChunkStream`'s chunks as server-sent events, the bytes ``json.dumps`` with
    ``ensure_ascii=False`` and compact separators writes for the chunk dicts (the tests check
    they are equal), with everything but the delta and the finish reason encoded once.

    >>> stream = ChunkStream(model="m", completion_id="chatcmpl-1", created=0)
    >>> ChunkEncoder(stream).encode(stream.deltas([TextDelta("Hi")])).split(b"\n\n")[1][-86:]
    b'"choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}'
    """

    __slots__ = ("_head", "_open")

    def __init__(self, stream: ChunkStream) -> None:
        self._head = (
            f'data: {{"id":{_STRING(stream.completion_id)},"object":"chat.completion.chunk",'
            f'"created":{_JSON.encode(stream.created)},"model":{_STRING(stream.model)},'
            '"choices":[{"index":0,"delta":'
        )
        self._open = ',"logprobs":null,"finish_reason":null}]}\n\n'

    def encode(self, deltas: list[Delta]) -> bytes:
        head = self._head
        parts: list[str] = []
        encoded: list[bytes] = []  # the chunks up to a big one, as UTF-8 (see below)
        for delta, reason in deltas:
            parts.append(head)
            text = delta.get("content") if len(delta) == 1 else None
            # The common chunk, a piece of text, without the general encoder.
            body = '{"content":' + _STRING(text) + "}" if type(text) is str else _JSON.encode(delta)
            parts.append(body)
            if reason is None:
                parts.append(self._open)
            else:
                parts.append(f',"logprobs":null,"finish_reason":{_STRING(reason)}}}]}}\n\n')
            if len(body) > BIG_CHUNK:
                # A big chunk (a held call's piece of arguments): made UTF-8 at once, so the
                # deltas' JSON is not held whole as strings, then joined, then encoded.
                encoded.append(utf8("".join(parts)))
                parts.clear()
        if not encoded:
            return utf8("".join(parts))
        if parts:
            encoded.append(utf8("".join(parts)))
        return encoded[0] if len(encoded) == 1 else b"".join(encoded)
