"""``JsonCalls.close_optional`` and ``JsonCallList.close_optional``: the end of the turn may
replace the close, so a call (a list) whose close never comes is still read when its JSON is
whole; without it, it is content, with a warning."""

from __future__ import annotations

from pawlette.declare import (
    Concept,
    Frame,
    JsonCallList,
    JsonCalls,
    Layout,
    Marker,
    Results,
    SystemPrompt,
    fence,
)
from pawlette.declare import declare as declared
from pawlette.format import Format

END = Marker("<|end|>")


def _format(close_optional: bool, listed: bool = False) -> Format:
    def turn(role: str) -> Frame:
        return Frame(open=fence(Marker(f"<|{role}|>")), end=fence(END), after=fence("\n"))

    calls: Concept = JsonCalls(
        open=fence(Marker("<call>")), close=fence(Marker("</call>")), close_optional=close_optional
    )
    if listed:
        calls = JsonCallList(
            open=fence(Marker("<call>")),
            close=fence(Marker("</call>")),
            close_optional=close_optional,
        )
    return declared(
        Layout(
            name=f"close-optional-{close_optional}-{listed}",
            summary="calls whose close the end of the turn may replace, or not",
            frames={
                **{role: turn(role) for role in ("system", "user", "assistant")},
                "tool": turn("r"),
            },
            concepts=(
                SystemPrompt(),
                calls,
                Results(),
            ),
        )
    )


UNCLOSED = '<call>{"name": "get_weather", "arguments": {"city": "Paris"}}<|end|>'


def test_a_call_the_turn_ends_in_is_a_call_when_the_close_is_optional() -> None:
    parsed = _format(True).parse(UNCLOSED)
    (call,) = parsed.message["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert not parsed.warnings


def test_a_call_the_turn_ends_in_is_content_when_the_close_is_required() -> None:
    parsed = _format(False).parse(UNCLOSED)
    assert not parsed.message.get("tool_calls")
    assert "get_weather" in parsed.message["content"]
    assert parsed.warnings


def test_a_closed_call_reads_alike_either_way() -> None:
    closed = '<call>{"name": "get_weather", "arguments": {}}</call><|end|>'
    for close_optional in (True, False):
        (call,) = _format(close_optional).parse(closed).message["tool_calls"]
        assert call["function"]["name"] == "get_weather"


def test_a_call_list_the_turn_ends_in_is_read_when_its_close_is_optional() -> None:
    unclosed = '<call>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|end|>'
    (call,) = _format(True, listed=True).parse(unclosed).message["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    required = _format(False, listed=True).parse(unclosed)
    assert not required.message.get("tool_calls") and required.warnings
