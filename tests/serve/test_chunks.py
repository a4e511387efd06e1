"""The server's chunk encoder writes exactly the bytes ``json.dumps`` writes for the chunk dicts."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.engine.call_text import PIECE_BYTES
from pawlette.serve import chunks
from pawlette.serve.chunks import ChunkEncoder, ChunkStream
from pawlette.serve.pipeline import encode_events
from pawlette.types import (
    Event,
    MessageEnd,
    ReasoningDelta,
    ReasoningStepAdded,
    TextDelta,
    ThinkStep,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

# Any text a model or a client can send through (lone surrogates cannot be sent as UTF-8).
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


@st.composite
def event_lists(draw: st.DrawFn) -> list[Event]:
    events: list[Event] = []
    for number in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["text", "reasoning", "call", "step"]))
        if kind == "text":
            events.append(TextDelta(draw(TEXT)))
        elif kind == "reasoning":
            events.append(ReasoningDelta(draw(TEXT)))
        elif kind == "step":
            step = ThinkStep(draw(TEXT), draw(TEXT), draw(TEXT))
            events.append(ReasoningStepAdded(step))
        else:
            events += [ToolCallStart(number, draw(TEXT), draw(TEXT))]
            events += [ToolCallDelta(number, draw(TEXT)) for _ in range(draw(st.integers(0, 2)))]
            events.append(ToolCallEnd(number))
    if draw(st.booleans()):
        events.append(MessageEnd(draw(st.sampled_from([None, "stop", "length", "tool_calls"]))))
    return events


@settings(max_examples=150, deadline=None)
@given(
    events=event_lists(),
    model=TEXT,
    completion_id=TEXT.filter(bool),  # empty: the stream makes up an id
    created=st.integers(0, 2**40),
    stream_arguments=st.booleans(),
)
def test_encoded_deltas_are_the_chunks_json(
    events: list[Event], model: str, completion_id: str, created: int, stream_arguments: bool
) -> None:
    def stream() -> ChunkStream:
        return ChunkStream(
            model=model,
            completion_id=completion_id,
            created=created,
            stream_arguments=stream_arguments,
        )

    by_deltas = stream()
    encoded = ChunkEncoder(by_deltas).encode(by_deltas.deltas(events))
    assert encoded == encode_events(stream().chunks(events))
    for event in encoded.decode().split("\n\n")[:-1]:
        assert json.loads(event.removeprefix("data: "))["object"] == "chat.completion.chunk"


def test_a_text_delta_that_needs_escapes() -> None:
    stream = ChunkStream(model='m"\\', completion_id="c\n", created=0)
    encoded = ChunkEncoder(stream).encode(stream.deltas([TextDelta('"\\\n\x00é😀')]))
    second = json.loads(encoded.split(b"\n\n")[1].removeprefix(b"data: "))
    assert second["choices"][0]["delta"] == {"content": '"\\\n\x00é😀'}
    assert (second["id"], second["model"]) == ("c\n", 'm"\\')


def _arguments_deltas(chunks: list[dict[str, object]]) -> list[str]:
    found = []
    for chunk in chunks:
        delta = chunk["choices"][0]["delta"]  # type: ignore[index]
        for call in delta.get("tool_calls", ()):
            if call["function"]["arguments"]:
                found.append(call["function"]["arguments"])
    return found


def test_a_held_call_is_sent_as_its_deltas_batched_up_to_a_piece() -> None:
    # A live parser's many small deltas are joined into pieces of PIECE_BYTES characters;
    # a parser's big pieces are sent as they are (joined, they would be held twice).
    small = ["ab"] * (PIECE_BYTES // 2 + 5)
    big = ["x" * PIECE_BYTES, "y" * PIECE_BYTES, "z"]
    empty_first = ["", "x" * (PIECE_BYTES + 1)]  # no empty chunk before an oversized piece
    cases = ((small, 2), (big, 3), (["", "{}", ""], 1), ([""], 0), (empty_first, 1))
    for pieces, expected in cases:
        stream = ChunkStream(model="m", completion_id="c", created=0)
        events: list[Event] = [ToolCallStart(0, "call", "f")]
        events += [ToolCallDelta(0, piece) for piece in pieces]
        events.append(ToolCallEnd(0))
        chunks = stream.chunks(events)
        assert all(chunk["choices"][0]["delta"] for chunk in chunks)  # no empty chunk
        sent = _arguments_deltas(chunks)
        assert "".join(sent) == "".join(pieces)
        assert len(sent) == expected
        assert all(len(piece) <= PIECE_BYTES for piece in sent) or pieces is empty_first


@settings(max_examples=100, deadline=None)
@given(events=event_lists(), big=st.integers(0, 30))
def test_big_chunks_encoded_on_their_own_are_the_same_bytes(events: list[Event], big: int) -> None:
    # Chunks past BIG_CHUNK characters of delta JSON are made UTF-8 one by one (no joined
    # string of a big call's JSON); the bytes are the same as the chunks' JSON.
    expected = encode_events(ChunkStream(model="m", completion_id="c", created=0).chunks(events))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chunks, "BIG_CHUNK", big)
        stream = ChunkStream(model="m", completion_id="c", created=0)
        assert ChunkEncoder(stream).encode(stream.deltas(events)) == expected


def test_a_big_call_with_a_lone_surrogate_encodes_as_its_json() -> None:
    pieces = ["é😀\ud800" + "x" * PIECE_BYTES, '"\\' * 1000, "\udfff" * 70_000]
    events: list[Event] = [ToolCallStart(0, "call", "f")]
    events += [ToolCallDelta(0, piece) for piece in pieces]
    events += [ToolCallEnd(0), TextDelta("after"), MessageEnd(None)]
    stream = ChunkStream(model="m", completion_id="c", created=0)
    encoded = ChunkEncoder(stream).encode(stream.deltas(events))
    assert encoded == encode_events(
        ChunkStream(model="m", completion_id="c", created=0).chunks(events)
    )
    arguments = "".join(
        call["function"].get("arguments", "")
        for event in encoded.split(b"\n\n")[:-1]
        for call in json.loads(event.removeprefix(b"data: "))["choices"][0]["delta"].get(
            "tool_calls", ()
        )
    )
    assert arguments == "".join(pieces)
