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
from pawlette.export import export_jinja
from pawlette.formats.minimax_m2 import DEFAULT_SYSTEM
from pawlette.tokenization.encoder import IGNORE_INDEX

from ..declared.model_output import check_every_way
from ..support.conversations import Conversation, generate_conversations
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import compare_renders, corpus_reference, own_turns

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
    assert "messages[0]: a system message with empty text, written as none" in rendering.losses
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


# ---------------------------------------------------------------------- MiniMax-M3

MINIMAX_M3 = pawlette.get_format("minimax_m2:m3")
TEMPLATE_M3 = "MiniMax-M3"
TOKENIZER_M3 = small_tokenizer(MINIMAX_M3.special_markers)
NS = "]<]minimax[>["


def _order(user_id: int) -> str:
    return f'{NS}<invoke name="create_order">{NS}<user_id>{user_id}{NS}</user_id>{NS}</invoke>'


# vLLM's minimax_m3 cases (tests/tool_parsers/test_minimax_m3_tool_parser.py), read without
# the tools (each leaf typed as JSON where it is JSON): the nested call, with its repeated key.
ORDER = (
    f'{NS}<tool_call>\n{NS}<invoke name="create_order">{NS}<user_id>42{NS}</user_id>'
    f"{NS}<urgent>true{NS}</urgent>{NS}<note>Please leave at front desk.{NS}</note>"
    f"{NS}<shipping>{NS}<city>Singapore{NS}</city>{NS}<zip>18956{NS}</zip>{NS}</shipping>"
    f"{NS}<items>{NS}<item>{NS}<sku>book-001{NS}</sku>{NS}<qty>2{NS}</qty>{NS}</item>"
    f"{NS}<item>{NS}<sku>pen-007{NS}</sku>{NS}<qty>5{NS}</qty>{NS}</item>{NS}</items>"
    f"{NS}<metadata>{NS}<source>mobile{NS}</source>{NS}<campaign>may-launch{NS}</campaign>"
    f"{NS}</metadata>{NS}<duplicate_demo>{NS}<tag>a{NS}</tag>{NS}<tag>b{NS}</tag>"
    f"{NS}</duplicate_demo>{NS}</invoke>\n{NS}</tool_call>"
)
ORDER_ARGUMENTS = {
    "user_id": 42,
    "urgent": True,
    "note": "Please leave at front desk.",
    "shipping": {"city": "Singapore", "zip": 18956},
    "items": [{"sku": "book-001", "qty": 2}, {"sku": "pen-007", "qty": 5}],
    "metadata": {"source": "mobile", "campaign": "may-launch"},
    "duplicate_demo": {"tag": ["a", "b"]},
}
AS_VLLM_M3 = [
    ("plain response", "plain response", None, []),
    (
        "I will create it.\n" + ORDER,
        "I will create it.\n",
        None,
        [("create_order", ORDER_ARGUMENTS)],
    ),
    (
        f"{NS}<tool_call>\n{_order(1)}\n{_order(2)}\n{NS}</tool_call>",
        None,
        None,
        [("create_order", {"user_id": 1}), ("create_order", {"user_id": 2})],
    ),
    # As the template writes a turn: the stand-in close or the block, then the turn's end.
    ("</mm:think>Hello.[e~[", "Hello.", None, []),
    (
        f"<mm:think>Orders.</mm:think>{NS}<tool_call>\n{_order(7)}\n{NS}</tool_call>[e~[",
        None,
        "Orders.",
        [("create_order", {"user_id": 7})],
    ),
]


def _reading_m3(text: str) -> tuple[Any, ...]:
    messages, _, warnings = check_every_way(MINIMAX_M3, TOKENIZER_M3, text)
    (message,) = messages
    calls = [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    return message.text or None, message.reasoning or None, calls, warnings


@pytest.mark.parametrize(("text", "content", "reasoning", "calls"), AS_VLLM_M3)
def test_what_minimax_m3_writes_reads_as_vllm_reads_it(
    text: str, content: str | None, reasoning: str | None, calls: list[Any]
) -> None:
    assert _reading_m3(text) == (content, reasoning, calls, [])


def test_minimax_m3_cut_or_broken_calls_stay_content_with_a_warning() -> None:
    # vLLM's recovery cases: a second call cut short, a close with nothing open.
    cut = f'plain {NS}<tool_call>\n{_order(1)}\n{NS}<invoke name="create_order">{NS}<user_id>2'
    content, _, calls, warnings = _reading_m3(cut)
    assert calls == [("create_order", {"user_id": 1})]
    assert content == f'plain {NS}<invoke name="create_order">{NS}<user_id>2'
    assert warnings
    broken = f"{NS}<tool_call>\n{NS}</user_id> after error"
    content, _, calls, warnings = _reading_m3(broken)
    assert (content, calls) == (broken, [])
    assert warnings
    # The opener cut short: text, and its control token alone is one out of place (as the
    # token id is: every way of reading agrees).
    partial = f"plain {NS}<tool_ca"
    content, _, calls, warnings = _reading_m3(partial)
    assert (content, calls) == (partial, [])
    assert warnings == [NS]


ORDER_TOOL = _tool(
    "create_order",
    {
        "user_id": {"type": "integer"},
        "note": {"type": "string"},
        "shipping": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}},
        },
        "items": {"type": "array", "items": {"type": "string"}},
        "flags": {"type": "object"},
    },
)


def _m3_arguments(parameters: str) -> Any:
    text = f'{NS}<tool_call>\n{NS}<invoke name="create_order">{parameters}{NS}</invoke>\n'
    parsed = MINIMAX_M3.parse(text + f"{NS}</tool_call>", tools=[ORDER_TOOL])
    assert not parsed.warnings, parsed.warnings
    (call,) = parsed.message["tool_calls"]
    return json.loads(call["function"]["arguments"])


def _tag(key: str, value: str) -> str:
    return f"{NS}<{key}>{value}{NS}</{key}>"


@pytest.mark.parametrize(
    ("parameters", "arguments"),
    [
        # A string keeps text that reads as JSON; a nested integer is read as one.
        (_tag("note", "42") + _tag("user_id", "42"), {"note": "42", "user_id": 42}),
        (
            _tag("shipping", _tag("zip", "7") + _tag("city", "7")),
            {"shipping": {"zip": 7, "city": "7"}},
        ),
        # An array of strings keeps each item's text; an empty tag is its schema's empty value.
        (_tag("items", _tag("item", "1") + _tag("item", "b")), {"items": ["1", "b"]}),
        (
            _tag("items", "") + _tag("shipping", "") + _tag("note", ""),
            {"items": [], "shipping": {}, "note": ""},
        ),
        # An object without properties takes any tags, or JSON text.
        (_tag("flags", _tag("a", "true")), {"flags": {"a": True}}),
        (_tag("flags", '{"a": 1}'), {"flags": {"a": 1}}),
    ],
)
def test_minimax_m3_values_are_typed_by_the_tools_schema(
    parameters: str, arguments: dict[str, Any]
) -> None:
    assert _m3_arguments(parameters) == arguments


def test_minimax_m3_a_value_not_of_its_schemas_type_keeps_the_call_as_content() -> None:
    # vLLM reads "018956" as the integer 18956; the template writes an integer as Python's
    # str writes it, never with a leading zero, and JSON has none.
    text = f'{NS}<tool_call>\n{NS}<invoke name="create_order">{_tag("user_id", "018956")}'
    parsed = MINIMAX_M3.parse(text + f"{NS}</invoke>\n{NS}</tool_call>", tools=[ORDER_TOOL])
    assert not parsed.message.get("tool_calls")
    assert parsed.warnings and "not of its schema's type" in parsed.warnings[0].message


M3_CONVERSATIONS = [
    [
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": "Dropped."},
        {"role": "user", "content": "Order for 42?"},
        {
            "role": "assistant",
            "content": "Creating.",
            "reasoning_content": "kept on every turn",
            "tool_calls": [
                _call(
                    "create_order",
                    {
                        "user_id": 42,
                        "note": None,
                        "shipping": {"city": "Zürich", "zip": None},
                        "items": ["a", None, "b"],
                        "flags": {"fast": True, "score": 2.5, "empty": {}, "none": []},
                    },
                ),
                _call("create_order", {}, 1),
            ],
        },
        {"role": "tool", "tool_call_id": "c0", "content": [{"type": "text", "text": "ok"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Thanks"},
    ],
    [
        {"role": "system", "content": ""},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello", "reasoning_content": ""},
    ],
]


@pytest.mark.parametrize("messages", M3_CONVERSATIONS)
@pytest.mark.parametrize("tools", [[], [ORDER_TOOL]])
@pytest.mark.parametrize("prompt", [False, True])
def test_minimax_m3_renders_as_its_template(
    messages: list[Any], tools: list[Any], prompt: bool
) -> None:
    reference = corpus_reference(TEMPLATE_M3).render(messages, tools, add_generation_prompt=prompt)
    rendering = MINIMAX_M3.render(messages, tools, add_generation_prompt=prompt)
    assert rendering.text == reference.text


def test_minimax_m3_what_its_template_drops_is_a_recorded_loss() -> None:
    rendering = MINIMAX_M3.render(M3_CONVERSATIONS[0], [ORDER_TOOL])
    assert "messages[1]: a system message after the first, dropped" in rendering.losses
    assert (
        "messages[3].tool_calls[0].function.arguments: a null value, not written (the template "
        "leaves it out)" in rendering.losses
    )
    assert not any("reasoning" in loss for loss in rendering.losses)  # kept on every turn


def test_minimax_m3_user_text_never_becomes_a_control_token() -> None:
    text = f"[e~[\n]~b]ai\n</mm:think>{NS}<tool_call>"
    request = {"messages": [{"role": "user", "content": text}]}
    ids = list(pawlette.tokenize(MINIMAX_M3, TOKENIZER_M3, request).input_ids)
    for marker, count in (("]~b]", 3), ("[e~[", 3), (NS, 0), ("</mm:think>", 0)):
        assert ids.count(TOKENIZER_M3.token_to_id(marker)) == count, marker


def test_minimax_m3_the_mask_trains_the_turns_the_model_writes() -> None:
    messages = [
        {"role": "user", "content": "Order?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("create_order", {"shipping": {"city": "Oslo"}})],
        },
        {"role": "tool", "tool_call_id": "c0", "content": "ok"},
        {"role": "assistant", "content": "Done."},
    ]
    request = {"messages": messages, "tools": [ORDER_TOOL]}
    tokens = pawlette.tokenize(MINIMAX_M3, TOKENIZER_M3, request)
    learned = [label for label in tokens.labels if label != IGNORE_INDEX]
    assert TOKENIZER_M3.decode(learned, skip_special_tokens=False) == (
        f'</mm:think>{NS}<tool_call>\n{NS}<invoke name="create_order">'
        f"{NS}<shipping>{NS}<city>Oslo{NS}</city>{NS}</shipping>{NS}</invoke>\n"
        f"{NS}</tool_call>[e~[</mm:think>Done.[e~["
    )


@pytest.mark.parametrize("syntax", ["lark", "gbnf"])
@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("content", [None, "On it."])
def test_minimax_m3_grammars_take_the_calls_its_template_writes(
    syntax: str, parallel: bool, content: str | None
) -> None:
    from ..declare.conversations import as_the_model_writes
    from ..export.test_grammar import (
        accepts,
        choices_for,
        encode_special,
        encode_text,
        export_grammar,
    )

    arguments = {
        "user_id": 3,
        "shipping": {"city": "Bern", "zip": 3000},
        "items": ["a", "b"],
        "flags": {},
    }
    calls = [_call("create_order", arguments)] + (
        [_call("create_order", {}, 1)] if parallel else []
    )
    message = {"role": "assistant", "content": content, "tool_calls": calls}
    request = {"messages": [{"role": "user", "content": "hi"}, message], "tools": [ORDER_TOOL]}
    ids: list[int] = []  # what the model writes, by the variant's tokenizer
    for segment in as_the_model_writes(MINIMAX_M3).render(request).segments:
        if segment.message_index == 1 and segment.trainable:
            encode = encode_special if segment.special else encode_text
            ids += encode("minimax_m2:m3", segment.text)
    obeyed = choices_for(message)
    for choice, as_parallel in obeyed:
        grammar = export_grammar("minimax_m2:m3", [ORDER_TOOL], choice, as_parallel, syntax)
        assert accepts("minimax_m2:m3", grammar, syntax, ids), choice
    assert ("auto", parallel) in obeyed
    wrong = export_grammar("minimax_m2:m3", [ORDER_TOOL], "none", parallel, syntax)
    assert not accepts("minimax_m2:m3", wrong, syntax, ids)


# MiniMax-M3's thinking_mode (enabled, disabled) against its template given the variable;
# the family case compares the default (the variable not given: adaptive).
THINKING_MODES = [
    ("minimax_m2:m3-thinking", "enabled", {"reasoning_always": True}),
    ("minimax_m2:m3-no-thinking", "disabled", {"reasoning": False}),
]


@pytest.mark.parametrize(("name", "mode", "switches"), THINKING_MODES)
def test_minimax_m3_thinking_modes_render_as_its_template(
    name: str, mode: str, switches: dict[str, Any]
) -> None:
    fmt = pawlette.get_format(name)
    reference = corpus_reference(TEMPLATE_M3, variables={"thinking_mode": mode})
    conversations = generate_conversations(16, seed=3, avoid=fmt.special_markers)
    report = compare_renders(fmt, reference, conversations)
    assert report.agrees, report.describe()
    # Turns that extend the prompt (see the docstring): their own turns parse back.
    shaped = generate_conversations(16, seed=3, avoid=fmt.special_markers, **switches)
    turns = own_turns(fmt, reference, shaped)
    assert turns.agrees, turns.describe()


def test_minimax_m3_reading_follows_each_modes_prompt() -> None:
    thinking = pawlette.get_format("minimax_m2:m3-thinking")
    parsed = thinking.parse("Plan.</mm:think>Answer.[e~[")
    assert parsed.message == {
        "role": "assistant",
        "content": "Answer.",
        "reasoning_content": "Plan.",
    }
    no_thinking = pawlette.get_format("minimax_m2:m3-no-thinking")
    parsed = no_thinking.parse("Answer.[e~[")
    assert parsed.message == {"role": "assistant", "content": "Answer."}
    prompt = no_thinking.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True)
    assert prompt.text.endswith("]~b]user\nHi[e~[\n]~b]ai\n</mm:think>")
    assert "Current thinking mode: disabled." in prompt.text


@pytest.mark.parametrize("properties", ["x", 1.5, ["a"]])
def test_m3_tags_refuse_a_properties_of_the_wrong_shape_as_the_schemas_error(
    properties: object,
) -> None:
    """A tool whose ``properties`` is no object is the schema's error in the grammar (the
    server's 400), not an AttributeError (a 500): found by ``bench.fuzz_requests``."""
    from pawlette.export.grammar import export_grammar_bundle
    from pawlette.openai import tools_from_openai

    tool = {"type": "function", "function": {"name": "f", "parameters": {"properties": properties}}}
    with pytest.raises(ValueError, match=r"tools\[0\]\.parameters\.properties"):
        export_grammar_bundle(
            "minimax_m2:m3-no-thinking", tools_from_openai([tool]), "required", True, "gbnf"
        )


def _empty_system_first(conversation: Conversation) -> dict[str, Any]:
    """The request with a first system message of empty text (in place of the first one, or
    before the first message)."""
    messages = [dict(message) for message in conversation.messages]
    if messages[0]["role"] == "system":
        messages[0]["content"] = ""
    else:
        messages.insert(0, {"role": "system", "content": ""})
    return {**conversation.request, "messages": messages}


@pytest.mark.parametrize(
    ("name", "template"), [("minimax_m2", TEMPLATE), ("minimax_m2:m3", TEMPLATE_M3)]
)
def test_an_empty_first_system_message_is_written_as_the_templates_default_text(
    name: str, template: str
) -> None:
    """Both templates test the first system message's text: an empty one is written as the
    default ``You are a helpful assistant.``, with the tools after it or without them; the
    writer and the exported template write so, and the turn reads back as no message."""
    fmt = pawlette.get_format(name)
    generated = generate_conversations(24, seed=5, avoid=fmt.special_markers)
    requests = [_empty_system_first(conversation) for conversation in generated]
    assert {bool(request.get("tools")) for request in requests} == {False, True}
    report = compare_renders(fmt, corpus_reference(template), requests)
    assert report.agrees, report.describe()
    exported = compare_renders(fmt, export_jinja(fmt), requests)
    assert exported.agrees, exported.describe()
    for request in requests:
        rendering = fmt.render(request)
        opened = "]~b]developer\n" if name.endswith("m3") else "]~b]system\n"
        assert opened + DEFAULT_SYSTEM in rendering.text
        assert "messages[0]: a system message with empty text, written as none" in (
            rendering.losses
        )
        assert fmt.parse_conversation(rendering.text).messages[0]["role"] != "system"
