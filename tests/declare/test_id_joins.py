"""IdParser joins markers that carry layout text (``<think>\\n``, ``\\n<tool_call>\\n``) from
the ids a tokenizer writes them with, however the text around them is cut into tokens."""

from __future__ import annotations

import pawlette
from pawlette.engine.fold import fold, merge_assistant
from pawlette.openai import message_to_openai
from pawlette.tokenization.ids import IdParser

from ..helpers import sequential_ids
from .tokens import feed_pieces, tokenizer

CHATML = pawlette.get_format("chatml")


def parse_pieces(pieces: list[tuple[bool, str]]) -> dict[str, object]:
    """Feed (is a marker, text) pieces as ids: markers by id, text by any token cut."""
    tok = tokenizer("chatml")
    parser = IdParser(CHATML, tok, id_factory=sequential_ids())
    events = feed_pieces(parser, tok, pieces)
    return message_to_openai(merge_assistant(fold(events, CHATML.grammar.fields).messages))


def test_markers_with_layout_are_joined_across_ids() -> None:
    pieces = [
        (True, "<think>"), (False, "\nplan\n"), (True, "</think>"), (False, "\n\nSure.\n"),
        (True, "<tool_call>"), (False, '\n{"name": "f", "arguments": {}}\n'),
        (True, "</tool_call>"), (True, "<|im_end|>"),
    ]  # fmt: skip
    text = "".join(text for _, text in pieces)
    assert parse_pieces(pieces) == CHATML.parse(text, id_factory=sequential_ids()).message
    assert parse_pieces(pieces)["content"] == "Sure."


def test_text_that_only_looks_like_a_joined_marker_stays_text() -> None:
    # "\n" then a marker that does not join with it, and marker text spelled in ordinary
    # tokens: neither becomes a marker.
    pieces = [(False, "a\n"), (False, "<tool_call>\nb"), (True, "<|im_end|>")]
    message = parse_pieces(pieces)
    assert message["content"] == "a\n<tool_call>\nb" and not message.get("tool_calls")
