"""The conversation generator: deterministic, every kind early, switches obeyed, labels true."""

from __future__ import annotations

import contextlib
import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings

from .conversations import (
    KINDS,
    TEXT_STYLES,
    TOOL_POOL,
    Conversation,
    Switches,
    conversation_strategy,
    generate_conversations,
)


def strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value (keys and call arguments included)."""
    if isinstance(value, str):
        yield value
        if value.startswith("{"):
            with contextlib.suppress(ValueError):
                yield from strings(json.loads(value))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def roles(conversation: Conversation) -> list[str]:
    return [message["role"] for message in conversation.messages]


def check_structure(conversation: Conversation) -> None:
    """What every generated conversation holds, whatever the switches."""
    messages = conversation.messages
    kinds = conversation.kinds
    assert kinds <= set(KINDS)
    assert any(message["role"] == "user" for message in messages)
    tool_names = {tool["function"]["name"] for tool in conversation.tools or []}
    assert ("tools" in kinds) == bool(tool_names)
    ids = set()
    for index, message in enumerate(messages):
        calls = message.get("tool_calls") or []
        for position, call in enumerate(calls):
            assert call["id"] not in ids
            ids.add(call["id"])
            assert call["function"]["name"] in tool_names
            json.loads(call["function"]["arguments"])
            # Each call is answered by one tool message, in order, right after the turn.
            result = messages[index + 1 + position]
            assert result["role"] == "tool" and result["tool_call_id"] == call["id"]
            if "name" in result:
                assert result["name"] == call["function"]["name"]
        if message["role"] == "tool":
            previous = next(m for m in reversed(messages[:index]) if m["role"] != "tool")
            assert previous.get("tool_calls"), "a tool message answers a call turn"
    assert f"ends-{messages[-1]['role']}" in kinds
    counts = [len(m.get("tool_calls") or []) for m in messages]
    assert ("parallel-calls" in kinds) == any(count > 1 for count in counts)
    assert ("call" in kinds) == any(count == 1 for count in counts)
    assert ("reasoning" in kinds) == any("reasoning_content" in m for m in messages)
    systems = [i for i, m in enumerate(messages) if m["role"] == "system"]
    assert ("system" in kinds) == (0 in systems)
    assert ("later-system" in kinds) == any("user" in roles(conversation)[:i] for i in systems)
    # More than one query: a user message after the model has answered.
    answered_then_asked = re.search(r"assistant.*user", " ".join(roles(conversation)))
    assert ("multi-turn" in kinds) == bool(answered_then_asked)
    consecutive = any(
        messages[i]["role"] == messages[i + 1]["role"] == "user" for i in range(len(messages) - 1)
    )
    assert ("consecutive-users" in kinds) == consecutive


def test_the_same_seed_gives_the_same_conversations() -> None:
    first = generate_conversations(20, seed=3)
    assert first == generate_conversations(20, seed=3)
    assert first != generate_conversations(20, seed=4)
    assert generate_conversations(25, seed=3)[:20] == first  # a longer list extends it
    assert [c.label for c in first[:2]] == ["seed 3 #0", "seed 3 #1"]


def test_thirty_conversations_hold_every_kind() -> None:
    conversations = generate_conversations(30)
    for conversation in conversations:
        check_structure(conversation)
    seen = {kind for conversation in conversations for kind in conversation.kinds}
    assert seen == set(KINDS)
    used_tools = {tool["function"]["name"] for c in conversations for tool in c.tools or []}
    assert used_tools == {tool["function"]["name"] for tool in TOOL_POOL}


def test_call_ids_are_nine_letters_and_digits_unless_told_otherwise() -> None:
    def ids(**switches: Any) -> list[str]:
        return [
            call["id"]
            for conversation in generate_conversations(20, **switches)
            for message in conversation.messages
            for call in message.get("tool_calls") or []
        ]

    assert ids() and all(re.fullmatch(r"[A-Za-z0-9]{9}", i) for i in ids())
    assert all(re.fullmatch(r"call_[A-Za-z0-9]{24}", i) for i in ids(call_ids="openai"))
    assert all(re.fullmatch(r"call_\d+", i) for i in ids(call_ids="numbered"))


TOOL_KINDS = {
    "tools",
    "call",
    "parallel-calls",
    "text-before-call",
    "empty-arguments",
    "nested-arguments",
    "several-call-rounds",
    "result-json",
    "result-text",
    "reasoning-with-call",
    "ends-tool",
}
REASONING_KINDS = {
    "reasoning",
    "reasoning-with-call",
    "reasoning-before-last-query",
    "reasoning-after-last-query",
}
SWITCHED: dict[str, tuple[dict[str, Any], set[str]]] = {
    "no tools": ({"tools": False}, TOOL_KINDS),
    "alternating": ({"alternating": True}, {"consecutive-users"}),
    "system first": ({"system_positions": ("first",)}, {"later-system", "several-systems"}),
    "no system": ({"system_positions": ("none",)}, {"system", "later-system", "several-systems"}),
    "no reasoning": ({"reasoning": False}, REASONING_KINDS),
    "reasoning only on answers": ({"reasoning_with_calls": False}, {"reasoning-with-call"}),
    "no names": ({"names": False}, {"named"}),
    "one call per turn": ({"parallel_calls": False}, {"parallel-calls"}),
    "calls without text": ({"text_with_calls": False}, {"text-before-call"}),
    "ends on the assistant": ({"endings": ("assistant",)}, {"ends-user", "ends-tool"}),
    "text results": ({"results": ("text",)}, {"result-json"}),
    "plain text": ({"texts": ("plain",)}, set(TEXT_STYLES) - {"plain"}),
    "one round of calls": ({"call_rounds": 1}, {"several-call-rounds"}),
    "no parameterless tool": ({"empty_arguments": False}, {"empty-arguments"}),
}


@pytest.mark.parametrize("case", SWITCHED)
def test_a_switch_removes_its_kinds_and_keeps_the_others(case: str) -> None:
    switches, removed = SWITCHED[case]
    conversations = generate_conversations(40, **switches)
    for conversation in conversations:
        check_structure(conversation)
    seen = {kind for conversation in conversations for kind in conversation.kinds}
    assert seen == set(KINDS) - removed
    if switches.get("alternating"):
        for conversation in conversations:
            talk = [role for role in roles(conversation) if role in ("user", "assistant")]
            assert all(
                not earlier == later == "user" for earlier, later in itertools.pairwise(talk)
            )
    if switches.get("system_positions") == ("first",):
        assert all(roles(c)[0] == "system" and roles(c).count("system") == 1 for c in conversations)
    if switches.get("names") is False:
        users = [m for c in conversations for m in c.messages if m["role"] == "user"]
        assert not any("name" in message for message in users)


def test_tool_names_can_be_left_out_of_results() -> None:
    results = [
        m
        for c in generate_conversations(20, tool_names=False)
        for m in c.messages
        if m["role"] == "tool"
    ]
    assert results and not any("name" in m for m in results)


def test_avoided_text_is_nowhere() -> None:
    avoid = ("<|im_start|>", "<think>", "[INST]", "é")
    conversations = generate_conversations(40, avoid=avoid)
    assert {"foreign-markers", "non-ascii"} <= {k for c in conversations for k in c.kinds}
    for conversation in conversations:
        for text in strings(conversation.request["messages"]):
            assert not any(avoided in text for avoided in avoid), text


def test_unknown_switch_values_are_refused() -> None:
    with pytest.raises(ValueError, match="endings"):
        Switches(endings=("system",))
    with pytest.raises(ValueError, match="texts"):
        Switches(texts=("poetry",))
    with pytest.raises(ValueError, match="leaves no text"):
        Switches(texts=("empty-text",), avoid=("",))


@settings(max_examples=25)
@given(conversation=conversation_strategy(tools=True, alternating=True, names=False))
def test_the_hypothesis_strategy_draws_the_same_space(conversation: Conversation) -> None:
    check_structure(conversation)
    assert "consecutive-users" not in conversation.kinds and "named" not in conversation.kinds
    assert conversation.label == "hypothesis"
