"""The optional fields Cohere's Command R7B needs, on a tiny layout: ``JsonCallList``'s array
layout and ``ids="positional"``, ``Results(ids="positional")``, ``Reasoning(keep="calls")``,
``SystemPrompt(empty_first="own_turn")`` and :class:`~pawlette.declare.PromptAlways`; each
written as the exported Jinja template writes it, and read back."""

from __future__ import annotations

from typing import Any

import pytest
from transformers.utils.chat_template_utils import render_jinja_template

from pawlette.declare import (
    Frame,
    JsonCallList,
    JsonCalls,
    Layout,
    Marker,
    PromptAlways,
    Reasoning,
    Results,
    SystemPrompt,
    declare,
    fence,
)
from pawlette.errors import FormatError
from pawlette.export import export_jinja
from pawlette.format import Format

END = Marker("<end>")
THINK, THOUGHT = Marker("<think>"), Marker("</think>")
ACT, ACTED = Marker("<act>"), Marker("</act>")
RESULT, TEXT = Marker("<rid>"), Marker("<rtext>")


def _layout(prompt: str = "empty") -> Layout:
    return Layout(
        name="positions",
        summary="calls numbered by position",
        frames={
            "system": Frame(open=fence(Marker("<system>")), end=fence(END)),
            "user": Frame(open=fence(Marker("<user>")), end=fence(END)),
            "assistant": Frame(open=fence(Marker("<assistant>")), end=fence(END)),
            "tool": Frame(open=fence(Marker("<tool>"), RESULT), end=fence(END)),
        },
        concepts=(
            SystemPrompt(always=True, preamble=fence("Fixed."), empty_first="own_turn"),
            Reasoning(open=fence(THINK), close=fence(THOUGHT), keep="calls", prompt=prompt),  # type: ignore[arg-type]
            JsonCallList(
                open=fence(ACT),
                close=fence(ACTED),
                keys=(("id", "id"), ("name", "name"), ("arguments", "arguments")),
                content="dropped",
                list_open="[\n  ",
                list_close="\n]",
                item_separator=",\n  ",
                ids="positional",
            ),
            Results(
                grouped=True,
                id_close=fence(TEXT),
                item_close=fence(Marker("<rend>")),
                item_gap=fence(RESULT),
                gap_ends_group=False,
                ids="positional",
            ),
            PromptAlways(),
        ),
    )


def _call(identifier: str, name: str = "f") -> dict[str, Any]:
    return {"id": identifier, "type": "function", "function": {"name": name, "arguments": "{}"}}


MESSAGES = [
    {"role": "system", "content": ""},
    {"role": "user", "content": "go"},
    {
        "role": "assistant",
        "content": "dropped",
        "reasoning_content": "plan",
        "tool_calls": [_call("x"), _call("y", "g")],
    },
    {"role": "tool", "tool_call_id": "x", "content": "1"},
    {"role": "tool", "tool_call_id": "nowhere", "content": "2"},
    {"role": "assistant", "content": None, "tool_calls": [_call("2")]},
    {"role": "tool", "tool_call_id": "2", "content": "3"},
    {"role": "assistant", "content": "done", "reasoning_content": "dropped too"},
]


def _jinja(fmt: Format, messages: list[dict[str, Any]], prompt: bool) -> str:
    rendered, _ = render_jinja_template(
        [messages], chat_template=export_jinja(fmt), add_generation_prompt=prompt
    )
    return str(rendered[0])


def test_calls_and_results_are_numbered_by_position_and_given_ids_are_losses() -> None:
    fmt = declare(_layout())
    rendering = fmt.render(MESSAGES)
    assert rendering.text == (
        "<system>Fixed.<end><system><end><user>go<end>"
        "<assistant><think>plan</think><act>[\n"
        '  {"id": "0", "name": "f", "arguments": {}},\n'
        '  {"id": "1", "name": "g", "arguments": {}}\n'
        "]</act><end>"
        "<tool><rid>0<rtext>1<rend><rid><rtext>2<rend><end>"
        '<assistant><think></think><act>[\n  {"id": "2", "name": "f", "arguments": {}}\n]'
        "</act><end>"
        "<tool><rid>2<rtext>3<rend><end>"
        "<assistant>done<end>"
        "<assistant><think></think>"
    )
    assert _jinja(fmt, MESSAGES, False) == rendering.text
    assert sorted(loss.split(":")[0] for loss in rendering.losses) == [
        "messages[2].content",
        "messages[2].tool_calls[0].id",
        "messages[2].tool_calls[1].id",
        "messages[3].tool_call_id",
        "messages[4].tool_call_id",
        "messages[7].reasoning_content",
    ]
    # The empty block the prompt writes is the prompt's in a past turn too: not trainable.
    block = [s for s in rendering.segments if s.message_index == 5 and s.kind == "reasoning"]
    assert [s.trainable for s in block] == [False, False]


def test_the_render_reads_back_as_written() -> None:
    fmt = declare(_layout())
    parsed = fmt.parse_conversation(fmt.render(MESSAGES).text, strict=True).messages
    # The format's system turn (its preamble alone) is no message, the empty one after it is
    # the empty system message; the prompt at the end is none.
    assert parsed[0] == {"role": "system", "content": ""}
    roles = ["user", "assistant", "tool", "tool", "assistant", "tool", "assistant"]
    assert [message["role"] for message in parsed[1:]] == roles
    parsed = parsed[1:]
    assert parsed[1]["reasoning_content"] == "plan"
    assert [call["id"] for call in parsed[1]["tool_calls"]] == ["0", "1"]
    assert [parsed[2]["tool_call_id"], parsed[3]["tool_call_id"]] == ["0", ""]
    assert "reasoning_content" not in parsed[4]  # an empty block is no reasoning


@pytest.mark.parametrize("prompt", ["empty", ""])
def test_the_prompt_is_written_asked_or_not(prompt: str) -> None:
    fmt = declare(_layout(prompt))
    done = MESSAGES[1:3]
    asked = fmt.render(done, add_generation_prompt=True).text
    assert fmt.render(done).text == asked
    assert asked.endswith("<assistant>" + ("<think></think>" if prompt else ""))
    assert _jinja(fmt, done, True) == _jinja(fmt, done, False) == asked


def test_positional_result_ids_need_the_results_id() -> None:
    with pytest.raises(FormatError, match=r"Results\.ids"):
        declare(
            Layout(
                name="positions",
                summary="results without ids",
                frames=_layout().frames,
                concepts=(Results(ids="positional"),),
            )
        )


CALL = {"id": "call_0", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
CALL_TURNS = (
    {"role": "user", "content": "go"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_0", "content": "1"},
    {"role": "assistant", "content": "done"},
)
"""A call, its result and the answer (the bare-call layouts below)."""


@pytest.mark.parametrize("prompt_first", [False, True])
def test_a_bare_call_turn_reads_back_after_a_prompt_the_template_always_writes(
    prompt_first: bool,
) -> None:
    """A concept reading the assistant's turn its own way (a bare JSON call) keeps reading it
    when the template always ends with the generation prompt, whichever comes first."""
    calls = JsonCalls(open=None, parallel=False, with_content=False)
    concepts = (PromptAlways(), calls) if prompt_first else (calls, PromptAlways())
    fmt = declare(
        Layout(
            name="bare-prompt-always",
            summary="a bare call; the prompt always written",
            frames={
                "user": Frame(open=fence(Marker("<user>")), end=fence(END)),
                "assistant": Frame(open=fence(Marker("<assistant>")), end=fence(END)),
                "tool": Frame(open=fence(Marker("<tool>")), end=fence(END)),
            },
            concepts=(*concepts, Results(grouped=False)),
        )
    )

    messages = list(CALL_TURNS)
    text = fmt.render(messages).text
    assert text.endswith("<assistant>")  # the prompt, written though not asked for
    parsed = fmt.parse_conversation(text, strict=True).to_request()["messages"]
    assert [m["role"] for m in parsed] == ["user", "assistant", "tool", "assistant"]
    assert parsed[1]["tool_calls"][0]["function"] == CALL["function"]
    assert parsed[3]["content"] == "done"
    written = fmt.parse('{"name": "f", "arguments": {"a": 1}}<end>', strict=True).message
    assert written["tool_calls"][0]["function"]["name"] == "f"


def test_a_bare_call_turn_with_no_opener_is_a_message_only_when_something_is_read() -> None:
    """A turn with no opener may not be there (it begins pending after every end); a concept
    reading it its own way (a bare JSON call) makes it real only when it reads something, so
    no empty assistant message follows each turn."""
    fmt = declare(
        Layout(
            name="bare-no-opener",
            summary="a bare call in an assistant turn with no opener",
            frames={
                "user": Frame(open=fence(Marker("<user>")), end=fence(END)),
                "assistant": Frame(open=(), end=fence(END)),
                "tool": Frame(open=fence(Marker("<tool>")), end=fence(END)),
            },
            concepts=(
                JsonCalls(open=None, parallel=False, with_content=False),
                Results(grouped=False),
            ),
        )
    )

    messages = [
        *CALL_TURNS,
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": ""},
    ]
    text = fmt.render(messages).text
    assert text == (
        '<user>go<end>{"name": "f", "arguments": {"a": 1}}<end><tool>1<end>done<end>'
        "<user>again<end><end>"
    )
    parsed = fmt.parse_conversation(text, strict=True).to_request()["messages"]
    assert [m["role"] for m in parsed] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert parsed[1]["tool_calls"][0]["function"] == CALL["function"]
    assert parsed[3]["content"] == "done"
    assert parsed[5]["content"] == ""  # an empty turn its end closes is a turn
    spaced = '<user>go<end> \n{"name": "f", "arguments": {}}<end> \n<user>x<end>'
    parsed = fmt.parse_conversation(spaced).to_request()["messages"]
    assert [m["role"] for m in parsed] == ["user", "assistant", "user"]
