"""Apertus' assistant turn, which spans the results of its calls.

The template opens one ``<|assistant_start|>`` turn and keeps it open over the calls' results
(``[R1, R2]``, no marker of their own) and the answer after them; it ends it with
``<|assistant_end|>`` only when a user message follows.  So:

- :class:`TurnEnds`: a turn with calls ends with ``<|tools_suffix|>`` (the model stops there
  for the results); one without ends with ``<|assistant_end|>`` before a user message and
  with nothing when it is the conversation's last (the template writes no end there); a user
  turn after a turn of calls opens with ``<|assistant_end|>`` first (the results' group does
  so through the user frame's ``open_after``).  Reading, an ``<|assistant_end|>`` after a
  turn of calls ended is layout (llama.cpp ends the turn with it there), and the opener
  ``<|assistant_start|>`` right after an answer ends it and opens the next turn (the
  generation prompt after a last answer: :func:`next_turn`).  An assistant
  message right after another is written in the same turn, with no end before it and no
  opener, its text straight after the other's (read back, the two are one message) or
  after its calls' ``<|tools_suffix|>``, where their results go (not read back): recorded
  losses.
- :class:`BracketedResults`: a group of results is ``[`` + their texts joined by ``, `` +
  ``]``, read back by the number of calls it answers (as
  :class:`~pawlette.declare.JoinedResults` are, whose results are joined alike); the text after
  the ``]`` before the next marker is the answer the assistant writes after them, with no
  opener.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pawlette.declare import CallTurnEnd, JoinedResults
from pawlette.declare import joined_results as joined
from pawlette.declare.joined_results import SEPARATOR, is_json, split_joined
from pawlette.declare.pieces import Fence
from pawlette.declare.table import end
from pawlette.types import TextDelta

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import Action, Parser

CLOSE = "]"
"""What ends a group of results (after the frame's ``[`` and the texts)."""


@dataclass(frozen=True)
class TurnEnds(CallTurnEnd):
    """See the module.  ``user_open``: the user turn's opener after a turn of calls (the
    assistant's end, then the user's opener)."""

    user_open: Fence = ()

    def hook_roles(self, hook: str) -> frozenset[str] | None:
        if hook in ("turn_open", "jinja_open"):
            return frozenset({"user", "assistant"})
        return frozenset({"assistant"})

    def turn_open(self, out: Render, index: int) -> Fence | None:
        if out.role == "user" and index > 0 and _calls_before(out, index):
            return self.user_open
        if out.role == "assistant" and _answer_before(out, index):
            return ()  # (the same turn goes on)
        return None

    def turn_end(self, out: Render, index: int) -> Fence | None:
        if out.role != "assistant" or not 0 <= index < len(out.messages):
            return None
        if out.messages[index].tool_calls:
            return self.end
        if index == len(out.messages) - 1 or out.messages[index + 1].role == "assistant":
            return ()  # (the conversation's last turn, or one an answer goes on in)
        return None

    def check(self, out: Render) -> None:
        messages = out.messages
        # The last answer has no end: an empty one is its opener alone, the prompt's text.
        last = out.empty_last_answer()
        if last >= 0:
            out.lose(
                f"messages[{last}]",
                "an empty last answer, written as the generation prompt: read back as that prompt",
            )
        for index in range(1, len(messages)):
            if messages[index].role != "assistant" or not _answer_before(out, index):
                continue
            if messages[index - 1].tool_calls:
                out.lose(
                    f"messages[{index}]",
                    "written in the turn of the assistant message before it, right after its "
                    "calls, where their results go: not read back",
                )
            else:
                out.lose(
                    f"messages[{index}]",
                    "written in the turn of the assistant message before it, right after its "
                    "text: read back as part of that message",
                )

    def rows(self, table: Table) -> None:
        # After a turn of calls, the frame's end is layout: llama.cpp lets the model end its
        # turn there with its end token (its grammar allows nothing else after the list).
        frame = table.layout.frames["assistant"]
        table.on("outside", table.text(frame.end), "outside")
        # The conversation's last answer has no end: the generation prompt's opener right
        # after it ends it (an assistant message after another goes on with no opener).
        opener = table.text(frame.open)
        for state in ("assistant.head", "assistant.body"):
            table.on(state, opener, table.first_state["assistant"], next_turn(opener))

    def jinja_open(self, out: Template, role: str) -> bool:
        if role == "assistant":
            if out.prompt:  # (the generation prompt opens a turn after an answer too)
                return False
            out.out('{%- if not (index > 0 and messages[index - 1].role == "assistant") -%}')
            out.opener(out.layout.frames["assistant"])
            out.out("{%- endif -%}")
            return True
        if role != "user":
            return False
        out.out(
            '{%- if index > 0 and messages[index - 1].role == "assistant" and '
            "messages[index - 1].tool_calls is defined and messages[index - 1].tool_calls -%}"
        )
        out.fence(self.user_open)
        out.out("{%- else -%}")
        frame = out.layout.frames["user"]
        out.branches(dict(frame.open_after), frame.open, "ns.previous")
        out.out("{%- endif -%}")
        return True

    def jinja_end(self, out: Template, role: str) -> bool:
        if role != "assistant":
            return False
        out.out("{%- if message.tool_calls is defined and message.tool_calls -%}")
        out.fence(self.end)
        out.out('{%- elif not loop.last and messages[index + 1].role != "assistant" -%}')
        out.fence(out.layout.frames["assistant"].end)
        out.out("{%- endif -%}")
        return True


def next_turn(opener: str) -> Action:
    """The action on the assistant's ``opener`` read in its answer.  Reading a conversation,
    the answer ends there and the next turn of the assistant begins (the generation prompt
    after a last answer, which the template writes with no end).  In a completion the model
    opened no turn there: the opener is out of place, as a marker with no row is (a
    warning, its text the answer's, the state unchanged)."""

    def action(parser: Parser, offset: int) -> None:
        if parser.conversation:
            parser.end_message()
            parser.begin_message("assistant")
            return
        state = parser.state.name
        others = [marker for marker in parser.grammar.expected(state) if marker != opener]
        parser.malformed(
            offset,
            f"marker {opener!r} in state {state!r}",
            "one of " + ", ".join(repr(marker) for marker in others),
            opener,
        )
        parser.emit(TextDelta(opener))
        parser.goto(state)

    action.__name__ = "next assistant turn"
    return action


def _calls_before(out: Render, index: int) -> bool:
    before = out.messages[index - 1]
    return before.role == "assistant" and bool(before.tool_calls)


def _answer_before(out: Render, index: int) -> bool:
    """The message at ``index`` (a turn's, or the generation prompt's) follows an assistant
    message: an assistant one goes on in that message's turn."""
    return 0 < index < len(out.messages) and out.messages[index - 1].role == "assistant"


@dataclass(frozen=True)
class BracketedResults(JoinedResults):
    """:class:`~pawlette.declare.JoinedResults` in ``[`` (the tool frame's open) ... ``]``
    (see the module).  ``calls_end``: the fence that ends a turn of calls, which the group
    follows."""

    calls_end: Fence = ()
    calls_open: Fence = ()

    def write_message(self, out: Render, index: int) -> None:
        super().write_message(out, index)
        messages = out.messages
        if index == len(messages) - 1 or messages[index + 1].role != "tool":
            out.raw(CLOSE, "close")

    def jinja_message(self, out: Template, role: str) -> None:
        super().jinja_message(out, role)
        out.out('{%- if loop.last or messages[index + 1].role != "tool" -%}')
        out.literal(CLOSE)
        out.out("{%- endif -%}")

    def rows(self, table: Table) -> None:
        frame = table.layout.frames["tool"]
        table.state("tool.group", GroupReader, "tool", ends=True)
        after_calls = table.text(self.calls_end, frame.open)
        for state in table.states_of("assistant"):
            table.on(state, after_calls, "tool.group", end)
        # The answer after the results has no opener: the group's reader begins it.
        table.on("tool.group", table.text(self.calls_open), "call.list")


class GroupReader(joined.GroupReader):
    """A group of results and the answer after it, up to the next marker: one tool message
    per call of the turn it answers, then the text after the group's ``]`` as an assistant
    message (see the module)."""

    __slots__ = ()

    shape: ClassVar[str] = (
        f"split into as many results joined by {SEPARATOR!r} and closed by {CLOSE!r}"
    )
    expected: ClassVar[str] = f"one result per call, joined by {SEPARATOR!r}, then {CLOSE!r}"

    def split(self, text: str, count: int) -> tuple[list[str], str] | None:
        """The results and the answer after them: at the first ``]`` before which the text
        splits into ``count`` results, where every result holding ``]`` is a whole JSON
        value."""
        start = 0
        while (at := text.find(CLOSE, start)) >= 0:
            pieces = split_joined(text[:at], count)
            if pieces is not None and all(CLOSE not in piece or is_json(piece) for piece in pieces):
                return pieces, text[at + len(CLOSE) :]
            start = at + 1
        return None

    def after(self, text: str, marker: str | None) -> None:
        parser = self._parser
        step = parser.grammar.steps.get((parser.state.name, marker or ""))
        continues = step is not None and step.target == "call.list"
        if text or continues:
            parser.begin_message("assistant")
            if text:
                parser.emit(TextDelta(text))
