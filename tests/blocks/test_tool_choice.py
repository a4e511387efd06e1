"""A hostile ``tool_choice`` is refused with a short message, never a RecursionError or an
error as long as the value (found by the audit: a value nested 100,000 deep raised
RecursionError from ``repr``, a 1 MB string came back whole in the message)."""

from __future__ import annotations

from typing import Any

import pytest

import pawlette


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"function": value}
    return value


@pytest.mark.parametrize(
    "tool_choice",
    [nested(100_000), "x" * 1_000_000, ["required"] * 100_000, {"type": "function"}],
    ids=["deep", "long", "wide", "no-name"],
)
@pytest.mark.parametrize("name", ["breeze", "pcml", "chatglm3"])
def test_a_hostile_tool_choice_is_a_short_request_error(tool_choice: object, name: str) -> None:
    with pytest.raises(pawlette.RequestError) as error:
        pawlette.get_format(name).forced_prefix(tool_choice)
    message = str(error.value)
    assert message.startswith("tool_choice: found ") and len(message) < 400


def test_a_named_function_that_is_not_a_tool_is_quoted_short() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    choice = {"type": "function", "function": {"name": "g" * 100_000}}
    with pytest.raises(pawlette.RequestError) as error:
        pawlette.get_format("breeze").forced_prefix(choice, tools)
    message = str(error.value)
    assert message.startswith("tool_choice.function.name: found 'ggg") and len(message) < 400
