"""Kimi K2's own concepts: calls named by a label that holds the name, message names as role
labels, results labelled with the call's id, reasoning kept after the first plain answer, and
the newline after the default system turn.

Each is a concept of :mod:`pawlette.declare` (its share of the writer, the parse table, the
Jinja template and the turn grammar), used only by :mod:`pawlette.formats.kimi`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pawlette.declare import Fence, Lit, NamedCalls, Reasoning, Results
from pawlette.emit import grammar_ast
from pawlette.errors import FormatError

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.layout import Layout
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import Parser
    from pawlette.types import Message, ToolCall


def _named(frame_open: Fence, name: str) -> Fence:
    """A frame's open fence, ``MARKER`` + ROLE + ``<|im_middle|>``, with ``name`` for ROLE."""
    return (frame_open[0], Lit(name), *frame_open[2:])


@dataclass(frozen=True)
class CallLabel:
    """A call id written where the name goes, holding the name: ``prefix`` + NAME +
    ``separator`` + NUMBER (Kimi K2: ``functions.get_weather:0``).

    - ``count``: the number counts the calls of the ``"turn"`` (from 0 in each assistant
      message) or of the whole ``"conversation"`` (from 0, on across turns).

    Writing puts the label in the name's place (the caller's call id is not written: the
    label is the call's id on the wire).  Reading takes the text between ``open`` and the
    next fence as the call's id, and the name out of it: ``prefix`` removed when it is
    there, and ``separator`` + NUMBER at the end when it is there (models also write the
    bare name, or ``NAME:0``, and the peers' readers take those).
    """

    prefix: str = ""
    separator: str = ":"
    count: Literal["turn", "conversation"] = "turn"

    def text(self, name: str, number: int) -> str:
        return f"{self.prefix}{name}{self.separator}{number}"

    def name_of(self, label: str) -> str:
        """The name a label written by a model holds (see the class docstring)."""
        name = label
        if self.prefix and name.startswith(self.prefix):
            name = name[len(self.prefix) :]
        if self.separator:
            head, found, tail = name.rpartition(self.separator)
            if found and head and tail.isdigit():
                name = head
        return name.strip()


def calls_before(messages: tuple[Message, ...]) -> list[int]:
    """How many calls the assistant messages before each of ``messages`` hold (found once
    per render: counted for each call, it walked the messages before it)."""
    counts, total = [], 0
    for message in messages:
        counts.append(total)
        if message.role == "assistant":
            total += len(message.tool_calls or ())
    return counts


@dataclass(frozen=True)
class LabelledCalls(NamedCalls):
    """:class:`pawlette.declare.NamedCalls` with a :class:`CallLabel` in the name's place
    (``<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>``).

    ``outside_section``: reading also takes calls a model writes without the section fences
    around them, and a call without its ``close`` fence (it ends where the next call opens,
    the section closes or the turn ends), as llama.cpp reads Kimi K2's.  Writing and the
    grammars keep the whole form.
    """

    label: CallLabel = CallLabel()
    outside_section: bool = False

    def validate(self, layout: Layout) -> None:
        super().validate(layout)
        if self.label.count not in ("turn", "conversation"):
            raise FormatError(
                f"{layout.name}: LabelledCalls.label.count: {self.label.count!r}; expected "
                "'turn' or 'conversation'"
            )

    def calls_closed(self) -> bool:
        return super().calls_closed() and not self.outside_section

    def rows(self, table: Table) -> None:
        texts = tuple(table.call_states)
        super().rows(table)
        if not self.outside_section:
            return
        first = "call.name"
        if self.section_open:  # a call opens in the text, without the section's opener
            for state in texts:
                for spelling in table.spellings(self.loose, self.open):
                    table.on(state, spelling, first)
        # A call's opener where its name is read: what was read is no call (given back as
        # content, with a warning) and a new call opens there, as vLLM reads Kimi's calls
        # (the name is the label right before the arguments).
        for spelling in table.spellings(self.loose, self.open):
            table.on(first, spelling, first)
        if not self.close:
            return
        # A call without its close fence ends where the next one opens or the section closes.
        for spelling in table.spellings(self.loose, self.separator, self.open):
            table.on("call.arguments", spelling, first)
        if self.section_close:
            for spelling in table.spellings(self.loose, self.section_close):
                table.on("call.arguments", spelling, "assistant.after_calls")

    def written_name(self, out: Render, index: int, number: int, call: ToolCall) -> str:
        first = 0
        if self.label.count == "conversation":
            first = out.state(LabelledCalls, lambda: calls_before(out.messages))[index]
        return self.label.text(call.name, first + number)

    def read_name(self, text: str) -> tuple[str, str | None]:
        return self.label.name_of(text), text

    def repeated_id(
        self, parser: Parser, name: str, taken: set[str], spare: str | None = None
    ) -> str:
        """The label of the number after the highest the message's calls were served under
        (the number the template would write for the next call), not one of ``taken``
        (``spare`` is not such a label)."""
        separator = self.label.separator
        numbers = [
            int(tail)
            for identifier in taken
            if separator and (tail := identifier.rpartition(separator)[2]).isdigit()
        ]
        number = max(numbers, default=-1) + 1
        while self.label.text(name, number) in taken:
            number += 1
        return self.label.text(name, number)

    def jinja_setup(self, out: Template) -> None:
        super().jinja_setup(out)
        if self.label.count == "conversation":
            out.ns("call_number", "0")

    def jinja_name(self, out: Template) -> None:
        number = "loop.index0"
        if self.label.count == "conversation":
            number = "(ns.call_number + loop.index0)"
        out.literal(self.label.prefix)
        out.out("{{- call.function.name -}}")
        out.literal(self.label.separator)
        out.out(f"{{{{- {number} | string -}}}}")

    def jinja_calls(self, out: Template) -> None:
        super().jinja_calls(out)
        if self.label.count == "conversation":
            out.out("{%- set ns.call_number = ns.call_number + message.tool_calls | length -%}")

    def name_nodes(self, turn: Turn, name: str) -> list[grammar_ast.Node]:
        digits = grammar_ast.Repeat(grammar_ast.CharClass("0123456789"), 1, None)
        return [grammar_ast.Lit(self.forced_name(name)[0]), digits]

    def forced_name(self, name: str) -> tuple[str, bool]:
        return self.label.prefix + name + self.label.separator, False  # the number follows


@dataclass(frozen=True)
class LabelledResults(Results):
    """Each tool message a turn of its own: ``<|im_system|>`` + (``name`` when ``names`` and
    given, else ``tool``) + ``<|im_middle|>## Return of `` + LABEL + ``id_close`` + text +
    ``<|im_end|>``, the frame's open fence being ``<|im_system|>tool<|im_middle|>## Return of ``.

    ``labels``: LABEL is the result's ``tool_call_id`` (``"message"``, the first Kimi K2
    template), or (``"calls"``) the id the calls concept wrote for the call it answers:
    the templates keep a queue of the written call ids and each tool message takes the
    oldest one not yet answered; with none left, ``functions.`` + (``name`` or
    ``unknown``) + ``:`` + the number of calls written so far.
    """

    names: bool = False
    labels: Literal["message", "calls"] = "message"

    def check(self, out: Render) -> None:
        if self.labels == "message":
            super().check(out)
            return
        out.handles("tool_name")
        if not self.names:
            for index, message in enumerate(out.messages):
                if message.role == "tool" and message.name is not None:
                    out.lose(f"messages[{index}].name", "not written (the call names the tool)")

    def _label(self, out: Render, index: int) -> str:
        """The label the queue of written call ids gives ``messages[index]``."""
        names: list[str] = []
        answered = 0
        for number in range(index):
            message = out.messages[number]
            if message.role == "assistant":
                names += [call.name for call in message.tool_calls or ()]
            elif message.role == "tool" and answered < len(names):
                answered += 1
        if answered < len(names):
            return f"functions.{names[answered]}:{answered}"
        return f"functions.{out.messages[index].name or 'unknown'}:{len(names)}"

    def write_message(self, out: Render, index: int) -> None:
        message = out.messages[index]
        frame = out.frame("tool")
        out.role, out.index = "tool", index
        out.at("tool", index)
        opener = frame.opener(out.previous)
        if self.names and message.name:
            opener = _named(opener, message.name)
        out.fence(opener, "header")
        if self.labels == "calls":
            out.text(self._label(out, index), "tool_result")
        else:
            out.text(message.tool_call_id or "", "tool_result")
        out.fence(self.id_close or (), "tool_result")
        out.text(out.message_text(index), "tool_result")
        out.fence(frame.end, "close")
        out.fence(frame.after, "separator")
        out.previous = "tool"

    def jinja_message(self, out: Template, role: str) -> None:
        frame = out.layout.frames["tool"].open
        if self.names:
            out.out("{%- if message.name is defined and message.name -%}")
            out.fence(frame[:1])
            out.out("{{- message.name -}}")
            out.fence(frame[2:])
            out.out("{%- else -%}")
            out.fence(frame)
            out.out("{%- endif -%}")
        else:
            out.fence(frame)
        if self.labels == "calls":
            answered = out.ns("results_answered", "0")
            out.out("{%- set queue = namespace(label=none, number=0) -%}")
            out.out("{%- for earlier in messages[:index] -%}")
            out.out('{%- if earlier.role == "assistant" and earlier.tool_calls is defined -%}')
            out.out("{%- for call in earlier.tool_calls or [] -%}")
            out.out(
                f"{{%- if queue.number == {answered} -%}}{{%- set queue.label = "
                "'functions.' ~ call.function.name ~ ':' ~ queue.number -%}{%- endif -%}"
            )
            out.out("{%- set queue.number = queue.number + 1 -%}")
            out.out("{%- endfor -%}")
            out.out("{%- endif -%}")
            out.out("{%- endfor -%}")
            out.out("{%- if queue.label is none -%}")
            out.out(
                "{{- 'functions.' ~ (message.name if message.name is defined and message.name"
                " else 'unknown') ~ ':' ~ queue.number -}}"
            )
            out.out("{%- else -%}")
            out.out(f"{{{{- queue.label -}}}}{{%- set {answered} = {answered} + 1 -%}}")
            out.out("{%- endif -%}")
        else:
            out.out("{{- message.tool_call_id -}}")
        out.fence(self.id_close or ())
        out.text()
        end = out.layout.frames["tool"]
        out.fence(end.end)
        out.fence(end.after)
        out.out('{%- set ns.previous = "tool" -%}')


@dataclass(frozen=True)
class ReasoningAfterFirstAnswer(Reasoning):
    """Reasoning as Kimi K2 Thinking's template keeps it: every assistant turn up to and
    including the FIRST assistant message without calls writes the ``absent`` block (its
    reasoning dropped, a recorded loss); every turn after it writes ``open`` + reasoning +
    ``close`` (an empty block without reasoning).  Without such a message every turn keeps
    its reasoning.  (The template's comment says "last"; its loop runs backwards without
    stopping, so it ends at the first.)"""

    def _first_answer(self, out: Render) -> int:
        for number, message in enumerate(out.messages):
            if message.role == "assistant" and not message.tool_calls:
                return number
        return -1

    def written(self, out: Render, index: int) -> bool:
        message = out.messages[index]
        return message.reasoning is not None and index > self._first_answer(out)

    def check(self, out: Render) -> None:
        out.handles("reasoning")
        for index, message in enumerate(out.messages):
            if message.reasoning and message.role == "assistant" and not self.written(out, index):
                out.lose(
                    f"messages[{index}].reasoning_content",
                    "dropped (up to the first answer without calls)",
                )

    def jinja_setup(self, out: Template) -> None:
        first = out.ns("first_answer", "-1")
        out.out("{%- for message in messages -%}")
        out.out(
            f'{{%- if {first} == -1 and message.role == "assistant" and not '
            "(message.tool_calls is defined and message.tool_calls) -%}"
        )
        out.out(f"{{%- set {first} = loop.index0 -%}}")
        out.out("{%- endif -%}")
        out.out("{%- endfor -%}")

    def _condition(self, out: Template) -> str:
        given = "message.reasoning_content is defined and message.reasoning_content is not none"
        return f"index > ns.first_answer and {given}"


__all__ = [
    "CallLabel",
    "LabelledCalls",
    "LabelledResults",
    "ReasoningAfterFirstAnswer",
]
