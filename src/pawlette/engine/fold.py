"""Fold parser events into messages: the one place events become values.

Whole-text parsing is ``fold(parser.feed(text) + parser.finish())``, so streaming and
non-streaming results cannot disagree (a plain whole completion is read without the events by
:mod:`pawlette.engine.whole`, held to the same message by a property test).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

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
    # Fields that most messages never set are read from the class until set (a parse builds
    # one builder per message, and most hold text and nothing else).
    reasoning: list[str] | None = None
    steps: list[ThinkStep] | None = None
    # Calls, made on the first: index -> argument pieces, index -> (id, name), the indexes
    # that ended.
    calls: dict[int, list[str]] | None = None
    call_heads: dict[int, tuple[str, str]] | None = None
    ended_calls: set[int] | None = None
    fields: dict[str, str] | None = None
    metadata: list[tuple[str, str]] | None = None
    declared_tools = False

    def __init__(self, role: Role) -> None:
        self.role = role
        self.parts: list[ContentPart] = []
        self.text: list[str] = []

    def only_declares_tools(self) -> bool:
        """A turn written only to hold the tools (no text, no header): not a message.  A
        turn with reasoning or calls is a message wherever its tools block came."""
        return (
            self.declared_tools
            and not self.text
            and not self.parts
            and not self.fields
            and not self.metadata
            and not self.reasoning
            and not self.steps
            and not self.call_heads
        )

    def flush_text(self) -> None:
        if self.text:
            self.parts.append(TextPart("".join(self.text)))
            self.text = []

    def build(self) -> Message:
        text = self.text
        parts = self.parts
        if text:
            joined = text[0] if len(text) == 1 else "".join(text)
            if parts:
                parts.append(TextPart(joined))
                content: tuple[ContentPart, ...] | None = None
            else:  # the usual: the text is the content
                content = (TextPart(joined),) if joined else ()
        else:
            content = ()
        if parts:
            content = tuple(
                part for part in parts if not (isinstance(part, TextPart) and not part.text)
            )
        # Only calls that ended are calls: with ``stream_arguments`` a call found malformed
        # never gets its ToolCallEnd (its text comes as content instead).
        calls: tuple[ToolCall, ...] = ()
        heads = self.call_heads
        if heads:
            pieces = self.calls
            ended = self.ended_calls
            assert pieces is not None and ended is not None
            if len(heads) == 1:  # the usual: one call, no sort, no generator
                ((index, head),) = heads.items()
                if index in ended:
                    written = pieces[index]
                    joined = written[0] if len(written) == 1 else "".join(written)
                    calls = (ToolCall(head[0], head[1], joined),)
            else:
                calls = tuple(
                    ToolCall(head[0], head[1], "".join(pieces[index]))
                    for index, head in sorted(heads.items())
                    if index in ended
                )
        if not content and calls:
            content = None
        fields = self.fields
        return Message(
            self.role,
            content,
            None if fields is None else fields.get("name"),
            calls,
            None if fields is None else fields.get("tool_call_id"),
            None if self.reasoning is None else "".join(self.reasoning),
            None if self.steps is None else tuple(self.steps),
            () if self.metadata is None else tuple(self.metadata),
        )


class Folder:
    """Accumulates events; ``messages``, ``tools`` and ``warnings`` hold the result."""

    def __init__(self, fields: Mapping[Role, Mapping[str, str]] | None = None) -> None:
        self._fields = fields or {}
        self._current: _MessageBuilder | None = None
        self.messages: list[Message] = []
        self.tools: list[Tool] = []
        self._tools_place: tuple[int, int] | None = None
        """Where the last tools were read: the messages folded then, and the message read."""
        self.warnings: list[ParseWarning] = []
        self.finish_reason: str | None = None

    def _builder(self) -> _MessageBuilder:
        if self._current is None:
            # Text outside any message: keep it in an assistant message rather than drop it.
            self._current = _MessageBuilder("assistant")
        return self._current

    def add(self, event: Event) -> None:
        handler = _HANDLERS.get(type(event))
        if handler is None:
            handler = _handler_of(type(event))
        handler(self, event)

    # One method per event type, found by the event's type (see _HANDLERS): no chain of
    # isinstance tests per event.

    def _text(self, event: TextDelta) -> None:
        current = self._current
        if current is None:
            current = self._builder()
        current.text.append(event.text)

    def _call_delta(self, event: ToolCallDelta) -> None:
        current = self._current
        if current is None or current.calls is None:
            raise KeyError(event.index)  # a delta of a call never started
        current.calls[event.index].append(event.arguments)

    def _reasoning(self, event: ReasoningDelta) -> None:
        builder = self._builder()
        if builder.reasoning is None:
            builder.reasoning = []
        builder.reasoning.append(event.text)

    def _call_start(self, event: ToolCallStart) -> None:
        builder = self._builder()
        if builder.call_heads is None:
            builder.call_heads = {}
            builder.calls = {}
            builder.ended_calls = set()
        builder.call_heads[event.index] = (event.id, event.name)
        builder.calls[event.index] = []  # type: ignore[index]

    def _message_start(self, event: MessageStart) -> None:
        if self._current is not None:
            self._close()
        self._current = _MessageBuilder(event.role)

    def _message_end(self, event: MessageEnd) -> None:
        if self._current is not None:
            self._close()
        if event.finish_reason is not None:
            self.finish_reason = event.finish_reason

    def _metadata(self, event: MetadataItem) -> None:
        builder = self._builder()
        field = self._fields.get(builder.role, {}).get(event.key)
        if builder.fields is None:
            builder.fields = {}
        if field is not None and field not in builder.fields:
            builder.fields[field] = event.value
        else:
            if builder.metadata is None:
                builder.metadata = []
            builder.metadata.append((event.key, event.value))

    def _part(self, event: PartAdded) -> None:
        builder = self._builder()
        builder.flush_text()
        builder.parts.append(event.part)

    def _step(self, event: ReasoningStepAdded) -> None:
        builder = self._builder()
        if builder.steps is None:
            builder.steps = []
        builder.steps.append(event.step)

    def _tools(self, event: ToolsDeclared) -> None:
        # A block that repeats the tools read so far declares none anew (Mistral Small 3.2's
        # and Nemo's templates write the block again before each user message equal to the
        # last one); a repeat is a block after another message, never the next item of the
        # same block (two equal tools each read as its own event: omni's).
        place = (len(self.messages), id(self._current))
        if list(event.tools) != self.tools or place == self._tools_place:
            self.tools.extend(event.tools)
            self._tools_place = place
        if self._current is not None:
            self._current.declared_tools = True

    def _warning(self, event: ParseWarning) -> None:
        self.warnings.append(event)

    def _call_end(self, event: ToolCallEnd) -> None:
        builder = self._builder()
        if builder.ended_calls is None:
            builder.call_heads = {}
            builder.calls = {}
            builder.ended_calls = set()
        builder.ended_calls.add(event.index)

    def _ignore(self, event: Event) -> None:
        pass

    def _close(self) -> None:
        current = self._current
        if current is not None and not (current.declared_tools and current.only_declares_tools()):
            self.messages.append(current.build())
        self._current = None

    def close(self) -> Folder:
        self._close()
        return self


_HANDLERS: dict[type, Callable[[Folder, Any], None]] = {
    TextDelta: Folder._text,
    ToolCallDelta: Folder._call_delta,
    ReasoningDelta: Folder._reasoning,
    ToolCallStart: Folder._call_start,
    MessageStart: Folder._message_start,
    MessageEnd: Folder._message_end,
    MetadataItem: Folder._metadata,
    PartAdded: Folder._part,
    ReasoningStepAdded: Folder._step,
    ToolsDeclared: Folder._tools,
    ParseWarning: Folder._warning,
    ToolCallEnd: Folder._call_end,
}


def _handler_of(kind: type) -> Callable[[Folder, Any], None]:
    """The handler of an event type that is not one of the table's (a subclass: its
    nearest base's; anything else is ignored, as before)."""
    for base in kind.__mro__:
        handler = _HANDLERS.get(base)
        if handler is not None:
            return handler
    return Folder._ignore


def fold(events: Iterable[Event], fields: Mapping[Role, Mapping[str, str]] | None = None) -> Folder:
    folder = Folder(fields)
    handlers = _HANDLERS
    for event in events:
        kind = type(event)
        if kind is TextDelta:  # the most frequent, inline
            current = folder._current
            if current is not None:
                current.text.append(event.text)  # type: ignore[union-attr]
                continue
        handler = handlers.get(kind)
        if handler is None:
            handler = _handler_of(kind)
        handler(folder, event)
    return folder.close()


def positional_answers(messages: Iterable[Message]) -> Iterator[tuple[int, int, str | None]]:
    """For each tool message: its index, its position among the results after the last
    assistant message with calls, and the id of the call at that position (None: there are
    fewer calls).  Formats that write no call ids pair results with calls so; the one place
    the pairing is worked out (:func:`pair_results` reads it, and so does a render that
    records the loss of a result given out of its calls' order)."""
    # (every render of a format without call ids walks this: the calls themselves are kept,
    # not a list of their ids, and a message's role is read once)
    calls: tuple[ToolCall, ...] = ()
    answered = 0
    for index, message in enumerate(messages):
        role = message.role
        if role == "tool":
            yield index, answered, calls[answered].id if answered < len(calls) else None
            answered += 1
        elif role == "assistant" and message.tool_calls:
            calls = message.tool_calls
            answered = 0


def pair_results(messages: list[Message]) -> list[Message]:
    """Give each tool message without a ``tool_call_id`` the id of the call it answers by
    position (:func:`positional_answers`)."""
    paired = list(messages)
    for index, _, call_id in positional_answers(messages):
        if call_id is not None and messages[index].tool_call_id is None:
            paired[index] = dataclasses.replace(messages[index], tool_call_id=call_id)
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
