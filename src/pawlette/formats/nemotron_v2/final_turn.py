"""The turn a conversation ends on, as Nemotron Nano 2's template writes it.

Rendered without the generation prompt (for training), a conversation whose last message is
an assistant's ends otherwise than its past turns do.  The template writes that message's
text after the generation prompt, inside the reasoning block the prompt opens and never
closes, and its calls in a turn of their own::

    <SPECIAL_11>Assistant\\n<think>\\nanswer\\n<SPECIAL_12>\\n
    <SPECIAL_11>Assistant\\n<TOOLCALL>[...]</TOOLCALL><SPECIAL_12>\\n\\n

(the first turn only when there is text, the second only when there are calls).  The
prompt's part, ``<think>\\n``, is not trainable; all that follows it is.

Reading a conversation gives the message back (:class:`FinalTextReader`: a block its turn
ends without closing is that turn's text).  Reading what follows the prompt as the model's
output, the text is reasoning the model never closed, as llama.cpp and vLLM read it (a
documented loss: read back as ``reasoning_content``).  Either way the text's end, the calls'
opener and ``<TOOLCALL>`` are one spelling that continues the message (:class:`FinalCalls`),
so the template's last turn reads back as one message.  ``FinalTurn(closed=True)`` writes the
last turn as the model writes its turn after the prompt instead (the option
``last_turn="closed"``).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import Concept, JsonCallList, Reasoning
from pawlette.declare.pieces import Fence
from pawlette.declare.readers import Described, OptionalReasoningReader
from pawlette.errors import FormatError
from pawlette.types import ReasoningDelta, TextDelta

from .past_answer import FINAL as _FINAL
from .past_answer import is_final, jinja_written_text, written_text

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.layout import Layout
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import Parser, ReaderFactory

REASONING = "assistant.reasoning"
_TEXT = "(text_of(message, index, 'nemotron_v2') | trim)"  # the template tests it trimmed
_CALLS = "message.tool_calls is defined and message.tool_calls"
INSIDE = (
    "written inside the reasoning block the generation prompt opens, which the template"
    " never closes: read back as reasoning_content"
)


@dataclass(frozen=True)
class FinalTurn(Concept):
    """The last turn's reasoning-block opening (``open``, before text or when there are no
    calls) and, after a last turn's calls, its ``end`` then ``gap`` (see the module).

    ``closed``: the last turn written as the model writes its turn after the prompt instead
    (the option ``last_turn="closed"``): ``open``, then ``close`` (the model's, trainable),
    then the turn as past turns are written, calls in it."""

    open: Fence
    close: Fence
    end: Fence
    gap: Fence
    closed: bool = False

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    def check(self, out: Render) -> None:
        index = len(out.messages) - 1
        if not self.closed and is_final(out, index) and out.message_text(index).strip():
            out.lose(f"messages[{index}].content", INSIDE)

    def _opens(self, out: Render, index: int) -> bool:
        message_text = out.message_text(index).strip()
        return self.closed or bool(message_text) or not out.messages[index].tool_calls

    def write_opening(self, out: Render, index: int) -> None:
        if is_final(out, index) and self._opens(out, index):
            out.fence(self.open, "reasoning")
            if self.closed:
                out.fence(self.close, "reasoning", trainable=True)

    def turn_end(self, out: Render, index: int) -> Fence | None:
        if not self.closed and is_final(out, index) and out.messages[index].tool_calls:
            return self.end
        return None

    def write_after(self, out: Render, index: int) -> None:
        if not self.closed and is_final(out, index) and out.messages[index].tool_calls:
            out.fence(self.gap, "separator")

    def rows(self, table: Table) -> None:
        reasoning = table.layout.concept(Reasoning)
        assert reasoning is not None  # (validate says so)
        close = table.text(reasoning.close)
        make: ReaderFactory = lambda parser: FinalTextReader(parser, close)  # noqa: E731
        table.reader(REASONING, Described("reasoning, or the final turn's text", make, close=close))

    def validate(self, layout: Layout) -> None:
        if layout.concept(Reasoning) is None:
            raise FormatError(f"{layout.name}: FinalTurn reads the block Reasoning declares")

    def jinja_lead(self, out: Template, role: str) -> None:
        if role == "assistant":  # before the turn's {% generation %}: the prompt's part
            opens = "" if self.closed else f" and ({_TEXT} or not ({_CALLS}))"
            out.fence_if(f"{_FINAL}{opens}", self.open)

    def jinja_opening(self, out: Template, role: str) -> None:
        if role == "assistant" and self.closed:
            out.fence_if(_FINAL, self.close)

    def jinja_end(self, out: Template, role: str) -> bool:
        if role != "assistant" or self.closed:
            return False
        out.fence_if(f"{_FINAL} and {_CALLS}", self.end, out.layout.frames["assistant"].end)
        return True

    def jinja_after(self, out: Template, role: str) -> None:
        if role == "assistant" and not self.closed:
            out.fence_if(f"{_FINAL} and {_CALLS}", self.gap)


@dataclass(frozen=True)
class FinalCalls(JsonCallList):
    """:class:`~pawlette.declare.JsonCallList`, but a last turn's calls follow its text in a
    turn of their own: ``text_end`` (the text's end), then ``calls_opener`` (see the module).
    Reading, the text's end, that opener and the list's open are one spelling: the calls
    continue the message."""

    text_end: Fence = ()
    calls_opener: Fence = ()
    split: bool = True

    def write_closing(self, out: Render, index: int) -> None:
        final = self.split and is_final(out, index) and out.messages[index].tool_calls
        if not written_text(out, index):
            # The template tests the text trimmed: whitespace alone (trimmed away, a recorded
            # loss) is no text, and no separator comes before the calls.
            JsonCallList.write_closing(_alone(self), out, index)
            return
        if not final:
            super().write_closing(out, index)
            return
        # All of it after the prompt is the model's part: the opener too.
        out.fence(self.text_end, "end", trainable=True)
        out.fence(self.calls_opener, "header", trainable=True)
        JsonCallList.write_closing(_alone(self), out, index)

    def rows(self, table: Table) -> None:
        super().rows(table)
        # The last turn's text, then its calls' turn: one message (see the module).
        spelling = table.text(self.text_end, self.calls_opener, self.open or ())
        for state in (*table.call_states, REASONING):
            table.on(state, spelling, "call.list")
        # A list written at once in the block the prompt opened: a turn of calls as the
        # template writes the last one, with no block.
        table.on(REASONING, table.text(self.open or ()), "call.list")

    def jinja_closing(self, out: Template, role: str) -> None:
        if role != "assistant":
            return
        written = jinja_written_text(out.layout.name)
        if self.split:
            out.out(f"{{%- if {_FINAL} and {_CALLS} and {_TEXT} -%}}")
            out.fence(self.text_end)
            out.fence(self.calls_opener)
            JsonCallList.jinja_closing(_alone(self), out, role)
            out.out(f"{{%- elif {written} -%}}")
        else:
            out.out(f"{{%- if {written} -%}}")
        super().jinja_closing(out, role)
        out.out("{%- else -%}")  # no text once trimmed: no separator (see write_closing)
        JsonCallList.jinja_closing(_alone(self), out, role)
        out.out("{%- endif -%}")


@functools.cache
def _alone(calls: FinalCalls) -> FinalCalls:
    """The list with no separator before it (a last turn's calls, in a turn of their own)."""
    return dataclasses.replace(calls, text_separator=())


class FinalTextReader(OptionalReasoningReader):
    """The reasoning block's text.  In a completion, reasoning, as it comes.  Reading a
    conversation, a block its turn ends without closing (``close``) is the last turn's text,
    written there (see the module): held until the block's close (reasoning) or the turn's
    end (the text)."""

    __slots__ = ("_close", "_held")

    def __init__(self, parser: Parser, close: str) -> None:
        super().__init__(parser)
        self._close = close
        self._held: list[str] = []

    def feed(self, text: str, offset: int) -> None:
        if not self._parser.conversation:
            super().feed(text, offset)
        elif text:
            self._held.append(text)

    def close(self, marker: str | None, offset: int) -> None:
        if not self._held:
            return
        text = "".join(self._held)
        self._held = []
        closed = marker == self._close
        self._parser.emit(ReasoningDelta(text) if closed else TextDelta(text))
