"""Record shapes (ShareGPT, another messages field) and drop policies, against the encoder."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pawlette
from pawlette.declare import Frame, Layout, Marker, declare, fence
from pawlette.errors import PawletteError, RequestError, UnsupportedFeature
from pawlette.tokenization import ConversationEncoder, RecordTokenizer
from pawlette.tokenization.records import encode_records
from pawlette.tokenization.shapes import RecordShape, parse_drop

from ..support.small_bpe import small_tokenizer
from .support import llama3_all, small

SHAREGPT: dict[str, Any] = {
    "system": "Be brief.",
    "tools": json.dumps(
        [{"name": "get_weather", "description": "Weather", "parameters": {"type": "object"}}]
    ),
    "conversations": [
        {"from": "human", "value": "Weather in Paris?"},
        {"from": "function_call", "value": '{"name": "get_weather", "arguments": {"city": "P"}}'},
        {"from": "observation", "value": '{"sky": "clear"}'},
        {"from": "gpt", "value": "Clear.", "weight": 1},
    ],
}
OPENAI: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "call_1_0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "P"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1_0", "content": '{"sky": "clear"}'},
        {"role": "assistant", "content": "Clear.", "weight": 1},
    ],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather",
                "parameters": {"type": "object"},
            },
        }
    ],
}


def test_sharegpt_maps_to_the_openai_record() -> None:
    assert RecordShape(sharegpt=True).conversation(SHAREGPT) == (
        OPENAI["messages"],
        OPENAI["tools"],
    )
    for name in ("pcml", "breeze"):
        encoder = ConversationEncoder(name, llama3_all())
        (ids,) = encode_records(encoder, [SHAREGPT], shape=RecordShape(sharegpt=True)).results
        assert ids == encoder.encode(OPENAI)


def test_sharegpt_errors_name_the_turn() -> None:
    shape = RecordShape(sharegpt=True)
    bad = {"conversations": [{"from": "robot", "value": "x"}]}
    with pytest.raises(RequestError, match=r"conversations\[0\]\.from: found 'robot'"):
        shape.conversation(bad)
    orphan = {"conversations": [{"from": "observation", "value": "x"}]}
    with pytest.raises(RequestError, match="a function_call before an observation"):
        shape.conversation(orphan)
    with pytest.raises(RequestError, match="use --sharegpt"):
        RecordShape().conversation(SHAREGPT)
    with pytest.raises(RequestError, match="leave out --sharegpt"):
        shape.conversation(OPENAI)


def test_sharegpt_never_drops_a_system_or_turns_no_call_into_an_answer() -> None:
    """Found by the audit: a record's ``system`` that is not a string was dropped silently,
    and ``function_call`` holding ``[]`` became an empty assistant answer, learned."""
    shape = RecordShape(sharegpt=True)
    turns = [{"from": "human", "value": "q"}]
    for system in (5, ["x"], {"content": "x"}):
        with pytest.raises(RequestError, match=r"^system: a JSON \w+; expected a string"):
            shape.conversation({"conversations": turns, "system": system})
    assert shape.conversation({"conversations": turns, "system": None})[0] == [
        {"role": "user", "content": "q"}
    ]
    no_call = [*turns, {"from": "function_call", "value": "[]"}]
    with pytest.raises(RequestError, match=r"conversations\[1\]\.value: an empty list"):
        shape.conversation({"conversations": no_call})


def test_another_messages_field() -> None:
    record = {"dialogue": OPENAI["messages"], "tools": OPENAI["tools"]}
    assert RecordShape(messages_field="dialogue").conversation(record) == (
        OPENAI["messages"],
        OPENAI["tools"],
    )
    with pytest.raises(RequestError, match="record: keys dialogue, tools; expected a 'messages'"):
        RecordShape().conversation(record)


REASONING = {
    "messages": [
        {"role": "user", "content": "2+2?", "name": "ann"},
        {"role": "assistant", "content": "4", "reasoning_content": "Add them."},
        {"role": "user", "content": "3+3?"},
        {"role": "assistant", "content": "6", "reasoning_content": "Again."},
    ]
}
PLAIN = {
    "messages": [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "4"},
        {"role": "user", "content": "3+3?"},
        {"role": "assistant", "content": "6"},
    ]
}


def test_breeze_refuses_reasoning_unless_it_is_dropped_and_counted() -> None:
    encoder = ConversationEncoder("breeze", small("breeze"))
    (refused,) = encode_records(encoder, [REASONING]).results
    assert isinstance(refused, UnsupportedFeature)
    assert str(refused).startswith("messages[0].name")
    only_reasoning = encode_records(encoder, [REASONING], drop=parse_drop("reasoning"))
    assert isinstance(only_reasoning.results[0], UnsupportedFeature)  # the name still refused
    both = encode_records(encoder, [REASONING, PLAIN], drop=parse_drop("reasoning,name"))
    assert both.results[0] == both.results[1] == encoder.encode(PLAIN)
    assert both.dropped == {0: {"reasoning": 2, "name": 1}}


def test_a_format_that_writes_reasoning_keeps_it() -> None:
    encoder = ConversationEncoder("pcml", small("pcml"))
    record = {"messages": [{"role": "user", "content": "2+2?"}, *REASONING["messages"][1:]]}
    kept = encode_records(encoder, [record], drop=parse_drop("reasoning"))
    assert kept.dropped == {}
    assert kept.results[0] == encoder.encode(record)


def test_drop_spelling_and_the_record_tokenizer() -> None:
    with pytest.raises(RequestError, match="drop: found 'images'; expected among reasoning"):
        parse_drop("reasoning,images")
    function = RecordTokenizer("breeze", small("breeze"), drop="reasoning,name")
    assert function(REASONING)["input_ids"] == function(PLAIN)["input_ids"]
    with pytest.raises(PawletteError, match=r"records\[0\]: messages\[0\]\.name"):
        RecordTokenizer("breeze", small("breeze"))(REASONING)


def no_tools_block() -> pawlette.Format:
    """A declared format with turns alone: it refuses a request's tools."""
    frames = {
        role: Frame(open=fence(Marker(f"<|{role}|>")), end=fence(Marker("<|end|>")), after="\n")
        for role in ("system", "user", "assistant")
    }
    return declare(Layout(name="turns-only", summary="<|role|> turns", frames=frames))


def test_drop_tools_drops_a_listing_the_format_refuses_and_counts_it() -> None:
    fmt = no_tools_block()
    encoder = ConversationEncoder(fmt, small_tokenizer(fmt.special_markers))
    with_tools = {**PLAIN, "tools": OPENAI["tools"]}
    (refused,) = encode_records(encoder, [with_tools]).results
    assert isinstance(refused, UnsupportedFeature) and refused.path == "tools"
    assert str(refused) == "tools: 1 given; expected none: turns-only has no tools block"
    dropped = encode_records(encoder, [with_tools, PLAIN], drop=parse_drop("tools"))
    assert dropped.results[0] == dropped.results[1] == encoder.encode(PLAIN["messages"])
    assert dropped.dropped == {0: {"tools": 1}}
    assert dropped.results[0].losses == ()  # dropped before the render: nothing left out


def test_drop_tools_leaves_a_listing_the_format_writes() -> None:
    encoder = ConversationEncoder("chatml", small("chatml"))
    record = {**PLAIN, "tools": OPENAI["tools"]}
    kept = encode_records(encoder, [record], drop=parse_drop("tools"))
    assert kept.dropped == {}
    assert kept.results[0] == encoder.encode(PLAIN["messages"], OPENAI["tools"])
    assert kept.results[0] != encoder.encode(PLAIN["messages"])
