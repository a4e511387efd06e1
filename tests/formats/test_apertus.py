"""Apertus (:mod:`pawlette.formats.apertus`): what the model writes after its
``<|assistant_start|>`` prompt, read as llama.cpp's ``apertus`` handler reads it (its cases
in ``tests/test-chat.cpp``'s ``test_apertus_parser``) and as vLLM's ``apertus`` tool parser
does, whole, streamed and from token ids (a tokenizer built with the format's special
tokens); the template's layouts the declaration decided on; ids and masks."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import pawlette
from pawlette.errors import RequestError, UnsupportedFeature
from pawlette.export import export_jinja
from pawlette.tokenization.encoder import IGNORE_INDEX

from ..declared.model_output import check_every_way
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import Reference, corpus_reference

APERTUS = pawlette.get_format("apertus")
TEMPLATE = "Apertus-8B-Instruct"
TOKENIZER = small_tokenizer(APERTUS.special_markers)
HELLO = "Hello, world!\nWhat's up?"
THINKING = "<|inner_prefix|>I'm\nthinking<|inner_suffix|>"
SPECIAL = '<|tools_prefix|>[{"special_function": {"arg1": 1}}]<|tools_suffix|>'
CALL_SPECIAL = ("special_function", {"arg1": 1})

AS_THE_PEERS = [
    # llama.cpp's cases: content, reasoning, a call, a call after reasoning.
    (HELLO, HELLO, None, []),
    (THINKING + HELLO, HELLO, "I'm\nthinking", []),
    (SPECIAL, None, None, [CALL_SPECIAL]),
    (THINKING + SPECIAL, None, "I'm\nthinking", [CALL_SPECIAL]),
    # vLLM: the suffix is optional (an engine may cut it as a stop string); several calls.
    (
        'Checking.<|tools_prefix|>[{"special_function": {"arg1": 1}}, {"f": {}}]',
        "Checking.",
        None,
        [CALL_SPECIAL, ("f", {})],
    ),
    # llama.cpp ends a turn of calls with the end token (its grammar allows nothing else).
    (SPECIAL + "<|assistant_end|>", None, None, [CALL_SPECIAL]),
    (HELLO + "<|assistant_end|>", HELLO, None, []),
]


@pytest.mark.parametrize(("text", "content", "reasoning", "calls"), AS_THE_PEERS)
def test_what_the_model_writes_reads_as_the_peers_read_it(
    text: str, content: str | None, reasoning: str | None, calls: list[Any]
) -> None:
    messages, _, warnings = check_every_way(APERTUS, TOKENIZER, text)
    (message,) = messages
    found = [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    assert (message.text or None, message.reasoning, found, warnings) == (
        content,
        reasoning,
        calls,
        [],
    )


def test_text_after_the_calls_is_content_with_a_warning() -> None:
    # llama.cpp reads it as content; the template writes the results there, never the
    # model's text, so pawlette warns.
    messages, _, warnings = check_every_way(APERTUS, TOKENIZER, SPECIAL + HELLO)
    (message,) = messages
    assert (message.text, [call.name for call in message.tool_calls]) == (
        HELLO,
        ["special_function"],
    )
    assert warnings


@pytest.mark.parametrize(
    "item",
    [
        '{"special_function": {"arg1": 1}, "other": {}}',  # two keys (vLLM skips the item)
        '{"special_function": "not an object"}',
        '{"name": "special_function", "arguments": {"arg1": 1}}',  # another family's shape
    ],
)
def test_a_list_that_is_not_one_of_name_keyed_calls_is_content_with_a_warning(item: str) -> None:
    text = "<|tools_prefix|>[" + item + "]<|tools_suffix|>"
    messages, _, warnings = check_every_way(APERTUS, TOKENIZER, text)
    written = text[: -len("<|tools_suffix|>")]  # the stop ends the turn
    assert (messages[0].text, list(messages[0].tool_calls)) == (written, [])
    assert warnings


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
                "days": {"type": "integer", "default": 1},
            },
            "required": ["city"],
        },
    },
}


def _calls(*cities: str) -> list[dict[str, Any]]:
    return [
        {
            "id": f"c{number}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
        }
        for number, city in enumerate(cities)
    ]


def _template(messages: list[dict[str, Any]], *, prompt: bool, tools: Any = None) -> str | None:
    return (
        corpus_reference(TEMPLATE, empty_content=True)
        .render(messages, tools, add_generation_prompt=prompt)
        .text
    )


@pytest.mark.parametrize("text", ["", "Checking."])
def test_results_and_the_answer_stay_in_the_assistants_turn(text: str) -> None:
    messages = [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": text, "tool_calls": _calls("Zürich", "Paris")},
        {"role": "tool", "tool_call_id": "c0", "content": "18°C"},
        {"role": "tool", "tool_call_id": "c1", "content": '{"temp": [12, 13]}'},
        {"role": "assistant", "content": "Warm, then mild."},
        {"role": "user", "content": "Thanks."},
    ]
    rendering = APERTUS.render(messages, [WEATHER], add_generation_prompt=True)
    assert rendering.text == _template(messages, prompt=True, tools=[WEATHER])
    assert (
        '<|tools_prefix|>[{"get_weather": {"city": "Zürich"}}, {"get_weather": {"city": "Paris"}}]'
        '<|tools_suffix|>[18°C, {"temp": [12, 13]}]Warm, then mild.<|assistant_end|>'
        "<|user_start|>Thanks.<|user_end|><|assistant_start|>"
    ) in rendering.text
    assert 'unit?: "c" | "f", // default: c,\n' in rendering.text
    training = APERTUS.render(messages, [WEATHER], add_generation_prompt=False)
    parsed = APERTUS.parse_conversation(training.text)
    assert [message["role"] for message in parsed.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "user",
    ]
    assert [message["content"] for message in parsed.messages[3:5]] == [
        "18°C",
        '{"temp": [12, 13]}',
    ]


def test_the_prompt_after_results_and_a_turn_of_calls_before_a_user() -> None:
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": _calls("Oslo")},
        {"role": "tool", "tool_call_id": "c0", "content": "3°C"},
    ]
    rendering = APERTUS.render(messages, [WEATHER], add_generation_prompt=True)
    assert rendering.text == _template(messages, prompt=True, tools=[WEATHER])
    assert rendering.text.endswith("<|tools_suffix|>[3°C]<|assistant_start|>")
    unanswered = [*messages[:2], {"role": "user", "content": "Never mind."}]
    rendering = APERTUS.render(unanswered, [WEATHER], add_generation_prompt=False)
    assert rendering.text == _template(unanswered, prompt=False, tools=[WEATHER])
    assert "<|tools_suffix|><|assistant_end|><|user_start|>Never mind." in rendering.text


ANSWERED = [
    {"role": "system", "content": "Be terse."},
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello!"},
]
PROMPT_AFTER_AN_ANSWER = (
    "<s><|system_start|>Be terse.<|system_end|><|developer_start|>Deliberation: disabled\n"
    "Tool Capabilities: disabled<|developer_end|><|user_start|>Hi<|user_end|>"
    "<|assistant_start|>Hello!<|assistant_start|>"
)
"""The template's prompt after a last answer, which it writes with no end."""


def test_the_prompt_after_a_last_answer_reads_back_as_the_answer_and_the_prompt() -> None:
    assert _template(ANSWERED, prompt=True) == PROMPT_AFTER_AN_ANSWER
    assert APERTUS.render(ANSWERED, add_generation_prompt=True).text == PROMPT_AFTER_AN_ANSWER
    back = APERTUS.parse_conversation(PROMPT_AFTER_AN_ANSWER, strict=True)
    assert back.messages == ANSWERED
    assert back.add_generation_prompt and not back.continue_final_message
    # Without the prompt the answer is the text's last, left open as the template leaves it.
    plain = APERTUS.parse_conversation(PROMPT_AFTER_AN_ANSWER.removesuffix("<|assistant_start|>"))
    assert plain.messages == ANSWERED and not plain.add_generation_prompt
    # What follows the prompt is the next answer, begun (a prefill).
    prefilled = APERTUS.parse_conversation(PROMPT_AFTER_AN_ANSWER + "Sure, the", strict=True)
    assert prefilled.messages == [*ANSWERED, {"role": "assistant", "content": "Sure, the"}]
    assert prefilled.continue_final_message and not prefilled.add_generation_prompt


@pytest.mark.parametrize("before", ["", THINKING])
def test_a_completion_that_opens_a_turn_keeps_the_opener_as_its_text_with_a_warning(
    before: str,
) -> None:
    """The model opens no turn of its own: reading a completion, the opener the prompt writes
    after a last answer is out of place, kept as written (whole, streamed, from ids)."""
    text = before + "Hello!<|assistant_start|>More."
    messages, _, warnings = check_every_way(APERTUS, TOKENIZER, text)
    (message,) = messages
    assert (message.text, warnings) == ("Hello!<|assistant_start|>More.", ["<|assistant_start|>"])
    (warning,) = APERTUS.parse(text).warnings
    state = "assistant.body" if before else "assistant.head"
    found, _, expected = warning.message.partition("; expected ")
    assert found == f"marker '<|assistant_start|>' in state '{state}'"
    assert expected.startswith("one of '<|assistant_end|>'")
    assert "'<|assistant_start|>'" not in expected
    with pytest.raises(pawlette.ParseError, match=re.escape("<|assistant_start|>")):
        APERTUS.parse(before + "Hello!<|assistant_start|>", strict=True)


def test_the_default_system_text_holds_the_date_option() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    rendering = APERTUS.render(messages, add_generation_prompt=True)
    assert rendering.text == _template(messages, prompt=True)
    assert "Current date: 2024-07-26<|system_end|>" in rendering.text
    assert "Tool Capabilities: disabled<|developer_end|>" in rendering.text
    thinking = APERTUS.with_options(thinking=True).render(messages, add_generation_prompt=True)
    assert "Deliberation: enabled\n" in thinking.text


def test_a_later_system_message_is_refused_as_the_template_refuses_it() -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "system", "content": "Later."},
        {"role": "user", "content": "Hey"},
    ]
    assert _template(messages, prompt=True) is None
    with pytest.raises(UnsupportedFeature, match=r"messages\[1\]"):
        APERTUS.render(messages, add_generation_prompt=True)


def test_the_mask_trains_the_turns_the_model_writes() -> None:
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": _calls("Oslo")},
        {"role": "tool", "tool_call_id": "c0", "content": "3°C"},
        {"role": "assistant", "content": "3°C."},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "Welcome."},
    ]
    tokens = pawlette.tokenize(APERTUS, TOKENIZER, {"messages": messages, "tools": [WEATHER]})
    learned = [label for label in tokens.labels if label != IGNORE_INDEX]
    # The call turn ends at <|tools_suffix|>; the answer after the results at the end
    # before the user; the last turn with nothing, as the template writes it.
    assert TOKENIZER.decode(learned, skip_special_tokens=False) == (
        '<|tools_prefix|>[{"get_weather": {"city": "Oslo"}}]<|tools_suffix|>'
        "3°C.<|assistant_end|>Welcome."
    )


def _tool(parameters: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": "f", "description": "Does f.", "parameters": parameters, **extra},
    }


def _object(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": ["a"]}


SCHEMAS = [
    _object(
        a={"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "integer"}}}
    ),
    _object(
        a={"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}}}
    ),
    _object(
        a={"type": "array", "items": {"type": "boolean"}, "nullable": True}, b={"type": "array"}
    ),
    _object(
        a={"type": "string", "nullable": True},
        b={"type": ["string", "null"]},
        c={"type": ["integer"]},
    ),
    _object(
        a={"oneOf": [{"type": "string", "description": "text"}, {"type": "integer", "default": 3}]}
    ),
    _object(
        a={"type": "integer", "default": 3, "description": "A number."},
        b={"type": "string", "enum": ["x", "y"], "default": "x"},
        c={"type": "string", "default": "z"},
    ),
    _object(
        a={
            "type": "array",
            "items": {"type": "object", "properties": {k: {"type": "string"} for k in "pqrst"}},
        }
    ),
    _object(a={}, b={"type": "number"}),
    {"type": "object", "properties": {}},
]


@pytest.mark.parametrize("parameters", SCHEMAS)
def test_the_tools_are_written_as_both_templates_write_them(parameters: dict[str, Any]) -> None:
    tools = [_tool(parameters), WEATHER]
    messages = [{"role": "user", "content": "Hi"}]
    rendering = APERTUS.render(messages, tools, add_generation_prompt=True)
    assert rendering.text == _template(messages, prompt=True, tools=tools)
    exported = Reference(export_jinja(APERTUS), bos_token="<s>")
    assert rendering.text == exported.render(messages, tools, add_generation_prompt=True).text


def test_a_tool_without_a_description_is_written_with_an_empty_one() -> None:
    # The template fails on it (a remaining difference the format's page lists).
    tool = {"type": "function", "function": {"name": "f", "parameters": _object(a={})}}
    messages = [{"role": "user", "content": "Hi"}]
    assert _template(messages, prompt=True, tools=[tool]) is None
    rendering = APERTUS.render(messages, [tool], add_generation_prompt=True)
    assert "Tool Capabilities:\n// \ntype f = (_: {\na: any\n}) => any;" in rendering.text
    exported = Reference(export_jinja(APERTUS), bos_token="<s>")
    assert rendering.text == exported.render(messages, [tool], add_generation_prompt=True).text


def test_a_default_the_template_adds_to_text_must_be_text() -> None:
    tool = _tool(_object(a={"type": "string", "enum": ["x"], "default": 1}))
    with pytest.raises(RequestError, match=r"tools\[0\]\.function\.parameters\.properties\.a"):
        APERTUS.render([{"role": "user", "content": "Hi"}], [tool])


def _answer(text: str, **fields: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **fields}


READ_AS_ONE = "written in the turn of the assistant message before it, right after its text: "
AFTER_CALLS = "written in the turn of the assistant message before it, right after its calls, "
# Each conversation with an answer right after another answer, the losses its render records
# and what its template's text reads back as (roles and texts; None: it does not read back).
CONSECUTIVE: list[tuple[list[dict[str, Any]], list[str], list[tuple[str, str | None]] | None]] = [
    (
        [{"role": "user", "content": "Hi"}, _answer("One."), _answer("Two.")],
        [f"messages[2]: {READ_AS_ONE}read back as part of that message"],
        [("user", "Hi"), ("assistant", "One.Two.")],
    ),
    (
        [
            {"role": "user", "content": "Hi"},
            _answer("One."),
            _answer("", tool_calls=_calls("Oslo")),
            {"role": "tool", "tool_call_id": "c0", "content": "3°C"},
            _answer("Cold."),
            _answer("Very."),
            {"role": "user", "content": "Thanks."},
        ],
        [
            f"messages[2]: {READ_AS_ONE}read back as part of that message",
            f"messages[5]: {READ_AS_ONE}read back as part of that message",
        ],
        [
            ("user", "Hi"),
            ("assistant", "One."),
            ("tool", "3°C"),
            ("assistant", "Cold.Very."),
            ("user", "Thanks."),
        ],
    ),
    (
        [
            {"role": "user", "content": "Hi"},
            _answer("", tool_calls=_calls("Oslo")),
            _answer("No results."),
            {"role": "user", "content": "Thanks."},
        ],
        [f"messages[2]: {AFTER_CALLS}where their results go: not read back"],
        None,
    ),
]


@pytest.mark.parametrize(("messages", "losses", "read"), CONSECUTIVE)
def test_an_answer_after_an_answer_goes_on_in_its_turn_as_the_template_writes_it(
    messages: list[dict[str, Any]], losses: list[str], read: list[tuple[str, str | None]] | None
) -> None:
    """The template writes an assistant message right after another in the same turn (no
    end, no opener, the texts run together): the render and the exported template write it
    so, the rendering records that it does not read back as it was given, and parsing the
    template's text gives what it holds."""
    tools = [WEATHER] if any("tool_calls" in message for message in messages) else None
    exported = Reference(export_jinja(APERTUS), bos_token="<s>")
    for prompt in (False, True):
        expected = _template(messages, prompt=prompt, tools=tools)
        assert expected is not None
        rendering = APERTUS.render(messages, tools, add_generation_prompt=prompt)
        assert rendering.text == expected
        assert list(rendering.losses) == losses
        assert exported.render(messages, tools, add_generation_prompt=prompt).text == expected
    written = _template(messages, prompt=False, tools=tools)
    assert written is not None
    if read is None:
        with pytest.raises(pawlette.ParseError):
            APERTUS.parse_conversation(written, strict=True)
        return
    parsed = APERTUS.parse_conversation(written, strict=True).to_request()["messages"]
    assert [(message["role"], message.get("content")) for message in parsed] == read
