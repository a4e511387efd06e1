"""Core types: frozen values that every engine shares.

Messages, content parts, tools and tool calls are what a conversation is made of; segments are
what rendering produces; events are what parsing produces.  Nothing here knows OpenAI's JSON
shapes (that is :mod:`pawlette.openai`), and nothing here mutates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeAlias

JSONValue: TypeAlias = Any
"""A value that ``json.dumps`` accepts (kept loose: JSON is recursive)."""

JSONObject: TypeAlias = Mapping[str, Any]

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


# --------------------------------------------------------------------------- content parts


@dataclass(frozen=True, slots=True, init=False)
class TextPart:
    """Plain text."""

    text: str

    def __init__(self, text: str) -> None:
        # The slot's own setter, as Message's __init__ does (see there): every render makes one
        # per message.
        _set_text(self, text)


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An input image, from OpenAI's ``image_url`` part.

    ``width``/``height`` are optional pixel sizes; formats whose image token count depends on
    the size (breeze) or that normalise boxes against it need them.  ``tokens`` is the number
    of placeholder tokens the image takes in formats that expand an image into a run of them
    (breeze): set by parsing a rendered prompt (whose text holds the run, not the image, so
    ``url`` is then ``""``), or by a caller that counted them; it overrides the format's rule.
    """

    url: str
    detail: str | None = None
    width: int | None = None
    height: int | None = None
    tokens: int | None = None


@dataclass(frozen=True, slots=True)
class VoicePart:
    """Speech: text recognised from (or to be spoken as) audio, with its prosody (omni)."""

    text: str
    prosody: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ActionPart:
    """A fire-and-forget action the assistant emits inline (omni); ``arguments`` is JSON text."""

    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ImageRequestPart:
    """A request to generate an image (omni's text-to-image placeholder); a JSON object."""

    request: JSONObject


@dataclass(frozen=True, slots=True)
class BoxPart:
    """Bounding boxes, each ``(x1, y1, x2, y2)`` normalised to 0..1000 (breeze)."""

    boxes: tuple[tuple[int, int, int, int], ...]


ContentPart: TypeAlias = TextPart | ImagePart | VoicePart | ActionPart | ImageRequestPart | BoxPart


# --------------------------------------------------------------------------- messages and tools


@dataclass(frozen=True, slots=True, init=False)
class ToolCall:
    """One function call; ``arguments`` is JSON text, kept verbatim."""

    id: str
    name: str
    arguments: str

    def __init__(self, id: str, name: str, arguments: str) -> None:
        # The slots' own setters, as Message's __init__ does (see there).
        _set_call_id(self, id)
        _set_call_name(self, name)
        _set_call_arguments(self, arguments)


@dataclass(frozen=True, slots=True)
class ThinkStep:
    """One step of structured thinking (omni): a title, its reasoning and its conclusion."""

    title: str
    reasoning: str
    conclusion: str


@dataclass(frozen=True, slots=True, init=False)
class Message:
    """One message of a conversation.

    ``content`` is ``None`` only for an assistant message that carries tool calls and no text.
    ``metadata`` holds extra ``key="value"`` pairs a format can carry (PCML), in order.
    ``weight`` is the fine-tuning weight (0 or 1) some datasets put on assistant messages.
    """

    role: Role
    content: tuple[ContentPart, ...] | None = ()
    name: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    reasoning: str | None = None
    reasoning_steps: tuple[ThinkStep, ...] | None = None
    metadata: tuple[tuple[str, str], ...] = ()
    weight: float | None = None

    def __init__(
        self,
        role: Role,
        content: tuple[ContentPart, ...] | None = (),
        name: str | None = None,
        tool_calls: tuple[ToolCall, ...] = (),
        tool_call_id: str | None = None,
        reasoning: str | None = None,
        reasoning_steps: tuple[ThinkStep, ...] | None = None,
        metadata: tuple[tuple[str, str], ...] = (),
        weight: float | None = None,
    ) -> None:
        # The generated frozen __init__ sets each field through object.__setattr__; setting
        # the slots through their descriptors does the same at about half the cost, and every
        # render reads each message of the request into a Message.  Same parameters as the
        # generated __init__ (tests/test_types.py checks it against the fields).
        _set_role(self, role)
        _set_content(self, content)
        _set_name(self, name)
        _set_tool_calls(self, tool_calls)
        _set_tool_call_id(self, tool_call_id)
        _set_reasoning(self, reasoning)
        _set_reasoning_steps(self, reasoning_steps)
        _set_metadata(self, metadata)
        _set_weight(self, weight)

    @property
    def text(self) -> str:
        """The concatenated text parts (other parts ignored)."""
        if not self.content:
            return ""
        return "".join(part.text for part in self.content if isinstance(part, TextPart))


def _slot_setter(cls: type, name: str) -> Callable[[object, Any], None]:
    """A slot's own setter (its member descriptor's ``__set__``): it does not go through the
    frozen ``__setattr__``, so only ``__init__`` may use it."""
    setter: Callable[[object, Any], None] = cls.__dict__[name].__set__
    return setter


_set_text = _slot_setter(TextPart, "text")
_set_call_id = _slot_setter(ToolCall, "id")
_set_call_name = _slot_setter(ToolCall, "name")
_set_call_arguments = _slot_setter(ToolCall, "arguments")
_set_role = _slot_setter(Message, "role")
_set_content = _slot_setter(Message, "content")
_set_name = _slot_setter(Message, "name")
_set_tool_calls = _slot_setter(Message, "tool_calls")
_set_tool_call_id = _slot_setter(Message, "tool_call_id")
_set_reasoning = _slot_setter(Message, "reasoning")
_set_reasoning_steps = _slot_setter(Message, "reasoning_steps")
_set_metadata = _slot_setter(Message, "metadata")
_set_weight = _slot_setter(Message, "weight")


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool the model may call.

    ``definition`` is the whole ``function`` object as the caller gave it (key order kept), so
    formats that print it verbatim round-trip.  ``kind`` is ``"action"`` for omni's
    fire-and-forget actions.
    """

    name: str
    definition: JSONObject
    kind: Literal["function", "action"] = "function"

    def __init__(
        self, name: str, definition: JSONObject, kind: Literal["function", "action"] = "function"
    ) -> None:
        # The slots' own setters, as Message's __init__ does (see there): every render reads
        # the request's tools into Tools.
        _set_tool_name(self, name)
        _set_definition(self, definition)
        _set_kind(self, kind)

    @property
    def description(self) -> str | None:
        value = self.definition.get("description")
        return value if isinstance(value, str) else None

    @property
    def parameters(self) -> JSONObject | None:
        value = self.definition.get("parameters")
        return value if isinstance(value, Mapping) else None


_set_tool_name = _slot_setter(Tool, "name")
_set_definition = _slot_setter(Tool, "definition")
_set_kind = _slot_setter(Tool, "kind")


# --------------------------------------------------------------------------- built in bulk
#
# The request readers make a Message per message, a TextPart per text and a ToolCall per call
# on every render.  Calling a class with a Python ``__init__`` costs the call itself plus one
# setter call per slot; an instance of a plain class with the same slots takes each value with
# a plain attribute store, and then becomes the frozen class by assigning ``__class__``
# (allowed between classes with the same slots).  The result is the same frozen value (same
# type, fields, equality and hash) at about a third of a Message's cost.  Only these functions
# use the open classes, and never keep an instance of one.


class _OpenTextPart:
    __slots__ = ("text",)
    text: str


class _OpenToolCall:
    __slots__ = ("arguments", "id", "name")
    id: str
    name: str
    arguments: str


class _OpenMessage:
    __slots__ = (
        "content",
        "metadata",
        "name",
        "reasoning",
        "reasoning_steps",
        "role",
        "tool_call_id",
        "tool_calls",
        "weight",
    )
    role: Role
    content: tuple[ContentPart, ...] | None
    name: str | None
    tool_calls: tuple[ToolCall, ...]
    tool_call_id: str | None
    reasoning: str | None
    reasoning_steps: tuple[ThinkStep, ...] | None
    metadata: tuple[tuple[str, str], ...]
    weight: float | None


class _OpenTool:
    __slots__ = ("definition", "kind", "name")
    name: str
    definition: JSONObject
    kind: Literal["function", "action"]


def new_text_part(text: str) -> TextPart:
    """``TextPart(text)``, built in bulk (see above)."""
    part = _OpenTextPart()
    part.text = text
    part.__class__ = TextPart  # type: ignore[assignment]
    return part  # type: ignore[return-value]


def new_tool_call(id: str, name: str, arguments: str) -> ToolCall:
    """``ToolCall(id, name, arguments)``, built in bulk (see above)."""
    call = _OpenToolCall()
    call.id = id
    call.name = name
    call.arguments = arguments
    call.__class__ = ToolCall  # type: ignore[assignment]
    return call  # type: ignore[return-value]


def new_message(
    role: Role,
    content: tuple[ContentPart, ...] | None = (),
    name: str | None = None,
    tool_calls: tuple[ToolCall, ...] = (),
    tool_call_id: str | None = None,
    reasoning: str | None = None,
    reasoning_steps: tuple[ThinkStep, ...] | None = None,
    metadata: tuple[tuple[str, str], ...] = (),
    weight: float | None = None,
) -> Message:
    """``Message(...)`` with the same parameters, built in bulk (see above)."""
    made = _OpenMessage()
    made.role = role
    made.content = content
    made.name = name
    made.tool_calls = tool_calls
    made.tool_call_id = tool_call_id
    made.reasoning = reasoning
    made.reasoning_steps = reasoning_steps
    made.metadata = metadata
    made.weight = weight
    made.__class__ = Message  # type: ignore[assignment]
    return made  # type: ignore[return-value]


def new_text_message(role: Role, text: str, tool_call_id: str | None = None) -> Message:
    """``Message(role, (TextPart(text),) if text else (), tool_call_id=tool_call_id)``, built
    in bulk (see above): the message nearly every request is made of."""
    content: tuple[ContentPart, ...] = ()
    if text:
        part = _OpenTextPart()
        part.text = text
        part.__class__ = TextPart  # type: ignore[assignment]
        content = (part,)  # type: ignore[assignment]
    made = _OpenMessage()
    made.role = role
    made.content = content
    made.name = None
    made.tool_calls = ()
    made.tool_call_id = tool_call_id
    made.reasoning = None
    made.reasoning_steps = None
    made.metadata = ()
    made.weight = None
    made.__class__ = Message  # type: ignore[assignment]
    return made  # type: ignore[return-value]


def new_tool(
    name: str, definition: JSONObject, kind: Literal["function", "action"] = "function"
) -> Tool:
    """``Tool(name, definition, kind)``, built in bulk (see above)."""
    made = _OpenTool()
    made.name = name
    made.definition = definition
    made.kind = kind
    made.__class__ = Tool  # type: ignore[assignment]
    return made  # type: ignore[return-value]


# --------------------------------------------------------------------------- rendering


SegmentKind: TypeAlias = str
"""What a segment is: begin, header, metadata, separator, content, reasoning, tools, tool_call,
tool_result, image, end, close, generation_prompt, ... (open-ended: blocks add kinds)."""


class Segment(NamedTuple):
    """A run of rendered text with everything a tokenizer and a loss mask need to know.

    ``special`` segments are markers (encoded by token id); others are text (encoded with
    special-token parsing off).  ``message_index`` is -1 for text outside any message.
    (A named tuple rather than a frozen dataclass: renders make dozens per conversation, and
    tuples are several times cheaper to build while just as immutable.)
    """

    text: str
    special: bool
    role: Role | None
    message_index: int
    kind: SegmentKind
    trainable: bool


@dataclass(frozen=True, slots=True)
class Rendering:
    """The result of rendering: ``text`` is exactly the join of the segments' texts.

    ``losses``: what the format dropped on purpose, one line each with its JSON path
    (``"messages[1].reasoning_content: not written before the last user message"``): fields
    the format's reference template accepts and does not write.  Rendering never refuses them;
    parsing the text back cannot give them back.
    """

    text: str
    segments: tuple[Segment, ...]
    losses: tuple[str, ...]

    def __init__(
        self, text: str, segments: tuple[Segment, ...], losses: tuple[str, ...] = ()
    ) -> None:
        # The slots' own setters, as Message's __init__ does (see there): one per render.
        _set_rendering_text(self, text)
        _set_segments(self, segments)
        _set_losses(self, losses)


_set_rendering_text = _slot_setter(Rendering, "text")
_set_segments = _slot_setter(Rendering, "segments")
_set_losses = _slot_setter(Rendering, "losses")


class _OpenRendering:
    # (as the open classes above: see "built in bulk"; every render returns one Rendering)
    __slots__ = ("losses", "segments", "text")
    text: str
    segments: tuple[Segment, ...]
    losses: tuple[str, ...]


def new_rendering(
    text: str, segments: tuple[Segment, ...], losses: tuple[str, ...] = ()
) -> Rendering:
    """``Rendering(text, segments, losses)``, built as the readers build messages (see
    "built in bulk" above): a render makes one, and the call was a tenth of a short one."""
    made = _OpenRendering()
    made.text = text
    made.segments = segments
    made.losses = losses
    made.__class__ = Rendering  # type: ignore[assignment]
    return made  # type: ignore[return-value]


# --------------------------------------------------------------------------- parser events
#
# Each event's __init__ sets its slots through their own setters, as Message's does (see
# there): a parse makes an event per run of text, marker and call part.


@dataclass(frozen=True, slots=True, init=False)
class MessageStart:
    role: Role

    def __init__(self, role: Role) -> None:
        _set_start_role(self, role)


@dataclass(frozen=True, slots=True, init=False)
class MetadataItem:
    key: str
    value: str

    def __init__(self, key: str, value: str) -> None:
        _set_metadata_key(self, key)
        _set_metadata_value(self, value)


@dataclass(frozen=True, slots=True, init=False)
class TextDelta:
    text: str

    def __init__(self, text: str) -> None:
        _set_text_delta(self, text)


@dataclass(frozen=True, slots=True, init=False)
class ReasoningDelta:
    text: str

    def __init__(self, text: str) -> None:
        _set_reasoning_delta(self, text)


@dataclass(frozen=True, slots=True)
class ReasoningStepAdded:
    step: ThinkStep


@dataclass(frozen=True, slots=True, init=False)
class ToolCallStart:
    index: int
    id: str
    name: str

    def __init__(self, index: int, id: str, name: str) -> None:
        _set_start_index(self, index)
        _set_start_id(self, id)
        _set_start_name(self, name)


@dataclass(frozen=True, slots=True, init=False)
class ToolCallDelta:
    index: int
    arguments: str

    def __init__(self, index: int, arguments: str) -> None:
        _set_delta_index(self, index)
        _set_delta_arguments(self, arguments)


@dataclass(frozen=True, slots=True, init=False)
class ToolCallEnd:
    index: int

    def __init__(self, index: int) -> None:
        _set_end_index(self, index)


@dataclass(frozen=True, slots=True)
class PartAdded:
    """A whole non-text content part (image, voice, action, image request, boxes)."""

    part: ContentPart


@dataclass(frozen=True, slots=True)
class ToolsDeclared:
    tools: tuple[Tool, ...]


@dataclass(frozen=True, slots=True, init=False)
class MessageEnd:
    """The end of a message; ``finish_reason`` is set on the end of a completion."""

    finish_reason: str | None = None

    def __init__(self, finish_reason: str | None = None) -> None:
        _set_finish_reason(self, finish_reason)


@dataclass(frozen=True, slots=True)
class ParseWarning:
    """Lenient mode met text it could not place; ``text`` was kept as content."""

    offset: int
    message: str
    text: str


_set_start_role = _slot_setter(MessageStart, "role")
_set_metadata_key = _slot_setter(MetadataItem, "key")
_set_metadata_value = _slot_setter(MetadataItem, "value")
_set_text_delta = _slot_setter(TextDelta, "text")
_set_reasoning_delta = _slot_setter(ReasoningDelta, "text")
_set_start_index = _slot_setter(ToolCallStart, "index")
_set_start_id = _slot_setter(ToolCallStart, "id")
_set_start_name = _slot_setter(ToolCallStart, "name")
_set_delta_index = _slot_setter(ToolCallDelta, "index")
_set_delta_arguments = _slot_setter(ToolCallDelta, "arguments")
_set_end_index = _slot_setter(ToolCallEnd, "index")
_set_finish_reason = _slot_setter(MessageEnd, "finish_reason")


Event: TypeAlias = (
    MessageStart
    | MetadataItem
    | TextDelta
    | ReasoningDelta
    | ReasoningStepAdded
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | PartAdded
    | ToolsDeclared
    | MessageEnd
    | ParseWarning
)
