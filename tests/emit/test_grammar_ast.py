"""The grammar tree's writers: a lexeme is one terminal in Lark and its parts in GBNF."""

from __future__ import annotations

import pytest

from pawlette.emit.grammar_ast import (
    Lexeme,
    Lit,
    MarkerSpelling,
    Node,
    Repeat,
    Rules,
    Terminal,
    optional,
    seq,
    to_gbnf,
    to_lark,
)

TEXT = Terminal("TEXT", lark="/[a-z]*/", gbnf="text")
JOINED = Lexeme("TEXT_THEN_CLOSE", 'TEXT "</t>"', seq(optional(TEXT), Lit("</t>")))


def rules(body: Node) -> Rules:
    written = Rules()
    written.add("start", body)
    written.gbnf_extra["text"] = "[a-z]*"
    return written


def test_a_lexeme_is_one_terminal_in_lark() -> None:
    lark = to_lark(rules(seq(Lit("<t>"), JOINED, Lit("!"))), [], MarkerSpelling())
    assert 'start: "<t>" TEXT_THEN_CLOSE "!"' in lark
    assert 'TEXT_THEN_CLOSE: TEXT "</t>"' in lark
    assert "TEXT: /[a-z]*/" in lark  # what the lexeme's definition names is defined too


def test_a_lexeme_is_its_parts_in_gbnf_as_they_were_before_they_were_joined() -> None:
    gbnf = to_gbnf(rules(seq(Lit("<t>"), JOINED, Lit("!"))), [], MarkerSpelling())
    joined_apart = to_gbnf(
        rules(seq(Lit("<t>"), optional(TEXT), Lit("</t>"), Lit("!"))), [], MarkerSpelling()
    )
    assert gbnf == joined_apart
    assert 'root ::= "<t>" text? "</t>" "!"' in gbnf


def test_a_repeated_lexeme_keeps_its_parts_together_in_gbnf() -> None:
    gbnf = to_gbnf(rules(Repeat(JOINED)), [], MarkerSpelling())
    assert 'root ::= (text? "</t>")*' in gbnf


def test_two_definitions_of_one_terminal_name_are_refused() -> None:
    other = Lexeme("TEXT_THEN_CLOSE", 'TEXT "</u>"', seq(optional(TEXT), Lit("</u>")))
    with pytest.raises(ValueError, match="TEXT_THEN_CLOSE"):
        to_lark(rules(seq(JOINED, other)), [], MarkerSpelling())
