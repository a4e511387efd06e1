"""Structured thinking: a reasoning block made of steps (omni).

``<start>preamble<step>title<reasoning>text<conclusion>text ... <end>``, each field giving its
one trailing newline to the marker after it, the block on its own lines.  OpenAI JSON:
``reasoning_content`` is the flat text (the preamble when not empty, then every title,
reasoning and conclusion, joined by newlines) and ``reasoning_steps`` carries the steps.

Its share of each interpreter is here: the writer (:func:`write`), the readers (the rows are
:mod:`.table`'s), the Jinja macro (:func:`jinja`) and the grammar (:func:`grammar`).
"""

# ruff: noqa: E501  (Jinja source: one tag per line reads better than wrapped tags)

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Literal

from ...declare.pieces import Marker
from ...emit.grammar_ast import Lit, Node, Repeat, seq
from ...emit.grammar_ast import Marker as MarkerNode
from ...emit.jinja_text import fill, jinja_string
from ...emit.text_language import text_terminal
from ...engine import rows
from ...engine.machine import Parser, ReaderFactory
from ...engine.rows import Pieces, Row
from ...engine.writer import Writer
from ...errors import RequestError
from ...types import Message, ReasoningDelta, ReasoningStepAdded, ThinkStep
from .spans import NEWLINE, Trim

PARTS = ("preamble", "title", "reasoning", "conclusion")


@dataclass(slots=True)
class _Thinking:
    pieces: int = 0  # pieces of flat text written so far (an empty preamble is none)
    fields: list[str] = field(default_factory=list)


@dataclass
class _CurrentThinking:
    """The thinking block being read (a block's parts are states of their own)."""

    thinking: _Thinking | None = None


@dataclass(frozen=True)
class StructuredThinking:
    """``<start>preamble<step>title<reasoning>text<conclusion>text ... <end>``.

    Reasoning deltas carry the flat text: the preamble (when not empty) and every title,
    reasoning and conclusion, joined by newlines; each finished step is also emitted as a
    :class:`ThinkStep`.  Each field gives its one trailing newline to the marker after it.
    """

    start: Marker
    step: Marker
    reasoning: Marker
    conclusion: Marker
    end: Marker

    @property
    def closers(self) -> frozenset[str]:
        return frozenset(
            marker.text for marker in (self.step, self.reasoning, self.conclusion, self.end)
        )

    def reader(
        self, part: Literal["preamble", "title", "reasoning", "conclusion"]
    ) -> ReaderFactory:
        return partial(_ThinkingReader, thinking=self, part=part)


def flatten_thinking(preamble: str, steps: tuple[ThinkStep, ...]) -> str:
    """The flat reasoning text of a preamble and steps (see :class:`StructuredThinking`)."""
    pieces = [preamble] if preamble else []
    for step in steps:
        pieces += (step.title, step.reasoning, step.conclusion)
    return NEWLINE.join(pieces)


def split_thinking(flat: str, steps: tuple[ThinkStep, ...]) -> str | None:
    """The preamble such that ``flatten_thinking(preamble, steps) == flat``, or None."""
    if not steps:
        return flat
    tail = flatten_thinking("", steps)
    if flat == tail:
        return ""
    if len(flat) > len(tail) + 1 and flat.endswith(NEWLINE + tail):
        return flat[: -len(tail) - 1]
    return None


class _ThinkingReader:
    __slots__ = ("_offset", "_parser", "_part", "_state", "_text", "_thinking", "_trim")

    def __init__(self, parser: Parser, thinking: StructuredThinking, part: str) -> None:
        self._parser = parser
        self._thinking = thinking
        self._part = part
        self._trim = Trim(False)
        self._text: list[str] = []
        self._offset: int | None = None  # where its text began (however the input was split)
        current = parser.context(_CurrentThinking)
        state = current.thinking
        if part == "preamble" or state is None:
            state = current.thinking = _Thinking()
            parser.emit(ReasoningDelta(""))
        if part != "preamble":
            if state.pieces:
                parser.emit(ReasoningDelta(NEWLINE))
            state.pieces += 1
            if part == "title":
                state.fields = []
        self._state = state

    def _write(self, text: str) -> None:
        if text:
            if self._part == "preamble":
                self._state.pieces = 1
            self._text.append(text)
            self._parser.emit(ReasoningDelta(text))

    def feed(self, text: str, offset: int) -> None:
        if self._offset is None:
            self._offset = offset
        self._write(self._trim.feed(text))

    def close(self, marker: str | None, offset: int) -> None:
        thinking, state = self._thinking, self._state
        inside = marker in thinking.closers
        self._write(self._trim.close(inside))
        text = "".join(self._text)
        if self._part in ("title", "reasoning"):
            state.fields.append(text)
        elif self._part == "conclusion" and len(state.fields) == 2:
            step = ThinkStep(state.fields[0], state.fields[1], text)
            self._parser.emit(ReasoningStepAdded(step))
        if not inside:
            where = repr(marker) if marker is not None else "the end of the text"
            self._parser.malformed(
                offset if self._offset is None else self._offset,
                f"the thinking is not closed: it ends at {where}",
                f"{thinking.end.text!r} first",
                text[-80:],
            )


def write(writer: Writer, thinking: StructuredThinking, message: Message, index: int) -> None:
    """The block of an assistant message with ``reasoning_content`` or ``reasoning_steps``."""
    steps = message.reasoning_steps or ()
    preamble = (
        split_thinking(message.reasoning or "", steps) if message.reasoning is not None else ""
    )
    if preamble is None:
        raise RequestError(
            f"messages[{index}].reasoning_content",
            "text that does not end with the text of reasoning_steps",
            "the preamble, then each step's title, reasoning and conclusion, one per line",
            "Leave reasoning_content out to write the steps alone",
        )
    derived = _rows_of(thinking)
    derived[0].write(writer)
    writer.text(preamble, "reasoning", trainable=True)
    for step in steps:
        for row, text in zip(
            derived[1:4], (step.title, step.reasoning, step.conclusion), strict=True
        ):
            row.write(writer)
            writer.text(text, "reasoning", trainable=True)
    derived[4].write(writer)


def _derive(thinking: StructuredThinking) -> tuple[Row, Row, Row, Row, Row]:
    """The block's fences as rows: ``\\n<start>``, ``\\n<step>``, ``\\n<reasoning>``,
    ``\\n<conclusion>``, and ``\\n<end>\\n``."""

    def opening(marker: Marker) -> Pieces:
        return ((False, "\n", "reasoning", True), (True, marker.text, "reasoning", True))

    closing = (*opening(thinking.end), (False, "\n", "reasoning", True))
    return (
        Row(opening(thinking.start)),
        Row(opening(thinking.step)),
        Row(opening(thinking.reasoning)),
        Row(opening(thinking.conclusion)),
        Row(closing),
    )


_rows_of = rows.once_per(_derive)


_JINJA = r"""{%- macro field(step, key) -%}
{{- step[key] if step[key] is defined and step[key] is not none else '' -}}
{%- endmacro -%}
{%- macro thinking(message, index) -%}
{%- set steps = message.reasoning_steps if message.reasoning_steps is defined and message.reasoning_steps is not none else [] -%}
{%- set flat = namespace(tail='') -%}
{%- for step in steps -%}
{%- set flat.tail = flat.tail ~ ('\n' if loop.index0 else '') ~ field(step, 'title') ~ '\n' ~ field(step, 'reasoning') ~ '\n' ~ field(step, 'conclusion') -%}
{%- endfor -%}
{%- set preamble = namespace(text='') -%}
{%- if message.reasoning_content is defined and message.reasoning_content is not none -%}
{%- set reasoning = message.reasoning_content -%}
{%- if not steps -%}
{%- set preamble.text = reasoning -%}
{%- elif reasoning == flat.tail -%}
{%- set preamble.text = '' -%}
{%- elif reasoning|length > flat.tail|length + 1 and reasoning[reasoning|length - flat.tail|length - 1:] == '\n' ~ flat.tail -%}
{%- set preamble.text = reasoning[:reasoning|length - flat.tail|length - 1] -%}
{%- else -%}
{{- raise_exception('messages[' ~ index ~ '].reasoning_content: text that does not end with the text of reasoning_steps; expected the preamble, then each step\'s title, reasoning and conclusion, one per line') -}}
{%- endif -%}
{%- endif -%}
{{- '\n' ~ @START@ ~ escape(preamble.text, false) -}}
{%- for step in steps -%}
{{- '\n' ~ @STEP@ ~ escape(field(step, 'title'), false) ~ '\n' ~ @REASONING@ ~ escape(field(step, 'reasoning'), false) ~ '\n' ~ @CONCLUSION@ ~ escape(field(step, 'conclusion'), false) -}}
{%- endfor -%}
{{- '\n' ~ @END@ ~ '\n' -}}
{%- endmacro -%}"""


def jinja(thinking: StructuredThinking) -> str:
    """The ``thinking(message, index)`` macro (it needs the ``escape`` macro)."""
    values = {
        f"@{name.upper()}@": jinja_string(getattr(thinking, name).text)
        for name in ("start", "step", "reasoning", "conclusion", "end")
    }
    return fill(_JINJA, values)


TEXT_ANY_NL = text_terminal("TEXT", "ANY_NL")  # text (maybe none), then a newline


def grammar(thinking: StructuredThinking) -> Node:
    """The block as the writer writes it, from the newline before ``<start>``."""
    step = seq(
        MarkerNode(thinking.step.text),
        TEXT_ANY_NL,
        MarkerNode(thinking.reasoning.text),
        TEXT_ANY_NL,
        MarkerNode(thinking.conclusion.text),
        TEXT_ANY_NL,
    )
    return seq(
        Lit("\n"),
        MarkerNode(thinking.start.text),
        TEXT_ANY_NL,
        Repeat(step),
        MarkerNode(thinking.end.text),
        Lit("\n"),
    )


def fences(thinking: StructuredThinking) -> tuple[str, str]:
    """The block's opening and closing text (what a forced choice leaves out)."""
    return "\n" + thinking.start.text, "\n" + thinking.end.text + "\n"
