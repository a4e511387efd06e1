"""Reasoning read out of an assistant message's content (``Reasoning.in_content``).

Templates that accept a past answer as the model wrote it, ``<think>plan</think>answer``,
take the reasoning out of the content before they write the turn: the reasoning is the text
before the content's first close marker, after the last open marker in that text, without
newlines at its ends; the content is the text after the last close marker, without newlines
at its start (the characters each template trims vary: :class:`Reading`).  The messages are
rewritten so before the writer sees them, and the exported template rewrites ``messages``
alike before its loop, so every concept reads the split turn.

>>> split_content("<think>\\nplan\\n</think>\\n\\nanswer", "<think>", "</think>")
Split(reasoning='plan', content='answer', lost=('trimmed',))
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, NamedTuple

from ..emit.jinja_text import jinja_string
from ..types import Message, TextPart

if TYPE_CHECKING:
    from ..engine.writer import Writer
    from .jinja import Template


class Reading(NamedTuple):
    """Which messages have their reasoning read out of their content, and how (the fields
    ``in_content``, ``in_content_turns`` and ``in_content_trim`` of ``Reasoning``, and its
    markers)."""

    when: str
    turns: str
    open_marker: str
    close_marker: str
    trim: tuple[str, str]


class Split(NamedTuple):
    """A content's reasoning and answer, and what the split dropped (in words)."""

    reasoning: str
    content: str
    lost: tuple[str, ...]


def split_content(
    text: str, open_marker: str, close_marker: str, trim: tuple[str, str] = ("\n", "")
) -> Split:
    """``text`` (holding ``close_marker``) split as the templates split it (module docstring);
    ``trim``: the characters taken off the content's start and off its end."""
    parts = text.split(close_marker)
    before = parts[0].split(open_marker)
    reasoning = before[-1].strip("\n")
    content = parts[-1].lstrip(trim[0]) if trim[0] else parts[-1]
    if trim[1]:
        content = content.rstrip(trim[1])
    lost = []
    if len(before) > 2 or (len(before) == 2 and before[0]):
        lost.append(f"the text before its {open_marker} dropped")
    if len(parts) > 2:
        lost.append(f"the text between its first and last {close_marker} dropped")
    if content != parts[-1]:
        lost.append("trimmed")
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


def _last(messages: tuple[Message, ...], role: str) -> int:
    """The index of the last message of ``role`` (-1: none)."""
    return next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == role), -1)


def read_messages(
    reading: Reading, messages: tuple[Message, ...], writer: Writer
) -> tuple[Message, ...]:
    """``messages`` with each split message rewritten (the others the same objects); what a
    split drops is recorded as a loss of the message's content."""
    rewritten: list[Message] | None = None
    # The turns split: every one, those up to the last user message, or all but the last answer.
    if reading.turns == "all":
        until = len(messages)
    elif reading.turns == "before_last_query":
        until = _last(messages, "user")
    else:
        until = _last(messages, "assistant") - 1
    close = reading.close_marker
    for index, message in enumerate(messages[: until + 1]):
        # Most messages hold no close marker: that test, on a text part's own string, comes
        # first (every render of every such format runs this loop).
        content = message.content
        if message.role != "assistant" or not content:
            continue
        if len(content) == 1:
            part = content[0]
            if type(part) is not TextPart or close not in part.text:
                continue
        text = _text(message)
        if text is None or close not in text or not splits(reading.when, message):
            continue
        split = split_content(text, reading.open_marker, reading.close_marker, reading.trim)
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


def _jinja_trimmed(out: Template, text: str, trim: tuple[str, str]) -> str:
    """``text`` without ``trim``'s characters at its start and at its end, as an expression.
    ASCII characters go by ``lstrip``/``rstrip``; llama.cpp's engine strips bytes, not
    characters, so the others (``trim`` holding Python's whole whitespace, as ``| trim``
    strips under transformers) are taken off by a loop of ``startswith``/``endswith`` and
    slices of their own length, which both engines count in the same unit."""
    for method, characters in (("lstrip", trim[0]), ("rstrip", trim[1])):
        ascii_part = "".join(character for character in characters if character.isascii())
        if ascii_part:
            text = f"{text}.{method}({jinja_string(ascii_part)})"
    wide = [[c for c in characters if not c.isascii()] for characters in trim]
    if not any(wide):
        return text
    out.out(f"{{%- set trimmed = namespace(text={text}, done=false) -%}}")
    out.out("{%- for _ in range(trimmed.text | length) -%}{%- if not trimmed.done -%}")
    out.out("{%- set trimmed.done = true -%}")
    for characters, test, cut in (
        (trim[0], "startswith", "trimmed.text[(end | length):]"),
        (trim[1], "endswith", "trimmed.text[:(trimmed.text | length) - (end | length)]"),
    ):
        if not characters:
            continue
        out.out(f"{{%- for end in [{', '.join(jinja_string(c) for c in characters)}] -%}}")
        out.out(
            f"{{%- if trimmed.text.{test}(end) -%}}{{%- set trimmed.text = {cut} -%}}"
            "{%- set trimmed.done = false -%}{%- endif -%}"
        )
        out.out("{%- endfor -%}")
    out.out("{%- endif -%}{%- endfor -%}")
    return "trimmed.text"


def jinja_read(out: Template, reading: Reading) -> None:
    """The exported template's ``messages`` rewritten as :func:`read_messages` rewrites them
    (before the loop: every hook reads the split message)."""
    open_marker, close_marker = (
        jinja_string(reading.open_marker),
        jinja_string(reading.close_marker),
    )
    given = "message.reasoning_content is defined and message.reasoning_content is not none"
    tests = {
        "unset": f"not ({given})",
        "empty": f"not ({given} and message.reasoning_content)",
        "always": "true",
    }
    name = jinja_string(out.layout.name)
    out.out("{%- set read = namespace(messages=[], text_only=true, until=messages | length) -%}")
    if reading.turns == "before_last_query":
        out.out("{%- for message in messages -%}")
        out.out(
            '{%- if message.role == "user" -%}{%- set read.until = loop.index0 -%}{%- endif -%}'
        )
        out.out("{%- endfor -%}")
    elif reading.turns == "past":
        out.out("{%- set read.until = -1 -%}")
        out.out("{%- for message in messages -%}")
        out.out(
            '{%- if message.role == "assistant" -%}{%- set read.until = loop.index0 - 1 -%}'
            "{%- endif -%}"
        )
        out.out("{%- endfor -%}")
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
    split = (
        f'message.role == "assistant" and loop.index0 <= read.until and read.text_only '
        f"and not ({steps}) and ({tests[reading.when]})"
    )
    out.out(f"{{%- set split_text = text_of(message, loop.index0, {name}) if {split} else '' -%}}")
    with out.when(f"{split} and {close_marker} in split_text"):
        out.out(f"{{%- set split_parts = split_text.split({close_marker}) -%}}")
        answer = _jinja_trimmed(out, "split_parts[-1]", reading.trim)
        thought = f'split_parts[0].split({open_marker})[-1].strip("\\n")'
        if reading.when == "always":
            thought = (
                f"message.reasoning_content if ({given} and message.reasoning_content) "
                f"else {thought}"
            )
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
