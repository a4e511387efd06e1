"""The Python-literal grammar's numbers: every number it allows is one the parser reads."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.declare.python_reader import parse_python_literal
from pawlette.errors import ParseError
from pawlette.export.python_schema import INTEGER_REGEX, NUMBER_REGEX


def read_back(written: str) -> object:
    """The number as a breeze or ChatGLM3 parser reads it (the decoder behind both), through
    the JSON text of the arguments."""
    value = parse_python_literal(written)
    assert isinstance(value, (int, float))
    assert math.isfinite(value)
    assert json.loads(json.dumps(value)) == value
    return value


@settings(max_examples=300, deadline=None)
@given(st.from_regex(NUMBER_REGEX, fullmatch=True))
def test_every_sampled_number_parses_back(written: str) -> None:
    read_back(written)


@settings(max_examples=100, deadline=None)
@given(st.from_regex(INTEGER_REGEX, fullmatch=True))
def test_every_sampled_integer_parses_back_as_itself(written: str) -> None:
    assert read_back(written) == int(written)


@pytest.mark.parametrize(
    "written",
    [
        "9" * 200 + "." + "9" * 50 + "e99",  # the largest the grammar allows
        "-" + "9" * 200 + "e+99",
        "0." + "0" * 400 + "1e-99",  # underflows to 0.0: still a number
        "9" * 200,
    ],
)
def test_the_grammar_s_extremes_parse_back(written: str) -> None:
    assert re.fullmatch(NUMBER_REGEX, written)
    read_back(written)


@pytest.mark.parametrize("written", ["1e0111000", "1e309", "1" + "0" * 4300])
def test_numbers_the_parser_refuses_are_outside_the_grammar(written: str) -> None:
    with pytest.raises(ParseError):
        parse_python_literal(written)
    assert re.fullmatch(NUMBER_REGEX, written) is None
