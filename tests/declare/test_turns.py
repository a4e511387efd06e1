"""Turns the frames can say: without an opener (begun by the turn before), without an end
(ended by the next opener), openers that depend on the turn before, bare and gathered system
text; and calls whose name is outside their arguments or written as tags.  Each is rendered,
read back as a conversation, and read as a completion whole and in pieces."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.declare import (
    Frame,
    Ignored,
    JsonCallList,
    Layout,
    Marker,
    NamedCalls,
    Reasoning,
    Results,
    SystemPrompt,
    ToolsBlock,
    XmlCalls,
    declare,
    fence,
)
from pawlette.errors import ParseError
from pawlette.format import Format

from ..helpers import canonical, feed_in_pieces, folded, random_sizes

M = Marker
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "exact": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["city"],
        },
    },
}


def call(number: int, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"abcdefgh{number}",
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


# A Mistral-like layout: the assistant's turn has no opener, results carry call ids.
IMPLICIT = declare(
    Layout(
        name="implicit",
        summary="assistant turns with no opener",
        begin=fence(M("<s>")),
        frames={
            "system": Frame(open=fence(M("[SYS]")), end=fence(M("[/SYS]"))),
            "user": Frame(open=fence(M("[INST]")), end=fence(M("[/INST]"))),
            "assistant": Frame(end=fence(M("</s>"))),
            "tool": Frame(open=fence(M("[RES]")), end=fence(M("[/RES]"))),
        },
        concepts=(
            SystemPrompt(),
            Ignored(("tools",)),
            NamedCalls(
                open=fence(M("[CALLS]")),
                id_open=fence(M("[ID]")),
                arguments_open=fence(M("[ARGS]")),
                content="dropped",
            ),
            Results(id_close=fence(M("[CONTENT]"))),
        ),
    )
)

# A DeepSeek-like layout: bare, gathered system text; user turns with no end; the assistant's
# opener only after a user turn; calls in a section.
OPEN_ENDED = declare(
    Layout(
        name="open-ended",
        summary="user turns with no end",
        begin=fence(M("<bos>")),
        frames={
            "system": Frame(),
            "user": Frame(open=fence(M("<U>"))),
            "assistant": Frame(
                open_after={"user": fence(M("<A>"), M("<t>"), M("</t>"))},
                prompt_after={"user": fence(M("<A>"), M("<t>"))},
                end=fence(M("<eos>")),
            ),
            "tool": Frame(open=fence(M("<out>")), end=fence(M("</out>"))),
        },
        concepts=(
            SystemPrompt(placement="gathered"),
            Reasoning(open=fence(M("<t>")), close=fence(M("</t>")), keep="none", prompt="opened"),
            NamedCalls(
                section_open=fence(M("<calls>")),
                section_close=fence(M("</calls>")),
                open=fence(M("<call>")),
                arguments_open=fence(M("<sep>")),
                close=fence(M("</call>")),
            ),
            Results(),
        ),
    )
)

# Qwen3-Coder-like calls: a tag per parameter, values typed by the tool's schema.
TAGGED = declare(
    Layout(
        name="tagged",
        summary="calls as tags",
        frames={
            role: Frame(open=fence(M("<|im_start|>"), f"{role}\n"), end=fence(M("<|im_end|>")))
            for role in ("system", "user", "assistant")
        }
        | {"tool": Frame(open=fence(M("<|im_start|>"), "tool\n"), end=fence(M("<|im_end|>")))},
        concepts=(
            SystemPrompt(),
            ToolsBlock(place="system", open=fence("<tools>"), close=fence("</tools>"), array=True),
            XmlCalls(
                open=fence(M("<tool_call>"), "\n<function="),
                name_close=fence(">\n"),
                key_open=fence("<parameter="),
                key_close=fence(">\n"),
                value_close=fence("\n</parameter>\n"),
                close=fence("</function>\n", M("</tool_call>")),
                separator=fence("\n"),
                text_separator=fence("\n"),
                values="python",
            ),
            Results(),
        ),
    )
)

CONVERSATION = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris and Köln?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call(1, {"city": "Paris"}),
                call(2, {"city": "Köln", "days": 2, "exact": True, "tags": ["a"]}),
            ],
        },
        {"role": "tool", "tool_call_id": "abcdefgh1", "content": "18C"},
        {"role": "tool", "tool_call_id": "abcdefgh2", "content": "20C"},
        {"role": "assistant", "content": "Warm in both."},
        {"role": "user", "content": "Thanks!"},
    ],
    "tools": [WEATHER],
}


def test_a_turn_with_no_opener_is_begun_by_the_turn_before() -> None:
    text = IMPLICIT.render(CONVERSATION, add_generation_prompt=True).text
    assert text == (
        "<s>[SYS]Be brief.[/SYS][INST]Weather in Paris and Köln?[/INST]"
        '[CALLS]get_weather[ID]abcdefgh1[ARGS]{"city": "Paris"}'
        '[CALLS]get_weather[ID]abcdefgh2[ARGS]{"city": "Köln", "days": 2, "exact": true, '
        '"tags": ["a"]}</s>[RES]abcdefgh1[CONTENT]18C[/RES][RES]abcdefgh2[CONTENT]20C[/RES]'
        "Warm in both.</s>[INST]Thanks![/INST]"
    )
    parsed = IMPLICIT.parse_conversation(text, strict=True)
    assert canonical(parsed.to_request()) == canonical(
        {"messages": CONVERSATION["messages"], "tools": []}
    )


def test_an_absent_implicit_turn_leaves_no_message() -> None:
    text = "<s>[INST]a[/INST][INST]b[/INST]"  # no assistant between the two
    messages = IMPLICIT.parse_conversation(text, strict=True).messages
    assert messages == [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]


def test_turns_with_no_end_end_where_the_next_opens() -> None:
    request = {**CONVERSATION, "tools": []}
    text = OPEN_ENDED.render(request, add_generation_prompt=True).text
    assert text == (
        "<bos>Be brief.<U>Weather in Paris and Köln?<A><t></t><calls>"
        '<call>get_weather<sep>{"city": "Paris"}</call>'
        '<call>get_weather<sep>{"city": "Köln", "days": 2, "exact": true, "tags": ["a"]}</call>'
        "</calls><eos><out>18C</out><out>20C</out>Warm in both.<eos><U>Thanks!<A><t>"
    )
    parsed = OPEN_ENDED.parse_conversation(text.removesuffix("<A><t>"), strict=True)
    expected = json.loads(json.dumps(request["messages"]))
    for index, message in enumerate(expected[2]["tool_calls"]):
        message["id"] = f"call_{index}"
    expected[3]["tool_call_id"], expected[4]["tool_call_id"] = "call_0", "call_1"
    assert canonical(parsed.to_request()) == canonical({"messages": expected, "tools": []})


def test_a_prompt_that_opens_reasoning_reads_the_completion_inside_it() -> None:
    result = OPEN_ENDED.parse("Let me see.</t>Sunny.<eos>")
    assert result.message == {
        "role": "assistant",
        "content": "Sunny.",
        "reasoning_content": "Let me see.",
    }
    cut = OPEN_ENDED.parse("Still thinking", finish_reason="length")
    assert cut.message["reasoning_content"] == "Still thinking"
    assert cut.finish_reason == "length"


@pytest.mark.parametrize(
    ("fmt", "completion"),
    [
        (IMPLICIT, '[CALLS]get_weather[ARGS]{"city": "Paris"}[CALLS]get_weather[ARGS]{}</s>'),
        (
            OPEN_ENDED,
            '</t><calls><call>get_weather<sep>{"city": "Paris"}</call>'
            "<call>get_weather<sep>{}</call></calls><eos>",
        ),
        (
            TAGGED,
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
            "</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n</function>\n"
            "</tool_call><|im_end|>",
        ),
    ],
)
def test_calls_read_whole_and_in_any_pieces(fmt: Format, completion: str) -> None:
    result = fmt.parse(completion, strict=True, tools=[WEATHER])
    calls = result.message["tool_calls"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [{"city": "Paris"}, {}]
    assert result.finish_reason == "tool_calls"
    whole = folded(fmt, feed_in_pieces(fmt, completion, [len(completion)], conversation=False))
    for seed in range(20):
        pieces = feed_in_pieces(fmt, completion, random_sizes(seed), conversation=False)
        assert folded(fmt, pieces)[:2] == whole[:2]


@pytest.mark.parametrize(
    ("fmt", "completion", "problem"),
    [
        (IMPLICIT, '[CALLS][ARGS]{"city": "Paris"}</s>', "no call name"),
        (IMPLICIT, '[CALLS]get_weather[ARGS]{"city": </s>', "not valid JSON"),
        (IMPLICIT, "[CALLS]get_weather[ARGS][1, 2]</s>", "not a JSON object"),
        (IMPLICIT, "[CALLS]get_wether[ARGS]{}</s>", "no tool named 'get_wether'"),
        (IMPLICIT, "[CALLS]get_weather</s>", "no arguments"),
        (
            OPEN_ENDED,
            "</t><calls><call>get_weather<sep>{}",
            "the call is not closed",
        ),
        (
            TAGGED,
            "<tool_call>\n<function=get_weather>\n<parameter=days>\nthree\n</parameter>\n"
            "</function>\n</tool_call><|im_end|>",
            "parameter 'days': 'three' is not of its schema's type",
        ),
        (
            TAGGED,
            "<tool_call>\n<function=get_weather>\nhello\n</function>\n</tool_call><|im_end|>",
            "'\\nhello\\n' after the parameters",
        ),
    ],
)
def test_a_malformed_call_is_content_with_one_warning(
    fmt: Format, completion: str, problem: str
) -> None:
    result = fmt.parse(completion, tools=[WEATHER])
    assert "tool_calls" not in result.message
    assert len(result.warnings) == 1 and problem in result.warnings[0].message
    body = completion
    for stop in fmt.stop:
        body = body.removesuffix(stop)
    content = (result.message.get("reasoning_content") or "") + (result.message["content"] or "")
    assert body.removeprefix("</t>") in content or content in body
    with pytest.raises(ParseError, match=re.escape(problem[:12])):
        fmt.parse(completion, tools=[WEATHER], strict=True)


def test_tag_values_are_typed_by_the_schema_and_written_back_as_the_template_does() -> None:
    text = TAGGED.render(CONVERSATION).text
    assert "<parameter=exact>\nTrue\n</parameter>" in text  # values="python": str(True)
    assert '<parameter=tags>\n["a"]\n</parameter>' in text
    loose = (
        "<tool_call><function=get_weather><parameter=city>Paris</parameter>"
        "<parameter=exact>True</parameter><parameter=days>3</parameter></function></tool_call>"
    )
    arguments = TAGGED.parse(loose, tools=[WEATHER], strict=True).message["tool_calls"][0]
    assert json.loads(arguments["function"]["arguments"]) == {
        "city": "Paris",
        "exact": True,
        "days": 3,
    }
    # A string parameter keeps its text, quotes and digits included.
    quoted = TAGGED.parse(
        '<tool_call>\n<function=get_weather>\n<parameter=city>\n"42"\n</parameter>\n'
        "</function>\n</tool_call>",
        tools=[WEATHER],
        strict=True,
    )
    assert json.loads(quoted.message["tool_calls"][0]["function"]["arguments"]) == {"city": '"42"'}


@settings(max_examples=40)
@given(
    city=st.text(st.characters(codec="utf-8", exclude_characters="<>"), max_size=12),
    days=st.integers(-5, 400),
)
def test_what_each_layout_writes_reads_back(city: str, days: int) -> None:
    request = {
        "messages": [
            {"role": "user", "content": "w?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call(1, {"city": city, "days": days})],
            },
        ],
        "tools": [WEATHER],
    }
    for fmt in (IMPLICIT, TAGGED):
        text = fmt.render(request).text
        parsed = fmt.parse_conversation(text, strict=True).messages[1]["tool_calls"][0]
        assert json.loads(parsed["function"]["arguments"]) == {"city": city, "days": days}


# Mistral-Nemo-like calls: one JSON array of call objects holding their ids.
LISTED = declare(
    Layout(
        name="listed",
        summary="calls as one JSON array",
        frames={
            "user": Frame(open=fence(M("[INST]")), end=fence(M("[/INST]"))),
            "assistant": Frame(end=fence(M("</s>"))),
            "tool": Frame(open=fence(M("[RES]")), end=fence(M("[/RES]"))),
        },
        concepts=(
            Ignored(("tools",)),
            JsonCallList(
                open=fence(M("[CALLS]")),
                keys=(("name", "name"), ("arguments", "arguments"), ("id", "id")),
            ),
            Results(),
        ),
    )
)


def test_a_call_list_is_written_and_read_back_with_its_ids() -> None:
    request = {"messages": CONVERSATION["messages"][1:6], "tools": [WEATHER]}
    text = LISTED.render(request).text
    assert (
        '[CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abcdefgh1"}, '
        '{"name": "get_weather", "arguments": {"city": "Köln", "days": 2, "exact": true, '
        '"tags": ["a"]}, "id": "abcdefgh2"}]</s>'
    ) in text
    parsed = LISTED.parse_conversation(text, strict=True).messages[1]
    assert [call["id"] for call in parsed["tool_calls"]] == ["abcdefgh1", "abcdefgh2"]
    loose = LISTED.parse('[CALLS] [{"arguments": "{\\"city\\": \\"X\\"}", "name": "get_weather"}]')
    assert json.loads(loose.message["tool_calls"][0]["function"]["arguments"]) == {"city": "X"}
    broken = LISTED.parse('[CALLS][{"name": "get_weather", "arguments": [1]}]</s>')
    assert "tool_calls" not in broken.message and len(broken.warnings) == 1
