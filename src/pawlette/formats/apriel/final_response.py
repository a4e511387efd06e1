"""Apriel 1.6's reasoning and its last turn.

The template writes a message's reasoning only in the conversation's last message, right
after the opener, ended by ``\\n[BEGIN FINAL RESPONSE]\\n``; past turns drop it, and a past
turn's text holding ``[BEGIN FINAL RESPONSE]`` is cut to what follows it, trimmed.  The
generation prompt writes ``Here are my reasoning steps:\\n`` after the opener: the model goes
on with its reasoning, then the marker, then its answer.

- :class:`FinalResponse`: the block (``open``: the prompt's words, never written in a turn;
  ``close``: the marker).  A completion after that prompt starts inside the block, as the
  ``apriel`` reasoning parser for vLLM streams it (all text before the marker is reasoning,
  all of it when the model never writes the marker).  A turn read after the opener alone (a
  turn of a conversation, or a completion after a prompt without the words) holds its text
  until the marker (reasoning) or the turn's end (content): its reasoning has no open of its
  own.  The turn grammars leave the block optional: the marker is text, which no grammar can
  make a model write.
- :class:`LastTurnOpen`: the template writes no end on the conversation's last message (the
  assistant's ``\\n<|end|>``, after which the template writes no generation prompt), and a
  system or tool turn's trailing layout, which the next turn's opener holds, when that turn
  is the last (see :mod:`.thinker`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pawlette.declare import Concept, Reasoning
from pawlette.declare.pieces import Fence, text_of
from pawlette.declare.readers import Described, ResultReader
from pawlette.declare.table import end
from pawlette.emit.grammar_ast import Terminal, gbnf_string
from pawlette.emit.text_language import gbnf_text_rule
from pawlette.types import ReasoningDelta, TextDelta

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import Parser, ReaderFactory

HELD = "assistant.held"
"""The state after the opener alone: text held until the marker or the turn's end."""
_LAST = "index == (messages | length) - 1"
_UNENDED = f"{_LAST} and not add_generation_prompt"
_GIVEN = "message.reasoning_content is defined and message.reasoning_content"


def _is_last(out: Render, index: int) -> bool:
    return index == len(out.messages) - 1


def _unended(out: Render, index: int) -> bool:
    """The turn the conversation ends on, with no generation prompt after it (the template
    writes none after an assistant message, asked for or not: ``NoPromptAfter``)."""
    return _is_last(out, index) and not out.prompt


@dataclass(frozen=True)
class FinalResponse(Reasoning):
    """:class:`~pawlette.declare.Reasoning` written only in the conversation's last message
    and without ``open`` (the generation prompt's, ``prompt="opened"``); see the module."""

    @property
    def marker(self) -> str:
        """The close's words, which the template cuts a past turn's text at."""
        return "".join(text_of(self.close, None, "apriel")).strip()

    def written(self, out: Render, index: int) -> bool:
        return _is_last(out, index) and bool(out.messages[index].reasoning)

    def check(self, out: Render) -> None:
        out.handles("reasoning")
        for index, message in enumerate(out.messages):
            if message.role != "assistant":
                continue
            if message.reasoning and not self.written(out, index):
                out.lose(
                    f"messages[{index}].reasoning_content",
                    "dropped (written only in the conversation's last message)",
                )
            if not _is_last(out, index) and self.marker in out.message_text(index):
                out.lose(f"messages[{index}].content", f"cut after its {self.marker}, trimmed")

    def write_opening(self, out: Render, index: int) -> None:
        if out.role != "assistant" or index < 0 or not self.written(out, index):
            return
        out.text(out.messages[index].reasoning or "", "reasoning", trainable=True)
        out.fence(self.close, "reasoning", trainable=True)

    def write_content(self, out: Render, index: int) -> bool:
        if out.role != "assistant" or index < 0 or _is_last(out, index):
            return False
        text = out.message_text(index)
        if self.marker not in text:
            return False
        out.text(text.split(self.marker)[-1].strip(), "content", trainable=True)
        return True

    def rows(self, table: Table) -> None:
        super().rows(table)
        closes = table.spellings(True, self.close)
        ends = frozenset(closes)
        held = Described(
            "reasoning or content, held to its close",
            lambda parser: HeldReader(parser, ends),
            close=table.text(self.close),  # (its spellings are the rows' markers)
        )
        table.state(HELD, held, "assistant", ends=True)
        for spelling in closes:
            table.on(HELD, spelling, "assistant.body")
        table.call_states.append(HELD)
        # The opener alone (not the prompt's words after it) leads to the held text.
        frame = table.layout.frames["assistant"]
        for pieces in (frame.open, *frame.open_after.values()):
            key = ("outside", table.text(pieces))
            step = table.steps.get(key)
            if step is not None:
                table.steps[key] = (HELD, step[1])

    def grammar(self, turn: Turn) -> None:
        super().grammar(turn)
        # The reasoning and the marker are one lexeme (llguidance's lexer is greedy: text
        # would take the marker's first characters, as the call list's text does).
        close = text_of(self.close, turn.layout.options, turn.layout.name)
        rules = turn.rules
        rules.lark_extra["TEXT_REASONING"] = f"TEXT {gbnf_string(close)}"
        rules.gbnf_extra["text-reasoning"] = f"{gbnf_text_rule('TEXT')}? {gbnf_string(close)}"
        turn.head = Terminal("TEXT_REASONING", lark="", gbnf="text-reasoning")
        # The model may end its turn before the marker (all of it is then reasoning, as the
        # reader reads it): the marker is text, which a grammar cannot make it write.
        turn.head_required = False

    def jinja_lead(self, out: Template, role: str) -> None:
        return  # the prompt's words are never written in a turn

    def jinja_opening(self, out: Template, role: str) -> None:
        if role != "assistant":
            return
        out.out(f"{{%- if {_LAST} and {_GIVEN} -%}}")
        out.value("message.reasoning_content")
        out.fence(self.close)
        out.out("{%- endif -%}")

    def jinja_content(self, out: Template, role: str) -> bool:
        if role != "assistant":
            return False
        text = f"text_of(message, index, {out.layout.name!r})"
        marker = repr(self.marker)
        out.out(f"{{%- if not ({_LAST}) and {marker} in {text} -%}}")
        out.value(f"({text}).split({marker})[-1] | trim")
        out.out("{%- else -%}")
        out.text()
        out.out("{%- endif -%}")
        return True


class HeldReader:
    """The text after the opener alone: reasoning when the block's close ends it, else the
    turn's content (see the module)."""

    __slots__ = ("_closes", "_held", "_offset", "_parser")

    def __init__(self, parser: Parser, closes: frozenset[str]) -> None:
        self._parser = parser
        self._closes = closes
        self._held: list[str] = []

    def feed(self, text: str, offset: int) -> None:
        if text:
            self._held.append(text)

    def close(self, marker: str | None, offset: int) -> None:
        text = "".join(self._held)
        self._held = []
        if marker in self._closes:
            self._parser.emit(ReasoningDelta(text))
        elif text:
            self._parser.emit(TextDelta(text))


@dataclass(frozen=True)
class LastTurnOpen(Concept):
    """The turns' ends (see :mod:`.thinker`): no end on the conversation's last assistant
    message, ``after`` (a newline) after a past one's end; ``trails``, by role, the layout a
    system or tool turn writes after its text, which the frames' ``open_after`` write before
    the next turn's opener (and this concept at the end of a conversation that ends on such a
    turn).  Reading, those openers are read only after a turn of that role, and a trail the
    conversation ends with is no text."""

    after: Fence = ()
    trails: Mapping[str, str] = field(default_factory=dict)

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    def turn_end(self, out: Render, index: int) -> Fence | None:
        if out.role == "assistant" and index >= 0 and _unended(out, index):
            return ()
        return None

    def write_after(self, out: Render, index: int) -> None:
        if out.role == "assistant" and not _unended(out, index):
            out.fence(self.after, "separator")

    def write_finish(self, out: Render) -> None:
        if out.prompt or not out.messages:
            return
        trail = self.trails.get(out.messages[-1].role)
        if trail:
            out.text(trail, "separator")

    def rows(self, table: Table) -> None:
        for role, trail in self.trails.items():
            # An opener written after a turn of ``role`` (its trail first) leaves only that
            # role's states: elsewhere its leading whitespace is text.
            for (state, marker), (target, actions) in list(table.steps.items()):
                if state != "outside" or not marker.startswith(trail) or target == "outside":
                    continue
                if table.text(_plain_opener(table, marker[len(trail) :])) != marker[len(trail) :]:
                    continue
                del table.steps[(state, marker)]
                for name in table.states_of(role, ending=False):
                    table.on(name, marker, target, end, *actions)
        result_trail = self.trails.get("tool")
        if result_trail:
            make: ReaderFactory = lambda parser: TrailedResultReader(parser, result_trail)  # noqa: E731
            table.reader(
                "tool.item", Described("tool result, trail dropped", make, trail=result_trail)
            )

    def jinja_end(self, out: Template, role: str) -> bool:
        if role != "assistant":
            return False
        out.fence_if(f"not ({_UNENDED})", out.layout.frames["assistant"].end)
        return True

    def jinja_after(self, out: Template, role: str) -> None:
        if role == "assistant":
            out.fence_if(f"not ({_UNENDED})", self.after)

    def jinja_finish(self, out: Template) -> None:
        out.out("{%- if not add_generation_prompt and messages -%}")
        for role, trail in self.trails.items():
            roles = '["system", "developer"]' if role == "system" else f'["{role}"]'
            out.out(f"{{%- if messages[-1].role in {roles} -%}}")
            out.literal(trail)
            out.out("{%- endif -%}")
        out.out("{%- endif -%}")


def _plain_opener(table: Table, text: str) -> Fence:
    """The frame opener (or generation prompt) spelled ``text``, or nothing."""
    for frame in table.layout.frames.values():
        for pieces in (frame.open, *frame.prompt_after.values()):
            if table.text(pieces) == text:
                return pieces
    return ()


class TrailedResultReader(ResultReader):
    """A tool result's text; the trail its turn writes is no text when the conversation ends
    on it (a marker that ends the state holds the trail otherwise)."""

    __slots__ = ("_trail",)

    def __init__(self, parser: Parser, trail: str) -> None:
        super().__init__(parser)
        self._trail = trail

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        if marker is None and text.endswith(self._trail):
            text = text[: -len(self._trail)]
        self._parser.emit(TextDelta(text))
        self._parser.end_message()
