"""``JsonCalls.close_optional``: the end of the turn may replace a call's close, so a call
whose close never comes is still a call when its object is whole; without it such a call is
content, with a warning."""

from __future__ import annotations

from pawlette.declare import Frame, JsonCalls, Layout, Marker, Results, SystemPrompt, fence
from pawlette.declare import declare as declared
from pawlette.format import Format

END = Marker("<|end|>")


def _format(close_optional: bool) -> Format:
    def turn(role: str) -> Frame:
        return Frame(open=fence(Marker(f"<|{role}|>")), end=fence(END), after=fence("\n"))

    return declared(
        Layout(
            name=f"close-optional-{close_optional}",
            summary="calls whose close the end of the turn may replace, or not",
            frames={
                **{role: turn(role) for role in ("system", "user", "assistant")},
                "tool": turn("r"),
            },
            concepts=(
                SystemPrompt(),
                JsonCalls(
                    open=fence(Marker("<call>")),
                    close=fence(Marker("</call>")),
                    close_optional=close_optional,
                ),
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
