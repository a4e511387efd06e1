"""A call's text kept once: split around its arguments or whole, every parse is the same.

The split (arguments kept apart in a memory map, checked as they stream) only saves memory:
with it forced on from the first character, every format's random completions (valid and
malformed calls) give the same events, with arguments streamed or held, however the text is
cut; and big calls, ASCII or not, come back as written.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.engine import call_text
from pawlette.engine.call_text import CallText, MappedPieces, MappedText, ObjectText, late_text

from ..helpers import feed_in_pieces
from ..strategies.completions import completion
from ..support import sampling


@pytest.mark.deep
@pytest.mark.parametrize("name", pawlette.formats())
def test_the_split_changes_no_event(name: str) -> None:
    fmt = pawlette.get_format(name)

    @settings(max_examples=sampling.examples(name, pawlette.formats(), 40), deadline=None)
    @given(seed=st.integers(0, 2**32), sizes=st.lists(st.integers(1, 9), min_size=1, max_size=4))
    def check(seed: int, sizes: list[int]) -> None:
        text = completion(fmt, random.Random(seed))
        for live in (False, True):
            whole = feed_in_pieces(fmt, text, sizes, conversation=False, stream_arguments=live)
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(call_text, "SPLIT_AT", 1)
                patch.setattr(call_text, "RETRY_GROWTH", 1.0)  # look at every piece
                patch.setattr(call_text, "STEP", 1 + seed % 5)
                split = feed_in_pieces(fmt, text, sizes, conversation=False, stream_arguments=live)
            assert split == whole

    check()


def _big_call(fmt: pawlette.Format, arguments: str) -> str:
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    question = [{"role": "user", "content": "go"}]
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    prompt = fmt.render(question, add_generation_prompt=True).text
    return fmt.render([*question, message]).text[len(prompt) :]


@pytest.mark.parametrize("name", ["pcml", "chatml", "llama3", "omni"])
@pytest.mark.parametrize("piece", [1, 7, 5000, 10**7])
def test_big_calls_come_back_as_written(name: str, piece: int) -> None:
    fmt = pawlette.get_format(name)
    body = ('東京 "quoted" \\ text\n' * 15_000)[: 300_000 if piece > 1 else 90_000]
    value = {"text": body, "numbers": list(range(300)), "nested": [{"a": None}]}
    arguments = json.dumps(value, ensure_ascii=False)
    text = _big_call(fmt, arguments)
    for live in (False, True):
        events = feed_in_pieces(fmt, text, [piece], conversation=False, stream_arguments=live)
        deltas = [event.arguments for event in events if type(event).__name__ == "ToolCallDelta"]
        assert "".join(deltas) == arguments
        assert [type(event).__name__ for event in events].count("ToolCallEnd") == 1
        assert not [event for event in events if type(event).__name__ == "ParseWarning"]


@pytest.mark.parametrize(
    "broken", ['{"pad": F, "b": NaN}', '{"pad": F, "b": 1', "[1, F]", '{"pad": F} x', '"F"']
)
def test_big_malformed_calls_come_back_as_text(broken: str) -> None:
    fmt = pawlette.get_format("pcml")
    arguments = broken.replace("F", json.dumps("x" * 100_000))
    text = '<call>{"id": "c", "name": "f", "arguments": ' + arguments + "}</call><end>"
    for piece in (3, 4096, len(text)):
        events = feed_in_pieces(fmt, text, [piece], conversation=False)
        assert not [event for event in events if type(event).__name__.startswith("ToolCall")]
        content = "".join(event.text for event in events if type(event).__name__ == "TextDelta")
        assert content == text[: -len("<end>")]


@pytest.mark.parametrize(
    "broken",
    ['{"pad": F, "b": NaN}', '{"pad": F, "b": 1', "[1, F]", '{"pad": F} x', '"F"', ' {"pad": F} '],
)
@pytest.mark.parametrize("kind", ["FUNCTION", "ACTION"])
def test_big_omni_calls_come_back_as_text_when_malformed(broken: str, kind: str) -> None:
    # Omni's arguments after their marker: kept once and checked as they come (ObjectText).
    fmt = pawlette.get_format("omni")
    arguments = broken.replace("F", json.dumps("x" * 100_000))
    close = "<|FUNCTION_RETURN|>" if kind == "FUNCTION" else "<|ACTION_END|>"
    call = f"<|{kind}_START|>f<|{kind}_ARGS|>{arguments}{close}"
    for piece in (3, 4096, len(call)):
        for live in (False, True):
            events = feed_in_pieces(fmt, call, [piece], conversation=False, stream_arguments=live)
            names = [type(event).__name__ for event in events]
            if broken == ' {"pad": F} ':  # whitespace around a valid object: a valid call
                assert "ParseWarning" not in names
                assert ("ToolCallEnd" in names) == (kind == "FUNCTION")
                if kind == "FUNCTION":
                    deltas = [e.arguments for e in events if type(e).__name__ == "ToolCallDelta"]
                    assert "".join(deltas) == arguments.strip()
                continue
            assert "ToolCallEnd" not in names and "ParseWarning" in names
            text = "".join(event.text for event in events if type(event).__name__ == "TextDelta")
            assert text == call


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(['{"a": [1, "x"]}', '{"a": tru}', "[1]", '{"a": 1} x', '{"a": "\\u00e9"}']),
    st.text(" \t\n\r\u00a0", max_size=3),
    st.text(" \t\n\r\u2028", max_size=3),
    st.integers(1, 5),
    st.integers(1, 4),
)
def test_object_text_keeps_the_text_and_checks_it_as_json_does(
    body: str, before: str, after: str, size: int, step: int
) -> None:
    text = before + body + after
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(call_text, "STEP", step)
        for end in ("take", "object"):
            kept = ObjectText()
            for position in range(0, len(text), size):
                kept.append(text[position : position + size])
            try:
                valid = isinstance(json.loads(text.strip()), dict)
            except ValueError:
                valid = False
            checked = kept.checked_object()
            assert not checked or valid  # never accepts what json refuses
            if checked and end == "object":
                assert kept.take_object() == text.strip()
            else:
                assert kept.take() == text
            assert kept.take() == ""


@given(st.lists(st.text() | st.just("\ud800 lone \udfff"), max_size=8))
def test_mapped_text_gives_back_what_was_appended(pieces: list[str]) -> None:
    buffer = MappedText()
    for piece in pieces:
        buffer.append(piece)
    whole = "".join(pieces)
    assert buffer.text() == whole
    assert buffer.take() == whole
    assert buffer.take() == ""


@given(
    st.lists(st.text() | st.just("\ud800 lone \udfff") | st.just("é€😀"), max_size=8),
    st.integers(4, 40),
)
def test_mapped_text_gives_back_what_was_appended_in_pieces(
    pieces: list[str], piece_bytes: int
) -> None:
    buffer = MappedText()
    for piece in pieces:
        buffer.append(piece)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(call_text, "PIECE_BYTES", piece_bytes)
        made = buffer.take_pieces()
    whole = "".join(pieces)
    assert "".join(made) == whole
    if len(made) > 1:  # cut from a map: pieces of at most piece_bytes, none empty
        assert all(0 < len(part.encode("utf-8", "surrogatepass")) <= piece_bytes for part in made)
    assert buffer.take_pieces() == []
    assert buffer.take() == ""


def test_late_text_makes_its_pieces_once_and_joins_them_once() -> None:
    buffer = MappedPieces()
    for _ in range(3):
        buffer.append("ab" * call_text.PIECE_BYTES)
    late = late_text(buffer)
    pieces = late.pieces()
    assert len(pieces) == 6 and late.pieces() is pieces
    assert late.take() == "ab" * 3 * call_text.PIECE_BYTES
    assert late.take() is late.take()


def test_call_text_gives_back_the_whole_text_however_split() -> None:
    text = '{"name": "f", "arguments": {"a": [1, 2, "' + "y" * 70_000 + '"]}, "id": "x"}  '
    for step in (1, 10, 100_000):
        buffer = CallText("arguments")
        for position in range(0, len(text), step):
            buffer.append(text[position : position + step])
        envelope = buffer.envelope()
        assert envelope is not None
        assert json.loads(envelope) == {"name": "f", "arguments": {}, "id": "x"}
        assert buffer.take() == text
        assert buffer.envelope() is None  # joined back: no arguments kept apart any more
        buffer = CallText("arguments")
        for position in range(0, len(text), step):
            buffer.append(text[position : position + step])
        assert buffer.envelope() is not None
        assert buffer.arguments().take() == text[text.index('{"a"') : text.index(', "id"')]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=6),  # a character or a token (surrogates too: kept as written)
            st.integers(1, 3).map(lambda blocks: "ab\ud800ü" * (call_text.STEP * blocks // 4)),
        ),
        max_size=40,
    ),
    st.sampled_from(["take", "clear"]),
)
def test_mapped_and_packed_pieces_give_back_what_was_appended(pieces: list[str], end: str) -> None:
    # Pieces of any size, past a batch (a map, a compressed window) or not.
    for kept in (call_text.MappedPieces(), call_text.PackedText()):
        for piece in pieces:
            kept.append(piece)
        if end == "clear" and isinstance(kept, call_text.MappedPieces):
            kept.clear()
            assert kept.take() == ""
            continue
        assert kept.take() == "".join(pieces)
        assert kept.take() == ""  # empty afterwards
        kept.append("again")
        assert kept.take() == "again"


@settings(max_examples=150, deadline=None)
@given(
    json_text=st.text(min_size=1, max_size=300),
    steps=st.lists(
        st.tuples(st.sampled_from(["literal", "copy", "borrow"]), st.text(max_size=9000)),
        max_size=40,
    ),
    data=st.data(),
)
def test_echo_text_rebuilds_its_text_from_the_json(
    json_text: str, steps: list[tuple[str, str]], data: st.DataObject
) -> None:
    """Literal pieces (some past the store's batch) and stretches of the JSON, some taking
    the end of the literal before them (an escape's backslash): the same text back, past the
    entries' bound too (small JSON stretches, thousands of them)."""
    echo = call_text.EchoText()
    expected: list[str] = []
    cursor = 0
    for kind, piece in steps:
        if kind == "literal" or cursor >= len(json_text):
            echo.literal(piece)
            expected.append(piece)
            continue
        length = data.draw(st.integers(1, len(json_text) - cursor))
        stretch = json_text[cursor : cursor + length]
        borrow = 0
        if kind == "borrow" and expected and expected[-1]:
            borrow = 1  # the literal kept last ends with the stretch's first character
            echo.literal(stretch[0])
            expected.append(stretch[0])
        padded = "<" + stretch[borrow:] + ">"  # read in place, inside a longer text
        echo.copy(padded, 1, len(padded) - 1, cursor, borrow)
        expected.append(stretch[borrow:])
        cursor += data.draw(st.sampled_from([length, length + 1]))  # on, or a gap
    assert echo.text(json_text) == "".join(expected)
    assert echo.size == len("".join(expected))
    assert echo.text(json_text) == "".join(expected)  # kept: the same again


def test_echo_text_keeps_few_entries_and_bounds_them() -> None:
    echo = call_text.EchoText()
    json_text = "x" * 10**6
    for start in range(0, 10**6, 1000):  # a stretch and a literal piece by turns
        echo.literal("'")
        echo.copy(json_text, start, start + 999, start)
    assert echo.text(json_text) == "".join("'" + "x" * 999 for _ in range(1000))
    bounded = call_text.EchoText()
    for start in range(0, 30000, 3):  # an entry per 3 characters: past the bound
        bounded.literal("'")
        bounded.copy(json_text, start, start + 2, start)
    assert bounded.text(json_text) == "'xx" * 10000
    assert len(bounded._entries) <= 3 * (call_text.ENTRIES_FREE + 30000 // 256 + 1)


@pytest.mark.parametrize("character", ["é", "€", "😀", "\ud800"])
@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_pieces_at_the_piece_size_cut_no_character(character: str, shift: int) -> None:
    # A map of exactly PIECE_BYTES bytes, one less, one more, ending in a character of 2, 3
    # or 4 bytes (a lone surrogate: 3, with surrogatepass): one more, and the cut falls in it.
    size = len(character.encode("utf-8", "surrogatepass"))
    text = "a" * (call_text.PIECE_BYTES + shift - size) + character
    buffer = MappedText()
    buffer.append(text[:10])
    buffer.append(text[10:])
    pieces = buffer.take_pieces()
    if shift <= 0:
        assert pieces == [text]
    else:
        assert pieces == [text[:-1], character]


@pytest.mark.parametrize("name", ["pcml", "omni", "breeze"])
def test_pieces_without_releasing_pages_are_the_same(name: str) -> None:
    # Where the system has no MADV_DONTNEED the map is only closed at the end: same pieces.
    fmt = pawlette.get_format(name)
    arguments = json.dumps({"text": 'é€😀 "q" \\ line\n' * 40_000}, ensure_ascii=False)
    text = _big_call(fmt, arguments)
    released = feed_in_pieces(fmt, text, [65_537], conversation=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(call_text, "_RELEASE", None)
        kept = feed_in_pieces(fmt, text, [65_537], conversation=False)
    assert kept == released
    deltas = [event.arguments for event in kept if type(event).__name__ == "ToolCallDelta"]
    assert len(deltas) >= 3 and json.loads("".join(deltas)) == json.loads(arguments)
