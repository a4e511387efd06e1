"""The call scanner's text buffer: compact while fed, whole when taken."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pawlette.engine.call_scanner import PIECES_PER_BLOCK, TextPieces


@given(st.lists(st.text(max_size=3), max_size=3 * PIECES_PER_BLOCK))
def test_text_pieces_give_back_what_was_appended(pieces: list[str]) -> None:
    buffer = TextPieces()
    for piece in pieces:
        buffer.append(piece)
    assert buffer.take() == "".join(pieces)
    assert buffer.take() == ""
