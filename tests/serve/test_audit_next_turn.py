"""A served answer's calls, sent back by the client on its next turn (an outside audit of
``pawlette serve`` in front of a real llama.cpp, replayed against the scripted engine)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from .conftest import ServerFactory
from .scenarios import PROMPT, TOOLS
from .upstream import FakeUpstream, Script


@pytest.mark.parametrize("stream", [False, True])
def test_mistral_answer_with_a_call_is_taken_back(
    serve: ServerFactory, upstream: FakeUpstream, stream: bool
) -> None:
    client = serve("mistral").client()
    upstream.push(Script(text='[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}</s>'))
    fields = {"model": "m", "messages": PROMPT, "tools": TOOLS, "tool_choice": "auto"}
    if stream:
        ids = [
            call.id
            for chunk in client.chat.completions.create(**fields, stream=True)  # type: ignore[call-overload]
            for choice in chunk.choices
            for call in choice.delta.tool_calls or []
            if call.id
        ]
    else:
        answer = client.chat.completions.create(**fields)  # type: ignore[call-overload]
        ids = [call.id for call in answer.choices[0].message.tool_calls or []]
    assert len(ids) == 1
    call = {
        "id": ids[0],
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    messages = [
        *PROMPT,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": ids[0], "content": "sunny"},
    ]
    upstream.push(Script(text="Sunny.</s>"))
    try:
        answer = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
    except openai.BadRequestError as refused:
        pytest.fail(f"the next turn was refused: {refused.message}")
    assert answer.choices[0].message.content == "Sunny."


@pytest.mark.parametrize("syntax", ["lark", "gbnf"])
def test_export_grammar_command_serves_mistral(tmp_path: Path, syntax: str) -> None:
    """The export guide's command, for Mistral: a grammar with markers as special tokens (the
    only way a llama.cpp reads them as the tokens the model writes)."""
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    command = ["export", "grammar", "-f", "mistral", "--tools", str(tools)]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pawlette",
            *command,
            "--tool-choice",
            "required",
            "--syntax",
            syntax,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "get_weather" in result.stdout
