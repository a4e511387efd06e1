"""A reasoning block's ``trim`` (Qwen3's, MiniCPM's, Ling 3.0's ``"\\n"``): reasoning it empties
is written as an empty block, which reads back as no reasoning, and text it empties beside
calls reads back as none; the render records the trim as a loss.  Found by a random run of
the property tests (MiniCPM, ``reasoning_content="\\n"``): the shared model of what a
completion reads back as expected an empty reasoning text."""

from __future__ import annotations

from typing import Any

import pytest

import pawlette
from bench.registered import every_format
from pawlette import declare
from pawlette.declare import layout_of
from tests.declare.conversations import normalise_completion
from tests.helpers import completion_text


def _trimming() -> list[str]:
    names = []
    for name in every_format():
        layout = layout_of(pawlette.get_format(name))
        concept = layout.concept(declare.Reasoning) if layout is not None else None
        if concept is not None and concept.trim and concept.keep != "none":
            names.append(name)
    return names


TRIMMING = _trimming()
CALL = {"id": "call_0", "type": "function", "function": {"name": "now", "arguments": "{}"}}


def test_formats_that_trim_reasoning_are_found() -> None:
    assert {"chatml", "minicpm", "bailing"} <= set(TRIMMING)


@pytest.mark.parametrize("name", TRIMMING)
@pytest.mark.parametrize(
    "message",
    [
        {"role": "assistant", "content": "0", "reasoning_content": "\n"},
        {"role": "assistant", "content": "\n", "reasoning_content": "0", "tool_calls": [CALL]},
    ],
    ids=["reasoning emptied", "text beside calls emptied"],
)
def test_what_a_trim_empties_reads_back_as_none(name: str, message: dict[str, Any]) -> None:
    fmt = pawlette.get_format(name)
    tools = [{"type": "function", "function": {"name": "now", "parameters": {}}}]
    request = {"messages": [{"role": "user", "content": "0"}, message], "tools": tools}
    whole = fmt.render(request)
    read = fmt.parse(completion_text(fmt, request, 1), strict=True).message
    expected = normalise_completion(fmt, message)
    for call in (*read.get("tool_calls", ()), *expected.get("tool_calls", ())):
        call["id"] = "*"  # (a format that writes no ids gives each call a new one)
    assert read == expected
    assert any(loss.startswith("messages[1].") for loss in whole.losses), whole.losses
