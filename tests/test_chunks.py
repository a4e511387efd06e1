"""Parser events to OpenAI chunks."""

from __future__ import annotations

import pawlette
from pawlette import (
    ChunkStream,
    MessageEnd,
    MessageStart,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)


def deltas(events: list, **options: bool) -> list[tuple[dict, str | None]]:  # type: ignore[type-arg]
    stream = ChunkStream(model="m", completion_id="chatcmpl-x", created=1, **options)
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
        ToolCallEnd(0),
        ToolCallStart(1, "call_2", "g"),
        ToolCallDelta(1, "{}"),
        ToolCallEnd(1),
        MessageEnd("tool_calls"),
    ]
    assert deltas(events, stream_arguments=True) == [
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


def test_a_call_is_sent_once_it_ended_with_its_arguments_in_one_delta() -> None:
    events = [
        ToolCallStart(0, "call_1", "f"),
        ToolCallDelta(0, '{"a":'),
        TextDelta("x"),
        ToolCallDelta(0, " 1}"),
        ToolCallEnd(0),
        ToolCallStart(1, "call_2", "g"),
        ToolCallDelta(1, '{"b'),  # never ends: a malformed call from a live parser
        MessageEnd("tool_calls"),
    ]
    start = {"index": 0, "id": "call_1", "type": "function"}
    assert deltas(events)[1:] == [
        ({"content": "x"}, None),
        ({"tool_calls": [{**start, "function": {"name": "f", "arguments": ""}}]}, None),
        ({"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]}, None),
        ({}, "tool_calls"),
    ]


def test_call_indexes_never_restart_and_nothing_follows_the_finish_chunk() -> None:
    events = [
        MessageStart("assistant"),
        ToolCallStart(0, "a", "f"),
        ToolCallEnd(0),
        MessageStart("assistant"),
        ToolCallStart(0, "b", "g"),
        ToolCallEnd(0),
        MessageEnd("tool_calls"),
        TextDelta("late"),
        MessageEnd("stop"),
    ]
    chunks = deltas(events)
    assert [d["tool_calls"][0]["index"] for d, _ in chunks if "tool_calls" in d] == [0, 1]
    assert chunks[-1] == ({}, "tool_calls")


def test_a_chatglm3_completion_of_two_call_turns_streams_two_calls() -> None:
    glm = pawlette.get_format("chatglm3")
    text = "f\n```python\ntool_call(a=1)\n```<|assistant|>g\n```python\ntool_call(b=2)\n```"
    parser = glm.parser()
    stream = ChunkStream(model="m")
    chunks = [c for ch in text for c in stream.chunks(parser.feed(ch))]
    chunks += stream.chunks(parser.finish("stop"))
    calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks[1:-1]]
    assert [(c["index"], c.get("function", {}).get("name")) for c in calls] == [
        (0, "f"),
        (0, None),
        (1, "g"),
        (1, None),
    ]
    assert [c["choices"][0]["finish_reason"] for c in chunks].count("tool_calls") == 1


def test_finish_reason_defaults_from_what_was_streamed() -> None:
    stream = ChunkStream(model="m")
    stream.chunks([ToolCallStart(0, "c", "f"), ToolCallEnd(0)])
    assert stream.finish_chunk(None)["choices"][0]["finish_reason"] == "tool_calls"
    assert ChunkStream(model="m").finish_chunk(None)["choices"][0]["finish_reason"] == "stop"
