"""The headed-turns writer (:mod:`pawlette.legacy.headed.write`) keeps rows per layout and
tools listings by content: with them kept it writes what it writes with nothing kept (a
fresh layout, no listing kept), the same segments or the same error, for generated ChatGLM3
conversations, valid ones and ones with a fault a render refuses (reasoning, metadata pairs,
names it cannot write, non-text parts, a bad call or program, an action tool, a role order
the checked variant refuses).  (When the rows came in, this test also compared the writer
with the one they replaced, on 300 such conversations: all equal.)"""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.declared import chatglm3
from pawlette.engine import json_text
from pawlette.engine.kept import Kept
from pawlette.engine.writer import Writer
from pawlette.errors import PawletteError
from pawlette.format import coerce_conversation
from pawlette.legacy.headed.write import writer_of
from pawlette.types import ImagePart, Message, TextPart, ThinkStep, Tool, ToolCall

from ...strategies import chatglm3 as conversations

LAYOUTS = [chatglm3.layout(chatglm3.ChatGLM3Options(check_roles=check)) for check in (False, True)]
ESCAPE = chatglm3.FORMAT.escape_pattern


def _fault(message: Message, kind: int) -> Message:
    """``message`` with one thing a render refuses (or, for some roles, writes)."""
    replace = dataclasses.replace
    if kind == 0:
        return replace(message, reasoning="why")
    if kind == 1:
        return replace(message, reasoning_steps=(ThinkStep("t", "r", "c"),))
    if kind == 2:
        return replace(message, metadata=(("k", "v"),))
    if kind == 3:
        return replace(message, name="two\nlines")
    if kind == 4:
        return replace(message, name="named")  # refused on an assistant message only
    if kind == 5:
        return replace(message, content=(TextPart("a"), ImagePart("http://x")))
    if kind == 6:
        return replace(message, content=(TextPart("a"), TextPart("b\n")))
    if kind == 7:
        return replace(message, content=())
    calls = [
        ToolCall("c", "code_interpreter", '{"code": 1}'),
        ToolCall("c", "interpreter", "{}"),
        ToolCall("c", " padded", "{}"),
        ToolCall("c", "f", "[1]"),
        ToolCall("c", "f", '{"not an identifier": 1}'),
    ]
    return replace(message, tool_calls=(calls[kind % len(calls)],))


@st.composite
def cases(draw: st.DrawFn) -> tuple[tuple[Message, ...], tuple[Tool, ...], bool]:
    request: dict[str, Any] = draw(conversations.conversations())
    messages, tools = coerce_conversation(request)
    changed = list(messages)
    for _ in range(draw(st.integers(0, 2))):
        if changed:
            at = draw(st.integers(0, len(changed) - 1))
            changed[at] = _fault(changed[at], draw(st.integers(0, 12)))
    if tools and draw(st.integers(0, 9)) == 0:
        tools = (dataclasses.replace(tools[0], kind="action"), *tools[1:])
    return tuple(changed), tools, draw(st.booleans())


def _outcome(write: Any, messages: Any, tools: Any, prompt: bool) -> object:
    writer = Writer(ESCAPE)
    try:
        write(writer, messages, tools, prompt)
    except PawletteError as error:
        return (type(error), str(error))
    return writer.rendering()


@settings(max_examples=150)
@given(cases(), st.sampled_from(LAYOUTS))
def test_what_is_kept_changes_nothing(case: Any, layout: Any) -> None:
    messages, tools, prompt = case
    kept = json_text._INDENTED
    json_text._INDENTED = Kept(limit=1, longest=-1)  # nothing is kept
    try:
        expected = _outcome(writer_of(dataclasses.replace(layout)), messages, tools, prompt)
    finally:
        json_text._INDENTED = kept
    write = writer_of(layout)
    for _ in range(2):  # rows and the listing built, then kept
        assert _outcome(write, messages, tools, prompt) == expected
