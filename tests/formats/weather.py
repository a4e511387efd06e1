"""A one-tool conversation's pieces, shared by family tests that write rounds by hand (Solar
Open's and Command R7B's): the ``get_weather`` tool and a call to it."""

from __future__ import annotations

import json
from typing import Any

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
TOOLS = [WEATHER]


def weather_call(call_id: str, city: str) -> dict[str, Any]:
    """An OpenAI tool call of ``get_weather`` for ``city``."""
    arguments = json.dumps({"city": city}, ensure_ascii=False)
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments},
    }
