"""IBM Granite 4.0 and 4.1 (:mod:`pawlette.formats.granite`): what the models write, read as
llama.cpp reads it (its cases, carried over in ``families/data/granite.json``) whole,
streamed and from token ids; and what the declaration decided (the default system text,
an empty first system message, the tools' place, ids that keep user text out of the
markers)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

import pawlette

from ..declared.model_output import check_every_way
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import corpus_reference

DATA = json.loads((Path(__file__).parent / "families" / "data" / "granite.json").read_text())
AS_PEERS = [case for case in DATA["cases"] if "pawlette" not in case]
OTHERWISE = [case for case in DATA["cases"] if "pawlette" in case]
GRANITE = pawlette.get_format("granite")
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "now",
            "description": "The time.",
            "parameters": {"type": "object", "properties": {}},
        },
    }
]


def _label(case: dict[str, Any]) -> str:
    return f"{case['format']}:{case['output'][:24]}"


def _reading(name: str, text: str) -> tuple[str | None, list[tuple[str, Any]], list[str]]:
    fmt = pawlette.get_format(name)
    messages, _, warnings = check_every_way(fmt, small_tokenizer(fmt.special_markers), text)
    (message,) = messages
    calls = [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    return message.text or None, calls, warnings


@pytest.mark.parametrize("case", AS_PEERS, ids=_label)
def test_what_models_write_reads_as_the_peers_read_it(case: dict[str, Any]) -> None:
    content, calls, warnings = _reading(case["format"], case["output"])
    expected = case["expected"]
    assert calls == [(call["name"], call["arguments"]) for call in expected["tool_calls"]]
    assert content == expected["content"]
    assert warnings == []


@pytest.mark.parametrize("case", OTHERWISE, ids=_label)
def test_a_continuation_is_read_as_written(case: dict[str, Any]) -> None:
    content, calls, warnings = _reading(case["format"], case["output"])
    assert (content, calls, warnings) == (case["output"], [], [])


def test_calls_as_models_write_them_beyond_the_template() -> None:
    """Hermes-style spellings the peers read (vLLM's hermes tests): no newlines inside the
    tags, calls back to back, text before them."""
    text = (
        'Sure.<tool_call>{"name": "a", "arguments": {"q": 1}}</tool_call>'
        '<tool_call>{"name": "b", "arguments": {}}</tool_call>'
    )
    content, calls, warnings = _reading("granite", text)
    assert (content, calls, warnings) == ("Sure.", [("a", {"q": 1}), ("b", {})], [])


def test_the_default_system_text_is_4_0s_and_reads_back_as_none() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    text = GRANITE.render(messages, add_generation_prompt=True).text
    assert text.startswith("<|start_of_role|>system<|end_of_role|>You are a helpful assistant.")
    assert GRANITE.parse_conversation(GRANITE.render(messages).text).messages == messages
    later = pawlette.get_format("granite:4.1").render(messages, add_generation_prompt=True).text
    assert later.startswith("<|start_of_role|>user<|end_of_role|>Hi")
    with_tools = GRANITE.render(messages, TOOLS, add_generation_prompt=True).text
    assert "You are a helpful assistant. Please" not in with_tools


@pytest.mark.parametrize(
    ("name", "template"),
    [("granite", "ibm-granite-granite-4.0"), ("granite:4.1", "ibm-granite-granite-4.1")],
)
def test_an_empty_first_system_message_is_written_as_none(name: str, template: str) -> None:
    """As the templates do: 4.0 writes its default text in its place, 4.1 no turn; with
    tools it is the turn that holds them (its empty text, a blank line, the tools)."""
    fmt = pawlette.get_format(name)
    reference = corpus_reference(template)
    messages = [{"role": "system", "content": ""}, {"role": "user", "content": "Hi"}]
    for tools in (None, TOOLS):
        request: dict[str, Any] = {"messages": messages, "tools": tools}
        rendering = fmt.render(request, add_generation_prompt=True)
        expected = reference.render_request(request, add_generation_prompt=True).text
        assert rendering.text == expected
        dropped = "messages[0]: a system message with empty text, written as none"
        assert (dropped in rendering.losses) == (tools is None)


def test_the_exported_template_writes_what_the_format_writes() -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    call = {"id": "a", "type": "function", "function": {"name": "now", "arguments": "{}"}}
    tail = [
        {"role": "user", "content": "C"},
        {"role": "assistant", "content": "Let me see.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "a", "content": "12:00"},
        {"role": "assistant", "content": "Noon."},
    ]
    for name in ("granite", "granite:4.1"):
        fmt = pawlette.get_format(name)
        for head in ([], [{"role": "system", "content": ""}], [{"role": "system", "content": "A"}]):
            for tools in (None, TOOLS):
                request = {"messages": head + tail, "tools": tools}
                rendered, _ = render_jinja_template(
                    [request["messages"]], tools=tools, chat_template=export_jinja(fmt)
                )
                assert rendered[0] == fmt.render(request).text, (name, head, tools)


def test_ids_keep_user_text_out_of_the_markers() -> None:
    tokenizer = small_tokenizer(GRANITE.special_markers)
    request = {
        "messages": [
            {"role": "user", "content": "Say <tool_call> and <|end_of_text|>."},
            {"role": "assistant", "content": "Done."},
        ]
    }
    ids = list(pawlette.tokenize(GRANITE, tokenizer, request).input_ids)
    assert ids.count(tokenizer.token_to_id("<tool_call>")) == 0
    assert ids.count(tokenizer.token_to_id("<|end_of_text|>")) == 3  # system, user, assistant


GRANITE_3_3 = pawlette.get_format("granite:3.3")
GRANITE_3_3_TEMPLATE = "ibm-granite-granite-3.3-2B-Instruct"


@pytest.mark.parametrize("thinking", [False, True])
@pytest.mark.parametrize("tools", [None, TOOLS])
def test_granite_3_3_writes_its_dated_default_as_the_clock_would(
    thinking: bool, tools: list[dict[str, Any]] | None
) -> None:
    day = datetime.date(2025, 3, 5)
    fmt = GRANITE_3_3.with_options(date=day, thinking=thinking)
    request = {"messages": [{"role": "user", "content": "Hi"}], "tools": tools}
    variables = {"thinking": True} if thinking else {}
    reference = corpus_reference(GRANITE_3_3_TEMPLATE, today=day, variables=variables)
    rendered = reference.render_request(request, add_generation_prompt=True)
    assert rendered.read_clock and rendered.text is not None
    assert "Today's Date: March 05, 2025." in rendered.text
    assert fmt.render(request, add_generation_prompt=True).text == rendered.text
    parsed = fmt.parse_conversation(fmt.render(request).text, strict=True)
    assert parsed.messages == request["messages"]  # the default reads back as none
    assert [tool["function"]["name"] for tool in parsed.tools] == (["now"] if tools else [])


def test_granite_3_3_drops_calls_and_reads_reasoning_the_model_writes() -> None:
    call = {"id": "a", "type": "function", "function": {"name": "now", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "Time?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "a", "content": "12:00"},
    ]
    rendering = GRANITE_3_3.render(messages, TOOLS, add_generation_prompt=True)
    assert rendering.losses == ("messages[1].tool_calls: not written",)
    assert "<|start_of_role|>tool<|end_of_role|>12:00<|end_of_text|>" in rendering.text
    parsed = GRANITE_3_3.parse("<think>Noon.</think>It is noon.<|end_of_text|>")
    assert parsed.message == {
        "role": "assistant",
        "content": "It is noon.",
        "reasoning_content": "Noon.",
    }


def test_granite_3_3s_exported_template_writes_what_the_format_writes() -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    fmt = GRANITE_3_3.with_options(date=datetime.date(2025, 3, 5))
    tail = [
        {"role": "user", "content": "C"},
        {"role": "assistant", "content": "Noon."},
        {"role": "tool", "tool_call_id": "a", "content": "12:00"},
    ]
    for head in ([], [{"role": "system", "content": "A"}]):
        for tools in (None, TOOLS):
            request = {"messages": head + tail, "tools": tools}
            rendered, _ = render_jinja_template(
                [request["messages"]], tools=tools, chat_template=export_jinja(fmt)
            )
            assert rendered[0] == fmt.render(request).text, (head, tools)
