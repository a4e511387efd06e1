"""The parse machine's runtime: runs are let go as they are read, and a held call's late
arguments (a Python-call reader's) come out as the same events, made before the feed returns;
a big text fed whole is read in windows with the same outcome, strict errors' messages too."""

from __future__ import annotations

import gc
import json
import random
import sys
from typing import ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.engine import machine
from pawlette.engine.call_text import PIECE_BYTES, MappedPieces, late_text
from pawlette.engine.machine import WINDOW, Grammar, GrammarBuilder, Parser
from pawlette.types import ToolCallDelta, ToolCallEnd, ToolCallStart

from ..helpers import feed_in_pieces, folded
from ..serve.upstream import cut_at_stop
from ..strategies.completions import completion
from ..support import sampling


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


def _grammar(reader: type) -> Grammar:
    """One state read by ``reader``, and a marker that re-enters it."""
    builder = GrammarBuilder()
    builder.state("a", reader, "assistant")
    builder.on("a", "<m>", "a")  # a grammar has markers (none: the lexer matches "" forever)
    return builder.build(escape=False, conversation_start="a", completion_start="a")


def test_the_machine_hands_each_run_on_without_keeping_it() -> None:
    _Recorder.holders = []
    parser = Parser(_grammar(_Recorder))
    parser.feed("first run" * 50 + "<m>" + "second run" * 50 + "<m>" + "third" * 50)
    parser.finish()
    assert _Recorder.holders == [0, 0, 0]


class _Counter:
    """A reader that notes each run's reference count (its holders, names in frames too)."""

    counts: ClassVar[list[int]] = []

    def __init__(self, parser: Parser) -> None:
        pass

    def feed(self, text: str, offset: int) -> None:
        _Counter.counts.append(sys.getrefcount(text))

    def close(self, marker: str | None, offset: int) -> None:
        pass


def test_a_text_read_in_windows_hands_each_run_on_without_keeping_it() -> None:
    # As a small feed's run: the reader holds it alone (a name in the window loop, or a
    # match object of it, would keep a window's run alive beside what the reader keeps).
    grammar = _grammar(_Counter)
    _Counter.counts = []
    Parser(grammar).feed("x" * 100 + "<m>" + "y" * 100)
    small = _Counter.counts[-1]
    _Counter.counts = []
    Parser(grammar).feed("<m>" + "x" * (3 * WINDOW) + "<m>" + "z" * 50)
    assert len(_Counter.counts) >= 4
    assert set(_Counter.counts) == {small}


def _parser() -> Parser:
    return Parser(_grammar(_Recorder))


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
@pytest.mark.parametrize("step", [4096, None])
def test_a_big_held_call_cut_at_a_stop_string_comes_out_in_pieces(
    name: str, step: int | None
) -> None:
    # As an engine sends it: cut at the format's first stop string, which is the call's
    # close in omni (<|FUNCTION_RETURN|>); the call ends with the output, still in pieces
    # (omni's came as one delta of all its arguments, read whole at the end).
    fmt = pawlette.get_format(name)
    arguments = json.dumps({"text": 'é€😀 "quoted" \\ line\n' * (PIECE_BYTES // 12)})
    call = {"id": "c", "type": "function", "function": {"name": "store", "arguments": arguments}}
    question = [{"role": "user", "content": "go"}]
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    prompt = fmt.render(question, add_generation_prompt=True).text
    text = fmt.render([*question, message]).text[len(prompt) :]
    text = cut_at_stop(text, list(fmt.stop))
    events = feed_in_pieces(fmt, text, [step or len(text)], conversation=False)
    deltas = [event.arguments for event in events if isinstance(event, ToolCallDelta)]
    assert [type(event).__name__ for event in events if type(event) in _CALL_KINDS] == [
        "ToolCallStart",
        *["ToolCallDelta"] * len(deltas),
        "ToolCallEnd",
    ]
    assert len(deltas) >= 2
    assert json.loads("".join(deltas)) == json.loads(arguments)


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
    rendering = fmt.render([{"role": "user", "content": "u" + filler}, *conversation[1:]])
    text = rendering.text
    written = "u" + filler
    if "messages[0].content: whitespace at its ends trimmed" in rendering.losses:
        written = written.strip()  # Llama 3's templates trim every text
    assert len(text) > WINDOW and len(tail) < len(text)
    whole = feed_in_pieces(fmt, text, [len(text)], conversation=True)
    assert folded(fmt, whole) == folded(fmt, feed_in_pieces(fmt, text, [4093], conversation=True))
    first = folded(fmt, whole)[0][0]
    assert "".join(getattr(part, "text", "") for part in first.content) == written


@pytest.mark.parametrize("before", [1, 5, 39])
@pytest.mark.parametrize(
    ("ending", "found"),
    [
        ("<|im_end|>", "text after the end of the turn"),
        ('<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>', "text in state"),
    ],
)
def test_a_strict_error_at_a_window_edge_quotes_the_text_as_written(
    before: int, ending: str, found: str
) -> None:
    # The text a strict parser refuses begins `before` characters short of a window's edge:
    # fed whole, its message quotes it as a feed of all of it did (the window's last run
    # is read with the next window's first), not cut at the edge ('s' for before=1).
    fmt = pawlette.get_format("chatml")
    stray = " stray text that goes on for well over forty characters"
    text = "a" * (WINDOW - before - len(ending) - 1) + ending + stray  # s at WINDOW - before
    with pytest.raises(pawlette.ParseError) as raised:
        fmt.parse(text, strict=True)
    assert raised.value.offset == WINDOW - before
    assert found in str(raised.value)
    assert repr(stray.strip()[:40]) in str(raised.value)


@pytest.mark.deep
@pytest.mark.parametrize("name", pawlette.formats())
def test_a_text_read_in_windows_parses_as_fed_whole(name: str) -> None:
    # Windows of a few characters on the fuzz's completions: lenient events fold the same
    # whatever the tail kept back; strict errors (with the tail as shipped) say the same.
    fmt = pawlette.get_format(name)

    @settings(
        max_examples=sampling.examples(name, pawlette.formats(), 30),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(rng=st.randoms(use_true_random=False), window=st.integers(1, 48), tail=st.integers(0, 9))
    def check(rng: random.Random, window: int, tail: int) -> None:
        text = completion(fmt, rng)
        whole = _outcome(fmt, text, strict=True)
        lenient = folded(fmt, feed_in_pieces(fmt, text, [len(text)], conversation=False))
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(machine, "WINDOW", window)
            assert _outcome(fmt, text, strict=True) == whole
            patch.setattr(machine, "WINDOW_TAIL", tail)
            events = feed_in_pieces(fmt, text, [len(text)], conversation=False)
            assert folded(fmt, events) == lenient

    check()


def _outcome(fmt: pawlette.Format, text: str, *, strict: bool) -> object:
    try:
        return fmt.parse(text, strict=strict, id_factory=lambda: "c").message
    except pawlette.ParseError as error:
        return error.offset, str(error)


# A call the model never closed, then the turn's end marker: the call is kept as text (with
# its warning) and the marker ends the turn instead of joining the text.
UNCLOSED_CALLS = {
    "chatml": ('<tool_call>\n{"name": "f", "arguments": {"a": 1}}', "<|im_end|>"),
    "chatml:qwen3-coder": (
        "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n",
        "<|im_end|>",
    ),
    "glm": ("<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n", "<|user|>"),
    "granite": ('<tool_call>{"name": "f", "arguments": {"a": 1}}', "<|end_of_text|>"),
    "harmony": (
        '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": 1',
        "<|return|>",
    ),
}


@pytest.mark.parametrize("name", UNCLOSED_CALLS)
def test_the_end_marker_ends_a_turn_inside_an_unclosed_call(name: str) -> None:
    fmt = pawlette.get_format(name)
    call, end = UNCLOSED_CALLS[name]
    completion = fmt.parse(call + end)
    content = completion.message["content"]
    assert end not in content and content and call.endswith(content)
    assert completion.finish_reason == "stop"
    assert "tool_calls" not in completion.message
    assert len(completion.warnings) == 1  # the call's, not a second one for the marker
    with pytest.raises(pawlette.ParseError):
        fmt.parse(call + end, strict=True)
    after = fmt.parse(call + end + "more")
    assert [w.message.startswith("text after the end of the turn") for w in after.warnings] == [
        False,
        True,
    ]
    whole = folded(fmt, feed_in_pieces(fmt, call + end, [], conversation=False))
    assert whole == folded(fmt, feed_in_pieces(fmt, call + end, [1], conversation=False))
    assert whole[0][0].content[0].text == content


class _Texts:
    """A reader that notes the text its state reads."""

    read: ClassVar[list[tuple[str, str]]] = []

    def __init__(self, parser: Parser) -> None:
        self.state = parser.state.name

    def feed(self, text: str, offset: int) -> None:
        _Texts.read.append((self.state, text))

    def close(self, marker: str | None, offset: int) -> None:
        pass


def test_two_markers_the_lexer_took_as_one_are_read_as_two() -> None:
    """``<e>`` ends the turn and ``<o>`` opens the next; ``<e><o>`` is also one marker
    elsewhere: in a state where only ``<e>`` is valid, the lexer's ``<e><o>`` is read as
    ``<e>`` then ``<o>``, not as text."""
    builder = GrammarBuilder()
    for name in ("turn", "outside", "next"):
        builder.state(name, _Texts, "assistant")
    builder.on("turn", "<e>", "outside")
    builder.on("outside", "<o>", "next")
    builder.on("outside", "<x><e><o>", "next")
    builder.on("next", "<e><o>", "next")
    grammar = builder.build(escape=False, conversation_start="turn", completion_start="turn")
    _Texts.read = []
    parser = Parser(grammar, conversation=True)
    parser.feed("answer<e><o>more")
    parser.finish()
    assert parser.state.name == "next"
    assert _Texts.read == [("turn", "answer"), ("next", "more")]


def test_whitespace_the_lexer_reads_as_a_marker_after_the_turn_is_layout() -> None:
    """After a completion's turn ends, ``"\\n"`` (a marker of the format: another turn's
    end) is the layout after the turn, as whitespace text is, not stray text."""
    builder = GrammarBuilder()
    builder.state("turn", _Texts, "assistant")
    builder.state("outside", _Texts)
    builder.state("user", _Texts, "user")
    builder.on("turn", "<e>", "outside")
    builder.on("outside", "<u>", "user")
    builder.on("user", "\n", "outside")
    grammar = builder.build(escape=False, conversation_start="outside", completion_start="turn")
    _Texts.read = []
    parser = Parser(grammar)
    events = parser.feed("answer<e>\n") + parser.finish()
    assert _Texts.read == [("turn", "answer")]
    assert not [event for event in events if "\n" in str(getattr(event, "text", ""))]
