"""The tools block as one Python list (:mod:`pawlette.legacy.python_tools`): a kept listing
is what the codec writes, and values that look alike are never taken for one another."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.codecs.python_literals import python_literal
from pawlette.legacy.python_tools import listing


class Text(str):
    def __str__(self) -> str:
        return "not the text"


def written(definitions: list[Any], quote: Any) -> tuple[str, str]:
    try:
        return ("text", listing(definitions, quote))
    except (TypeError, ValueError) as error:
        return (type(error).__name__, str(error))


def expected(definitions: list[Any], quote: Any) -> tuple[str, str]:
    try:
        return ("text", python_literal(definitions, quote=quote, path="tools"))
    except (TypeError, ValueError) as error:
        return (type(error).__name__, str(error))


values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.floats() | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=3)
        | st.lists(children, max_size=2).map(tuple)
        | st.dictionaries(st.text(max_size=2) | st.integers(0, 2), children, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=300)
@given(
    st.lists(st.dictionaries(st.text(max_size=3), values, max_size=3), max_size=3),
    st.sampled_from(["'", '"', "repr"]),
)
def test_a_kept_listing_is_what_the_codec_writes(definitions: list[Any], quote: Any) -> None:
    assert written(definitions, quote) == expected(definitions, quote)
    assert written(definitions, quote) == expected(definitions, quote)  # kept


@pytest.mark.parametrize(
    "alike",
    [
        [[{"a": 1}], [{"a": True}], [{"a": 1.0}]],
        [[{"k": {"1": "x"}}], [{"k": {1: "x"}}]],
        [[{"k": "x"}], [{"k": Text("x")}]],
        [[{"k": [1, 2]}], [{"k": (1, 2)}]],
    ],
)
def test_values_that_look_alike_are_each_written_as_themselves(alike: list[Any]) -> None:
    for quote in ("'", "repr"):
        for _ in range(2):
            for definitions in alike:
                assert written(definitions, quote) == expected(definitions, quote)
