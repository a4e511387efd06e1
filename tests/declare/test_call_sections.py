"""A call section's opener (``<｜tool▁calls▁begin｜>``, ``<|tool_calls_section_begin|>``) and
close are never dropped: a section whose first call is given back as content, or that holds
no call, gives its opener back too, and one whose last call is given back gives its close
back with it, whole and streamed alike."""

from __future__ import annotations

import pytest

import pawlette

from ..helpers import feed_in_pieces, folded

DEEPSEEK_CALL = "<｜tool▁call▁begin｜>f<｜tool▁sep｜>"
CASES = {
    "first call unclosed": (
        "deepseek",
        "<｜tool▁calls▁begin｜>" + DEEPSEEK_CALL + '{"a": 1}<｜end▁of▁sentence｜>',
        "<｜tool▁calls▁begin｜>" + DEEPSEEK_CALL + '{"a": 1}',
        0,
    ),
    "second call unclosed": (
        "deepseek",
        "<｜tool▁calls▁begin｜>"
        + DEEPSEEK_CALL
        + '{"a": 1}<｜tool▁call▁end｜>'
        + DEEPSEEK_CALL
        + '{"a": <｜end▁of▁sentence｜>',
        DEEPSEEK_CALL + '{"a": ',
        1,
    ),
    "no call": (
        "deepseek",
        "<｜tool▁calls▁begin｜><｜end▁of▁sentence｜>",
        "<｜tool▁calls▁begin｜>",
        0,
    ),
    "text instead of a call": (
        "deepseek",
        "<｜tool▁calls▁begin｜>hi<｜end▁of▁sentence｜>",
        "<｜tool▁calls▁begin｜>hi",
        0,
    ),
    "solar, first call unclosed (its id first)": (
        "solar",
        '<|tool_calls|><|tool_call:begin|>a1<|tool_call:name|>f<|tool_call:args|>{"a": <|calls|>',
        '<|tool_calls|><|tool_call:begin|>a1<|tool_call:name|>f<|tool_call:args|>{"a": ',
        0,
    ),
    "only call malformed, then the close": (
        "deepseek",
        "<｜tool▁calls▁begin｜>"
        + DEEPSEEK_CALL
        + '{"a": <｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
        "<｜tool▁calls▁begin｜>" + DEEPSEEK_CALL + '{"a": <｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        0,
    ),
    "last call malformed, then the close": (
        "deepseek",
        "<｜tool▁calls▁begin｜>"
        + DEEPSEEK_CALL
        + '{"a": 1}<｜tool▁call▁end｜>'
        + DEEPSEEK_CALL
        + '{"a": <｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
        DEEPSEEK_CALL + '{"a": <｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        1,
    ),
    "first call malformed, the last read: the close is layout": (
        "deepseek",
        "<｜tool▁calls▁begin｜>"
        + DEEPSEEK_CALL
        + '{"a": <｜tool▁call▁end｜>'
        + DEEPSEEK_CALL
        + '{"a": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
        "<｜tool▁calls▁begin｜>" + DEEPSEEK_CALL + '{"a": <｜tool▁call▁end｜>',
        1,
    ),
    "kimi, only call malformed, then the close": (
        "kimi",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0"
        '<|tool_call_argument_begin|>{"a": <|tool_call_end|><|tool_calls_section_end|><|im_end|>',
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0"
        '<|tool_call_argument_begin|>{"a": <|tool_call_end|><|tool_calls_section_end|>',
        0,
    ),
    "kimi, no call": (
        "kimi",
        "<|tool_calls_section_begin|><|im_end|>",
        "<|tool_calls_section_begin|>",
        0,
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_section_opener_is_given_back_with_what_was_not_read(case: str) -> None:
    name, text, content, calls = CASES[case]
    fmt = pawlette.get_format(name)
    completion = fmt.parse(text)
    assert completion.message["content"] == content
    assert len(completion.message.get("tool_calls") or []) == calls
    assert len(completion.warnings) == 1
    whole = folded(fmt, feed_in_pieces(fmt, text, [], conversation=False))
    assert whole == folded(fmt, feed_in_pieces(fmt, text, [1], conversation=False))
    with pytest.raises(pawlette.ParseError):
        fmt.parse(text, strict=True)
