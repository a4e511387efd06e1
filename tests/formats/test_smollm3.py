"""SmolLM3 (:mod:`pawlette.formats.smollm3`): the ``/no_think`` mode against the template,
the mode flags in the system text, what the models write (reasoning in ``<think>``) read
whole, streamed and from token ids, and the exported template."""

from __future__ import annotations

from typing import Any

import pytest

import pawlette

from ..declared.model_output import check_every_way
from ..support.conversations import generate_conversations
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import compare_renders, corpus_reference, own_turns
from .families.smollm3 import KEPT

SMOLLM3 = pawlette.get_format("smollm3")
NO_THINK = pawlette.get_format("smollm3:no-think")
TEMPLATE = "HuggingFaceTB-SmolLM3-3B"


def test_the_no_think_mode_renders_as_the_template() -> None:
    reference = corpus_reference(TEMPLATE, variables={"enable_thinking": False})
    conversations = generate_conversations(12, seed=1, avoid=NO_THINK.special_markers)
    report = compare_renders(NO_THINK, reference, conversations)
    assert report.agrees, report.describe()
    turns = own_turns(NO_THINK, reference, conversations, normalise=KEPT)
    assert turns.agrees, turns.describe()


@pytest.mark.parametrize(
    ("system", "fmt", "written"),
    [
        ("Be brief. /think", "smollm3", "Be brief."),
        ("/no_think Be brief.  ", "smollm3:no-think", " Be brief."),
        ("/no_think", "smollm3:no-think", "You are a helpful AI assistant named SmolLM"),
    ],
)
def test_a_flag_that_matches_the_mode_is_removed_as_the_template_removes_it(
    system: str, fmt: str, written: str
) -> None:
    request = {
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": "Hi"}]
    }
    reference = corpus_reference(TEMPLATE)  # the flag sets the template's mode itself
    expected = reference.render_request(request, add_generation_prompt=True).text
    rendering = pawlette.get_format(fmt).render(request, add_generation_prompt=True)
    assert rendering.text == expected
    assert f"## Custom Instructions\n\n{written}" in rendering.text
    assert rendering.losses and rendering.losses[0].startswith("messages[0].content")


@pytest.mark.parametrize(
    ("system", "loss"),
    [
        ("Be brief.", None),
        ("Be brief. \n", "messages[0].content: mode flags and trailing space removed"),
        (" \n", "messages[0].content: empty instructions: the default written"),
        ("", "messages[0].content: empty instructions: the default written"),
    ],
)
def test_a_system_text_without_flags_is_written_right_stripped_as_the_template_does(
    system: str, loss: str | None
) -> None:
    request = {
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": "Hi"}]
    }
    expected = corpus_reference(TEMPLATE).render_request(request, add_generation_prompt=True)
    rendering = SMOLLM3.render(request, add_generation_prompt=True)
    assert rendering.text == expected.text
    assert rendering.losses == (() if loss is None else (loss,))


@pytest.mark.parametrize(
    ("system", "fmt"), [("/no_think", "smollm3"), ("/think", "smollm3:no-think")]
)
def test_a_flag_for_the_other_mode_is_refused_with_the_variant_to_use(
    system: str, fmt: str
) -> None:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "Hi"}]
    with pytest.raises(pawlette.RequestError, match=r"messages\[0\]\.content.*use smollm3"):
        pawlette.get_format(fmt).render(messages)


def _reading(fmt: pawlette.Format, text: str) -> tuple[Any, ...]:
    messages, _, warnings = check_every_way(fmt, small_tokenizer(fmt.special_markers), text)
    (message,) = messages
    return message.text, message.reasoning, warnings


def test_reasoning_the_model_writes_is_read_in_either_mode() -> None:
    text = "<think>\nThe user greets.\n</think>\nHello!<|im_end|>"
    assert _reading(SMOLLM3, text) == ("Hello!", "The user greets.", [])
    # After the /no_think prompt (which closes an empty block) the answer is content.
    prompt = NO_THINK.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True)
    parsed = NO_THINK.parse("Hello!<|im_end|>", prompt=prompt.text)
    assert parsed.message == {"role": "assistant", "content": "Hello!"}


def test_an_answer_ending_in_blank_lines_ends_at_the_turn_end() -> None:
    # The lexer reads "\n\n<|im_end|>" (the marker that closes a reasoning block) whole;
    # in an answer the blank lines are text and "<|im_end|>" ends the turn, every way read.
    text = "Two.\n\nblank lines around\n\n<|im_end|>"
    assert _reading(SMOLLM3, text) == ("Two.\n\nblank lines around\n\n", None, [])


def test_what_is_dropped_is_said() -> None:
    call = {"id": "a", "type": "function", "function": {"name": "now", "arguments": "{}"}}
    tool = {"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}}
    request = {
        "messages": [
            {"role": "user", "content": "Time?"},
            {"role": "system", "content": "Later."},
            {"role": "assistant", "content": "\nLet me see.", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "a", "content": "12:00"},
        ],
        "tools": [tool],
    }
    rendering = SMOLLM3.render(request, add_generation_prompt=True)
    reference = corpus_reference(TEMPLATE)
    assert rendering.text == reference.render_request(request, add_generation_prompt=True).text
    assert set(rendering.losses) == {
        "messages[1]: a system message after the first, dropped",
        "messages[2].content: newlines at its start removed",
        "messages[3].role: a tool result written as a user turn",
        "messages[2].tool_calls: not written",
        "tools: not written",
    }


def test_the_exported_templates_write_what_the_formats_write() -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    tail = [
        {"role": "user", "content": "C"},
        {"role": "system", "content": "Dropped."},
        {"role": "assistant", "content": "\n\nNoon."},
        {"role": "tool", "tool_call_id": "a", "content": "12:00"},
    ]
    for fmt in (SMOLLM3, NO_THINK):
        for head in (
            [],
            [{"role": "system", "content": "A  "}],
            [{"role": "system", "content": ""}],
        ):
            messages = head + tail
            rendered, _ = render_jinja_template([messages], chat_template=export_jinja(fmt))
            assert rendered[0] == fmt.render(messages).text, (fmt.name, head)
