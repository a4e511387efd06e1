"""NamedCalls' arguments reader with live arguments: a call opened with an id an earlier call
of the message holds, then cut off before its close, is no call, so its id is never served
and no warning names it (as in the whole parse).  Found by ``bench/fuzz.py`` on solar."""

from __future__ import annotations

import pawlette
from pawlette.engine.fold import fold

SOLAR_REPEATED_THEN_CUT = (
    "<|tool_calls|>"
    "<|tool_call:begin|>x9<|tool_call:name|>f<|tool_call:args|>{}<|tool_call:end|>"
    "<|tool_call:begin|>x9<|tool_call:name|>f<|tool_call:args|>{"
)


def _warnings(text: str, *, stream_arguments: bool) -> list[str]:
    fmt = pawlette.get_format("solar")
    parser = fmt.parser(stream_arguments=stream_arguments)
    events = parser.feed(text) + parser.finish()
    return [warning.message for warning in fold(events, fmt.grammar.fields).warnings]


def test_a_cut_call_warns_as_in_the_whole_parse_without_live_arguments() -> None:
    whole = [
        warning.message
        for warning in pawlette.get_format("solar").parse(SOLAR_REPEATED_THEN_CUT).warnings
    ]
    assert len(whole) == 1 and "the call is not closed" in whole[0]
    assert _warnings(SOLAR_REPEATED_THEN_CUT, stream_arguments=False) == whole


def test_a_cut_call_with_a_repeated_id_warns_as_in_the_whole_parse_with_live_arguments() -> None:
    whole = [
        warning.message
        for warning in pawlette.get_format("solar").parse(SOLAR_REPEATED_THEN_CUT).warnings
    ]
    assert _warnings(SOLAR_REPEATED_THEN_CUT, stream_arguments=True) == whole
