"""MRPromptV3's checks (breeze's ``check_conversations``) quote the values they refuse short:
an argument of 100,000 characters came back whole in the message (found by the audit)."""

from __future__ import annotations

import json

import pytest

import pawlette

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather.",
            "parameters": {
                "type": "object",
                "properties": {
                    "unit": {
                        "type": "string",
                        "description": "The unit.",
                        "enum": ["celsius", "fahrenheit"],
                    }
                },
            },
        },
    }
]


def test_a_long_refused_argument_is_quoted_short() -> None:
    checked = pawlette.get_format("breeze").with_options(check_conversations=True)
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps({"unit": "k" * 100_000})},
    }
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]
    with pytest.raises(pawlette.RequestError) as error:
        checked.render({"messages": messages, "tools": TOOLS})
    message = str(error.value)
    assert "incorrect value for 'unit': 'kkk" in message and len(message) < 600


def test_a_long_refused_default_is_quoted_short() -> None:
    checked = pawlette.get_format("breeze").with_options(check_conversations=True)
    tools = json.loads(json.dumps(TOOLS))
    tools[0]["function"]["parameters"]["properties"]["unit"]["default"] = ["d" * 100_000]
    with pytest.raises(pawlette.RequestError) as error:
        checked.render({"messages": [{"role": "user", "content": "x"}], "tools": tools})
    assert "default" in str(error.value) and len(str(error.value)) < 600
