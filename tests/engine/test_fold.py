"""``engine/fold.py``: a turn that holds a tools block and nothing else is no message; one
with reasoning or calls beside the block is one (found by ``bench/fuzz.py`` on
``glm:4.7-kept-thinking``: the reasoning before a system turn's tools preamble was lost)."""

from __future__ import annotations

import pawlette
from pawlette.engine.fold import fold
from pawlette.types import (
    MessageEnd,
    MessageStart,
    ReasoningDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolsDeclared,
)


def test_a_turn_of_only_a_tools_block_is_no_message() -> None:
    events = [MessageStart("system"), ToolsDeclared(()), MessageEnd("stop")]
    assert fold(events).messages == []


def test_reasoning_beside_a_tools_block_is_kept() -> None:
    events = [
        MessageStart("assistant"),
        ReasoningDelta(" Q1Z "),
        ToolsDeclared(()),
        MessageEnd("stop"),
    ]
    (message,) = fold(events).messages
    assert message.reasoning == " Q1Z "


def test_a_call_beside_a_tools_block_is_kept() -> None:
    events = [
        MessageStart("assistant"),
        ToolCallStart(0, "c1", "f"),
        ToolCallDelta(0, "{}"),
        ToolCallEnd(0),
        ToolsDeclared(()),
        MessageEnd("tool_calls"),
    ]
    (message,) = fold(events).messages
    assert [call.name for call in message.tool_calls or ()] == ["f"]


def test_glm_reasoning_before_a_system_turns_tools_preamble_is_kept() -> None:
    preamble = (
        "<|system|>\n# Tools\n\nYou may call one or more functions to assist with the user "
        "query.\n\nYou are provided with function signatures within <tools></tools> XML "
        "tags:\n<tools>\n"
    )
    for name in ("glm:4.7", "glm:4.7-kept-thinking"):
        parsed = pawlette.get_format(name).parse(" Q1Z " + preamble)
        assert parsed.message.get("reasoning_content") == " Q1Z ", name
