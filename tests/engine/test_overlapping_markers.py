"""A marker the state expects that begins inside a longer one the lexer took first: the lexer
takes the leftmost marker (GigaChat 3's tools block ends with ``"\\n\\n<|message_sep|>"``),
where the assistant's text expects ``"<|message_sep|>\\n\\nfunction call<|role_sep|>"`` two
characters later.  The parser reads the text before the later marker as text and lexes the
rest again, whole, streamed in any pieces, and from token ids."""

from __future__ import annotations

import pytest

import pawlette
from pawlette.engine.machine import WINDOW, Grammar, GrammarBuilder, Parser
from pawlette.openai import message_to_openai
from pawlette.tokenization.ids import IdParser

from ..declare.tokens import feed_pieces, tokenizer
from ..helpers import feed_in_pieces, folded, sequential_ids

GIGACHAT = pawlette.get_format("gigachat")
CALL = '{"name": "f", "arguments": {"a": 1}}'
BLANK_BEFORE_CALL = f"Hi\n\n<|message_sep|>\n\nfunction call<|role_sep|>\n{CALL}<|message_sep|>\n\n"
EXPECTED = {
    "role": "assistant",
    "content": "Hi\n\n",
    "tool_calls": [
        {"id": "call_0", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    ],
}


def test_a_text_ending_with_a_blank_line_before_a_call_is_read_whole() -> None:
    completion = GIGACHAT.parse(BLANK_BEFORE_CALL, id_factory=sequential_ids())
    assert completion.message == EXPECTED
    assert completion.finish_reason == "tool_calls"
    assert completion.warnings == ()


def test_the_texts_that_already_read_still_read_the_same() -> None:
    for before in ("Hi", "Hi\n"):
        text = BLANK_BEFORE_CALL.replace("Hi\n\n", before, 1)
        completion = GIGACHAT.parse(text, id_factory=sequential_ids())
        assert completion.message == {**EXPECTED, "content": before}
        assert completion.warnings == ()


def test_the_turn_still_ends_where_no_call_follows() -> None:
    for after in ("", "\n\n"):
        completion = GIGACHAT.parse(f"Hi\n\n<|message_sep|>{after}")
        assert completion.message == {"role": "assistant", "content": "Hi\n\n"}
        assert completion.finish_reason == "stop"
        assert completion.warnings == ()
    # A call turn's opener that never completes is text after the end of the turn.
    completion = GIGACHAT.parse("Hi\n\n<|message_sep|>\n\nfunction cal")
    assert completion.message == {"role": "assistant", "content": "Hi\n\n\n\nfunction cal"}
    assert [warning.text for warning in completion.warnings] == ["\n\nfunction cal"]


def test_a_blank_line_before_a_call_is_read_the_same_streamed_at_every_cut() -> None:
    whole = GIGACHAT.parse(BLANK_BEFORE_CALL, id_factory=sequential_ids())
    expected = folded(GIGACHAT, feed_in_pieces(GIGACHAT, BLANK_BEFORE_CALL, [], conversation=False))
    assert message_to_openai(expected[0][0]) == whole.message == EXPECTED
    for cut in range(1, len(BLANK_BEFORE_CALL)):
        parser = GIGACHAT.parser(id_factory=sequential_ids())
        events = parser.feed(BLANK_BEFORE_CALL[:cut])
        events += parser.feed(BLANK_BEFORE_CALL[cut:])
        events += parser.finish()
        assert folded(GIGACHAT, events) == expected, cut
    for sizes in ([1], [2], [3], [5, 1, 8], [13, 2]):
        events = feed_in_pieces(GIGACHAT, BLANK_BEFORE_CALL, sizes, conversation=False)
        assert folded(GIGACHAT, events) == expected, sizes


def test_a_blank_line_before_a_call_is_read_from_token_ids() -> None:
    pieces = [
        (False, "Hi\n\n"), (True, "<|message_sep|>"), (False, "\n\nfunction call"),
        (True, "<|role_sep|>"), (False, f"\n{CALL}"), (True, "<|message_sep|>"), (False, "\n\n"),
    ]  # fmt: skip
    tok = tokenizer("gigachat")
    parser = IdParser(GIGACHAT, tok, id_factory=sequential_ids())
    messages = folded(GIGACHAT, feed_pieces(parser, tok, pieces))
    assert message_to_openai(messages[0][0]) == EXPECTED
    assert messages[2] == []  # no warning
    # Where no call follows, the turn ends there, as in the text.
    for after in ("", "\n\nbye"):
        parser = IdParser(GIGACHAT, tok, id_factory=sequential_ids())
        pieces = [(False, "Hi\n\n"), (True, "<|message_sep|>"), (False, after)]
        from_ids = folded(GIGACHAT, feed_pieces(parser, tok, pieces))
        text = "Hi\n\n<|message_sep|>" + after
        assert from_ids == folded(GIGACHAT, GIGACHAT.parser().read_all(text)), after


class _Log(list[tuple[str, str | None, str | None]]):
    """What the readers of a synthetic grammar were given: (state, text, None) per run and
    (state, None, marker) per close."""


class _Noting:
    def __init__(self, parser: Parser) -> None:
        self.name = parser.state.name
        self.log = parser.context(_Log)

    def feed(self, text: str, offset: int) -> None:
        if self.log and self.log[-1][0] == self.name and self.log[-1][1] is not None:
            text = self.log.pop()[1] + text  # (runs are cut where the pieces are)
        self.log.append((self.name, text, None))

    def close(self, marker: str | None, offset: int) -> None:
        self.log.append((self.name, None, marker))


def _overlapping() -> Grammar:
    """The conflict in a grammar of its own: a block outside the turn ends with
    ``"\\n\\n<e>"``; the turn's text ends at ``"<e>"`` or goes on to a call at
    ``"<e>\\n\\ncall:"``."""
    builder = GrammarBuilder()
    for name, role in (("body", "assistant"), ("call", "assistant"), ("out", None)):
        builder.state(name, _Noting, role)  # type: ignore[arg-type]
    builder.on("out", "[block]", "block")
    builder.state("block", _Noting)  # type: ignore[arg-type]
    builder.on("block", "\n\n<e>", "out")
    builder.on("body", "<e>", "out")
    builder.on("body", "<e>\n\ncall:", "call")
    builder.on("call", "<e>", "out")
    return builder.build(escape=False, conversation_start="body", completion_start="body")


def _read(grammar: Grammar, pieces: list[str]) -> _Log:
    parser = Parser(grammar, conversation=True)
    for piece in pieces:
        parser.feed(piece)
    parser.finish()
    return parser.context(_Log)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Hi\n\n<e>\n\ncall:X<e>",
            [("body", "Hi\n\n", None), ("body", None, "<e>\n\ncall:"), ("call", "X", None),
             ("call", None, "<e>"), ("out", None, None)],
        ),
        (
            "Hi\n\n<e>\n\nbye",
            [("body", "Hi\n\n", None), ("body", None, "<e>"), ("out", "\n\nbye", None),
             ("out", None, None)],
        ),
        (
            "Hi\n\n<e>\n\ncall",  # the longer marker never completes
            [("body", "Hi\n\n", None), ("body", None, "<e>"), ("out", "\n\ncall", None),
             ("out", None, None)],
        ),
        (
            "<e>[block]\n\n<e>",  # where the first marker is expected, it is taken
            [("body", None, "<e>"), ("out", None, "[block]"), ("block", None, "\n\n<e>"),
             ("out", None, None)],
        ),
    ],
)  # fmt: skip
def test_a_longer_marker_beginning_inside_the_one_lexed_wins_where_expected(
    text: str, expected: list[tuple[str, str | None, str | None]]
) -> None:
    grammar = _overlapping()
    parser = Parser(grammar, conversation=True)
    parser.read_all(text)
    assert parser.context(_Log) == expected
    for cut in range(len(text) + 1):
        assert _read(grammar, [text[:cut], text[cut:]]) == expected, cut
    assert _read(grammar, list(text)) == expected


def test_known_text_after_a_marker_read_again_joins_it_from_ids() -> None:
    grammar = _overlapping()
    parser = Parser(grammar, conversation=True)
    parser.feed_text("Hi")
    parser.feed_marker("\n\n<e>")
    for piece in ("\n", "\nca", "ll:"):
        parser.feed_text(piece)
    parser.feed_text("X")
    parser.feed_marker("<e>")
    parser.finish()
    assert parser.context(_Log) == [
        ("body", "Hi\n\n", None), ("body", None, "<e>\n\ncall:"), ("call", "X", None),
        ("call", None, "<e>"), ("out", None, None),
    ]  # fmt: skip


def test_a_blank_line_before_a_call_is_read_across_a_window_edge() -> None:
    # A text fed past WINDOW is lexed a window at a time, a window's short last run held for
    # the next: what is lexed again takes it along.
    expected = None
    for shift in range(0, len(BLANK_BEFORE_CALL) + 2, 3):
        text = "a" * (WINDOW - shift) + BLANK_BEFORE_CALL
        parser = GIGACHAT.parser(id_factory=sequential_ids())
        fed_whole = folded(GIGACHAT, parser.feed(text) + parser.finish())
        in_pieces = folded(GIGACHAT, feed_in_pieces(GIGACHAT, text, [4096], conversation=False))
        assert fed_whole == in_pieces, shift
        message = message_to_openai(fed_whole[0][0])
        assert message == {**EXPECTED, "content": "a" * (WINDOW - shift) + "Hi\n\n"}, shift
        expected = fed_whole
    assert expected is not None
