"""The issue's examples of malformed calls, in every format: no call, the text once as
content, one warning, ``tool_calls`` only with a valid call, ``length`` kept, strict raises."""

from __future__ import annotations

import pytest

import pawlette
from pawlette import ParseError

DEEP = "[" * 1000 + "]" * 1000
CASES = [
    ("pcml", '<call>{"id": "c1", "name": "f", "arguments": {"a": 1</call>', "<end>"),
    ("pcml", '<call>{"id": "c1", "name": "f", "arguments": {"a": tru}}</call>', "<end>"),
    ("pcml", '<call>{"\n"', ""),
    ("pcml", '<call>{"\t": 1, "name": "f", "arguments": {}}</call>', "<end>"),
    ("pcml", '<call>{"name": "f", "arguments": {"a": ' + DEEP + "}}</call>", "<end>"),
    ("pcml", '<call>{"name": "f", "arguments": {"a": NaN}}</call>', "<end>"),
    ("pcml", '<call>{"name": "f", "arguments": {"a": 1}, "arguments": {"b": 2}}</call>', ""),
    ("omni", '<|FUNCTION_START|>f<|FUNCTION_ARGS|>{"a": tru}<|FUNCTION_RETURN|>', ""),
    ("omni", "<|FUNCTION_START|>f<|FUNCTION_ARGS|>{" + f'"a": {DEEP}' + "}", ""),
    ("breeze", "<|use_tool|>[f(a=1, b=g(2))]", "<|eot_id|>"),
    ("breeze", "<|use_tool|>[add(1, 2, c=3)]", "<|eot_id|>"),
    ("breeze", '<|use_tool|>[get_weather(city="Taipei', ""),
    ("breeze", "<|use_tool|>[]", "<|eot_id|>"),
    ("chatglm3", "f\n```python\ntool_call(a=1, b=g(2))\n```", "<|observation|>"),
    ("chatglm3", "f\n```python\ntool_call(1, a=2)\n```", "<|observation|>"),
    ("chatglm3", "g\n```python\n\n```", "<|observation|>"),
    ("chatglm3", "interpreter\n```python\nprint(1)", ""),
]


def _expected_content(name: str, call: str) -> str:
    if name == "breeze":  # the decision token is not the call's text
        return call.removeprefix("<|use_tool|>")
    return call


@pytest.mark.parametrize(("name", "call", "stop"), CASES)
@pytest.mark.parametrize("finish_reason", [None, "length"])
def test_a_malformed_call_is_content_once(
    name: str, call: str, stop: str, finish_reason: str | None
) -> None:
    fmt = pawlette.get_format(name)
    result = fmt.parse(call + stop, finish_reason=finish_reason)
    assert result.message == {"role": "assistant", "content": _expected_content(name, call)}
    assert result.finish_reason == (finish_reason or "stop")
    assert len(result.warnings) == 1
    with pytest.raises(ParseError):
        fmt.parse(call + stop, strict=True)


def test_calls_before_a_malformed_one_in_a_list_stay() -> None:
    breeze = pawlette.get_format("breeze")
    result = breeze.parse("<|use_tool|>[f(a=1), g(b=h(2))]<|eot_id|>")
    (call,) = result.message["tool_calls"]
    assert call["function"] == {"name": "f", "arguments": '{"a": 1}'}
    assert result.message["content"] == ", g(b=h(2))]"
    assert result.finish_reason == "tool_calls"


@pytest.mark.parametrize("pieces", [["Hi[/AST] x"], list("Hi[/AST] x"), ["Hi[/AST]", " ", "x"]])
def test_warning_text_does_not_depend_on_the_split(pieces: list[str]) -> None:
    parser = pawlette.get_format("pcml").parser()
    events = [event for piece in pieces for event in parser.feed(piece)] + parser.finish()
    warnings = [event for event in events if isinstance(event, pawlette.ParseWarning)]
    assert [(w.offset, w.text) for w in warnings] == [(len("Hi[/AST]"), " x")]
