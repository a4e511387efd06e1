"""The JSON call readers' contract (README, "Contracts", rules 1 and 2) for what ``json``
itself lets through: a number beyond a double's range (``1e400``, which Python reads as
infinity) and an empty name are no call, in every JSON-call format, whole, at every split,
held and with live arguments, small and big (the big-call paths check the arguments as they
come, without decoding them)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import pawlette
from pawlette import ParseError, ParseWarning
from pawlette.engine.fold import fold, merge_assistant
from pawlette.openai import message_to_openai

from ..helpers import feed_in_pieces

NUMBERS = [
    "1e400",
    "-1e400",
    "1E+999",
    "1" * 400 + "e10",  # a 400-digit mantissa with an exponent
    "1" + "0" * 400 + ".5",  # 401 digits before a fraction: a float, beyond range
]
SPLITS = [[1], [2, 3], [7], []]  # [] : the whole text in one feed
BIG = "x" * 70_000  # past CallText.SPLIT_AT and ObjectText's check step: the big-call paths


def _call(name: str, arguments: str, function: str = "f") -> str:
    """One call in ``name``'s own writing, with ``arguments`` as written (no turn end)."""
    fn = json.dumps(function)
    if name == "pcml":
        return f'<call>{{"id": "c1", "name": {fn}, "arguments": {arguments}}}</call>'
    if name == "chatml":
        return f'<tool_call>\n{{"name": {fn}, "arguments": {arguments}}}\n</tool_call>'
    if name == "llama3":
        return f'{{"name": {fn}, "parameters": {arguments}}}'
    assert name == "omni"
    return f"<|FUNCTION_START|>{function}<|FUNCTION_ARGS|>{arguments}<|FUNCTION_RETURN|>"


def _folded(fmt: pawlette.Format, text: str, sizes: list[int], live: bool) -> Any:
    events = feed_in_pieces(fmt, text, sizes, conversation=False, stream_arguments=live)
    result = fold(events, fmt.grammar.fields)
    message = message_to_openai(merge_assistant(result.messages))
    return message, [(w.offset, w.message, w.text) for w in result.warnings]


def _assert_no_call(name: str, call: str, found: str) -> None:
    fmt = pawlette.get_format(name)
    whole = fmt.parse(call)
    assert whole.message == {"role": "assistant", "content": call}
    assert whole.finish_reason == "stop"
    (warning,) = whole.warnings
    assert isinstance(warning, ParseWarning)
    assert found in warning.message and warning.text == call
    expected = (whole.message, [(w.offset, w.message, w.text) for w in whole.warnings])
    for live in (False, True):
        for sizes in SPLITS:
            assert _folded(fmt, call, sizes, live) == expected, (live, sizes)
    with pytest.raises(ParseError, match=re.escape(found)):
        fmt.parse(call, strict=True)


@pytest.mark.parametrize("name", ["pcml", "chatml", "llama3", "omni"])
@pytest.mark.parametrize("number", NUMBERS)
def test_a_number_beyond_a_double_is_no_call(name: str, number: str) -> None:
    for arguments in (
        f'{{"a": {number}}}',
        f'{{"s": "ok", "deep": {{"list": [1, {{"b": {number}}}]}}}}',
    ):
        shown = number if len(number) <= 40 else number[:20]
        _assert_no_call(name, _call(name, arguments), f"the number {shown}")


@pytest.mark.parametrize("name", ["pcml", "chatml", "llama3", "omni"])
@pytest.mark.parametrize("number", ["1e400", "-1E+999"])
def test_a_number_beyond_a_double_is_no_call_in_a_big_call(name: str, number: str) -> None:
    # Big arguments go through the check that reads them as they come (CallText, ObjectText).
    call = _call(name, f'{{"pad": "{BIG}", "a": [{number}]}}')
    fmt = pawlette.get_format(name)
    for live in (False, True):
        for sizes in ([4096], [5000, 3], []):
            message, warnings = _folded(fmt, call, sizes, live)
            assert message == {"role": "assistant", "content": call}
            assert len(warnings) == 1 and f"the number {number}" in warnings[0][1]


@pytest.mark.parametrize("name", ["pcml", "chatml", "llama3", "omni"])
def test_numbers_a_double_holds_stay_valid(name: str) -> None:
    # The edge: tiny numbers underflow to 0 (no infinity), 1.7e308 fits, integers never overflow.
    arguments = '{"a": 1e-400, "b": 1.7e308, "c": -2.5E+307, "d": ' + "9" * 400 + "}"
    fmt = pawlette.get_format(name)
    for text in (_call(name, arguments), _call(name, f'{{"pad": "{BIG}", "v": {arguments}}}')):
        (call,) = fmt.parse(text).message["tool_calls"]
        assert json.loads(call["function"]["arguments"])


@pytest.mark.parametrize("name", ["pcml", "chatml", "llama3"])
def test_an_empty_name_is_no_call(name: str) -> None:
    call = _call(name, '{"a": 1}', function="")
    _assert_no_call(name, call, '"name" is empty (no name)')
    # With live arguments such a call is never started (nothing sent to take back).
    for sizes in SPLITS:
        events = feed_in_pieces(
            pawlette.get_format(name), call, sizes, conversation=False, stream_arguments=True
        )
        assert not [event for event in events if type(event).__name__.startswith("ToolCall")]


@pytest.mark.parametrize("name", ["pcml", "chatml", "llama3", "omni"])
def test_a_name_of_whitespace_is_a_name(name: str) -> None:
    # These formats write any name as text they read back exactly (see the README).
    (call,) = pawlette.get_format(name).parse(_call(name, "{}", " ")).message["tool_calls"]
    assert call["function"]["name"] == " "
