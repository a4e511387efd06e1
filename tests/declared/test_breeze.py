"""Breeze as declared (``pawlette.formats.breeze``) in each of its option sets.

Its golden files (``tests/test_golden.py``), MRPromptV3's recorded prompts and checks and the
format's behaviours (``tests/formats/test_breeze.py``), its template (``tests/export``) and its
grammar are checked for the registered format; here, on conversations of
``tests/strategies/breeze.py`` (text, images, boxes, parallel calls, results in any order,
tools) in MRPromptV3's training and inference modes, without BOS, with another default system
text and with ``check_conversations``: what it writes reads back to what writes the same text
(strict and lenient alike, without warnings; an empty system text after the tools reads as
none), and the last assistant turn read as a
completion is the message the conversation's parse holds.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from hypothesis import example, given, settings

import pawlette
from pawlette.errors import PawletteError

from ..helpers import sequential_ids
from ..strategies import breeze as strategy

OPTIONS: list[dict[str, Any]] = [
    {},
    {"today": datetime.date(2024, 7, 26)},
    {"today": "3 Jan 2025", "knowledge_cutoff": "Dec 2024", "begin_of_text": False},
    {"default_system": "Be brief."},
    {"check_conversations": True},
]


TWO_EMPTY_SYSTEMS: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": ""},
        {"role": "system", "content": ""},
        {"role": "user", "content": "hi"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {"name": "f", "description": "d", "parameters": {"type": "object"}},
        }
    ],
}


@pytest.mark.parametrize("options", OPTIONS, ids=lambda options: ",".join(options) or "default")
@settings(max_examples=25)
@given(request=strategy.conversations())
@example(request=TWO_EMPTY_SYSTEMS)  # (found by a random run: the first alone is the loss)
def test_what_it_writes_reads_back_to_the_same_text(
    options: dict[str, Any], request: dict[str, Any]
) -> None:
    breeze = pawlette.get_format("breeze").with_options(**options)
    try:
        text = breeze.render(request).text
    except PawletteError:
        assert options.get("check_conversations")  # only MRPromptV3's checks refuse
        return
    strict = breeze.parse_conversation(text, strict=True, id_factory=sequential_ids())
    lenient = breeze.parse_conversation(text, id_factory=sequential_ids())
    assert not lenient.warnings
    assert lenient.to_request() == strict.to_request()
    read = strict.to_request()
    empty = {"role": "system", "content": ""}
    if _leading(request["messages"], empty) == _leading(read["messages"], empty) + 1:
        # The one loss (the strategy's ``normalise`` names it): an empty system text after
        # the tools is a turn that only holds the tools, read as no system message (more
        # empty system messages after it are read as they are).
        read["messages"].insert(0, empty)
    assert breeze.render(read).text == text
    messages, tools = read["messages"], read.get("tools")
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=None)
    if last is None:
        return
    prompt = breeze.render(messages[:last], tools, add_generation_prompt=True).text
    completion = breeze.render(messages[: last + 1], tools).text[len(prompt) :]
    offered = {tool["function"]["name"] for tool in tools or []}
    called = [call["function"]["name"] for call in messages[last].get("tool_calls") or []]
    unknown = [name for name in called if name not in offered]
    parsed = breeze.parse(completion, tools=tools)
    if tools and unknown:
        # A call to a tool the request does not offer is returned as text with a warning
        # naming it; read without the tools, the same completion is the message again.
        assert f"no tool named {unknown[0]!r}" in parsed.warnings[0].message
        parsed = breeze.parse(completion)
    assert without_ids(parsed.message) == without_ids(messages[last])


def _leading(messages: list[dict[str, Any]], message: dict[str, Any]) -> int:
    """How many of ``messages`` are ``message`` before any other."""
    count = 0
    while count < len(messages) and messages[count] == message:
        count += 1
    return count


def without_ids(message: dict[str, Any]) -> dict[str, Any]:
    """A message without None values and call ids (numbered per parse: never written)."""
    kept = {key: value for key, value in message.items() if value is not None}
    if "tool_calls" in kept:
        kept["tool_calls"] = [{**call, "id": None} for call in kept["tool_calls"]]
    return kept


@pytest.mark.parametrize("name", ["breeze", "chatml", "llama3"])
def test_the_template_reads_a_developer_message_as_the_system_message(name: str) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    messages = [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    rendered, _ = render_jinja_template(
        [messages], chat_template=export_jinja(name), add_generation_prompt=True
    )
    written = pawlette.get_format(name).render(messages, add_generation_prompt=True).text
    assert rendered[0] == written
    assert "Be brief." in written


def test_a_json_result_holding_a_lone_surrogate_is_written_as_its_text() -> None:
    # (Its Python literal, '\ud800', is no text a reader takes back: found by a random run.)
    breeze = pawlette.get_format("breeze")
    call = {"id": "id0", "type": "function", "function": {"name": "A", "arguments": "{}"}}
    result = {"role": "tool", "tool_call_id": "id0", "content": '{"\\uD800":0}'}
    request = {
        "messages": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "tool_calls": [call]},
            result,
        ]
    }
    text = breeze.render(request).text
    assert text.endswith("""['{"\\\\uD800":0}']<|eot_id|>""")
    read = breeze.parse_conversation(text, strict=True).to_request()
    assert read["messages"][-1]["content"] == '{"\\uD800":0}'
    assert breeze.render(read).text == text
