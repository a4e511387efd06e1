"""Results matched with calls by position (``Results`` with no id written): a result given
out of its calls' order, or beyond the last call, is written as given and recorded as a loss,
since a model or a parser reading the text pairs it with another call; a format that writes
the result's id (PCML's headers) loses nothing."""

from __future__ import annotations

from typing import Any

import pytest

import pawlette

TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("f", "g")
]
CALLS = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "call_b", "type": "function", "function": {"name": "g", "arguments": "{}"}},
    ],
}


def _conversation(*answered: str) -> list[dict[str, Any]]:
    results = [{"role": "tool", "tool_call_id": key, "content": f"for {key}"} for key in answered]
    return [{"role": "user", "content": "Both, please."}, CALLS, *results]


@pytest.mark.parametrize("name", ["chatml", "hermes", "glm", "deepseek"])
def test_results_in_their_calls_order_lose_nothing(name: str) -> None:
    rendering = pawlette.get_format(name).render(_conversation("call_a", "call_b"), tools=TOOLS)
    assert not [loss for loss in rendering.losses if "tool_call_id" in loss]


@pytest.mark.parametrize("name", ["chatml", "hermes", "glm", "deepseek"])
def test_results_out_of_order_are_recorded_and_read_back_by_position(name: str) -> None:
    fmt = pawlette.get_format(name)
    rendering = fmt.render(_conversation("call_b", "call_a"), tools=TOOLS)
    paired = [loss for loss in rendering.losses if "tool_call_id" in loss]
    assert paired == [
        "messages[2].tool_call_id: 'call_b' not written: results are matched with calls by "
        "position, and this one is read as the answer to call 0 ('call_a')",
        "messages[3].tool_call_id: 'call_a' not written: results are matched with calls by "
        "position, and this one is read as the answer to call 1 ('call_b')",
    ]
    # What the loss says is what a reader does: the first result comes back as the first call's.
    back = fmt.parse_conversation(rendering.text).messages
    calls = next(message["tool_calls"] for message in back if message.get("tool_calls"))
    results = [message for message in back if message["role"] == "tool"]
    assert results[0]["content"] == "for call_b"
    assert results[0]["tool_call_id"] == calls[0]["id"]


def test_a_result_beyond_the_calls_is_recorded() -> None:
    rendering = pawlette.get_format("chatml").render(
        _conversation("call_a", "call_b", "call_a"), tools=TOOLS
    )
    assert rendering.losses == (
        "messages[4].tool_call_id: 'call_a' not written: results are matched with calls by "
        "position, and this one is read as the answer to no call (there are fewer calls "
        "before it)",
    )


def test_a_format_that_writes_the_results_ids_loses_nothing() -> None:
    fmt = pawlette.get_format("pcml")
    rendering = fmt.render(_conversation("call_b", "call_a"), tools=TOOLS)
    assert rendering.losses == ()
    back = fmt.parse_conversation(rendering.text).messages
    assert [m["tool_call_id"] for m in back if m["role"] == "tool"] == ["call_b", "call_a"]
