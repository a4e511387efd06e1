"""The real chat templates pawlette's declared formats are compared with: Meta's and Qwen's,
as shipped in llama.cpp's ``models/templates`` inside the pinned llama-cpp-python sdist, run
by transformers' own Jinja renderer."""

from __future__ import annotations

import json
from typing import Any

from ..support.llama_cpp_build import sdist_text


def reference_template(file_name: str) -> str:
    return sdist_text(f"models/templates/{file_name}")


def hugging_face_messages(
    messages: list[dict[str, Any]], *, empty_content: bool = False
) -> list[dict[str, Any]]:
    """OpenAI messages as Hugging Face callers pass them: arguments parsed, no None values
    (``empty_content``: an assistant message with calls and no text gets ``""``, which
    Qwen3's template needs)."""
    result = []
    for message in messages:
        if empty_content and message.get("content") is None:
            message = {**message, "content": ""}
        message = {key: value for key, value in message.items() if value is not None}
        if message.get("tool_calls"):
            message["tool_calls"] = [
                {
                    **call,
                    "function": {
                        **call["function"],
                        "arguments": json.loads(call["function"]["arguments"]),
                    },
                }
                for call in message["tool_calls"]
            ]
        result.append(message)
    return result


def render_reference(
    file_name: str,
    messages: list[dict[str, Any]],
    tools: Any,
    add_generation_prompt: bool,
    **variables: Any,
) -> str:
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, _ = render_jinja_template(
        [messages],
        tools=tools or None,
        chat_template=reference_template(file_name),
        add_generation_prompt=add_generation_prompt,
        **variables,
    )
    return rendered[0]
