"""Fold parser events into messages: the one place events become values.

Whole-text parsing is ``fold(parser.feed(text) + parser.finish())``, so streaming and
non-streaming results cannot disagree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from ..types import (
    ContentPart,
    Event,
    Message,
    MessageEnd,
    MessageStart,
    MetadataItem,
    ParseWarning,
    PartAdded,
    ReasoningDelta,
    ReasoningStepAdded,
    Role,
    TextDelta,
    TextPart,
    ThinkStep,
    Tool,
    ToolCall,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolsDeclared,
)


class _MessageBuilder:
    def __init__(self, role: Role) -> None:
        self.role = role
        self.parts: list[ContentPart] = []
        self.text: list[str] = []
        self.reasoning: list[str] | None = None
        self.steps: list[ThinkStep] | None = None
        self.calls: dict[int, list[str]] = {}
        self.call_heads: dict[int, tuple[str, str]] = {}
        self.ended_calls: set[int] = set()
        self.fields: dict[str, str] = {}
        self.metadata: list[tuple[str, str]] = []
        self.declared_tools = False

    def only_declares_tools(self) -> bool:
        """A turn written only to hold the tools (no text, no header): not a message."""
        return (
            self.declared_tools
            and not self.text
            and not self.parts
            and not self.fields
            and not self.metadata
        )

    def flush_text(self) -> None:
        if self.text:
            self.parts.append(TextPart("".join(self.text)))
            self.text = []

    def build(self) -> Message:
        self.flush_text()
        # Only calls that ended are calls: with ``stream_arguments`` a call found malformed
        # never gets its ToolCallEnd (its text comes as content instead).
        calls = tuple(
            ToolCall(id=head[0], name=head[1], arguments="".join(self.calls[index]))
            for index, head in sorted(self.call_heads.items())
            if index in self.ended_calls
        )
        parts = tuple(
            part for part in self.parts if not (isinstance(part, TextPart) and not part.text)
        )
        content: tuple[ContentPart, ...] | None = parts
        if not parts and calls:
            content = None
        return Message(
            role=self.role,
            content=content,
            name=self.fields.get("name"),
            tool_calls=calls,
            tool_call_id=self.fields.get("tool_call_id"),
            reasoning=None if self.reasoning is None else "".join(self.reasoning),
            reasoning_steps=None if self.steps is None else tuple(self.steps),
            metadata=tuple(self.metadata),
        )


class Folder:
    """Accumulates events; ``messages``, ``tools`` and ``warnings`` hold the result."""

    def __init__(self, fields: Mapping[Role, Mapping[str, str]] | None = None) -> None:
        self._fields = fields or {}
        self._current: _MessageBuilder | None = None
        self.messages: list[Message] = []
        self.tools: list[Tool] = []
        self.warnings: list[ParseWarning] = []
        self.finish_reason: str | None = None

    def _builder(self) -> _MessageBuilder:
        if self._current is None:
            # Text outside any message: keep it in an assistant message rather than drop it.
            self._current = _MessageBuilder("assistant")
        return self._current

    def add(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self._builder().text.append(event.text)
        elif isinstance(event, ToolCallDelta):
            self._builder().calls[event.index].append(event.arguments)
        elif isinstance(event, ReasoningDelta):
            builder = self._builder()
            if builder.reasoning is None:
                builder.reasoning = []
            builder.reasoning.append(event.text)
        elif isinstance(event, ToolCallStart):
            builder = self._builder()
            builder.call_heads[event.index] = (event.id, event.name)
            builder.calls[event.index] = []
        elif isinstance(event, MessageStart):
            self._close()
            self._current = _MessageBuilder(event.role)
        elif isinstance(event, MessageEnd):
            self._close()
            if event.finish_reason is not None:
                self.finish_reason = event.finish_reason
        elif isinstance(event, MetadataItem):
            builder = self._builder()
            field = self._fields.get(builder.role, {}).get(event.key)
            if field is not None and field not in builder.fields:
                builder.fields[field] = event.value
            else:
                builder.metadata.append((event.key, event.value))
        elif isinstance(event, PartAdded):
            builder = self._builder()
            builder.flush_text()
            builder.parts.append(event.part)
        elif isinstance(event, ReasoningStepAdded):
            builder = self._builder()
            if builder.steps is None:
                builder.steps = []
            builder.steps.append(event.step)
        elif isinstance(event, ToolsDeclared):
            self.tools.extend(event.tools)
            if self._current is not None:
                self._current.declared_tools = True
        elif isinstance(event, ParseWarning):
            self.warnings.append(event)
        elif isinstance(event, ToolCallEnd):
            self._builder().ended_calls.add(event.index)

    def _close(self) -> None:
        if self._current is not None and not self._current.only_declares_tools():
            self.messages.append(self._current.build())
        self._current = None

    def close(self) -> Folder:
        self._close()
        return self


def fold(events: Iterable[Event], fields: Mapping[Role, Mapping[str, str]] | None = None) -> Folder:
    folder = Folder(fields)
    for event in events:
        folder.add(event)
    return folder.close()


def pair_results(messages: list[Message]) -> list[Message]:
    """Give each tool message without a ``tool_call_id`` the id of the call it answers: the
    next call, in order, of the assistant message before its run of results (formats that
    write no call ids pair results with calls by position).  The one place pairing is done."""
    calls: list[str] = []
    answered = 0
    paired: list[Message] = []
    for message in messages:
        if message.role == "assistant" and message.tool_calls:
            calls = [call.id for call in message.tool_calls]
            answered = 0
        elif message.role == "tool":
            if message.tool_call_id is None and answered < len(calls):
                message = dataclasses.replace(message, tool_call_id=calls[answered])
            answered += 1
        paired.append(message)
    return paired


def merge_assistant(messages: list[Message]) -> Message:
    """One completion may hold several assistant turns (ChatGLM3): merge them into one."""
    if len(messages) == 1:
        return messages[0]
    if not messages:
        return Message(role="assistant", content=())
    parts: list[ContentPart] = []
    calls: list[ToolCall] = []
    reasoning: list[str] | None = None
    steps: list[ThinkStep] | None = None
    for message in messages:
        for part in message.content or ():
            if isinstance(part, TextPart) and parts and isinstance(parts[-1], TextPart):
                parts[-1] = TextPart(parts[-1].text + part.text)
            else:
                parts.append(part)
        calls.extend(message.tool_calls)
        if message.reasoning is not None:
            reasoning = [*(reasoning or []), message.reasoning]
        if message.reasoning_steps is not None:
            steps = [*(steps or []), *message.reasoning_steps]
    first = messages[0]
    return Message(
        role="assistant",
        content=None if not parts and calls else tuple(parts),
        name=first.name,
        tool_calls=tuple(calls),
        reasoning=None if reasoning is None else "".join(reasoning),
        reasoning_steps=None if steps is None else tuple(steps),
        metadata=first.metadata,
    )
