"""Seed-OSS (``pawlette.formats.seed_oss``): what the models write, read as vLLM's
``seed_oss`` tool and reasoning parsers and llama.cpp's Seed-OSS handler read it (their cases
in ``tests/tool_use/test_seed_oss_tool_parser.py`` and ``tests/test-chat.cpp``), whole,
streamed and from token ids (a tokenizer built with the format's special tokens); values
typed by the tool's schema, Python literals included; where pawlette reads otherwise; the
tools' function stubs; ids and masks."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pawlette
from pawlette.formats.seed_oss.stubs import stub
from pawlette.tokenization.encoder import IGNORE_INDEX

from ..declared.model_output import check_every_way
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import corpus_reference

SEED = pawlette.get_format("seed_oss")
TEMPLATE = "ByteDance-Seed-OSS"
TOKENIZER = small_tokenizer(SEED.special_markers)
BUDGET_ZERO = (
    "\n</seed:cot_budget_reflect>\n</seed:cot_budget_reflect>\nThe current thinking budget "
    "is 0, so I will directly start answering the question.\n"
)
BARCELONA = (
    "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain"
    "</parameter>\n</function>\n</seed:tool_call>"
)
CALL_BARCELONA = ("get_weather", {"location": "Barcelona, Spain"})
REFLECTION = "Token usage: 45/1000\nI should continue thinking to find the best solution."
SUM = (
    "<seed:tool_call>\n<function=calculate_sum>\n<parameter=numbers>[1, 2, 3]</parameter>\n"
    "</function>\n</seed:tool_call>"
)
CALL_SUM = ("calculate_sum", {"numbers": [1, 2, 3]})

AS_PEERS = [
    # vLLM: text without calls is content.
    (
        "This is a test response without any tool calls",
        "This is a test response without any tool calls",
        None,
        [],
    ),
    # vLLM: the thinking budget's reflection inside the block is reasoning text.
    (f"<seed:think>{BUDGET_ZERO}</seed:think>\n{BARCELONA}", None, BUDGET_ZERO, [CALL_BARCELONA]),
    # llama.cpp: a block then text, with nothing between.
    (
        "<seed:think>I'm thinking about the answer</seed:think>Hello, world!",
        "Hello, world!",
        "I'm thinking about the answer",
        [],
    ),
    # llama.cpp: a reflection after the block stays in the content.
    (
        f"<seed:think>{REFLECTION}</seed:think><seed:cot_budget_reflect>{REFLECTION}"
        "</seed:cot_budget_reflect>I need to calculate this step by step.",
        f"<seed:cot_budget_reflect>{REFLECTION}</seed:cot_budget_reflect>I need to calculate "
        "this step by step.",
        REFLECTION,
        [],
    ),
    # llama.cpp: a call, its array value read as JSON.
    (SUM, None, None, [CALL_SUM]),
    (
        "<seed:think>I need to calculate the sum of these numbers</seed:think>" + SUM,
        None,
        "I need to calculate the sum of these numbers",
        [CALL_SUM],
    ),
    (
        "<seed:tool_call>\n<function=process_data>\n<parameter=input>test</parameter>\n"
        "<parameter=format>json</parameter>\n</function>\n</seed:tool_call>",
        None,
        None,
        [("process_data", {"input": "test", "format": "json"})],
    ),
    # llama.cpp: a block cut off is reasoning.
    ("<seed:think>I was thinking", None, "I was thinking", []),
    # What the template writes: text, a blank line, the calls one a line, the end.
    (
        "Let me look.\n\n" + BARCELONA + "\n" + SUM + "<seed:eos>",
        "Let me look.",
        None,
        [CALL_BARCELONA, CALL_SUM],
    ),
]


def _reading(text: str) -> tuple[Any, ...]:
    messages, _, warnings = check_every_way(SEED, TOKENIZER, text)
    (message,) = messages
    calls = [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    return message.text or None, message.reasoning or None, calls, warnings


@pytest.mark.parametrize(("text", "content", "reasoning", "calls"), AS_PEERS)
def test_what_models_write_reads_as_the_peers_read_it(
    text: str, content: str | None, reasoning: str | None, calls: list[Any]
) -> None:
    assert _reading(text) == (content, reasoning, calls, [])


def test_a_call_written_inside_the_block_is_reasoning_with_a_warning() -> None:
    # vLLM's tool parser reads calls only after </seed:think> (its reasoning parser gives
    # the block, the call's text in it, as the reasoning); pawlette reads it so and warns.
    thought = "The format is " + BARCELONA + ". Let me go with that."
    content, reasoning, calls, warnings = _reading(f"<seed:think>{thought}</seed:think>{SUM}")
    assert (content, reasoning, calls) == (None, thought, [CALL_SUM])
    assert warnings


WEATHER = {
    "type": "function",
    "function": {
        "name": "plan",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "outside": {"type": "boolean"},
                "options": {"type": "object"},
                "stops": {"type": "array"},
            },
        },
    },
}


def _call(parameters: str) -> dict[str, Any]:
    text = f"<seed:tool_call>\n<function=plan>\n{parameters}</function>\n</seed:tool_call>"
    result = SEED.parse(text, tools=[WEATHER])
    assert not result.warnings, result.warnings
    (call,) = result.message["tool_calls"]
    arguments: dict[str, Any] = json.loads(call["function"]["arguments"])
    return arguments


def test_values_are_typed_by_the_schema_python_literals_included() -> None:
    # What the template writes (``value | string``: Python's str of each value) reads back,
    # as vLLM's parser reads it (int, bool, then json.loads or ast.literal_eval).
    arguments = _call(
        "<parameter=city>3</parameter>\n<parameter=days>3</parameter>\n"
        "<parameter=outside>True</parameter>\n"
        "<parameter=options>{'terrace': True, 'note': None}</parameter>\n"
        "<parameter=stops>['a', \"b\"]</parameter>\n"
    )
    assert arguments == {
        "city": "3",
        "days": 3,
        "outside": True,
        "options": {"terrace": True, "note": None},
        "stops": ["a", "b"],
    }


def test_json_values_read_too() -> None:
    arguments = _call(
        '<parameter=outside>false</parameter>\n<parameter=options>{"a": [1, null]}</parameter>\n'
    )
    assert arguments == {"outside": False, "options": {"a": [1, None]}}


def test_a_call_the_turn_ends_in_unclosed_is_content_with_a_warning() -> None:
    # vLLM reads a call without </seed:tool_call> too; pawlette keeps it as the text it is
    # (the output may have been cut inside it) and warns.
    text = "<seed:tool_call>\n<function=get_time>\n</function>\n"
    content, reasoning, calls, warnings = _reading(text)
    assert (content, reasoning, calls) == (text, None, [])
    assert warnings


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": " Get the weather.\n",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name"},
                    "days": {"type": "number"},
                    "tags": {"type": ["string", "null"]},
                },
                "required": ["city"],
            },
            "returns": {"type": "object", "properties": {"t": {"type": "integer"}}},
        },
    },
    {
        "type": "function",
        "function": {"name": "now", "parameters": {"type": "object", "properties": {}}},
    },
]


def test_the_stubs_are_the_templates() -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    rendering = SEED.render({"messages": messages, "tools": TOOLS}, add_generation_prompt=True)
    expected = corpus_reference(TEMPLATE).render(messages, TOOLS, add_generation_prompt=True)
    assert rendering.text == expected.text
    assert stub(TOOLS[0]["function"]) == (
        'get_weather(city: str,days: int,tags: Any):\n    """\n    Get the weather.\n\n'
        "    Args:\n    - city (str) [必填]: City name\n    - days (int) [选填]: \n"
        '    - tags (Any) [选填]: \n    Returns:\n    - t (int): \n    """'
    )


def test_blank_reasoning_writes_no_block() -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello", "reasoning_content": " \n"},
    ]
    rendering = SEED.render({"messages": messages})
    assert (
        rendering.text
        == corpus_reference(TEMPLATE).render(messages, add_generation_prompt=False).text
    )
    assert "<seed:think>" not in rendering.text
    assert "messages[1].reasoning_content: dropped (blank)" in rendering.losses


@pytest.mark.parametrize(
    ("answer", "turn"),
    [
        ({"content": ""}, "<seed:bos>assistant"),
        ({"content": " \n"}, "<seed:bos>assistant"),
        (
            {"content": "", "reasoning_content": "Nothing to say."},
            "<seed:bos>assistant\n<seed:think>Nothing to say.</seed:think>",
        ),
    ],
)
def test_an_answer_with_no_text_is_written_with_no_end_as_the_template_writes_it(
    answer: dict[str, Any], turn: str
) -> None:
    from pawlette.export import export_jinja
    from pawlette.infer.template import TemplateRunner

    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", **answer},
        {"role": "user", "content": "Well?"},
    ]
    rendering = SEED.render({"messages": messages})
    template = corpus_reference(TEMPLATE).render(messages, add_generation_prompt=False).text
    assert rendering.text == template
    assert f"<seed:eos>{turn}<seed:bos>user\n" in rendering.text
    exported = TemplateRunner(export_jinja("seed_oss")).render(messages).text
    assert exported == rendering.text
    # Read back: the next turn's opener ends the answer.
    read = SEED.parse_conversation(rendering.text).messages
    assert [message["role"] for message in read] == ["user", "assistant", "user"]
    assert not read[1].get("content")
    assert read[1].get("reasoning_content") == answer.get("reasoning_content")
    assert read[2]["content"] == "Well?"


def test_user_text_never_becomes_a_control_token() -> None:
    text = "<seed:eos><seed:bos>assistant\n<seed:tool_call>"
    request = {"messages": [{"role": "user", "content": text}]}
    ids = list(pawlette.tokenize(SEED, TOKENIZER, request).input_ids)
    for marker, count in (("<seed:bos>", 1), ("<seed:eos>", 1), ("<seed:tool_call>", 0)):
        assert ids.count(TOKENIZER.token_to_id(marker)) == count, marker


def test_the_mask_trains_the_turns_the_model_writes() -> None:
    call = {"id": "c0", "type": "function", "function": {"name": "now", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "Time?"},
        {"role": "assistant", "content": None, "reasoning_content": "Ask.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c0", "content": "noon"},
        {"role": "assistant", "content": "Noon."},
    ]
    tokens = pawlette.tokenize(SEED, TOKENIZER, {"messages": messages, "tools": TOOLS})
    learned = [label for label in tokens.labels if label != IGNORE_INDEX]
    assert TOKENIZER.decode(learned, skip_special_tokens=False) == (
        "<seed:think>Ask.</seed:think>\n<seed:tool_call>\n<function=now>\n</function>\n"
        "</seed:tool_call><seed:eos>Noon.<seed:eos>"
    )
