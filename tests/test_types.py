"""Core types: Message's hand-written __init__ is the one a frozen dataclass would generate."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Literal

import pytest

from pawlette.types import (
    Message,
    MessageEnd,
    MessageStart,
    MetadataItem,
    ReasoningDelta,
    TextDelta,
    TextPart,
    ThinkStep,
    Tool,
    ToolCall,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    new_message,
    new_text_message,
    new_text_part,
    new_tool,
    new_tool_call,
)

# The types whose __init__ is written by hand (slot setters): each must take the generated
# parameters and set every field.
HAND_WRITTEN = [
    Message,
    TextPart,
    ToolCall,
    MessageStart,
    MetadataItem,
    TextDelta,
    ReasoningDelta,
    ToolCallStart,
    ToolCallDelta,
    ToolCallEnd,
    MessageEnd,
]

MESSAGE_ARGUMENTS = [
    (("user",), {}),
    (("assistant", None), {"tool_calls": (ToolCall("c", "f", "{}"),), "weight": 1.0}),
    (
        ("assistant", (TextPart("hi"),), "n", (), "id", "why"),
        {"reasoning_steps": (ThinkStep("t", "r", "c"),), "metadata": (("k", "v"),)},
    ),
]
"""Message arguments covering defaults, calls with a weight, and every field given."""


def generated_message_class(cls: type = Message) -> type:
    """A frozen slots dataclass with the fields of ``cls``, and the __init__ dataclasses
    writes."""
    fields = [
        (field.name, field.type, dataclasses.field(default=field.default))
        for field in dataclasses.fields(cls)
    ]
    return dataclasses.make_dataclass("Generated", fields, frozen=True, slots=True)


@pytest.mark.parametrize("cls", HAND_WRITTEN)
def test_message_init_takes_the_generated_parameters(cls: type) -> None:
    ours = inspect.signature(cls.__init__).parameters
    generated = inspect.signature(generated_message_class(cls).__init__).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == [
        (p.name, p.kind, p.default) for p in generated.values()
    ]


@pytest.mark.parametrize(("arguments", "keywords"), MESSAGE_ARGUMENTS)
def test_message_init_sets_every_field(
    arguments: tuple[object, ...], keywords: dict[str, object]
) -> None:
    message = Message(*arguments, **keywords)  # type: ignore[arg-type]
    generated = generated_message_class()(*arguments, **keywords)
    assert dataclasses.astuple(message) == dataclasses.astuple(generated)
    assert message == Message(*arguments, **keywords)  # type: ignore[arg-type]
    assert hash(message) == hash(Message(*arguments, **keywords))  # type: ignore[arg-type]
    changed = dataclasses.replace(message, weight=0.0)
    assert dataclasses.astuple(changed)[:-1] == dataclasses.astuple(message)[:-1]
    assert changed.weight == 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.role = "tool"  # type: ignore[misc]


def test_text_part_and_tool_call_set_every_field() -> None:
    call = ToolCall(id="c", name="f", arguments="{}")
    assert (call.id, call.name, call.arguments) == ("c", "f", "{}")
    assert call == ToolCall("c", "f", "{}") and hash(call) == hash(ToolCall("c", "f", "{}"))
    assert dataclasses.replace(call, name="g") == ToolCall("c", "g", "{}")
    part = TextPart("hi")
    assert part.text == "hi" and part == TextPart(text="hi") and part != TextPart("ho")
    with pytest.raises(dataclasses.FrozenInstanceError):
        part.text = "ho"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.id = "d"  # type: ignore[misc]


@pytest.mark.parametrize("cls", HAND_WRITTEN[3:])
def test_event_init_sets_every_field(cls: type) -> None:
    values = [f"{field.name}-value" for field in dataclasses.fields(cls)]
    event = cls(*values)
    generated = generated_message_class(cls)(*values)
    assert dataclasses.astuple(event) == dataclasses.astuple(generated)
    assert event == cls(**{f.name: v for f, v in zip(dataclasses.fields(cls), values, strict=True)})
    assert hash(event) == hash(cls(*values)) and event != cls(*["other"] * len(values))
    assert repr(event).startswith(cls.__name__ + "(")
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(event, dataclasses.fields(cls)[0].name, "x")
    assert MessageEnd().finish_reason is None


@pytest.mark.parametrize(("arguments", "keywords"), MESSAGE_ARGUMENTS)
def test_values_built_in_bulk_are_the_classes_values(
    arguments: tuple[object, ...], keywords: dict[str, object]
) -> None:
    """new_message and its siblings build what the class builds: same type, fields,
    equality and hash, and as frozen."""
    message = new_message(*arguments, **keywords)  # type: ignore[arg-type]
    expected = Message(*arguments, **keywords)  # type: ignore[arg-type]
    assert type(message) is Message
    assert dataclasses.astuple(message) == dataclasses.astuple(expected)
    assert message == expected and hash(message) == hash(expected)
    assert repr(message) == repr(expected)
    assert dataclasses.replace(message, weight=0.0) == dataclasses.replace(expected, weight=0.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.role = "tool"  # type: ignore[misc]
    part, call = new_text_part("hi"), new_tool_call("c", "f", "{}")
    tool = new_tool("f", {"name": "f"}, "action")
    assert (type(part), type(call), type(tool)) == (TextPart, ToolCall, Tool)
    assert part == TextPart("hi") and hash(part) == hash(TextPart("hi"))
    assert call == ToolCall("c", "f", "{}") and hash(call) == hash(ToolCall("c", "f", "{}"))
    assert dataclasses.astuple(tool) == dataclasses.astuple(Tool("f", {"name": "f"}, "action"))
    for value, field in ((part, "text"), (call, "name"), (tool, "kind")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, field, "x")


@pytest.mark.parametrize(("role", "text", "call_id"), [("user", "hi", None), ("tool", "", "c1")])
def test_a_text_message_built_in_bulk_is_the_class_value(
    role: Literal["user", "tool"], text: str, call_id: str | None
) -> None:
    message = new_text_message(role, text, call_id)
    expected = Message(role, (TextPart(text),) if text else (), tool_call_id=call_id)
    assert type(message) is Message and dataclasses.astuple(message) == dataclasses.astuple(
        expected
    )
    assert message == expected and hash(message) == hash(expected)
    assert all(type(part) is TextPart for part in message.content or ())
