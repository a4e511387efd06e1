"""Calls inferred from real templates: how their arguments are written."""

from __future__ import annotations

from pawlette.declare import JsonCalls

from .reka import reka


def test_arguments_escaped_as_the_template_escapes_them() -> None:
    """Reka Edge writes arguments with ``tojson(ensure_ascii=True)``: so does its format."""
    inference = reka()
    layout, fmt = inference.layout, inference.format
    assert layout is not None and fmt is not None
    (calls,) = [concept for concept in layout.concepts if isinstance(concept, JsonCalls)]
    assert calls.ascii
    request = {
        "tools": [
            {
                "type": "function",
                "function": {"name": "f", "parameters": {"type": "object", "properties": {}}},
            }
        ],
        "messages": [
            {"role": "user", "content": "Hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "a",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"x": "é"}'},
                    }
                ],
            },
        ],
    }
    assert '"arguments": {"x": "\\u00e9"}' in fmt.render(request).text
