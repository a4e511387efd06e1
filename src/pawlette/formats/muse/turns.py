"""Muse Glimmer's turn details that no shared concept writes: the tool result's header,
named after the tool twice, and the end of a turn of calls that another assistant
message follows."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pawlette.declare import Concept
from pawlette.declare.pieces import Fence, markers_in
from pawlette.declare.readers import Described

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import Reader, ReaderFactory


class HeaderDropped:
    """A reader that drops the text up to the first ``end`` (a header the format writes
    before the text) and passes the rest on; text with no ``end`` is passed on whole."""

    __slots__ = ("_end", "_held", "_inner", "_settled")

    def __init__(self, inner: Reader, end: str) -> None:
        self._inner = inner
        self._end = end
        self._held = ""
        self._settled = False

    def feed(self, text: str, offset: int) -> None:
        if self._settled:
            self._inner.feed(text, offset)
            return
        held = self._held + text
        found = held.find(self._end)
        if found < 0:
            self._held = held
            return
        self._settled, self._held = True, ""
        cut = found + len(self._end)
        start = offset - (len(held) - len(text))
        if held[cut:]:
            self._inner.feed(held[cut:], start + cut)

    def close(self, marker: str | None, offset: int) -> None:
        if self._held:  # no header: the text as written
            self._inner.feed(self._held, offset - len(self._held))
            self._held = ""
        self._inner.close(marker, offset)


def result_name(out: Render, index: int) -> str:
    """The tool a result names, as the template finds it: the message's ``name``; else the
    name of the last call whose id is the result's ``tool_call_id``; else that id (empty
    when there is none)."""
    message = out.messages[index]
    if message.name:
        return message.name
    wanted = message.tool_call_id
    found = wanted or ""
    if wanted is None:
        return found
    for earlier in out.messages:
        for call in earlier.tool_calls or ():
            if call.id == wanted:
                found = call.name
    return found


@dataclass(frozen=True)
class ResultHeader(Concept):
    """After a result turn's open fence: the tool's name (:func:`result_name`), ``middle``,
    the name again, ``close``."""

    middle: Fence
    close: Fence

    handles: ClassVar[frozenset[str]] = frozenset({"tool_name"})

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"tool"})

    def write_opening(self, out: Render, index: int) -> None:
        name = result_name(out, index)
        out.text(name, "header")
        out.fence(self.middle, "header")
        out.text(name, "header")
        out.fence(self.close, "header")

    def rows(self, table: Table) -> None:
        # The header is the result's layout: its <|message|> is text of the result's state,
        # and what comes up to the header's close is dropped.
        spec = table.states["tool.item"]
        inner = {text for text in markers_in(self.middle)} | {
            text for text in markers_in(self.close)
        }
        table.states["tool.item"] = dataclasses.replace(spec, inner=spec.inner | inner)
        reader, close = spec.reader, table.text(self.close)
        make: ReaderFactory = lambda parser: HeaderDropped(reader(parser), close)  # noqa: E731
        table.reader("tool.item", Described("header dropped", make, end=close, reader=reader))

    def jinja_opening(self, out: Template, role: str) -> None:
        if role != "tool":
            return
        out.out("{%- if message.name is defined and message.name -%}")
        out.out("{%- set result = namespace(name=message.name) -%}")
        out.out("{%- else -%}")
        out.out("{%- set wanted = message.tool_call_id if message.tool_call_id is defined ")
        out.out("else none -%}")
        out.out("{%- set result = namespace(name=wanted if wanted else '') -%}")
        out.out("{%- for earlier in messages -%}")
        out.out("{%- if earlier.tool_calls is defined and earlier.tool_calls -%}")
        out.out("{%- for call in earlier.tool_calls -%}")
        out.out("{%- if wanted is not none and call.id is defined and call.id == wanted -%}")
        out.out("{%- set result.name = call.function.name -%}")
        out.out("{%- endif -%}{%- endfor -%}{%- endif -%}{%- endfor -%}")
        out.out("{%- endif -%}")
        out.out("{{- result.name -}}")
        out.fence(self.middle)
        out.out("{{- result.name -}}")
        out.fence(self.close)


@dataclass(frozen=True)
class CallsBeforeAssistant(Concept):
    """A turn of calls followed by another assistant message ends with ``end`` (the
    template's ``<|eom|>``: the model goes on) instead of the frame's end."""

    end: Fence

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    def turn_end(self, out: Render, index: int) -> Fence | None:
        messages = out.messages
        if (
            0 <= index < len(messages) - 1
            and messages[index].tool_calls
            and messages[index + 1].role == "assistant"
        ):
            return self.end
        return None

    def jinja_end(self, out: Template, role: str) -> bool:
        if role != "assistant":
            return False
        out.out("{%- if message.tool_calls is defined and message.tool_calls and not loop.last")
        out.out(" and messages[index + 1].role == 'assistant' -%}")
        out.fence(self.end)
        out.out("{%- else -%}")
        out.fence(out.layout.frames["assistant"].end)
        out.out("{%- endif -%}")
        return True


@dataclass(frozen=True)
class AnswerHeader(Concept):
    """An assistant turn without calls is addressed to the user: ``lead`` (`` to=user
    <|message|>``) before its text, after any reasoning.  Reading takes the lead where the
    turn begins, right after the reasoning, or after the calls (the text after them is the
    turn's content, as vLLM's parser reads it), into a state of its own where text never
    opens a call; ``bare`` (``<|message|>`` with no recipient) is read as the lead, as the
    peers read such a message as the answer.  The reasoning's close and the lead, and the
    reasoning's close and a call's open, are each one spelling of the lexer, which reads
    the longest.  The lead is also read without the space before its recipient.  Comes
    after the reasoning and calls concepts, whose states its rows join."""

    lead: Fence
    bare: Fence = ()

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    def write_opening(self, out: Render, index: int) -> None:
        if 0 <= index < len(out.messages) and not out.messages[index].tool_calls:
            out.fence(self.lead, "content", trainable=True)

    def rows(self, table: Table) -> None:
        from pawlette.declare import Reasoning, XmlCalls
        from pawlette.engine.readers import ContentReader

        answer = table.state("assistant.answer", ContentReader, "assistant", ends=True)
        # The lead is also read without the space before its recipient (to=user<|message|>),
        # as the peers' parsers read a header.
        leads = table.spellings(True, self.lead) + ([table.text(self.bare)] if self.bare else [])
        for state in ("assistant.head", "assistant.body"):
            for lead in leads:
                table.on(state, lead, answer)
        reasoning = table.layout.concept(Reasoning)
        calls = table.layout.concept(XmlCalls)
        if calls is not None and calls.separator and "assistant.after_call" in table.states:
            for lead in leads:
                table.on("assistant.after_call", table.text(calls.separator) + lead, answer)
        if reasoning is None:
            return
        close = table.text(reasoning.close)
        for (state, marker), step in list(table.steps.items()):
            if marker != close:
                continue
            for lead in leads:
                table.on(state, close + lead, answer)
            if calls is not None:
                call = table.steps[(step[0], table.text(calls.open))]
                table.on(state, close + table.text(calls.open), call[0], *call[1])

    def jinja_opening(self, out: Template, role: str) -> None:
        if role != "assistant":
            return
        out.fence_if("not (message.tool_calls is defined and message.tool_calls)", self.lead)

    def grammar(self, turn: Turn) -> None:
        from pawlette.emit.grammar_ast import seq

        turn.content = seq(*turn.nodes(self.lead), turn.content)
