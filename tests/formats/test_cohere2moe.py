"""Command A MoE (``cohere:cohere2moe``, :mod:`pawlette.formats.cohere.moe`): what the model
writes after the generation prompt (which opens ``<|START_THINKING|>``), read as llama.cpp's
``cohere2moe`` handler reads it, whole, streamed and from token ids (a tokenizer with the
format's markers as special tokens); where pawlette reads otherwise; the first turn, the
reasoning of answers and calls, the results' ``{"content": ...}``; ids and masks."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pawlette
from pawlette.tokenization.encoder import IGNORE_INDEX

from ..declared.model_output import check_every_way
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import corpus_reference
from .weather import TOOLS, weather_call

MOE = pawlette.get_format("cohere:cohere2moe")
TEMPLATE = "Cohere2MoE"
TOKENIZER = small_tokenizer(MOE.special_markers)
ACTION = (
    "<|START_ACTION|>[\n"
    '    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}},\n'
    '    {"tool_call_id": "1", "tool_name": "get_weather", "parameters": {"city": "東京"}}\n'
    "]<|END_ACTION|>"
)
CALLS = [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "東京"})]
END = "<|END_OF_TURN_TOKEN|>"

# llama.cpp's handler: the output continues inside the prompt's thinking block, then either
# <|START_TEXT|>content<|END_TEXT|> or <|START_ACTION|>[...]<|END_ACTION|>, then the turn's end.
AS_LLAMA_CPP = [
    ("Easy.<|END_THINKING|><|START_TEXT|>4.<|END_TEXT|>" + END, "4.", "Easy.", []),
    ("<|END_THINKING|><|START_TEXT|>Hello!<|END_TEXT|>" + END, "Hello!", None, []),
    ("Two cities.<|END_THINKING|>" + ACTION + END, None, "Two cities.", CALLS),
    ("<|END_THINKING|>" + ACTION + END, None, None, CALLS),
    # Cut off while thinking: all reasoning.
    ("Still thinking", None, "Still thinking", []),
]


def _reading(text: str) -> tuple[Any, ...]:
    messages, _, warnings = check_every_way(MOE, TOKENIZER, text)
    (message,) = messages
    calls = [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    return message.text or None, message.reasoning or None, calls, warnings


@pytest.mark.parametrize(("text", "content", "reasoning", "calls"), AS_LLAMA_CPP)
def test_what_the_model_writes_reads_as_llama_cpp_reads_it(
    text: str, content: str | None, reasoning: str | None, calls: list[Any]
) -> None:
    assert _reading(text) == (content, reasoning, calls, [])


def test_a_second_thinking_opener_is_reasoning_text_with_a_warning() -> None:
    # llama.cpp's reasoning rule takes the opener whether the prompt or the model wrote it;
    # pawlette reads the prompt's, and a second one inside the block is text, with a warning.
    text = "<|START_THINKING|>Easy.<|END_THINKING|><|START_TEXT|>4.<|END_TEXT|>" + END
    content, reasoning, calls, warnings = _reading(text)
    assert (content, reasoning, calls) == ("4.", "<|START_THINKING|>Easy.", [])
    assert warnings


ROUND = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris and 東京?"},
    {
        "role": "assistant",
        "content": "",
        "reasoning_content": "Two cities.",
        "tool_calls": [weather_call("a1", "Paris"), weather_call("b2", "東京")],
    },
    {"role": "tool", "tool_call_id": "a1", "content": "18°C"},
    {"role": "tool", "tool_call_id": "b2", "content": '{"temp": 21}'},
    {"role": "assistant", "content": "18°C and 21°C.", "reasoning_content": "Both known."},
]


@pytest.mark.parametrize("prompt", [False, True])
@pytest.mark.parametrize("tools", [TOOLS, None])
def test_renders_as_the_template(prompt: bool, tools: Any) -> None:
    messages = ROUND if tools else [ROUND[0], ROUND[1], ROUND[-1]]
    rendering = MOE.render(messages, tools, add_generation_prompt=prompt)
    expected = corpus_reference(TEMPLATE).render(messages, tools, add_generation_prompt=prompt)
    assert rendering.text == expected.text
    assert "# Available Tools\n```json\n[\n" in rendering.text
    assert "<|START_TEXT|>Be brief.<|END_TEXT|>" in rendering.text
    assert "<|START_THINKING|>Both known.<|END_THINKING|><|START_TEXT|>" in rendering.text
    if tools:
        assert '"0": {"content": "{\\"temp\\": 21}"}' in rendering.text


def test_thinking_off_writes_an_empty_block_in_the_prompt() -> None:
    off = MOE.with_options(thinking=False)
    messages = [ROUND[1]]
    rendering = off.render(messages, add_generation_prompt=True)
    expected = corpus_reference(TEMPLATE, variables={"reasoning": False}).render(
        messages, None, add_generation_prompt=True
    )
    assert rendering.text == expected.text
    assert rendering.text.endswith("<|CHATBOT_TOKEN|><|START_THINKING|><|END_THINKING|>")


def test_the_mask_trains_the_turns_the_model_writes() -> None:
    tokens = pawlette.tokenize(MOE, TOKENIZER, {"messages": ROUND, "tools": TOOLS})
    learned = TOKENIZER.decode(
        [label for label in tokens.labels if label != IGNORE_INDEX], skip_special_tokens=False
    )
    assert learned.startswith("Two cities.<|END_THINKING|><|START_ACTION|>")
    assert learned.endswith(
        "Both known.<|END_THINKING|><|START_TEXT|>18°C and 21°C.<|END_TEXT|>" + END
    )
