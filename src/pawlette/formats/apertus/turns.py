"""Apertus' assistant turn, which spans the results of its calls.

The template opens one ``<|assistant_start|>`` turn and keeps it open over the calls' results
(``[R1, R2]``, no marker of their own) and the answer after them; it ends it with
``<|assistant_end|>`` only when a user message follows.  So:

- :class:`TurnEnds`: a turn with calls ends with ``<|tools_suffix|>`` (the model stops there
  for the results); one without ends with ``<|assistant_end|>`` before a user message and
  with nothing when it is the conversation's last (the template writes no end there); a user
  turn after a turn of calls opens with ``<|assistant_end|>`` first (the results' group does
  so through the user frame's ``open_after``).  Reading, an ``<|assistant_end|>`` after a
  turn of calls ended is layout (llama.cpp ends the turn with it there).
- :class:`BracketedResults`: a group of results is ``[`` + their texts joined by ``, `` +
  ``]``, read back by the number of calls it answers (as Nemotron Nano 2's, whose results
  are joined alike: :func:`pawlette.formats.nemotron_v2.results.split_group`); the text after
  the ``]`` before the next marker is the answer the assistant writes after them, with no
  opener.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import CallTurnEnd, Results
from pawlette.declare.pieces import Fence
from pawlette.declare.table import end
from pawlette.engine.machine import Parser
from pawlette.engine.readers import WholeTextReader
from pawlette.types import TextDelta

from ..nemotron_v2.results import GAP, SEPARATOR, split_group

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.layout import Layout
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render

CLOSE = "]"
"""What ends a group of results (after the frame's ``[`` and the texts)."""


@dataclass(frozen=True)
class TurnEnds(CallTurnEnd):
    """See the module.  ``user_open``: the user turn's opener after a turn of calls (the
    assistant's end, then the user's opener)."""

    user_open: Fence = ()

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant", "user"})

    def hook_roles(self, hook: str) -> frozenset[str] | None:
        if hook in ("turn_open", "jinja_open"):
            return frozenset({"user"})
        return frozenset({"assistant"})

    def turn_open(self, out: Render, index: int) -> Fence | None:
        if out.role == "user" and index > 0 and _calls_before(out, index):
            return self.user_open
        return None

    def turn_end(self, out: Render, index: int) -> Fence | None:
        if out.role != "assistant" or not 0 <= index < len(out.messages):
            return None
        if out.messages[index].tool_calls:
            return self.end
        if index == len(out.messages) - 1:
            return ()
        return None

    def rows(self, table: Table) -> None:
        # After a turn of calls, the frame's end is layout: llama.cpp lets the model end its
        # turn there with its end token (its grammar allows nothing else after the list).
        frame = table.layout.frames["assistant"]
        table.on("outside", table.text(frame.end), "outside")

    def jinja_open(self, out: Template, role: str) -> bool:
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
        out.out("{%- elif not loop.last -%}")
        out.fence(out.layout.frames["assistant"].end)
        out.out("{%- endif -%}")
        return True


def _calls_before(out: Render, index: int) -> bool:
    before = out.messages[index - 1]
    return before.role == "assistant" and bool(before.tool_calls)


@dataclass(frozen=True)
class BracketedResults(Results):
    """:class:`~pawlette.declare.Results` grouped in ``[`` (the tool frame's open) ... ``]``,
    joined by ``, `` (see the module).  ``calls_end``: the fence that ends a turn of calls,
    which the group follows."""

    grouped: bool = True
    item_gap: Fence = GAP
    gap_ends_group: bool = False
    calls_end: Fence = ()
    calls_open: Fence = ()

    def validate(self, layout: Layout) -> None:
        # No item_close: the results run together but for the gap, read as the module says.
        if "tool" not in layout.frames:
            super().validate(layout)

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


class GroupReader(WholeTextReader):
    """A group of results and the answer after it, up to the next marker: one tool message
    per call of the turn it answers, then the text after the group's ``]`` as an assistant
    message (see the module)."""

    __slots__ = ("_count",)

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        self._count = parser.calls_in_message
        parser.begin_message("tool")

    def close(self, marker: str | None, offset: int) -> None:
        parser = self._parser
        text = self._text()
        found = _split(text, self._count)
        if found is None:
            parser.malformed(
                self._offset if self._chunks else offset,
                f"results {text[:60]!r}: {self._count} calls answered, and the text does not "
                f"split into as many results joined by {SEPARATOR!r} and closed by {CLOSE!r}",
                f"one result per call, joined by {SEPARATOR!r}, then {CLOSE!r}",
                text,
            )
            found = [text], ""
        pieces, answer = found
        for number, piece in enumerate(pieces):
            if number:
                parser.begin_message("tool")
            parser.emit(TextDelta(piece))
            parser.end_message()
        step = parser.grammar.steps.get((parser.state.name, marker or ""))
        continues = step is not None and step.target == "call.list"
        if answer or continues:
            parser.begin_message("assistant")
            if answer:
                parser.emit(TextDelta(answer))


def _split(text: str, count: int) -> tuple[list[str], str] | None:
    """The results and the answer after them: at the first ``]`` before which the text
    splits into ``count`` results, where every result holding ``]`` is a whole JSON value."""
    start = 0
    while (at := text.find(CLOSE, start)) >= 0:
        pieces = split_group(text[:at], count)
        if pieces is not None and all(CLOSE not in piece or _json(piece) for piece in pieces):
            return pieces, text[at + len(CLOSE) :]
        start = at + 1
    return None


def _json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
