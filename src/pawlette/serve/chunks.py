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

import time
import uuid
from collections.abc import Iterable
from typing import Any

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
        self.completion_id = completion_id or "chatcmpl-" + uuid.uuid4().hex[:24]
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
        result: list[dict[str, Any]] = []
        if not self._started:
            self._started = True
            result.append(self._chunk({"role": "assistant", "content": ""}))
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
                result.append(self._chunk(delta))
            elif isinstance(event, MessageEnd):
                self._held.clear()  # calls that never ended are no calls
                result.append(self.finish_chunk(event.finish_reason))
        return result

    def _release(self, index: int) -> list[dict[str, Any]]:
        """A held call, once it ended: its start, then its arguments in one delta."""
        held = self._held.pop(index, [])
        starts = [event for event in held if isinstance(event, ToolCallStart)]
        if not starts:
            return []
        arguments = "".join(e.arguments for e in held if isinstance(e, ToolCallDelta))
        chunks = [self._chunk(self._delta(starts[-1]) or {})]
        delta = self._delta(ToolCallDelta(index, arguments))
        if delta is not None:
            chunks.append(self._chunk(delta))
        return chunks

    def finish_chunk(self, finish_reason: str | None) -> dict[str, Any]:
        """The closing chunk; ``finish_reason`` defaults from what was streamed."""
        self.finished = True
        if finish_reason is None:
            finish_reason = "tool_calls" if self.saw_call else "stop"
        return self._chunk({}, finish_reason)

    def usage_chunk(self, usage: dict[str, Any]) -> dict[str, Any]:
        """OpenAI's trailing usage chunk (``stream_options.include_usage``)."""
        chunk = self._chunk({})
        chunk["choices"] = []
        chunk["usage"] = usage
        return chunk

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
