"""A model's call whose arguments nest thousands deep, in every format's own call syntax: parse
never raises on model output (Python's ``json`` raises ``RecursionError`` past its stack, and
three readers had let it out); the call is given back as text with a warning, or refused with
``ParseError`` when strict."""

from __future__ import annotations

import json

import pytest

import pawlette

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {"type": "object", "properties": {"x": {"type": "array"}}},
        },
    }
]
DEEP = "[" * 5000 + "]" * 5000
WRITTEN = ('["MARK"]', "['MARK']", '[<|"|>MARK<|"|>]')
"""How the formats write the array ``["MARK"]`` (JSON, a Python literal, Gemma 4's values)."""


def _completion(fmt: pawlette.Format) -> str | None:
    """The assistant turn of one call to ``f`` with ``{"x": ["MARK"]}``, as the format writes
    it after its generation prompt, the array nested 5,000 deep; None for a format that
    writes no calls (a recorded loss)."""
    call = {
        "id": "abcDEF123",  # (of every format's id shape: Mistral's nine letters and digits)
        "type": "function",
        "function": {"name": "f", "arguments": json.dumps({"x": ["MARK"]})},
    }
    user = [{"role": "user", "content": "hi"}]
    answer = {"role": "assistant", "content": None, "tool_calls": [call]}
    prompt = fmt.render({"messages": user, "tools": TOOLS}, add_generation_prompt=True).text
    rendering = fmt.render({"messages": [*user, answer], "tools": TOOLS})
    whole = rendering.text
    shared = 0
    while shared < min(len(prompt), len(whole)) and prompt[shared] == whole[shared]:
        shared += 1
    turn = whole[shared:]
    if "MARK" not in turn:
        assert "messages[1].tool_calls: not written" in rendering.losses, rendering.losses
        return None
    written = next(form for form in WRITTEN if form in turn)
    return turn.replace(written, DEEP)


@pytest.mark.parametrize("name", [*pawlette.formats(), "kimi:k3"])  # (K3: a reader of its own)
def test_arguments_nested_past_the_stack_are_text_not_an_exception(name: str) -> None:
    fmt = pawlette.get_format(name)
    completion = _completion(fmt)
    if completion is None:  # a format without calls (its render says it drops them)
        return
    completion_read = fmt.parse(completion, tools=TOOLS)
    assert not completion_read.message.get("tool_calls"), name
    assert completion_read.warnings, name
    with pytest.raises(pawlette.ParseError):
        fmt.parse(completion, tools=TOOLS, strict=True)
