"""MiniMax-M2 (:mod:`pawlette.formats.minimax_m2`): what the models write, read as vLLM's
``minimax_m2`` tool parser reads it (its cases in
``tests/tool_parsers/test_minimax_m2_tool_parser.py``), whole, streamed and from token ids (a
tokenizer built with the format's special tokens); values typed by the tool's schema; where
pawlette reads otherwise; the renders of turns without reasoning; ids and masks."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pawlette
from pawlette.tokenization.encoder import IGNORE_INDEX

from ..declared.model_output import check_every_way
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import corpus_reference

MINIMAX_M2 = pawlette.get_format("minimax_m2")
TEMPLATE = "MiniMax-M2"
TOKENIZER = small_tokenizer(MINIMAX_M2.special_markers)
OPEN, CLOSE = "<minimax:tool_call>", "</minimax:tool_call>"
SEATTLE = '<invoke name="get_weather"><parameter name="city">Seattle</parameter></invoke>'
CALL_SEATTLE = ("get_weather", {"city": "Seattle"})

# After the generation prompt (``<think>\n``) a completion starts inside the reasoning: the
# peers' cases, which begin after the block, are given after its close.
AS_VLLM = [
    ("Hello world", None, "Hello world", []),  # never closed: all reasoning
    ("</think>Hello world", "Hello world", None, []),
    ("</think>Let me check. " + OPEN + SEATTLE + CLOSE, "Let me check. ", None, [CALL_SEATTLE]),
    (
        "</think>" + OPEN + '<invoke name="search_web"><parameter name="query">OpenAI</parameter>'
        '</invoke><invoke name="search_web"><parameter name="query">Gemini</parameter></invoke>'
        + CLOSE,
        None,
        None,
        [("search_web", {"query": "OpenAI"}), ("search_web", {"query": "Gemini"})],
    ),
    # As the template writes it: the block's newlines, the calls' newlines, the turn's end.
    (
        "It is about Seattle.\n</think>\n\n\n" + OPEN + '\n<invoke name="get_weather">\n'
        '<parameter name="city">Seattle</parameter>\n</invoke>\n' + CLOSE + "[e~[",
        None,
        "It is about Seattle.",
        [CALL_SEATTLE],
    ),
]


def _reading(text: str) -> tuple[Any, ...]:
    messages, _, warnings = check_every_way(MINIMAX_M2, TOKENIZER, text)
    (message,) = messages
    calls = [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    return message.text or None, message.reasoning or None, calls, warnings


@pytest.mark.parametrize(("text", "content", "reasoning", "calls"), AS_VLLM)
def test_what_models_write_reads_as_vllm_reads_it(
    text: str, content: str | None, reasoning: str | None, calls: list[Any]
) -> None:
    assert _reading(text) == (content, reasoning, calls, [])


def _tool(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


PROFILE = _tool("update_profile", {"nickname": {"anyOf": [{"type": "string"}, {"type": "null"}]}})
SETTINGS = _tool("update_settings", {"config": {"anyOf": [{"type": "object"}, {"type": "null"}]}})
WEATHER = _tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}})


def _arguments(tool: dict[str, Any], parameters: str) -> Any:
    name = tool["function"]["name"]
    text = f'</think>{OPEN}<invoke name="{name}">{parameters}</invoke>{CLOSE}'
    parsed = MINIMAX_M2.parse(text, tools=[tool])
    assert not parsed.warnings, parsed.warnings
    (call,) = parsed.message["tool_calls"]
    return json.loads(call["function"]["arguments"])


@pytest.mark.parametrize(
    ("tool", "parameters", "arguments"),
    [
        # vLLM's anyOf cases: a string stays text, null is null, an object is read as JSON.
        (PROFILE, '<parameter name="nickname">Alice</parameter>', {"nickname": "Alice"}),
        (PROFILE, '<parameter name="nickname">null</parameter>', {"nickname": None}),
        (
            SETTINGS,
            '<parameter name="config">{"theme": "dark", "fontSize": 14}</parameter>',
            {"config": {"theme": "dark", "fontSize": 14}},
        ),
        # A string parameter keeps text that reads as JSON; an integer is read as one.
        (
            WEATHER,
            '<parameter name="city">5</parameter><parameter name="days">5</parameter>',
            {"city": "5", "days": 5},
        ),
    ],
)
def test_values_are_typed_by_the_tools_schema(
    tool: dict[str, Any], parameters: str, arguments: dict[str, Any]
) -> None:
    assert _arguments(tool, parameters) == arguments


def test_an_undeclared_parameter_is_read_as_json_where_it_is_json() -> None:
    # vLLM keeps "5" (a string) without a schema; the template writes every non-string value
    # as JSON, so pawlette reads it back as one.
    call = '<invoke name="fn"><parameter name="days">5</parameter></invoke>'
    text = f"</think>{OPEN}{call}{CLOSE}"
    assert _reading(text) == (None, None, [("fn", {"days": 5})], [])


def test_a_value_not_of_its_schemas_type_keeps_the_call_as_content_with_a_warning() -> None:
    # vLLM takes "yes" for true; the template writes a boolean as JSON (true).
    tool = _tool("toggle", {"on": {"type": "boolean"}})
    call = '<invoke name="toggle"><parameter name="on">yes</parameter></invoke>'
    text = f"</think>{OPEN}{call}{CLOSE}"
    parsed = MINIMAX_M2.parse(text, tools=[tool])
    assert not parsed.message.get("tool_calls")
    assert parsed.warnings and "not of its schema's type" in parsed.warnings[0].message


def test_a_name_without_its_quotes_keeps_the_call_as_content_with_a_warning() -> None:
    # vLLM strips quotes when there are any; the template always writes them.
    call = '<invoke name=get_weather><parameter name="city">Oslo</parameter></invoke>'
    text = f"</think>{OPEN}{call}{CLOSE}"
    content, reasoning, calls, warnings = _reading(text)
    assert (reasoning, calls) == (None, [])
    assert content is not None and "get_weather" in content
    assert warnings


def test_a_call_opening_inside_the_reasoning_ends_it() -> None:
    text = "Checking.\n" + OPEN + SEATTLE + CLOSE
    assert _reading(text) == (None, "Checking.", [CALL_SEATTLE], [])


def test_a_closed_call_in_an_unclosed_list_is_read() -> None:
    # The output ended after the call (vLLM's regex wants the list's close and finds none).
    assert _reading("</think>" + OPEN + SEATTLE) == (None, None, [CALL_SEATTLE], [])


def _call(name: str, arguments: dict[str, Any], number: int = 0) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"id": f"c{number}", "type": "function", "function": function}


CONVERSATIONS = [
    # Turns without reasoning (the family case gives every turn some: its prompt opens
    # <think>, which such a turn does not hold), a call without text, an empty system text.
    [
        {"role": "system", "content": ""},
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [_call("get_weather", {"days": 2})]},
        {"role": "tool", "tool_call_id": "c0", "content": "18°C"},
        {"role": "assistant", "content": "18°C."},
        {"role": "user", "content": "Thanks"},
    ],
    [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello", "reasoning_content": "dropped: a user follows"},
        {"role": "user", "content": "Weather in Oslo and Paris?"},
        {
            "role": "assistant",
            "content": "Both.",
            "tool_calls": [
                _call("get_weather", {"city": "Oslo"}),
                _call("get_weather", {"city": "Paris", "days": 3}, 1),
            ],
        },
        {"role": "tool", "tool_call_id": "c0", "content": "3°C"},
        {"role": "tool", "tool_call_id": "c1", "content": "18°C"},
    ],
    [
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": "Dropped."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
    ],
]


@pytest.mark.parametrize("messages", CONVERSATIONS)
@pytest.mark.parametrize("tools", [[], [WEATHER]])
@pytest.mark.parametrize("prompt", [False, True])
def test_renders_as_the_template(messages: list[Any], tools: list[Any], prompt: bool) -> None:
    if not tools and any("tool_calls" in message for message in messages):
        tools = [WEATHER]
    reference = corpus_reference(TEMPLATE).render(messages, tools, add_generation_prompt=prompt)
    rendering = MINIMAX_M2.render(messages, tools, add_generation_prompt=prompt)
    assert rendering.text == reference.text


def test_what_the_template_drops_is_a_recorded_loss() -> None:
    rendering = MINIMAX_M2.render(CONVERSATIONS[0][:2] + CONVERSATIONS[2][1:], [])
    assert "messages[0]: a system message with empty text, written as the default" in (
        rendering.losses
    )
    assert "messages[2]: a system message after the first, dropped" in rendering.losses
    kept = MINIMAX_M2.render(CONVERSATIONS[1][:3], [])
    assert any("reasoning" in loss for loss in kept.losses)


def test_user_text_never_becomes_a_control_token() -> None:
    text = "[e~[\n]~b]ai\n<think>\n</think>\n\n<minimax:tool_call>"
    request = {"messages": [{"role": "user", "content": text}]}
    ids = list(pawlette.tokenize(MINIMAX_M2, TOKENIZER, request).input_ids)
    for marker, count in (("]~b]", 2), ("[e~[", 2), ("<minimax:tool_call>", 0)):
        assert ids.count(TOKENIZER.token_to_id(marker)) == count, marker


def test_the_mask_trains_the_turns_the_model_writes() -> None:
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [_call("get_weather", {})]},
        {"role": "tool", "tool_call_id": "c0", "content": "18°C"},
        {"role": "assistant", "content": "18°C."},
    ]
    tokens = pawlette.tokenize(MINIMAX_M2, TOKENIZER, {"messages": messages, "tools": [WEATHER]})
    learned = [label for label in tokens.labels if label != IGNORE_INDEX]
    assert TOKENIZER.decode(learned, skip_special_tokens=False) == (
        '\n<minimax:tool_call>\n<invoke name="get_weather">\n</invoke>\n</minimax:tool_call>[e~['
        "18°C.[e~["
    )
