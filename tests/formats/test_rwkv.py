"""RWKV World (:mod:`pawlette.formats.rwkv`): the ``enable_thinking`` variants against the
template; what the model writes after its ``Assistant:`` prompt, read whole, streamed and
from token ids (a tokenizer built with the format's special tokens), a blank line inside an
answer included; the template's layouts the declaration decided on."""

from __future__ import annotations

from typing import Any

import pytest

import pawlette

from ..declared.model_output import check_every_way
from ..support.conversations import generate_conversations
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import compare_renders, corpus_reference, own_turns
from .families.rwkv import kept

RWKV = pawlette.get_format("rwkv")
TEMPLATE = "llama-cpp-rwkv-world"
TOKENIZER = small_tokenizer(RWKV.special_markers)


def test_the_prompt_is_what_llama_cpp_finds_and_the_stop_is_the_blank_line() -> None:
    # llama.cpp's tests/test-chat-auto-parser.cpp finds this template's user start "User:"
    # and assistant start "Assistant:"; its converter makes "\n\n" the end-of-turn token.
    prompt = RWKV.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True).text
    assert prompt == "<s>User: Hi\n\nAssistant:"
    assert RWKV.stop == ("\n\n", "<s>")  # and the model's end-of-sequence token


@pytest.mark.parametrize(
    ("variant", "thinking"), [("rwkv:thinking", True), ("rwkv:no-thinking", False)]
)
def test_the_thinking_variants_render_as_the_template(variant: str, thinking: bool) -> None:
    fmt = pawlette.get_format(variant)
    variables = {"enable_thinking": thinking}
    reference = corpus_reference(TEMPLATE, variables=variables, empty_content=True)
    conversations = generate_conversations(12, seed=1, avoid=fmt.special_markers)
    report = compare_renders(fmt, reference, conversations)
    assert report.agrees, report.describe()
    # The prompt ends with what past turns never hold: a turn is read after the opener.
    tail = "<think>" if thinking else "<think>\n</think>"
    turns = own_turns(fmt, reference, conversations, normalise=kept, prompt_tail=tail)
    assert turns.agrees, turns.describe()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (" Sunny, 18°C.\n\n", {"content": "Sunny, 18°C."}),
        ("Sunny.", {"content": "Sunny."}),  # no space, cut before the end
        # A blank line inside the answer is the answer's: only the last one ends the turn.
        (" # Title\n\n**bold**\n\n", {"content": "# Title\n\n**bold**"}),
        (" one\n\ntwo", {"content": "one\n\ntwo"}),
        # The model's end-of-sequence token ends the turn too (llama.cpp stops on both).
        (" Sunny.<s>", {"content": "Sunny."}),
        (" Sunny.\n\n<s>", {"content": "Sunny."}),
    ],
)
def test_what_the_model_writes_reads_back(text: str, expected: dict[str, Any]) -> None:
    messages, _, warnings = check_every_way(RWKV, TOKENIZER, text)
    (message,) = messages
    assert ({"content": message.text}, warnings) == (expected, [])


def test_the_thinking_variant_reads_reasoning_up_to_the_close() -> None:
    thinking = pawlette.get_format("rwkv:thinking")
    prompt = thinking.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True)
    assert prompt.text == "<s>User: Hi\n\nAssistant: <think>"
    message = thinking.parse("Greet back.\n\nBriefly.</think> Hello!\n\n").message
    assert message == {
        "role": "assistant",
        "content": "Hello!",
        "reasoning_content": "Greet back.\n\nBriefly.",
    }


def test_the_no_thinking_variant_reads_the_answer_after_the_empty_block() -> None:
    quiet = pawlette.get_format("rwkv:no-thinking")
    prompt = quiet.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True)
    assert prompt.text == "<s>User: Hi\n\nAssistant: <think>\n</think>"
    assert quiet.parse("\nHello!\n\n").message == {"role": "assistant", "content": "Hello!"}


def test_a_conversation_reads_back_with_blank_lines_in_its_texts() -> None:
    messages = [
        {"role": "system", "content": "Be brief.\n\nBe kind."},
        {"role": "user", "content": "Two\n\nparagraphs?"},
        {"role": "assistant", "content": "Yes.\n\nTwo."},
        {"role": "user", "content": "Thanks."},
    ]
    rendering = RWKV.render(messages)
    assert rendering.text == (
        "<s>System: Be brief.\n\nBe kind.\n\nUser: Two\n\nparagraphs?\n\n"
        "Assistant: Yes.\n\nTwo.\n\nUser: Thanks.\n\n"
    )
    assert list(RWKV.parse_conversation(rendering.text).messages) == messages


def test_only_the_last_system_text_is_written_and_only_when_not_empty() -> None:
    user = {"role": "user", "content": "Hi"}
    first = {"role": "system", "content": "First."}
    last = {"role": "system", "content": "Last. "}
    rendering = RWKV.render([first, user, last])
    assert rendering.text == "<s>System: Last. \n\nUser: Hi\n\n"  # not trimmed
    assert rendering.losses == ("messages[0]: a system message before the last, dropped",)
    empty = RWKV.render([first, user, {"role": "system", "content": ""}])
    assert empty.text == "<s>User: Hi\n\n"
    assert "messages[2]: a system message with empty text, written as none" in empty.losses


def test_an_answer_is_written_from_after_its_last_think_close_and_trimmed() -> None:
    messages = [
        {"role": "user", "content": "  Hi "},
        {"role": "assistant", "content": "a</think>b</think>\n Hello \n"},
    ]
    rendering = RWKV.render(messages)
    assert rendering.text == "<s>User: Hi\n\nAssistant: Hello\n\n"
    assert rendering.losses == (
        "messages[0].content: whitespace at its ends trimmed",
        "messages[1].content: its text up to its last '</think>' is not written",
        "messages[1].content: whitespace at its ends trimmed",
    )


def test_tools_calls_and_results_are_dropped_as_the_template_drops_them() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
    ]
    rendering = RWKV.render(messages, add_generation_prompt=True)
    assert rendering.text == "<s>User: Hi\n\nAssistant: \n\nAssistant:"
    assert rendering.losses == (
        "messages[2]: a tool message: not written",
        "messages[1].tool_calls: not written",
    )


def test_a_forced_call_is_refused_and_tools_under_auto_are_dropped() -> None:
    from pawlette.export import export_grammar_bundle

    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    with pytest.raises(pawlette.RequestError, match=r"^tool_choice: .* has no tool calls"):
        export_grammar_bundle(RWKV, tools, "required")
    bundle: dict[str, Any] = export_grammar_bundle(RWKV, tools, "auto")
    assert bundle["trigger"] is None and bundle["forced_prefix"]["functions"] == {}
