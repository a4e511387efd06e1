"""``Reasoning.after`` and :meth:`pawlette.declare.table.Table.begin_after`, on a tiny layout:
an answer right after another answer has no opener and no reasoning block (DeepSeek
V3.2's template writes it so), in the render, the exported template and the parse table."""

from __future__ import annotations

from typing import Any

import pytest

from pawlette.declare import Frame, Layout, Marker, Reasoning, declare, fence
from pawlette.errors import FormatError, ParseError
from pawlette.export import export_jinja

THINK, THINK_END = "<think>", "</think>"


def _layout(**reasoning: Any) -> Layout:
    return Layout(
        name="tiny-after",
        summary="answers after answers with no opener",
        frames={
            "user": Frame(open=fence(Marker("<u>"))),
            "assistant": Frame(
                open_after={"user": fence(Marker("<a>")), "assistant": ()},
                end=fence(Marker("<end>")),
            ),
        },
        concepts=(
            Reasoning(
                open=fence(THINK),
                close=fence(THINK_END),
                absent=fence(THINK_END),
                prompt="empty",
                **reasoning,
            ),
        ),
        markers_in_text=True,
    )


def _messages() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "One.", "reasoning_content": "first"},
        {"role": "assistant", "content": "Two.", "reasoning_content": "second"},
    ]


def test_an_answer_after_an_answer_writes_no_block_and_its_reasoning_is_a_loss() -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    fmt = declare(_layout(after=("user",)))
    messages = _messages()
    for prompt in (False, True):
        rendering = fmt.render(messages, add_generation_prompt=prompt)
        # (no generation prompt after an answer: the block's is written only after a user)
        assert rendering.text == "<u>Hi<a><think>first</think>One.<end>Two.<end>"
        assert rendering.losses == (
            "messages[2].reasoning_content: dropped (written only after a user message)",
        )
        rendered, _ = render_jinja_template(
            [messages], chat_template=export_jinja(fmt), add_generation_prompt=prompt
        )
        assert rendered[0] == rendering.text
    read = fmt.parse_conversation(rendering.text, strict=True).to_request()["messages"]
    assert read == [*messages[:2], {"role": "assistant", "content": "Two."}]
    # After a user message the prompt is the opener and the empty block.
    asked = fmt.render(messages[:1], add_generation_prompt=True).text
    assert asked == "<u>Hi<a><think></think>"


def test_a_block_after_an_answer_reads_as_the_text_it_is_written_as() -> None:
    """After an answer's end the next answer begins where no block opens: ``<think>`` there
    is its text, as the writer writes such a text."""
    fmt = declare(_layout(after=("user",)))
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "One."},
        {"role": "assistant", "content": "<think>x</think>Two."},
    ]
    text = fmt.render(messages).text
    assert text == "<u>Hi<a></think>One.<end><think>x</think>Two.<end>"
    read = fmt.parse_conversation(text, strict=True).to_request()["messages"]
    assert read == messages


def test_without_after_the_block_follows_any_turn() -> None:
    fmt = declare(_layout())
    text = fmt.render(_messages()).text
    assert text == "<u>Hi<a><think>first</think>One.<end><think>second</think>Two.<end>"


@pytest.mark.parametrize("after", [("user", "nobody"), ["user"]])
def test_after_names_roles_of_the_layout(after: Any) -> None:
    with pytest.raises(FormatError, match=r"Reasoning\.after"):
        _layout(after=after)


def test_a_completion_is_over_at_its_end_though_an_answer_may_follow() -> None:
    """A conversation reads an answer after an answer's end; a completion's turn is over
    there: text after it is stray (a warning, an error when strict), as for any format."""
    fmt = declare(_layout(after=("user",)))
    assert fmt.parse("One.<end>").message == {"role": "assistant", "content": "One."}
    parsed = fmt.parse("One.<end>Two.")
    assert parsed.warnings and "text after the end of the turn" in parsed.warnings[0].message
    with pytest.raises(ParseError, match="text after the end of the turn"):
        fmt.parse("One.<end>Two.", strict=True)
