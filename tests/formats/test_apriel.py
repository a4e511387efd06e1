"""ServiceNow Apriel 1.5 (:mod:`pawlette.formats.apriel`): what the models write, read as
vLLM's ``apriel`` tool parser reads it (one JSON list between ``<tool_calls>`` and
``</tool_calls>``, text before it content, a model-written id read), whole, streamed and from
token ids (a tokenizer built with the format's special tokens); where pawlette reads
otherwise; the ids the template leaves out of the last message."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pawlette

from ..declared.model_output import check_every_way
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import corpus_reference

APRIEL = pawlette.get_format("apriel")
TEMPLATE = "unsloth-Apriel-1.5"
TOKENIZER = small_tokenizer(APRIEL.special_markers)
SEARCH = '{"name": "web_search", "arguments": {"query": "Iran news 2025"}}'
CALL_SEARCH = ("web_search", {"query": "Iran news 2025"})
WEATHER = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
CALL_WEATHER = ("get_weather", {"city": "Paris"})
END = "\n<|end|>\n</s>"

AS_VLLM = [
    ("Just text.", "Just text.", []),
    (f"<tool_calls>[{SEARCH}]</tool_calls>", None, [CALL_SEARCH]),
    (f"<tool_calls>[{SEARCH}, {WEATHER}]</tool_calls>", None, [CALL_SEARCH, CALL_WEATHER]),
    (f"Let me look.\n<tool_calls>[{SEARCH}]</tool_calls>{END}", "Let me look.", [CALL_SEARCH]),
    # An id the model writes is read (the template writes ids in past turns).
    (
        '<tool_calls>[{"name": "web_search", "arguments": {"query": "Iran news 2025"}, '
        '"id": "abc123"}]</tool_calls>',
        None,
        [CALL_SEARCH],
    ),
    # Stopped at <|end|>, before the end-of-sequence token.
    (f"<tool_calls>[{WEATHER}]</tool_calls>\n<|end|>", None, [CALL_WEATHER]),
]


def _reading(text: str) -> tuple[Any, ...]:
    messages, _, warnings = check_every_way(APRIEL, TOKENIZER, text)
    (message,) = messages
    calls = [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    return message.text or None, calls, warnings


@pytest.mark.parametrize(("text", "content", "calls"), AS_VLLM)
def test_what_models_write_reads_as_vllm_reads_it(
    text: str, content: str | None, calls: list[Any]
) -> None:
    assert _reading(text) == (content, calls, [])


def test_the_final_response_markers_stay_in_the_content() -> None:
    # The template never writes reasoning back: the text around the markers is content.
    text = (
        "The user wants news.\n[BEGIN FINAL RESPONSE]\nSearching.\n[END FINAL RESPONSE]\n"
        f"<tool_calls>[{SEARCH}]</tool_calls>"
    )
    content, calls, warnings = _reading(text)
    assert (content, calls, warnings) == (text.split("\n<tool_calls>")[0], [CALL_SEARCH], [])


def test_an_item_that_is_no_call_keeps_the_list_as_content_with_a_warning() -> None:
    # vLLM skips the item silently and keeps the other calls.
    text = f'<tool_calls>[{SEARCH}, {{"arguments": {{}}}}]</tool_calls>'
    content, calls, warnings = _reading(text)
    assert (content, calls) == (text, [])
    assert warnings


def test_the_last_message_is_written_without_ids() -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]
    last = APRIEL.render(messages, tools).text
    earlier = APRIEL.render([*messages, {"role": "tool", "content": "18C"}], tools).text
    assert last.endswith(
        '[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>' + END
    )
    assert '"id": "call_1"}]</tool_calls>' in earlier
    reference = corpus_reference(TEMPLATE)
    assert reference.render(messages, tools, add_generation_prompt=False).text == last


@pytest.mark.parametrize("first", [True, False])
def test_later_system_messages_are_turns_of_their_own_with_the_tools_again(first: bool) -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather?"},
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "Paris?"},
    ]
    if first:
        messages.insert(0, {"role": "system", "content": "Be brief."})
    rendered = APRIEL.render(messages, tools, add_generation_prompt=True).text
    reference = corpus_reference(TEMPLATE)
    assert reference.render(messages, tools, add_generation_prompt=True).text == rendered
    assert rendered.count("<available_tools>\n{") == 2  # its own turn, or the first message's
    # The default turn (the instructions alone) is written only without any system message.
    assert "[END FINAL RESPONSE].\n<|end|>" not in rendered
    back = APRIEL.parse_conversation(rendered, strict=True)
    assert back.add_generation_prompt
    parsed = back.to_request()["messages"]
    assert [message["role"] for message in parsed] == [m["role"] for m in messages]
