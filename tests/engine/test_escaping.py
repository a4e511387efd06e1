"""The escape check: marker_scan answers what the marker regex answers, faster."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pawlette
from pawlette.engine.lexer import MarkerScan, escape_text, marker_pattern, marker_scan

ESCAPING = [name for name in pawlette.formats() if pawlette.get_format(name).escape_pattern]


def texts(markers: list[str]) -> st.SearchStrategy[str]:
    """Text with markers, their pieces and their first characters."""
    pieces = st.one_of(
        st.text(max_size=8),
        st.sampled_from(markers),
        st.sampled_from(markers).map(lambda marker: marker[: len(marker) // 2]),
        st.sampled_from(markers).map(lambda marker: marker[1:]),
        st.sampled_from(["\\", "[", "<", "<|", "\n", "|>"]),
    )
    return st.lists(pieces, max_size=8).map("".join)


def markers_of(name: str) -> list[str]:
    """The markers a format escapes: those its grammar reads (checked against its pattern)."""
    fmt = pawlette.get_format(name)
    assert fmt.escape_pattern is not None
    markers = sorted(fmt.grammar.markers)
    assert marker_pattern(markers).pattern == fmt.escape_pattern.pattern
    return markers


def test_escaping_formats_are_checked() -> None:
    assert {"pcml", "omni"} <= set(ESCAPING)


@pytest.mark.parametrize("name", ESCAPING)
def test_the_scan_reads_back_the_formats_markers(name: str) -> None:
    pattern = pawlette.get_format(name).escape_pattern
    assert pattern is not None
    for marker in markers_of(name):
        assert marker_scan(pattern)(f"a{marker}b")


@pytest.mark.parametrize("name", ESCAPING)
@given(data=st.data())
def test_the_scan_agrees_with_the_regex(name: str, data: st.DataObject) -> None:
    pattern = pawlette.get_format(name).escape_pattern
    assert pattern is not None
    text = data.draw(texts(markers_of(name)))
    assert marker_scan(pattern)(text) is (pattern.search(text) is not None)
    assert MarkerScan(markers_of(name)).holds_marker(text) is (pattern.search(text) is not None)


@given(text=texts(["[A]", "[/A]", "\n<c>", "<c>", "<|x|>", "\\[q]", "[a]"]), before=st.booleans())
def test_escape_text_is_unchanged_by_the_scan(text: str, before: bool) -> None:
    markers = ["[A]", "[/A]", "\n<c>", "<c>", "<|x|>", "\\[q]"]
    ours = marker_pattern(markers)
    foreign = re.compile(ours.pattern + "|(?!)")  # the same markers, not made by marker_pattern
    ignoring_case = re.compile(ours.pattern, re.IGNORECASE)  # our source, other flags
    assert marker_scan(ignoring_case)(text) is (ignoring_case.search(text) is not None)
    assert escape_text(text, ours, before_marker=before) == escape_text(
        text, foreign, before_marker=before
    )
    assert marker_scan(foreign)(text) is (foreign.search(text) is not None)
