"""Tools and call arguments written as ``tojson(ensure_ascii=True)`` writes them
(``ToolsBlock.ascii``, ``JsonCalls.ascii``): rendered escaped, parsed back whole, and the
exported Jinja template writes the same text."""

from __future__ import annotations

import json
from typing import Any

from pawlette.declare import (
    Frame,
    JsonCalls,
    Layout,
    Marker,
    Results,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)
from pawlette.export.jinja import export_jinja

END = Marker("<|end|>")


def _layout(ascii: bool) -> Layout:
    def turn(role: str) -> Frame:
        return Frame(open=fence(Marker(f"<|{role}|>")), end=fence(END), after=fence("\n"))

    return Layout(
        name=f"ascii-{ascii}",
        summary="tools and calls as JSON, non-ASCII escaped or kept",
        frames={
            **{role: turn(role) for role in ("system", "user", "assistant")},
            "tool": turn("r"),
        },
        concepts=(
            SystemPrompt(),
            ToolsBlock(
                place="system", open=fence("<tools>\n"), close=fence("</tools>"), ascii=ascii
            ),
            JsonCalls(
                open=fence("<call>"), close=fence("</call>"), separator=fence("\n"), ascii=ascii
            ),
            Results(),
        ),
    )


TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Météo — 天气",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
ARGUMENTS = {"city": "Zürich 北京"}
REQUEST: dict[str, Any] = {
    "tools": [TOOL],
    "messages": [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_0",
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": json.dumps(ARGUMENTS, ensure_ascii=False),
                    },
                }
            ],
        },
    ],
}


def test_escaped_json_is_written_and_read_back() -> None:
    fmt = declare(_layout(True))
    text = fmt.render(REQUEST).text
    assert json.dumps(TOOL) in text
    assert '{"name": "get_weather", "arguments": {"city": "Z\\u00fcrich \\u5317\\u4eac"}}' in text
    assert "Zürich" not in text and "Météo" not in text
    turn = text[text.index("<|assistant|>") + len("<|assistant|>") :]
    message = fmt.parse(turn).message
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == ARGUMENTS


def test_kept_json_by_default() -> None:
    text = declare(_layout(False)).render(REQUEST).text
    assert json.dumps(TOOL, ensure_ascii=False) in text and "Zürich 北京" in text


def test_the_exported_template_escapes_as_the_writer() -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    fmt = declare(_layout(True))
    messages = [dict(message) for message in REQUEST["messages"]]
    messages[1] = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": ARGUMENTS}}
        ],
    }
    rendered, _ = render_jinja_template(
        [messages], tools=[TOOL], chat_template=export_jinja(fmt), add_generation_prompt=False
    )
    assert rendered[0] == fmt.render(REQUEST).text
