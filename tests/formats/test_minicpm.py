"""MiniCPM 5 (:mod:`pawlette.formats.minicpm`): what the model writes, read as SGLang's
``minicpm4_xml`` detector reads it (its cases in
``test/registered/function_call/test_minicpm4_xml_detector.py``), whole, streamed and from
token ids (a tokenizer built with the format's special tokens); values typed by the tool's
schema; where pawlette reads otherwise; the template's layouts the declaration decided on
(CDATA values, Python-written values, the thinking switch); ids and masks."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pawlette
from pawlette.formats.minicpm import MinicpmOptions
from pawlette.tokenization.encoder import IGNORE_INDEX

from ..declared.model_output import check_every_way
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import corpus_reference

MINICPM = pawlette.get_format("minicpm")
TEMPLATE = "openbmb-MiniCPM5-1B"
TOKENIZER = small_tokenizer(MINICPM.special_markers)
END = "<|im_end|>"


def _tool(name: str, properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": list(required)}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


WEATHER = _tool("get_weather", {"city": {"type": "string"}, "date": {"type": "string"}}, ("city",))
SUM = _tool("sum_values", {"nums": {"type": "array"}, "exact": {"type": "boolean"}}, ("nums",))
NOOP = _tool("noop", {"note": {"type": "string"}})

AS_SGLANG = [
    # A call after text; a CDATA block holding a newline; JSON values; several calls, one per
    # line; a call without parameters; whitespace between the tags (SGLang's streamed case).
    (
        'Intro before.\n<function name="get_weather"><param name="city">上海</param>'
        '<param name="date">2024-06-27</param></function>' + END,
        "Intro before.",
        [("get_weather", {"city": "上海", "date": "2024-06-27"})],
    ),
    (
        '<function name="get_weather"><param name="city"><![CDATA[北\n京]]></param>'
        '<param name="date">2024-06-27</param></function>' + END,
        None,
        [("get_weather", {"city": "北\n京", "date": "2024-06-27"})],
    ),
    (
        '<function name="sum_values"><param name="nums">[1, 2, 3]</param>'
        '<param name="exact">true</param></function>' + END,
        None,
        [("sum_values", {"nums": [1, 2, 3], "exact": True})],
    ),
    (
        'Head\n<function name="get_weather"><param name="city">北京</param></function>\n'
        '<function name="sum_values"><param name="nums">[7,8,9]</param>'
        '<param name="exact">false</param></function>' + END,
        "Head",
        [("get_weather", {"city": "北京"}), ("sum_values", {"nums": [7, 8, 9], "exact": False})],
    ),
    ('<function name="noop"></function>\n', None, [("noop", {})]),
    (
        'Hello\n<function name="get_weather">\n  <param name="city">北京</param>\n'
        '  <param name="date">2024-06-27</param>\n</function>\n',
        "Hello",
        [("get_weather", {"city": "北京", "date": "2024-06-27"})],
    ),
    # As the template writes it: Python's spellings of values that are not strings.
    (
        '<function name="sum_values"><param name="nums">[1, True, None]</param>'
        '<param name="exact">False</param></function>' + END,
        None,
        [("sum_values", {"nums": [1, True, None], "exact": False})],
    ),
]


def _reading(text: str) -> tuple[Any, ...]:
    messages, _, warnings = check_every_way(MINICPM, TOKENIZER, text)
    (message,) = messages
    calls = [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    return message.text or None, calls, warnings


@pytest.mark.parametrize(("text", "content", "calls"), AS_SGLANG)
def test_what_the_model_writes_reads_as_sglang_reads_it(
    text: str, content: str | None, calls: list[Any]
) -> None:
    assert _reading(text) == (content, calls, [])


def _parsed(text: str, tools: list[dict[str, Any]]) -> tuple[Any, list[Any], list[str]]:
    parsed = MINICPM.parse(text, tools=tools)
    calls = [
        (call["function"]["name"], json.loads(call["function"]["arguments"]))
        for call in parsed.message.get("tool_calls") or []
    ]
    return parsed.message.get("content"), calls, [item.message for item in parsed.warnings]


@pytest.mark.parametrize(
    "text",
    [
        # SGLang keeps these blocks as text: an unknown tool, a parameter without its name,
        # a parameter given twice, a call never closed.
        '<function name="unknown"><param name="x">1</param></function>',
        '<function name="get_weather"><param>北京</param></function>',
        '<function name="get_weather"><param name="city">北京</param>'
        '<param name="city">上海</param></function>',
        '<function name="get_weather"><param name="city">北京</param>',
    ],
)
def test_a_malformed_call_is_content_with_a_warning(text: str) -> None:
    content, calls, warnings = _parsed(text, [WEATHER])
    assert (content, calls) == (text, [])
    assert warnings


def test_a_string_parameter_keeps_text_that_reads_as_json() -> None:
    text = '<function name="get_weather"><param name="city">5</param></function>'
    assert _parsed(text, [WEATHER]) == (None, [("get_weather", {"city": "5"})], [])


def test_text_after_the_calls_is_content_with_a_warning() -> None:
    # SGLang keeps it as text with no warning; the template writes the calls last in the
    # turn, so pawlette keeps the text and says where it found it.
    text = '<function name="get_weather"><param name="city">上海</param></function>\nOutro.'
    content, calls, warnings = _parsed(text, [WEATHER])
    assert (content, calls) == ("Outro.", [("get_weather", {"city": "上海"})])
    assert warnings and "after_call" in warnings[0]


def test_an_undeclared_parameter_is_read() -> None:
    # SGLang refuses a parameter the tool does not declare ("City"); JSON Schema's default
    # (additionalProperties) allows it, and the grammar's strict mode is what refuses it.
    text = '<function name="get_weather"><param name="City">北京</param></function>'
    assert _parsed(text, [WEATHER]) == (None, [("get_weather", {"City": "北京"})], [])


def _call(name: str, arguments: dict[str, Any], number: int = 0) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}
    return {"id": f"c{number}", "type": "function", "function": function}


NOTE = _tool("note", {"text": {"type": "string"}, "tags": {"type": "object"}})
CONVERSATIONS = [
    [
        {"role": "system", "content": ""},
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [_call("get_weather", {})]},
        {"role": "tool", "tool_call_id": "c0", "content": "18°C"},
        {"role": "assistant", "content": "18°C.", "reasoning_content": "\nIt is warm.\n"},
    ],
    [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello", "reasoning_content": "dropped: a user follows"},
        {"role": "system", "content": "Later."},
        {"role": "user", "content": "Note it."},
        {
            "role": "assistant",
            "content": "\nBoth.",
            "reasoning_content": "Two notes.",
            "tool_calls": [
                # Strings holding <, & or a newline go in a CDATA block, others as written;
                # an object as Python writes it.
                _call("note", {"text": "a < b && c\nd", "tags": {"k": [True, None]}}),
                _call("note", {"text": "x]]>y <z>"}, 1),
                _call("note", {"text": "plain, 'quoted'"}, 2),
            ],
        },
        {"role": "tool", "tool_call_id": "c0", "content": "ok"},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "tool", "tool_call_id": "c2", "content": "ok"},
    ],
]


@pytest.mark.parametrize("messages", CONVERSATIONS)
@pytest.mark.parametrize("prompt", [False, True])
@pytest.mark.parametrize("thinking", [None, True, False])
def test_renders_as_the_template(messages: list[Any], prompt: bool, thinking: bool | None) -> None:
    fmt = MINICPM if thinking is None else MINICPM.variant(MinicpmOptions(thinking))
    variables = {} if thinking is None else {"enable_thinking": thinking}
    reference = corpus_reference(TEMPLATE, variables=variables)
    expected = reference.render(messages, [WEATHER, NOTE], add_generation_prompt=prompt)
    assert fmt.render(messages, [WEATHER, NOTE], add_generation_prompt=prompt).text == (
        expected.text
    )


def test_cdata_values_read_back_as_written() -> None:
    messages = CONVERSATIONS[1][:5]
    rendering = MINICPM.render(messages, [NOTE])
    assert '<param name="text"><![CDATA[a < b && c\nd]]></param>' in rendering.text
    assert "<![CDATA[x]]>y <z>]]>" in rendering.text
    assert "<param name=\"tags\">{'k': [True, None]}</param>" in rendering.text
    turn = rendering.text.rsplit("<|im_start|>assistant\n", 1)[1]
    calls = MINICPM.parse(turn, tools=[NOTE]).message["tool_calls"]
    assert [json.loads(call["function"]["arguments"]) for call in calls] == [
        {"text": "a < b && c\nd", "tags": {"k": [True, None]}},
        {"text": "x]]>y <z>"},
        {"text": "plain, 'quoted'"},
    ]


@pytest.mark.parametrize(
    ("thinking", "tail"), [(None, ""), (True, "<think>\n"), (False, "<think>\n\n</think>\n\n")]
)
def test_the_thinking_switch_writes_the_prompts_block(thinking: bool | None, tail: str) -> None:
    fmt = MINICPM if thinking is None else MINICPM.variant(MinicpmOptions(thinking))
    prompt = fmt.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True).text
    assert prompt == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n" + tail


def test_with_thinking_on_a_completion_starts_inside_the_block() -> None:
    thinking = MINICPM.variant(MinicpmOptions(True))
    assert thinking.parse("Plan.\n</think>\n\nHello." + END).message == {
        "role": "assistant",
        "content": "Hello.",
        "reasoning_content": "Plan.",
    }


def test_the_mask_trains_the_turns_the_model_writes() -> None:
    messages = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("get_weather", {"city": "Oslo"})],
        },
        {"role": "tool", "tool_call_id": "c0", "content": "3°C"},
        {"role": "assistant", "content": "3°C."},
    ]
    tokens = pawlette.tokenize(MINICPM, TOKENIZER, {"messages": messages, "tools": [WEATHER]})
    learned = [label for label in tokens.labels if label != IGNORE_INDEX]
    assert TOKENIZER.decode(learned, skip_special_tokens=False) == (
        '<function name="get_weather"><param name="city">Oslo</param></function><|im_end|>'
        "3°C.<|im_end|>"
    )
