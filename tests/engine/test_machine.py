"""The parse machine's runtime: runs are let go as they are read, and a held call's late
arguments (a Python-call reader's) come out as the same events, made before the feed returns."""

from __future__ import annotations

import gc
import json
from typing import ClassVar

import pytest

import pawlette
from pawlette.engine.call_text import PIECE_BYTES, MappedPieces, late_text
from pawlette.engine.machine import WINDOW, GrammarBuilder, Parser
from pawlette.types import ToolCallDelta, ToolCallEnd, ToolCallStart

from ..helpers import feed_in_pieces, folded


class _Recorder:
    """A reader that notes, for each run, the lists and tuples that still hold it."""

    holders: ClassVar[list[int]] = []

    def __init__(self, parser: Parser) -> None:
        pass

    def feed(self, text: str, offset: int) -> None:
        holders = [r for r in gc.get_referrers(text) if isinstance(r, (list, tuple))]
        _Recorder.holders.append(len(holders))

    def close(self, marker: str | None, offset: int) -> None:
        pass


def test_the_machine_hands_each_run_on_without_keeping_it() -> None:
    builder = GrammarBuilder()
    builder.state("a", _Recorder, "assistant")
    builder.on("a", "<m>", "a")
    grammar = builder.build(escape=False, conversation_start="a", completion_start="a")
    _Recorder.holders = []
    parser = Parser(grammar)
    parser.feed("first run" * 50 + "<m>" + "second run" * 50 + "<m>" + "third" * 50)
    parser.finish()
    assert _Recorder.holders == [0, 0, 0]


def _parser() -> Parser:
    builder = GrammarBuilder()
    builder.state("a", _Recorder, "assistant")
    builder.on("a", "<m>", "a")  # a grammar has markers (none: the lexer matches "" forever)
    grammar = builder.build(escape=False, conversation_start="a", completion_start="a")
    return Parser(grammar)


def _late(text: str) -> str:
    pieces = MappedPieces()
    pieces.append(text)
    return late_text(pieces)


@pytest.mark.parametrize(
    "deltas",
    [["late"], ["a", "late"], ["late", "b"], ["a", "late", "b", "late"], ["a", "b"]],
)
def test_late_arguments_keep_their_place_among_the_deltas(deltas: list[str]) -> None:
    parser = _parser()
    parser.emit(ToolCallStart(0, "c", "f"))
    expected = ""
    for number, delta in enumerate(deltas):
        piece = f"<{number}>"
        expected += piece
        parser.emit(ToolCallDelta(0, _late(piece) if delta == "late" else piece))
    parser.emit(ToolCallEnd(0))
    events = parser.feed("")[1:]  # after the MessageStart
    assert events == [ToolCallStart(0, "c", "f"), ToolCallDelta(0, expected), ToolCallEnd(0)]
    assert type(events[1].arguments) is str  # type: ignore[union-attr]


def test_an_abandoned_call_drops_its_late_arguments() -> None:
    parser = _parser()
    parser.emit(ToolCallStart(0, "c", "f"))
    parser.emit(ToolCallDelta(0, _late("{}")))
    parser.abandon_call(0)
    parser.emit(ToolCallStart(0, "d", "g"))
    parser.emit(ToolCallDelta(0, "{}"))
    parser.emit(ToolCallEnd(0))
    events = parser.feed("")[1:]  # after the MessageStart
    assert events == [ToolCallStart(0, "d", "g"), ToolCallDelta(0, "{}"), ToolCallEnd(0)]


@pytest.mark.parametrize("name", ["breeze", "chatglm3"])
def test_a_python_call_fed_whole_ends_in_that_feed_with_its_arguments_made(name: str) -> None:
    fmt = pawlette.get_format(name)
    arguments = json.dumps({"path": "a.py", "text": 'x = "1" \\ 2\n' * 20_000, "n": [1, None]})
    call = {"id": "c", "type": "function", "function": {"name": "store", "arguments": arguments}}
    question = [{"role": "user", "content": "go"}]
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    prompt = fmt.render(question, add_generation_prompt=True).text
    text = fmt.render([*question, message]).text[len(prompt) :]
    events = fmt.parser().feed(text)
    deltas = [event for event in events if isinstance(event, ToolCallDelta)]
    assert {type(delta.arguments) for delta in deltas} == {str}
    assert json.loads("".join(delta.arguments for delta in deltas)) == json.loads(arguments)
    assert isinstance(events[-1], ToolCallEnd)
    whole = feed_in_pieces(fmt, text, [len(text)], conversation=False)
    assert feed_in_pieces(fmt, text, [5000], conversation=False) == whole


@pytest.mark.parametrize("name", ["pcml", "chatml", "llama3", "omni", "breeze", "chatglm3"])
@pytest.mark.parametrize("step", [4096, None])
def test_a_big_held_call_comes_out_in_pieces_at_its_close(name: str, step: int | None) -> None:
    # Past PIECE_BYTES the held arguments come as several deltas, one after the other
    # at the close, each cut at a character (é, €, 😀 straddle the cuts somewhere).
    fmt = pawlette.get_format(name)
    text_value = 'é€😀 "quoted" \\ line\n' * (3 * PIECE_BYTES // 24)
    arguments = json.dumps({"path": "a.py", "text": text_value, "n": [1, None]}, ensure_ascii=False)
    call = {"id": "c", "type": "function", "function": {"name": "store", "arguments": arguments}}
    question = [{"role": "user", "content": "go"}]
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    prompt = fmt.render(question, add_generation_prompt=True).text
    text = fmt.render([*question, message]).text[len(prompt) :]
    parser = fmt.parser()
    events = []
    for start in range(0, len(text), step or len(text)):
        events += parser.feed(text[start : start + (step or len(text))])
    events += parser.finish()
    kinds = [type(event).__name__ for event in events if type(event) in _CALL_KINDS]
    deltas = [event.arguments for event in events if isinstance(event, ToolCallDelta)]
    assert kinds == ["ToolCallStart", *["ToolCallDelta"] * len(deltas), "ToolCallEnd"]
    assert len(deltas) >= 3
    assert all(0 < len(piece.encode()) <= PIECE_BYTES for piece in deltas)
    assert json.loads("".join(deltas)) == json.loads(arguments)
    if name not in ("breeze", "chatglm3"):  # a JSON call's arguments come as written
        assert "".join(deltas) == arguments


_CALL_KINDS = (ToolCallStart, ToolCallDelta, ToolCallEnd)


@pytest.mark.parametrize("name", ["pcml", "chatml", "llama3", "omni", "breeze", "chatglm3"])
@pytest.mark.parametrize("shift", [-3, -1, 0, 1, 2])
def test_a_big_text_fed_whole_reads_as_fed_in_pieces(name: str, shift: int) -> None:
    # Fed whole, a text past WINDOW is read a window at a time: a marker (or its escape)
    # cut by a window's edge is still one marker.  Conversations, so every format's
    # markers (user turns, headers, calls) come up at the edges.
    fmt = pawlette.get_format(name)
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    conversation = [
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "content": "ok"},
        {"role": "user", "content": "v"},
    ]
    tail = fmt.render(conversation).text
    head = fmt.render([{"role": "user", "content": "u"}]).text
    filler = "x" * (WINDOW - len(head) - 8 + shift) + "\\<end>\\[x]\n"
    text = fmt.render([{"role": "user", "content": "u" + filler}, *conversation[1:]]).text
    assert len(text) > WINDOW and len(tail) < len(text)
    whole = feed_in_pieces(fmt, text, [len(text)], conversation=True)
    assert folded(fmt, whole) == folded(fmt, feed_in_pieces(fmt, text, [4093], conversation=True))
    first = folded(fmt, whole)[0][0]
    assert "".join(getattr(part, "text", "") for part in first.content) == "u" + filler
