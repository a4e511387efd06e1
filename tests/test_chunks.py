"""Parser events to OpenAI chunks."""

from __future__ import annotations

from pawlette import (
    ChunkStream,
    MessageEnd,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
)


def deltas(events: list) -> list[tuple[dict, str | None]]:  # type: ignore[type-arg]
    stream = ChunkStream(model="m", completion_id="chatcmpl-x", created=1)
    chunks = stream.chunks(events)
    for chunk in chunks:
        assert chunk["object"] == "chat.completion.chunk"
        assert chunk["id"] == "chatcmpl-x" and chunk["model"] == "m" and chunk["created"] == 1
    return [(c["choices"][0]["delta"], c["choices"][0]["finish_reason"]) for c in chunks]


def test_tool_call_chunks_follow_openai() -> None:
    events = [
        ReasoningDelta(""),
        ReasoningDelta("think"),
        TextDelta("Hi"),
        ToolCallStart(0, "call_1", "f"),
        ToolCallDelta(0, '{"a":'),
        ToolCallDelta(0, " 1}"),
        ToolCallStart(1, "call_2", "g"),
        ToolCallDelta(1, "{}"),
        MessageEnd("tool_calls"),
    ]
    assert deltas(events) == [
        ({"role": "assistant", "content": ""}, None),
        ({"reasoning_content": "think"}, None),
        ({"content": "Hi"}, None),
        (
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "f", "arguments": ""},
                    }
                ]
            },
            None,
        ),
        ({"tool_calls": [{"index": 0, "function": {"arguments": '{"a":'}}]}, None),
        ({"tool_calls": [{"index": 0, "function": {"arguments": " 1}"}}]}, None),
        (
            {
                "tool_calls": [
                    {
                        "index": 1,
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "g", "arguments": ""},
                    }
                ]
            },
            None,
        ),
        ({"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]}, None),
        ({}, "tool_calls"),
    ]


def test_finish_reason_defaults_from_what_was_streamed() -> None:
    stream = ChunkStream(model="m")
    stream.chunks([ToolCallStart(0, "c", "f")])
    assert stream.finish_chunk(None)["choices"][0]["finish_reason"] == "tool_calls"
    assert ChunkStream(model="m").finish_chunk(None)["choices"][0]["finish_reason"] == "stop"
