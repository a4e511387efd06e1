"""Reasoning read out of an assistant message's content (``Reasoning.in_content``).

Templates that accept a past answer as the model wrote it, ``<think>plan</think>answer``,
take the reasoning out of the content before they write the turn: the reasoning is the text
before the content's first close marker, after the last open marker in that text, without
newlines at its ends; the content is the text after the last close marker, without newlines
at its start.  The messages are rewritten so before the writer sees them, and the exported
template rewrites ``messages`` alike before its loop, so every concept reads the split turn.

>>> split_content("<think>\\nplan\\n</think>\\n\\nanswer", "<think>", "</think>")
Split(reasoning='plan', content='answer', lost=('newlines trimmed',))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from ..emit.jinja_text import jinja_string
from ..types import Message, TextPart

if TYPE_CHECKING:
    from ..engine.writer import Writer
    from ..types import Tool
    from .jinja import Template

    WriteConversation = Callable[[Writer, tuple[Message, ...], tuple[Tool, ...], bool], None]


class Split(NamedTuple):
    """A content's reasoning and answer, and what the split dropped (in words)."""

    reasoning: str
    content: str
    lost: tuple[str, ...]


def split_content(
    text: str, open_marker: str, close_marker: str, *, strip_end: bool = False
) -> Split:
    """``text`` (holding ``close_marker``) split as the templates split it (module docstring);
    ``strip_end``: the content loses its newlines at its end too."""
    parts = text.split(close_marker)
    before = parts[0].split(open_marker)
    reasoning = before[-1].strip("\n")
    content = parts[-1].lstrip("\n")
    if strip_end:
        content = content.rstrip("\n")
    lost = []
    if len(before) > 2 or before[0]:
        lost.append(f"the text before its {open_marker} dropped")
    if len(parts) > 2:
        lost.append(f"the text between its first and last {close_marker} dropped")
    if reasoning != before[-1] or content != parts[-1]:
        lost.append("newlines trimmed")
    return Split(reasoning, content, tuple(lost))


def _text(message: Message) -> str | None:
    """The message's text, where its content is text alone (None: it holds other parts)."""
    content = message.content or ()
    if not all(type(part) is TextPart for part in content):
        return None
    return "".join(part.text for part in content if isinstance(part, TextPart))


def splits(when: str, message: Message) -> bool:
    """Whether ``when`` (``Reasoning.in_content``) splits this message's content (its text
    holding the close marker is tested apart)."""
    if message.role != "assistant" or not when or message.reasoning_steps is not None:
        return False
    if when == "unset":
        return message.reasoning is None
    if when == "empty":
        return not message.reasoning
    return True  # "always"


def read_messages(
    when: str,
    markers: tuple[str, str],
    strip_end: bool,
    messages: tuple[Message, ...],
    writer: Writer,
) -> tuple[Message, ...]:
    """``messages`` with each split message rewritten (the others the same objects); what a
    split drops is recorded as a loss of the message's content."""
    open_marker, close_marker = markers
    rewritten: list[Message] | None = None
    for index, message in enumerate(messages):
        if not splits(when, message):
            continue
        text = _text(message)
        if text is None or close_marker not in text:
            continue
        split = split_content(text, open_marker, close_marker, strip_end=strip_end)
        reasoning = message.reasoning if message.reasoning else split.reasoning
        for what in split.lost:
            if writer.losses is None:
                writer.losses = []
            writer.losses.append(f"messages[{index}].content: {what} (its reasoning read out)")
        if rewritten is None:
            rewritten = list(messages)
        content = (TextPart(split.content),) if split.content else ()
        rewritten[index] = dataclasses.replace(message, content=content, reasoning=reasoning)
    if rewritten is None:
        return messages
    writer.present = None  # (the reader's view of the messages holds no such reasoning)
    return tuple(rewritten)


def reading(
    write: WriteConversation, when: str, markers: tuple[str, str], strip_end: bool
) -> WriteConversation:
    """``write`` given the messages :func:`read_messages` rewrites."""

    def write_read(
        writer: Writer, messages: tuple[Message, ...], tools: tuple[Tool, ...], prompt: bool
    ) -> None:
        write(writer, read_messages(when, markers, strip_end, messages, writer), tools, prompt)

    return write_read


def jinja_read(out: Template, when: str, markers: tuple[str, str], strip_end: bool) -> None:
    """The exported template's ``messages`` rewritten as :func:`read_messages` rewrites them
    (before the loop: every hook reads the split message)."""
    open_marker, close_marker = (jinja_string(marker) for marker in markers)
    given = "message.reasoning_content is defined and message.reasoning_content is not none"
    tests = {
        "unset": f"not ({given})",
        "empty": f"not ({given} and message.reasoning_content)",
        "always": "true",
    }
    name = jinja_string(out.layout.name)
    out.out("{%- set read = namespace(messages=[], text_only=true) -%}")
    out.out("{%- for message in messages -%}")
    out.out("{%- set read.text_only = message.content is string -%}")
    with out.when(
        'message.role == "assistant" and not read.text_only and message.content is defined '
        "and message.content is not none"
    ):
        out.out("{%- set read.text_only = true -%}")
        out.out("{%- for part in message.content -%}")
        out.out('{%- if part.type != "text" -%}{%- set read.text_only = false -%}{%- endif -%}')
        out.out("{%- endfor -%}")
    steps = "message.reasoning_steps is defined and message.reasoning_steps is not none"
    split = f'message.role == "assistant" and read.text_only and not ({steps}) and ({tests[when]})'
    out.out(f"{{%- set split_text = text_of(message, loop.index0, {name}) if {split} else '' -%}}")
    with out.when(f"{split} and {close_marker} in split_text"):
        out.out(f"{{%- set split_parts = split_text.split({close_marker}) -%}}")
        thought = f'split_parts[0].split({open_marker})[-1].strip("\\n")'
        if when == "always":
            thought = (
                f"message.reasoning_content if ({given} and message.reasoning_content) "
                f"else {thought}"
            )
        answer = 'split_parts[-1].lstrip("\\n")'
        if strip_end:
            answer = 'split_parts[-1].strip("\\n")'
        fields = {
            "role": "message.role",
            "content": answer,
            "reasoning_content": thought,
            "tool_calls": "message.tool_calls if message.tool_calls is defined else none",
            "name": "message.name if message.name is defined else none",
            "metadata": "message.metadata if message.metadata is defined else none",
        }
        written = ", ".join(f"{jinja_string(key)}: {value}" for key, value in fields.items())
        out.out(f"{{%- set read.messages = read.messages + [{{{written}}}] -%}}")
        out.out("{%- else -%}")
        out.out("{%- set read.messages = read.messages + [message] -%}")
    out.out("{%- endfor -%}")
    out.out("{%- set messages = read.messages -%}")
