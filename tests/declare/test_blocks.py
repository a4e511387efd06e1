"""The block-turns concept (:mod:`pawlette.formats.omni.blocks`) on a user-declared format.

The generated checks (:mod:`.test_cross_artifacts`) draw text, calls and results; here the
user's format (:mod:`.user_blocks`, other markers than omni's) gets what only the concept's
blocks write: structured thinking, voice parts, actions, image requests, referenced images
with their tiles, and results inside the turn, drawn by omni's strategy (its text mixes in
omni's markers, plain text for this format).  For each conversation: the render equals the
exported template under transformers (text and generation mask), parsing the render gives
the conversation back (strictly), streamed in random pieces it folds the same, each assistant
turn parsed as a completion gives that message back, and token ids parse as text does.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.format import Format
from pawlette.formats.omni.blocks import BlockTurns
from pawlette.tokenization.ids import IdParser

from ..export.support import merged, trainable_spans
from ..helpers import (
    canonical,
    completion_text,
    feed_in_pieces,
    folded,
    random_sizes,
    sequential_ids,
)
from ..strategies import omni as strategy
from . import user_blocks, user_blocks_lean
from .test_cross_artifacts import jinja_render
from .tokens import segment_ids, tokenizer

BLOCKS = user_blocks.LAYOUT.concept(BlockTurns)
REFERENCES = len(BLOCKS.tiling.references)


@pytest.fixture(scope="module")
def fmt() -> Iterator[Format]:
    with user_blocks.registered():
        yield pawlette.get_format(user_blocks.LAYOUT.name)


def fits(request: dict[str, Any]) -> bool:
    """At most as many images a user message as the format has references."""
    for message in request["messages"]:
        content = message.get("content")
        images = sum(
            part["type"] == "image_url" for part in content or [] if isinstance(part, dict)
        )
        if message["role"] == "user" and images > REFERENCES:
            return False
    return True


@settings(max_examples=40, deadline=None)
@given(request=strategy.conversations().filter(fits), seed=st.integers(0, 10**6))
def test_every_block_round_trips_and_renders_as_its_template(
    fmt: Format, request: dict[str, Any], seed: int
) -> None:
    for prompt in (False, True):
        rendering = fmt.render(request, add_generation_prompt=prompt)
        text, spans = jinja_render(fmt, request, prompt)
        assert text == rendering.text
        assert merged(spans) == trainable_spans(rendering)
    full = fmt.render(request)
    parsed = fmt.parse_conversation(full.text, strict=True)
    default = BLOCKS.tiling.default_tokens
    assert parsed.to_request() == strategy.normalise(canonical(request), default)
    whole = folded(fmt, feed_in_pieces(fmt, full.text, [], conversation=True))
    pieces = feed_in_pieces(fmt, full.text, random_sizes(seed), conversation=True)
    assert folded(fmt, pieces) == whole
    for index, message in enumerate(request["messages"]):
        if message["role"] != "assistant":
            continue
        completion = completion_text(fmt, request, index)
        expected = canonical({"messages": [message]})["messages"][0]
        actual = fmt.parse(completion, strict=True).message
        for each in (expected, actual):
            for call in each.get("tool_calls", []):
                call["id"] = "*"
        assert actual == strategy.normalise_completion(expected)
        done = fmt.render(request["messages"][: index + 1], request.get("tools"))
        ids = segment_ids(fmt.name, done, start=len(done.text) - len(completion))
        parser = IdParser(fmt, tokenizer(fmt.name), id_factory=sequential_ids())
        generator = random.Random(seed)
        events, position = [], 0
        while position < len(ids):
            size = generator.choice([1, 2, 3, 7])
            events += parser.feed_ids(ids[position : position + size])
            position += size
        streamed = feed_in_pieces(fmt, completion, [len(completion) or 1], conversation=False)
        assert folded(fmt, events + parser.finish()) == folded(fmt, streamed)


def test_two_equal_tools_of_one_block_both_read_back(fmt: Format) -> None:
    # Each tool of the block is read as its own declaration; the second equals the tools
    # read so far, yet it is the block's next item, not a repeated block.
    tool = {"type": "action", "action": {"name": "A", "parameters": {}}}
    request = {"messages": [], "tools": [tool, tool]}
    parsed = fmt.parse_conversation(fmt.render(request).text, strict=True)
    assert parsed.to_request()["tools"] == [tool, tool]


LEAN_REQUEST = {
    "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "Looking.",
            "reasoning_content": "plan\nfind\nthe tool\ncall it",
            "reasoning_steps": [
                {"title": "find", "reasoning": "the tool", "conclusion": "call it"}
            ],
            "tool_calls": [
                {
                    "id": "c",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c", "content": "sunny"},
        {"role": "assistant", "content": "Sunny."},
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}],
}


@pytest.mark.parametrize(
    "part",
    [
        {"type": "voice", "voice": {"text": "hi", "prosody": {}}},
        {"type": "image_url", "image_url": {"url": "https://x/a.png"}},
    ],
)
def test_a_layout_without_a_block_refuses_its_parts(part: dict[str, Any]) -> None:
    from pawlette.errors import UnsupportedFeature

    with user_blocks_lean.registered() as lean:
        request = {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, part]}]}
        with pytest.raises(UnsupportedFeature, match=r"messages\[0\]\.content\[1\]"):
            lean.render(request)
        with pytest.raises(Exception, match="expected none"):
            jinja_render(lean, request, False)


def test_a_layout_with_some_blocks_writes_them_as_its_template() -> None:
    with user_blocks_lean.registered() as lean:
        for prompt in (False, True):
            rendering = lean.render(LEAN_REQUEST, add_generation_prompt=prompt)
            text, spans = jinja_render(lean, LEAN_REQUEST, prompt)
            assert text == rendering.text
            assert merged(spans) == trainable_spans(rendering)
        rendered = lean.render(LEAN_REQUEST).text
        assert "<|t|>plan\n<|step|>find\n<|r|>the tool\n<|c|>call it\n<|/t|>" in rendered
        assert "<|wait|>\nsunny\n<|got|>\nSunny.<|/a|>" in rendered
        parsed = lean.parse_conversation(rendered, strict=True).to_request()
        assert (
            parsed["messages"][1]["reasoning_steps"]
            == LEAN_REQUEST["messages"][1]["reasoning_steps"]
        )
        assert [m["role"] for m in parsed["messages"]] == ["user", "assistant", "tool", "assistant"]
