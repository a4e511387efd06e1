"""Hunyuan 3 (:mod:`pawlette.formats.hy3`): what the model writes, read as vLLM's ``hy_v3``
tool and reasoning parsers read it (their tests' cases, carried over as data; vLLM's tests
spell the tags without a suffix, which its parser takes from the tokenizer's
``token_suffix``: here the template's ``:opensource``), what the declaration decided, the
variants against the template, and token ids with a tokenizer holding Hy3's tokens."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pawlette

from ..support.conversations import generate_conversations
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import compare_renders, corpus_reference, own_turns

SUFFIX = ":opensource"
OPENER = "<｜hy_Assistant:opensource｜>"
PROMPT = OPENER + "<think:opensource></think:opensource>"
THINKING_PROMPT = OPENER + "<think:opensource>"

CURRENT_DATE = {"type": "function", "function": {"name": "get_current_date", "parameters": {}}}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "date": {"type": "string"}},
        },
    },
}
TOOLS = [CURRENT_DATE, WEATHER]


def _suffixed(text: str) -> str:
    """vLLM's test output with the template's tag spelling."""
    for tag in ("tool_calls", "tool_call", "tool_sep", "arg_key", "arg_value", "think"):
        text = text.replace(f"<{tag}>", f"<{tag}{SUFFIX}>").replace(
            f"</{tag}>", f"</{tag}{SUFFIX}>"
        )
    return text


def _calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (call["function"]["name"], json.loads(call["function"]["arguments"]))
        for call in message.get("tool_calls") or []
    ]


BEIJING = {"city": "Beijing", "date": "2026-03-30"}
# vLLM tests/tool_parsers/test_hy_v3_tool_parser.py (TestHYV3ExtractToolCalls): output,
# then the content and calls its parser gives.
TOOL_CASES = [
    ("This is a plain response.", "This is a plain response.", []),
    (
        "<tool_calls><tool_call>get_current_date<tool_sep></tool_call></tool_calls>",
        None,
        [("get_current_date", {})],
    ),
    (
        "<tool_calls>\n<tool_call>get_current_date<tool_sep>\n</tool_call>\n</tool_calls>",
        None,
        [("get_current_date", {})],
    ),
    (
        "<tool_calls><tool_call>get_weather<tool_sep><arg_key>city</arg_key><arg_value>Beijing"
        "</arg_value><arg_key>date</arg_key><arg_value>2026-03-30</arg_value></tool_call>"
        "</tool_calls>",
        None,
        [("get_weather", BEIJING)],
    ),
    (
        "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>"
        "Beijing</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2026-03-30</arg_value>\n"
        "</tool_call>\n</tool_calls>",
        None,
        [("get_weather", BEIJING)],
    ),
    (
        "Checking.<tool_calls>\n<tool_call>get_current_date<tool_sep>\n</tool_call>\n</tool_calls>",
        "Checking.",
        [("get_current_date", {})],
    ),
    (
        "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>"
        "Beijing</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2026-03-30</arg_value>\n"
        "</tool_call>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>"
        "Hangzhou</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2026-03-30</arg_value>\n"
        "</tool_call>\n</tool_calls>",
        None,
        [("get_weather", BEIJING), ("get_weather", {**BEIJING, "city": "Hangzhou"})],
    ),
]


@pytest.mark.parametrize(("output", "content", "calls"), TOOL_CASES)
def test_calls_read_as_vllms_hy_v3_parser_reads_them(
    output: str, content: str | None, calls: list[tuple[str, Any]]
) -> None:
    parsed = pawlette.get_format("hy3").parse(_suffixed(output), tools=TOOLS, prompt=PROMPT)
    assert (parsed.message.get("content") or None) == content
    assert _calls(parsed.message) == calls
    assert not parsed.warnings


# vLLM tests/reasoning/test_hy_v3_reasoning_parser.py: output, reasoning_effort, then the
# reasoning and content its parser gives (with "high" the prompt opened the block).
REASONING_CASES = [
    (
        "This is a reasoning section</think>This is the rest",
        "high",
        "This is a reasoning section",
        "This is the rest",
    ),
    ("This is the rest", "no_think", None, "This is the rest"),
    ("This is a reasoning section</think>", "high", "This is a reasoning section", None),
    (
        "This is a reasoning\nsection</think>This is the rest\nThat",
        "high",
        "This is a reasoning\nsection",
        "This is the rest\nThat",
    ),
    ("This is a reasoning section", "high", "This is a reasoning section", None),
]


@pytest.mark.parametrize(("output", "effort", "reasoning", "content"), REASONING_CASES)
def test_reasoning_read_as_vllms_hy_v3_parser_reads_it(
    output: str, effort: str, reasoning: str | None, content: str | None
) -> None:
    name, prompt = ("hy3", PROMPT) if effort == "no_think" else (f"hy3:{effort}", THINKING_PROMPT)
    parsed = pawlette.get_format(name).parse(_suffixed(output), prompt=prompt)
    assert (parsed.message.get("reasoning_content") or None) == reasoning
    assert (parsed.message.get("content") or None) == content


# ------------------------------------------------------------------ the wire format


def _call(name: str, arguments: dict[str, Any], number: int = 0) -> dict[str, Any]:
    return {
        "id": f"call{number}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


REQUEST: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Zürich?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "reasoning_content": "Look it up.",
            "tool_calls": [_call("get_weather", {"city": "Zürich", "date": "today"})],
        },
        {"role": "tool", "tool_call_id": "call0", "content": '{"temp_c": 3}'},
        {"role": "assistant", "content": "3 °C.", "reasoning_content": "It is cold."},
    ],
    "tools": [WEATHER],
}
TURNS = (
    "<｜reasoning_mode:opensource｜>reasoning_effort:no_think<｜hy_User:opensource｜>Weather in"
    " Zürich?<｜hy_Assistant:opensource｜><think:opensource>Look it up.</think:opensource>"
    "Checking.<tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n"
    "<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Zürich"
    "</arg_value:opensource>\n<arg_key:opensource>date</arg_key:opensource>\n"
    "<arg_value:opensource>today</arg_value:opensource>\n</tool_call:opensource>\n"
    "</tool_calls:opensource><｜hy_eos:opensource｜><tool_responses:opensource>\n"
    '<tool_response:opensource>\n{"temp_c": 3}\n</tool_response:opensource>\n'
    "</tool_responses:opensource><｜hy_Assistant:opensource｜><think:opensource>It is cold."
    "</think:opensource>3 °C."
)


def test_the_wire_format_with_tools_keeps_every_turns_reasoning() -> None:
    """With tools the template keeps every turn's reasoning (``preserved_thinking``), and the
    last turn, without calls, has no end."""
    written = pawlette.get_format("hy3").render(REQUEST).text
    assert written.startswith("<｜hy_begin_of_sentence:opensource｜>You are terse.\n\n# Tools\n")
    assert written.endswith(TURNS)
    assert "</tool_calls:opensource><｜reasoning_mode:opensource｜>" in written


def test_without_tools_reasoning_before_the_last_user_message_is_dropped() -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello.", "reasoning_content": "Greet."},
        {"role": "user", "content": "Bye"},
        {"role": "assistant", "content": "Bye.", "reasoning_content": "Part."},
    ]
    rendering = pawlette.get_format("hy3").render(messages)
    assert rendering.text == (
        "<｜hy_begin_of_sentence:opensource｜><｜reasoning_mode:opensource｜>reasoning_effort:"
        "no_think<｜hy_User:opensource｜>Hi<｜hy_Assistant:opensource｜><think:opensource>"
        "</think:opensource>Hello.<｜hy_eos:opensource｜><｜hy_User:opensource｜>Bye"
        "<｜hy_Assistant:opensource｜><think:opensource>Part.</think:opensource>Bye."
    )
    assert [str(loss).partition(":")[0] for loss in rendering.losses] == [
        "messages[1].reasoning_content"
    ]


def test_a_last_turn_of_calls_ends_with_eos() -> None:
    messages = REQUEST["messages"][:3]
    written = pawlette.get_format("hy3").render({"messages": messages, "tools": [WEATHER]}).text
    assert written.endswith("</tool_calls:opensource><｜hy_eos:opensource｜>")


def test_the_model_ends_its_turn_with_eos() -> None:
    fmt = pawlette.get_format("hy3")
    assert fmt.stop == ("<｜hy_eos:opensource｜>",)
    parsed = fmt.parse("3 °C.<｜hy_eos:opensource｜>", prompt=PROMPT)
    assert parsed.message == {"role": "assistant", "content": "3 °C."}
    assert not parsed.warnings


def test_a_conversation_parses_back_whole() -> None:
    written = pawlette.get_format("hy3").render(REQUEST).text
    parsed = pawlette.get_format("hy3").parse_conversation(written, strict=True)
    messages = parsed.to_request()["messages"]
    assert [message["role"] for message in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert messages[2]["reasoning_content"] == "Look it up."
    assert messages[2]["content"] == "Checking."
    assert _calls(messages[2]) == [("get_weather", {"city": "Zürich", "date": "today"})]
    assert messages[4]["content"] == "3 °C."
    assert messages[4]["reasoning_content"] == "It is cold."


# ------------------------------------------------------------------ the variants


@pytest.mark.parametrize("name", ["hy3:low", "hy3:high"])
def test_the_thinking_variants_render_as_the_template(name: str) -> None:
    fmt = pawlette.get_format(name)
    reference = corpus_reference("tencent-Hy3", variables=fmt.declaration.reference_variables())
    conversations = generate_conversations(12, seed=1, avoid=fmt.special_markers)
    report = compare_renders(fmt, reference, conversations)
    assert report.agrees, report.describe()
    # Their prompt opens the block: a turn with reasoning extends it.
    turns = own_turns(
        fmt,
        reference,
        generate_conversations(8, seed=2, avoid=fmt.special_markers, reasoning_always=True),
    )
    assert turns.agrees, turns.describe()


def test_the_thinking_prompt_opens_the_block() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    written = pawlette.get_format("hy3:high").render(messages, add_generation_prompt=True).text
    assert written.endswith(
        "<｜reasoning_mode:opensource｜>reasoning_effort:high<｜hy_User:opensource｜>Hi"
        + THINKING_PROMPT
    )


# ------------------------------------------------------------------ token ids


def test_ids_keep_user_text_out_of_the_special_tokens() -> None:
    fmt = pawlette.get_format("hy3")
    tokenizer = small_tokenizer(fmt.special_markers)
    request = {
        "messages": [
            {"role": "user", "content": "Is <tool_calls:opensource> a tag?"},
            {"role": "assistant", "content": "Yes."},
        ]
    }
    result = pawlette.tokenize(fmt, tokenizer, request)
    ids = list(result.input_ids)
    assert tokenizer.token_to_id("<tool_calls:opensource>") not in ids
    assert tokenizer.decode(ids, skip_special_tokens=False) == fmt.render(request).text


def test_no_prompt_is_written_after_an_assistant_message() -> None:
    """As the template: no prompt after an answer, asked for or not, and the turn left open."""
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]
    fmt = pawlette.get_format("hy3")
    assert fmt.render(messages).text.endswith("</think:opensource>Hello.")
    prompted = fmt.render(messages, add_generation_prompt=True).text
    assert prompted == fmt.render(messages).text
