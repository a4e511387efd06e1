"""Decision tokens: Python calls whose last turn of a request with tools says what it does.

The assistant turn the model writes last in a request with tools (the final message of a
conversation rendered for training, or what follows the generation prompt) first says what it
does: ``call`` opens its calls (in place of the calls' ``open``), ``answer`` opens its text.
Every other assistant turn is written without one: its calls open with the calls' ``open``
and, when ``undecided_end`` is set, end with it instead of the frame's end.  Parsing reads
every spelling everywhere.  MediaTek's Breeze 2 (MRPromptV3)::

    decided:    <|use_tool|>[f(a=1)]<|eot_id|>      <|answer|>text<|eot_id|>
    undecided:  <|python_tag|>[f(a=1)]<|eom_id|>    text<|eot_id|>

A turn holds text or calls (``with_content`` is False) and has no reasoning block; a decision
or call marker after text is malformed.  The grammar of a turn with tools is
``CALL [CALLS] END | ANSWER TEXT END``; the forced prefixes are ``answer`` (``none``),
``call`` (``required``) and ``call`` + ``[name(`` (a named function).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from ...declare.pieces import Fence
from ...declare.python_calls import PythonCalls
from ...engine.machine import Parser
from ...engine.readers import ContentReader
from ...errors import FormatError

if TYPE_CHECKING:
    from ...declare.grammar import Turn
    from ...declare.jinja import Template
    from ...declare.layout import Layout
    from ...declare.table import Table
    from ...declare.write import Render


@dataclass(frozen=True)
class DecisionCalls(PythonCalls):
    """Python calls with decision tokens (see the module docstring).

    Fields, beyond :class:`~pawlette.declare.PythonCalls`': ``call`` and ``answer``, the
    decision tokens; ``undecided_end``: the end of a turn of calls written without a decision
    (empty: the frame's end); it must be one of the assistant frame's ends (``end`` or
    ``also_end``).
    """

    call: Fence = ()
    answer: Fence = ()
    undecided_end: Fence = ()

    def validate(self, layout: Layout) -> None:
        super().validate(layout)
        if self.with_content:
            raise FormatError(
                f"{layout.name}: decision tokens need Python calls without text beside them"
            )
        if not self.call or not self.answer:
            raise FormatError(
                f"{layout.name}: decision tokens: an empty call or answer fence; expected both"
            )
        for concept in layout.concepts:
            if "reasoning" in getattr(concept, "handles", ()):
                raise FormatError(
                    f"{layout.name}: decision tokens with reasoning are not a concept"
                )
            if concept is not self and "calls" in getattr(concept, "handles", ()):
                raise FormatError(
                    f"{layout.name}: decision tokens need Python calls, and "
                    f"{type(concept).__name__} writes calls too"
                )
        frame = layout.frames["assistant"]
        if self.undecided_end and self.undecided_end not in (frame.end, *frame.also_end):
            raise FormatError(f"{layout.name}: decision.undecided_end is not an assistant end")

    def decided(self, out: Render, index: int) -> bool:
        """Whether the assistant message at ``index`` is written with its decision token."""
        return bool(out.tools) and index == len(out.messages) - 1 and not out.prompt

    # ------------------------------------------------------------------ the writer

    def write_opening(self, out: Render, index: int) -> None:
        decided = index == len(out.messages) - 1 and out.tools and not out.prompt
        if decided and not out.messages[index].tool_calls:
            out.fence(self.answer, "content", trainable=True)

    def write_content(self, out: Render, index: int) -> bool:
        return index >= 0 and bool(out.messages[index].tool_calls)  # calls alone

    def write_closing(self, out: Render, index: int) -> None:
        calls = out.messages[index].tool_calls if index >= 0 else ()
        if calls:
            self.write_list(out, index, self.call if self.decided(out, index) else self.open, calls)

    def turn_end(self, out: Render, index: int) -> Fence | None:
        if not self.undecided_end or index < 0 or not out.messages[index].tool_calls:
            return None
        decided = out.tools and index == len(out.messages) - 1 and not out.prompt
        return None if decided else self.undecided_end

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        """``answer`` leads to the text, ``call`` to the calls; a decision or call marker
        after text is malformed."""
        super().rows(table)
        head, body = "assistant.head", "assistant.body"
        table.on(head, table.text(self.answer), body)
        table.on(head, table.text(self.call), "assistant.call")
        leads = frozenset(table.text(pieces) for pieces in (self.answer, self.call, self.open))
        for name, decided in ((head, False), (body, True)):
            table.reader(name, partial(FirstInTurnReader, leads=leads, decided=decided))

    # ------------------------------------------------------------------ the Jinja template

    DECIDE = "(has_tools and loop.last and not add_generation_prompt)"
    """A turn written with its decision token (the last message of a request with tools)."""

    def jinja_opening(self, out: Template, role: str) -> None:
        out.out(
            "{%- if not (message.tool_calls is defined and message.tool_calls) and "
            f"{self.DECIDE} -%}}"
        )
        out.fence(self.answer)
        out.out("{%- endif -%}")

    def jinja_calls(self, out: Template) -> None:
        out.fence_if(self.DECIDE, self.call, self.open)
        self.jinja_list(out)
        out.fence(self.close)

    def jinja_end(self, out: Template, role: str) -> bool:
        if not self.undecided_end:
            return False
        out.out(
            "{%- if message.tool_calls is defined and message.tool_calls and not "
            f"{self.DECIDE} -%}}"
        )
        out.fence(self.undecided_end)
        out.out("{%- else -%}")
        out.fence(out.layout.frames["assistant"].end)
        out.out("{%- endif -%}")
        return True

    # ------------------------------------------------------------------ the turn grammar

    @property
    def model_open(self) -> Fence:
        """A model decides to call with ``call``, which opens its list."""
        return self.call

    def grammar(self, turn: Turn) -> None:
        super().grammar(turn)
        turn.answer_lead = self.answer


class FirstInTurnReader(ContentReader):
    """Assistant text; a decision or call marker (``leads``) must come before any text (in
    the body state, entered by a decision, there is one already: ``decided``)."""

    __slots__ = ("_leads", "_text")

    def __init__(self, parser: Parser, leads: frozenset[str], decided: bool) -> None:
        super().__init__(parser)
        self._leads = leads
        self._text = decided

    def feed(self, text: str, offset: int) -> None:
        self._text = self._text or bool(text)
        super().feed(text, offset)

    def close(self, marker: str | None, offset: int) -> None:
        if self._text and marker in self._leads:
            self._parser.malformed(offset, f"{marker} after text", "it first in the turn", "")
