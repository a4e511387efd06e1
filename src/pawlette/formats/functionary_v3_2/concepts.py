"""Functionary v3.2's own concepts: the generated system turn holding the tools' TypeScript
namespace, and the assistant's recipient segments (``>>>all\\n`` text, ``>>>NAME\\n`` + JSON
arguments, one after another)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pawlette.declare import Concept, NamedCalls
from pawlette.declare.calls import arguments_json
from pawlette.declare.grammar import TEXT, CallItems, text_then
from pawlette.declare.pieces import Fence, text_of
from pawlette.declare.readers import Described, give_back
from pawlette.emit.grammar_ast import Lit, Node, Repeat, Rules, alt, optional, seq
from pawlette.emit.jinja_text import jinja_string
from pawlette.engine.call_arguments import arguments_problem
from pawlette.engine.readers import WholeTextReader
from pawlette.errors import FormatError, UnsupportedFeature
from pawlette.types import TextDelta

from . import typescript

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.layout import Layout
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import Parser

SEGMENT = "functionary_v3_2.segment"
"""The parse state of one recipient segment (its recipient line, then its body)."""
_NAME = re.compile(r"[\w.-]+")
"""A recipient a call may have (llama.cpp reads ``\\w+``; tool names also hold ``.``/``-``)."""


# ---------------------------------------------------------------------- the system turn


class _NamespaceReader(WholeTextReader):
    """The generated system turn's text: the tools' namespace, not read back into tools (a
    TypeScript type is not the JSON schema it was written from)."""

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        if text.startswith(typescript.HEADER) and text.endswith(typescript.FOOTER):
            if text[len(typescript.HEADER) : -len(typescript.FOOTER)].strip():
                self._parser.lose_tools("TypeScript types")
            return
        self._parser.malformed(
            self._offset,
            f"tools text {text[:60]!r}",
            "the tools' namespace as the template writes it",
            text,
        )
        self._parser.emit(TextDelta(text))


@dataclass(frozen=True)
class NamespaceSystemTurn(Concept):
    """The system turn the template writes before the messages, holding no caller message:
    ``open`` (the header and the template's instructions), the tools' TypeScript namespace
    (:mod:`.typescript`; an empty one without tools), then ``end``."""

    open: Fence
    end: Fence

    handles: ClassVar[frozenset[str]] = frozenset({"tools"})
    STATE: ClassVar[str] = "functionary_v3_2.system"

    def check(self, out: Render) -> None:
        out.handles("tools")
        for number, tool in enumerate(out.tools):
            if tool.kind != "function":
                raise UnsupportedFeature(f"tools[{number}].type", f"{tool.kind!r}", "'function'")
            typescript.check(tool.definition, f"tools[{number}].function")

    def write_start(self, out: Render) -> None:
        out.at(None, -1)
        out.fence(self.open, "header")
        definitions = [dict(tool.definition) for tool in out.tools]
        out.text(typescript.namespace(definitions), "tools")
        out.fence(self.end, "header")

    def rows(self, table: Table) -> None:
        table.state(self.STATE, _NamespaceReader)
        table.on("outside", table.text(self.open), self.STATE)
        table.on(self.STATE, table.text(self.end), "outside")

    def jinja_setup(self, out: Template) -> None:
        out.macro("fv32", typescript.JINJA_MACROS)

    def jinja_start(self, out: Template) -> None:
        out.fence(self.open)
        out.out("{{- fv32_namespace(tools if has_tools else []) -}}")
        out.fence(self.end)


# ---------------------------------------------------------------------- the segments


class SegmentReader:
    """One segment: the recipient up to the first newline, then its body up to the next
    ``>>>`` or the turn's end.  ``all``: the body is text (streamed as it comes); a tool's
    name: the body is the call's JSON arguments (the call is emitted at the segment's end);
    anything else, or a call whose arguments are no JSON object, is content as written, with
    a warning."""

    __slots__ = ("_body", "_head", "_mode", "_offset", "_parser", "_prefix", "_recipient")

    def __init__(self, parser: Parser, opener: str) -> None:
        self._parser = parser
        self._head: list[str] = []
        self._body: list[str] = []
        self._mode: str | None = None
        self._recipient = ""
        self._offset = -1
        # The ">>>" read as this state's own marker is the segment's; the generation
        # prompt's (read with the turn's header) is not.
        self._prefix = opener if parser.entered_by == opener else ""

    def _decide(self, recipient: str) -> str:
        if recipient == "all":
            return "text"
        if not _NAME.fullmatch(recipient):
            return "other"
        tools = self._parser.tools
        if tools and recipient not in {tool.name for tool in tools}:
            return "other"
        return "call"

    def feed(self, text: str, offset: int) -> None:
        if self._offset < 0:
            self._offset = offset
        if self._mode is None:
            self._head.append(text)
            if "\n" not in text:
                return
            joined = "".join(self._head)
            recipient, _, text = joined.partition("\n")
            if self._prefix and recipient.startswith(">"):
                # Text ending with ">" before the opener (">>>>NAME"): the lexer took the
                # first three; the extra ones end the text before (llama.cpp's reading).
                extra = len(recipient) - len(recipient.lstrip(">"))
                self._parser.emit(TextDelta(recipient[:extra]))
                recipient = recipient[extra:]
            self._recipient = recipient
            self._mode = self._decide(recipient)
        if not text:
            return
        if self._mode == "text":
            self._parser.emit(TextDelta(text))
        else:
            self._body.append(text)

    def _content(self, problem: str, expected: str) -> None:
        raw = self._prefix + "".join(self._head) if self._mode is None else self._raw()
        if raw:
            give_back(self._parser, max(self._offset, 0), problem, expected, raw)

    def _raw(self) -> str:
        return self._prefix + self._recipient + "\n" + "".join(self._body)

    def close(self, marker: str | None, offset: int) -> None:
        if self._mode is None:
            if self._head or self._prefix:
                self._content("a recipient without its newline", "a recipient line")
            return
        if self._mode == "text":
            return
        recipient = self._recipient
        if self._mode == "other":
            found = f"recipient {recipient[:60]!r}"
            self._content(found, "'all' or a declared tool's name")
            return
        arguments = "".join(self._body).strip()
        problem = arguments_problem(arguments or "{}")
        if marker is None and not arguments:
            problem = "the call is cut off"
        if problem is not None:
            self._content(f"call {recipient!r}: {problem}", "a JSON object of arguments")
            return
        parser = self._parser
        index = parser.next_call_index()
        parser.emit_call(index, parser.new_call_id(), recipient, arguments or "{}")


@dataclass(frozen=True)
class RecipientCalls(NamedCalls):
    """The assistant's segments, each ``open`` + a recipient line + a body: the turn's text
    is ``open`` + ``text_open`` + text (``>>>all\\n...``), then each call ``open`` + NAME +
    ``arguments_open`` + its arguments (``>>>NAME\\n{...}``, no close).  The generation
    prompt ends with ``open``, so the first segment's ``open`` is the prompt's (not
    trainable) and the model writes the recipient first.  Read and constrained segment by
    segment (:class:`SegmentReader`); the calls' other fields are :class:`NamedCalls`'."""

    text_open: Fence = ()

    def validate(self, layout: Layout) -> None:
        super().validate(layout)
        if not self.text_open or self.close or self.section_open or self.section_close:
            raise FormatError(
                f"{layout.name}: RecipientCalls: text_open {self.text_open!r}, close "
                f"{self.close!r}, sections; expected the text's recipient line, no close and "
                "no sections (a segment ends where the next one opens)"
            )

    # ------------------------------------------------------------------ the writer

    def write_opening(self, out: Render, index: int) -> None:
        if out.role != "assistant" or index < 0:
            return
        text, calls = out.message_text(index), out.messages[index].tool_calls
        if text or calls:  # the first segment's opener: the generation prompt's
            out.fence(self.open, "content" if text else "tool_call")

    def write_content(self, out: Render, index: int) -> bool:
        if out.role != "assistant" or index < 0:
            return False
        text = out.message_text(index)
        if text:  # the template writes no segment for an empty text
            out.fence(self.text_open, "content", trainable=True)
            out.text(text, "content", trainable=True)
        return True

    def write_closing(self, out: Render, index: int) -> None:
        if out.role != "assistant" or index < 0:
            return
        text = out.message_text(index)
        for number, call in enumerate(out.messages[index].tool_calls or ()):
            if number or text:
                out.fence(self.open, "tool_call", trainable=True)
            out.text(call.name, "tool_call", trainable=True)
            out.fence(self.arguments_open, "tool_call", trainable=True)
            arguments = arguments_json(call.arguments, index, number)
            out.text(arguments, "tool_call", trainable=True)

    def _jinja_text(self, out: Template) -> None:
        name = jinja_string(out.layout.name)
        out.out(f"{{%- set segment_text = text_of(message, index, {name}) -%}}")

    def jinja_lead(self, out: Template, role: str) -> None:
        if role != "assistant":
            return
        self._jinja_text(out)
        calls = "message.tool_calls is defined and message.tool_calls"
        out.fence_if(f"segment_text or ({calls})", self.open)

    def jinja_content(self, out: Template, role: str) -> bool:
        if role != "assistant":
            return False
        self._jinja_text(out)
        out.out("{%- if segment_text -%}")
        out.fence(self.text_open)
        out.value("segment_text")
        out.out("{%- endif -%}")
        return True

    def jinja_closing(self, out: Template, role: str) -> None:
        if role != "assistant":
            return
        self._jinja_text(out)
        out.out("{%- if message.tool_calls is defined and message.tool_calls -%}")
        out.out("{%- for call in message.tool_calls -%}")
        out.fence_if("segment_text or not loop.first", self.open)
        out.out("{{- call.function.name -}}")
        out.fence(self.arguments_open)
        out.arguments()
        out.out("{%- endfor -%}")
        out.out("{%- endif -%}")

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        opener = table.text(self.open)
        reader = Described(
            "recipient segment", lambda parser: SegmentReader(parser, opener), opener=opener
        )
        table.state(SEGMENT, reader, "assistant", ends=True)
        for state in (*table.call_states, SEGMENT):
            table.on(state, opener, SEGMENT)
        # The generation prompt ends with the opener: a completion starts in a segment, and
        # a turn opened as the prompt opens it is in one.
        table.completion_start = SEGMENT
        frame = table.layout.frames["assistant"]
        for pieces in frame.prompt_after.values():
            spelling = table.text(pieces)
            step = table.steps.get(("outside", spelling))
            if step is not None:
                table.steps[("outside", spelling)] = (SEGMENT, step[1])

    # ------------------------------------------------------------------ the turn grammar

    def grammar(self, turn: Turn) -> None:
        layout = turn.layout
        opener = text_of(self.open, layout.options, layout.name)
        text_open = text_of(self.text_open, layout.options, layout.name)
        # After the prompt's opener: the text's recipient line and the text, or nothing (an
        # empty turn, which the template writes without a segment).
        turn.content = optional(seq(Lit(text_open), optional(TEXT)))
        turn.calls = _Segments(self, turn, opener, text_open)


class _Segments(CallItems):
    """The calls after the generation prompt's opener: NAME + ``\\n`` + arguments, then
    (parallel) opener + NAME + ... ; text before them is its own segment."""

    trigger: str | None = None  # the opener is plain text: no marker starts the calls

    def __init__(self, calls: RecipientCalls, turn: Turn, opener: str, text_open: str) -> None:
        self.calls = calls
        self.with_content = True
        self.opener = opener
        self.text_lead = text_open
        layout = turn.layout
        self.arguments_open = text_of(calls.arguments_open, layout.options, layout.name)

    def items(self, turn: Turn, rules: Rules, number: int) -> list[Node]:
        from pawlette.emit.turn_rules import json_arguments

        tool = turn.tools[number]
        return [Lit(tool.name + self.arguments_open), json_arguments(rules, number, tool)]

    def rest(self, turn: Turn, rules: Rules, parallel: bool) -> list[Node]:
        if not (parallel and self.calls.parallel):
            return []
        return [Repeat(seq(Lit(self.opener), self.call(turn, rules)))]

    def after_text(self, turn: Turn, rules: Rules) -> Node:
        # The text and the next segment's opener (plain text) as one lexeme.
        return seq(Lit(self.text_lead), text_then(rules, self.opener))

    def prefix(self, name: str | None) -> str:
        return "" if name is None else name + self.arguments_open

    def after_prefix(self, turn: Turn, rules: Rules, prefix: str, parallel: bool) -> Node:
        from pawlette.emit.json_schema import BASE_RULES
        from pawlette.emit.turn_rules import json_arguments

        if not prefix:
            return self.many(turn, rules, parallel)
        rules.gbnf_extra.update({k: v for k, v in BASE_RULES.items() if k not in rules.gbnf_extra})
        heads = [
            json_arguments(rules, number, tool)
            for number, tool in turn.allowed()
            if prefix == self.prefix(tool.name)
        ]
        return seq(alt(*heads), *self.rest(turn, rules, parallel))
