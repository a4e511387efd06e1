"""Call ids minted and held to the shape a calls concept's ``id_pattern`` says its format
writes (Mistral's nine letters and digits)."""

from __future__ import annotations

import dataclasses
import re

import pytest

import pawlette
from pawlette.declare import NamedCalls, declare
from pawlette.declare.call_ids import id_pieces, mint_id
from pawlette.formats.mistral import SMALL, layout


@pytest.mark.parametrize(
    "pattern", ["[A-Za-z0-9]{9}", "call-\\d{3}", "[a-f0-9]{4,8}", "x[_.]{2}[0-9]"]
)
def test_a_minted_id_matches_its_pattern(pattern: str) -> None:
    pieces = id_pieces(pattern)
    assert not isinstance(pieces, str)
    for _ in range(20):
        assert re.fullmatch(pattern, mint_id(pieces))


@pytest.mark.parametrize("pattern", ["(a|b)+", "[^x]{3}", "\\w{5}", "a*", ""])
def test_a_pattern_outside_the_language_of_ids_is_named(pattern: str) -> None:
    assert isinstance(id_pieces(pattern), str)


def test_a_format_whose_ids_cannot_be_minted_is_refused_when_declared() -> None:
    declared = layout(SMALL)
    concepts = tuple(
        dataclasses.replace(concept, id_pattern="(a|b)+")
        if isinstance(concept, NamedCalls)
        else concept
        for concept in declared.concepts
    )
    with pytest.raises(pawlette.FormatError, match=r"NamedCalls\.id_pattern: '\(a\|b\)\+'"):
        declare(dataclasses.replace(declared, concepts=concepts))


def test_an_id_factory_given_by_the_caller_is_kept() -> None:
    """The format's shape is the default; a caller's own ids are the caller's choice."""
    message = (
        pawlette.get_format("mistral")
        .parse('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}', id_factory=lambda: "mine")
        .message
    )
    assert message["tool_calls"][0]["id"] == "mine"
