"""One completion through the format's parser: upstream text in, OpenAI chunks or a message out.

Sans-IO and shared by the streaming and the non-streaming paths, so they cannot disagree:

- the plan's forced prefix (if any) is fed to the parser first: it is part of the turn;
- tool-call indexes are numbered across the whole completion (the parser does that);
- the plan's cut rules end the completion before a call it forbids (:attr:`cut` turns true
  and the caller stops reading the upstream);
- the finish reason is ``length`` when the engine said so (and no cut ended the answer
  first), else ``tool_calls`` when a valid call was returned, else ``stop``.
"""

from __future__ import annotations

import json
from typing import Any

from ..engine.fold import fold, merge_assistant
from ..engine.machine import completion_finish_reason
from ..format import Format
from ..openai import message_to_openai
from ..types import (
    Event,
    MessageEnd,
    ParseWarning,
    Tool,
    ToolCallEnd,
    ToolCallStart,
)
from .chunks import ChunkEncoder, ChunkStream, Delta, utf8
from .tool_choice import ToolPlan

# One encoder for every call: json.dumps with options builds a new encoder per call.
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def encode_events(chunks: list[dict[str, Any]]) -> bytes:
    """Chunks as server-sent events: ``data: {json}\\n\\n`` each."""
    return utf8("".join(f"data: {_JSON.encode(chunk)}\n\n" for chunk in chunks))


class Completion:
    """Feed the upstream's text; read events (:meth:`feed`) or chunks (:class:`ChunkPipeline`)."""

    def __init__(
        self,
        fmt: Format,
        plan: ToolPlan,
        tools: tuple[Tool, ...] = (),
        *,
        stream_arguments: bool = False,
    ) -> None:
        self.format = fmt
        self.plan = plan
        self.parser = fmt.parser(tools=tools, stream_arguments=stream_arguments, start=plan.start)
        self.cut = False
        self.calls = 0
        """Calls started (what the plan's cut rules count)."""
        self.valid_calls = 0
        """Calls ended: valid ones (with ``stream_arguments`` a malformed call starts too)."""
        self.length = False
        self.warnings: list[ParseWarning] = []
        self._pending: list[Event] = self._admit(self.parser.feed(plan.prefix))

    def feed(self, text: str) -> list[Event]:
        """Events for the next piece of the model's output (nothing once cut)."""
        pending = self._pending
        if pending:
            self._pending = []
        if self.cut or not text:
            return pending
        events = self._admit(self.parser.feed(text))
        return pending + events if pending else events

    def finish(self, upstream_reason: str | None) -> list[Event]:
        """The last events (``finish_reason`` is the engine's); ends with :class:`MessageEnd`."""
        events = self.feed("")
        if not self.cut:
            events += self._admit(self.parser.finish(upstream_reason))
        events.append(MessageEnd(self.finish_reason))
        return events

    @property
    def finish_reason(self) -> str:
        # A cut (the plan stopped a forbidden call) ends the answer here, whatever the engine
        # did after it: the engine's length no longer applies.
        engine_reason = "length" if self.length and not self.cut else None
        return completion_finish_reason(engine_reason, self.valid_calls)

    def _admit(self, events: list[Event]) -> list[Event]:
        """Drop message ends (the completion ends once, in :meth:`finish`), renumber calls
        across turns, and cut before a call the plan forbids."""
        admitted: list[Event] = []
        for event in events:
            if self.cut:
                break
            if isinstance(event, ToolCallStart):
                plan = self.plan
                if (plan.max_calls is not None and self.calls >= plan.max_calls) or (
                    plan.only_function is not None and event.name != plan.only_function
                ):
                    self.cut = True
                    break
                self.calls += 1
            elif isinstance(event, ToolCallEnd):
                self.valid_calls += 1
            elif isinstance(event, MessageEnd):
                if event.finish_reason == "length":
                    self.length = True
                continue
            elif isinstance(event, ParseWarning):
                self.warnings.append(event)
            admitted.append(event)
        return admitted

    def message(self, text: str, upstream_reason: str | None) -> dict[str, Any]:
        """The whole completion (non-streaming): the OpenAI assistant message."""
        events = self.feed(text) + self.finish(upstream_reason)
        folded = fold(events, self.format.grammar.fields)
        return message_to_openai(merge_assistant(folded.messages))


class ChunkPipeline:
    """A :class:`Completion` whose output is ``chat.completion.chunk`` dicts."""

    def __init__(
        self,
        fmt: Format,
        plan: ToolPlan,
        tools: tuple[Tool, ...] = (),
        *,
        model: str,
        completion_id: str | None = None,
        stream_arguments: bool = False,
    ) -> None:
        self.completion = Completion(fmt, plan, tools, stream_arguments=stream_arguments)
        self.stream = ChunkStream(
            model=model, completion_id=completion_id, stream_arguments=stream_arguments
        )
        self.encoder = ChunkEncoder(self.stream)

    @property
    def cut(self) -> bool:
        return self.completion.cut

    def start(self) -> list[dict[str, Any]]:
        """The role chunk (and whatever the forced prefix produced)."""
        return self.stream.chunks(self.completion.feed(""))

    def feed(self, text: str) -> list[dict[str, Any]]:
        return self.stream.chunks(self.completion.feed(text))

    def finish(self, upstream_reason: str | None) -> list[dict[str, Any]]:
        """The remaining chunks, ending with the one that carries ``finish_reason``."""
        return self.stream.chunks(self.completion.finish(upstream_reason))

    # The same, as (delta, finish_reason) pairs for :attr:`encoder` (what the server sends).

    def start_deltas(self) -> list[Delta]:
        return self.stream.deltas(self.completion.feed(""))

    def feed_deltas(self, text: str) -> list[Delta]:
        return self.stream.deltas(self.completion.feed(text))

    def finish_deltas(self, upstream_reason: str | None) -> list[Delta]:
        return self.stream.deltas(self.completion.finish(upstream_reason))
