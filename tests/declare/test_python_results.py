"""Tool results written as one Python list (:mod:`pawlette.legacy.python_results`)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.blocks.results import result_value
from pawlette.legacy.python_results import written_value


def written_value_by_parsing_twice(content: str) -> Any:
    """What ``written_value`` was: ``result_value``, then JSON strings decoded."""
    value = result_value(content)
    if value is content:
        try:
            decoded = json.loads(content)
        except ValueError:
            return content
        if isinstance(decoded, str):
            return decoded
    return value


JSONISH = [
    *'{}[]":,.-+eE0123456789 \t\n\rtruefalsnulNaIiy\\u\ufeff',
    "25°C, Sunny", "true", "null", "NaN", "Infinity", "1e400", '"a\\u00e9"', '"\\ud800"',
]  # fmt: skip
contents = st.one_of(
    st.lists(st.sampled_from(JSONISH), max_size=8).map("".join),
    st.text(max_size=12),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.text(max_size=3), children, max_size=3)
        ),
        max_leaves=6,
    ).map(json.dumps),
)


@settings(max_examples=500)
@given(contents, st.sampled_from(["", " ", "\n\t ", "\r"]))
def test_written_value_is_the_value_read_by_parsing_twice(content: str, edge: str) -> None:
    for text in (content, edge + content + edge):
        expected = written_value_by_parsing_twice(text)
        found = written_value(text)
        assert type(found) is type(expected)
        assert json.dumps(found) == json.dumps(expected)  # NaN is not equal to itself


def test_written_values() -> None:
    assert written_value("25°C, Sunny") == "25°C, Sunny"
    assert written_value(' {"a": [1, null]} ') == {"a": [1, None]}
    assert written_value('"quoted"') == "quoted"
    assert written_value("12") == 12
    assert written_value("12 apples") == "12 apples"
    assert written_value("NaN") == "NaN"  # not a JSON value: the text
    assert written_value("[1e400]") == "[1e400]"
    assert written_value("\ufeff1") == "\ufeff1"
