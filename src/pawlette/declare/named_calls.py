"""Calls whose name is written outside their JSON arguments (:class:`NamedCalls`).

>>> from pawlette.declare import Marker, NamedCalls, fence
>>> NamedCalls(open=fence(Marker("[TOOL_CALLS]")), arguments_open=fence(Marker("[ARGS]"))).content
'written'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..emit.grammar_ast import Lit, Node, Rules, alt, optional, seq
from ..engine.call_arguments import arguments_problem
from ..engine.machine import Parser
from ..engine.readers import WholeTextReader
from ..errors import FormatError
from ..types import TextDelta, ToolCall, ToolCallDelta, ToolCallEnd, ToolCallStart
from .call_ids import id_node
from .calls import (
    CallConcept,
    Content,
    MessageCallIds,
    SectionedCallConcept,
    arguments_json,
    closing_marker,
    give_deferred,
    name_problem,
)
from .grammar import TEXT_NE, SectionedCalls, joined_text
from .pieces import Fence, text_of
from .readers import Described, OpenSection, give_back_call, next_state

if TYPE_CHECKING:
    from ..types import Tool
    from .grammar import Turn
    from .jinja import Template
    from .layout import Layout
    from .table import Table
    from .write import Render


@dataclass(frozen=True)
class NamedCalls(SectionedCallConcept):
    """Calls with the name outside the arguments::

        Mistral       [TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Paris"}
        DeepSeek V3   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>
                      {"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>   (one line)

    Fields:

    - ``open`` / ``arguments_open`` / ``close``: around one call's name and arguments;
      ``id_open``: before the call's id, written after the name (None: no ids written; read,
      a call without one gets a generated id).
    - ``section_open`` / ``section_close``: around all the calls of a turn; ``separator``:
      between two calls; ``text_separator``: between text and the calls.
    - ``content``: text alongside calls is ``"written"`` before them, ``"dropped"`` (the
      template does not write it: a recorded loss), ``"refused"``, or ``"replaces_calls"``
      (written in their place: the calls are the recorded loss).
    - ``id_pattern``: with ``id_open``, the shape of the call ids the format writes (Mistral's
      templates refuse ids that are not 9 letters and digits): render refuses a call whose
      id (or missing id) does not match it whole; reading gives a call the model wrote
      without an id a new one of that shape (unless the parser's caller gives its own); the
      forced grammars let the model write only such ids.  Characters and bracketed sets of
      them, each with an optional count (``[A-Za-z0-9]{9}``).  None (the default): any id.
      Without ``id_open`` no id is written, so it is refused.
    - ``parallel``: several calls in one turn.
    - ``loose``: fences are also read without the whitespace they write around markers.

    Reading: the name is the text between ``open`` and the next fence, stripped; the
    arguments must be a JSON object (:mod:`pawlette.engine.call_arguments`).  A call that is
    not one (no name, a name outside the request's tools, arguments that are not an object,
    cut off) is content, as written, with one warning.  A subclass may write something else
    in the name's place (the hooks under "the name's place": Kimi K2's
    ``functions.get_weather:0``, Solar Open's id before the name).
    """

    open: Fence
    arguments_open: Fence
    close: Fence = ()
    id_open: Fence | None = None
    section_open: Fence = ()
    section_close: Fence = ()
    separator: Fence = ()
    text_separator: Fence = ()
    content: Content = "written"
    id_pattern: str | None = None
    parallel: bool = True
    loose: bool = True

    def validate(self, layout: Layout) -> None:
        if not self.open or not self.arguments_open:
            raise FormatError(
                f"{layout.name}: NamedCalls: an empty open or arguments_open fence; expected "
                "the fences before the name and before the arguments"
            )
        if self.id_pattern is not None and not self.writes_ids():
            raise FormatError(
                f"{layout.name}: {type(self).__name__}.id_pattern: {self.id_pattern!r} with "
                "id_open=None; expected an id_open too (the pattern checks the ids the format "
                "writes after id_open, and without it no id is written or read), or id_pattern "
                "left out"
            )

    def writes_ids(self) -> bool:
        """Whether a call's id is written: after ``id_open``, or in the name's place by a
        subclass that reads one back there (:meth:`read_name`)."""
        return self.id_open is not None or type(self).read_name is not NamedCalls.read_name

    # ------------------------------------------------------------------ the name's place
    # What stands between ``open`` and the arguments (or the id): the call's name.  A
    # subclass that writes something else there overrides these together (``head_states``
    # when a state of its own comes before the name's).

    def written_name(self, out: Render, index: int, number: int, call: ToolCall) -> str:
        """What the writer puts in the name's place of ``call``, the call ``number`` of
        ``messages[index]``."""
        return call.name

    def read_name(self, text: str) -> tuple[str, str | None]:
        """The name a model wrote in the name's place (``text``, stripped and not empty), and
        the call id it holds (None: none)."""
        return text, None

    def write_name(self, out: Render, call: ToolCall, name: str) -> None:
        """Write the name's place of ``call``, ``name`` being what :meth:`written_name` gave
        it."""
        out.text(name, "tool_call", trainable=True)

    def head_states(self, table: Table) -> str:
        """Declare the states of the name's place that come before the name's own
        (``call.name``), and their rows to it; the state a call opens in."""
        return "call.name"

    def calls_closed(self) -> bool:
        """Whether a call is read only with its ``close`` fence (one cut off before it is no
        call); a subclass that also reads unclosed calls says no, and adds their rows."""
        return bool(self.close)

    def jinja_name(self, out: Template) -> None:
        """The template's counterpart of :meth:`written_name` (``call`` and ``loop`` in scope)."""
        out.out("{{- call.function.name -}}")

    # ------------------------------------------------------------------ the arguments' syntax
    # JSON; a format that writes its arguments otherwise (Gemma 4's value syntax) overrides
    # these together, and reads them with rows of its own.

    def write_arguments(self, out: Render, arguments: str, index: int, number: int) -> None:
        """Write the arguments (JSON text) of ``messages[index].tool_calls[number]``."""
        out.text(arguments_json(arguments, index, number), "tool_call", trainable=True)

    def jinja_arguments(self, out: Template) -> None:
        """The template's counterpart of :meth:`write_arguments` (``call`` in scope)."""
        out.arguments()

    def arguments_node(self, rules: Rules, number: int, tool: Tool) -> Node:
        """The grammar of the arguments of a call to ``tools[number]``."""
        from ..emit.turn_rules import json_arguments

        return json_arguments(rules, number, tool)

    def name_nodes(self, turn: Turn, name: str) -> list[Node]:
        """The grammar of the name's place in a call of ``name``."""
        return [Lit(name)]

    def forced_name(self, name: str) -> tuple[str, bool]:
        """What a call forced to call ``name`` writes in the name's place, and whether that
        is all of it (else the grammar writes the rest)."""
        return name, True

    # ------------------------------------------------------------------ the writer

    def write_call(self, out: Render, index: int, number: int, call: ToolCall) -> None:
        self.write_name(out, call, self.written_name(out, index, number, call))
        if self.id_open is not None:
            out.fence(self.id_open, "tool_call", trainable=True)
            out.text(call.id, "tool_call", trainable=True)
        out.fence(self.arguments_open, "tool_call", trainable=True)
        self.write_arguments(out, call.arguments, index, number)

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        _ = self.id_shape  # (a pattern the parser could not mint ids of is refused here)
        first = self.head_states(table)
        if first != "call.name":  # an earlier state of the call began it
            reader = Described(
                "call name after its head", lambda parser: NameReader(parser, begins=False)
            )
        elif type(self).read_name is NamedCalls.read_name:  # the name as written
            reader = Described("call name", NameReader)
        else:
            read = self.read_name
            reader = Described(
                "call name as the format writes it", lambda parser: NameReader(parser, read)
            )
        table.state("call.name", reader, "assistant", ends=True)
        closed = self.calls_closed()
        arguments = Described(
            "JSON call arguments",
            lambda parser: ArgumentsReader(parser, closed, self),
            closed=closed,
        )
        table.state("call.arguments", arguments, "assistant", ends=True)
        self.section_rows(table, first, "call.arguments")

    def call_rows(self, table: Table) -> None:
        arguments = table.spellings(self.loose, self.arguments_open)
        if self.id_open is not None:
            table.state("call.id", IdReader, "assistant", ends=True)
            table.on_each("call.name", table.spellings(self.loose, self.id_open), "call.id")
            table.on_each("call.id", arguments, "call.arguments")
        table.on_each("call.name", arguments, "call.arguments")

    # ------------------------------------------------------------------ the Jinja template

    def jinja_call(self, out: Template) -> None:
        self.jinja_name(out)
        if self.id_open is not None:
            out.fence(self.id_open)
            out.out("{{- call.id -}}")
        out.fence(self.arguments_open)
        self.jinja_arguments(out)

    # ------------------------------------------------------------------ the turn grammar

    def grammar(self, turn: Turn) -> None:
        turn.calls = NamedCallSet(self, turn)


class NamedCallSet(SectionedCalls):
    def __init__(self, calls: NamedCalls, turn: Turn) -> None:
        super().__init__(calls, turn)
        layout = turn.layout
        self.arguments_open = text_of(calls.arguments_open, layout.options, layout.name)

    def items(self, turn: Turn, rules: Rules, number: int) -> list[Node]:
        calls, tool = self.calls, turn.tools[number]
        identified: list[Node] = []
        arguments = turn.nodes(calls.arguments_open)
        if calls.id_open is not None:  # written in a conversation; a model may write one
            shape = calls.id_shape  # (of the shape the render takes back, where it says one)
            written = TEXT_NE if shape is None else id_node(shape)
            id_part = seq(*turn.nodes(calls.id_open), written)
            if written == TEXT_NE and arguments and isinstance(arguments[0], Lit):
                # A free id, then an arguments open spelled as text: one lexeme.
                lead, *arguments = arguments
                identified.append(alt(joined_text(seq(id_part, lead)), lead))
            else:
                identified.append(optional(id_part))
        return [
            *turn.nodes(calls.open),
            *calls.name_nodes(turn, tool.name),
            *identified,
            *arguments,
            calls.arguments_node(rules, number, tool),
            *turn.nodes(calls.close),
        ]

    def prefix(self, name: str | None) -> str:
        if name is None:
            return self.lead
        calls: NamedCalls = self.calls
        forced, whole = calls.forced_name(name)
        if not whole or self.calls.id_open is not None:  # more comes before the arguments
            return self.lead + forced
        return self.lead + forced + self.arguments_open


# ---------------------------------------------------------------------- readers


@dataclass
class CallParts:
    """What the readers of one call's states leave for the next (a parser context)."""

    name: str | None = None
    call_id: str | None = None
    raw: list[str] = field(default_factory=list)
    offset: int = 0
    index: int | None = None
    generated: bool = False
    spare_id: str | None = None
    """An id generated for a streamed call that was then given up: the next call takes it,
    so streamed calls get the ids a whole parse gives."""


def malformed_call(parser: Parser, parts: CallParts, problem: str, expected: str) -> None:
    """The call read so far is no call: a warning, and its raw text as content."""
    give_back_call(parser, parts.offset, problem, expected, "".join(parts.raw), abandon=parts.index)
    if parts.index is not None:  # served before it was refused: its id is no call's
        parser.context(MessageCallIds).ids.discard(parts.call_id or "")
        if parts.generated:
            parts.spare_id = parts.call_id
    parts.raw = []
    parts.index = None


def begin_call(parser: Parser) -> None:
    """A call's first state: its parts start empty and its raw text (content if the call is
    not read) with the marker that opened it, after its section's opener if it is the
    section's first call (:class:`OpenSection`)."""
    parts = parser.context(CallParts)
    parts.name = parts.call_id = None
    parts.index = None
    parts.raw = [parser.context(OpenSection).take() + (parser.entered_by or "")]


class NameReader(WholeTextReader):
    """A call's name, read by ``read`` (:meth:`NamedCalls.read_name`; None: the name as
    written).  ``begins``: the call's raw text starts here (False: an earlier state of the
    call began it, :meth:`NamedCalls.head_states`)."""

    __slots__ = ("_begins", "_read")
    whole_kind = "call name"  # see pawlette.engine.whole

    def __init__(
        self,
        parser: Parser,
        read: Callable[[str], tuple[str, str | None]] | None = None,
        *,
        begins: bool = True,
    ) -> None:
        super().__init__(parser)
        self._read, self._begins = read, begins
        if begins:
            begin_call(parser)

    def whole_name(self) -> tuple[bool, Callable[[str], tuple[str, str | None]] | None]:
        """Whether the call's text begins here (else an earlier state's reading is not the
        whole-text reading's) and the name's reading (see pawlette.engine.whole)."""
        return self._begins, self._read

    def close(self, marker: str | None, offset: int) -> None:
        parser = self._parser
        parts = parser.context(CallParts)
        text = self._text()
        parts.raw.append(text)
        if self._begins:
            parts.offset = self._offset if self._chunks else offset
        name = text.strip()
        parts_id = None
        if self._read is not None and name:
            name, parts_id = self._read(name)
        if next_state(parser, marker) not in ("call.id", "call.arguments"):
            malformed_call(parser, parts, "no arguments", "a name, then the call's arguments")
            return
        parts.raw.append(marker or "")
        problem = name_problem(parser, name)
        expected = "a declared tool's name" if name else "a function name"
        if problem is not None:
            malformed_call(parser, parts, problem, expected)
        else:
            parts.name = name
            if self._begins:
                parts.call_id = parts_id


class IdReader(WholeTextReader):
    """A call's id, written after its name."""

    __slots__ = ()
    whole_kind = "call id"  # see pawlette.engine.whole

    def close(self, marker: str | None, offset: int) -> None:
        parts = self._parser.context(CallParts)
        text = self._text()
        parts.raw += [text, marker or ""]
        parts.call_id = text.strip() or None
        if parts.name is None:  # the name was refused: the rest is content too
            self._parser.emit(TextDelta("".join(parts.raw)))
            parts.raw = []
            return
        if next_state(self._parser, marker) != "call.arguments":
            # Cut after the id (or another marker came): the call as written stays content.
            malformed_call(self._parser, parts, "no arguments", "an id, then the call's arguments")


class ArgumentsReader:
    """A call's JSON arguments; the call is emitted (or refused) at the close.  ``closed``:
    the call has a close fence of its own, so one cut off by the end of the turn or of the
    output is no call; without one, the turn's end closes it."""

    __slots__ = ("_closed", "_concept", "_parser", "_started", "_text")
    whole_kind = "call arguments"  # see pawlette.engine.whole

    def __init__(self, parser: Parser, closed: bool, concept: CallConcept) -> None:
        self._parser = parser
        self._closed = closed
        self._concept = concept  # (whose served_id gives the call its id)
        self._text: list[str] = []
        parts = parser.context(CallParts)
        self._started = False
        if parts.name is not None and parser.stream_arguments:
            self._start(parts)

    def whole_closed(self) -> bool:
        """Whether only the call's own close ends it (see pawlette.engine.whole)."""
        return self._closed

    def whole_mints_own_ids(self) -> bool:
        """Whether a call written without an id is given one of its concept's declared shape
        (Mistral's nine letters and digits), which only this reader mints (see
        pawlette.engine.whole)."""
        return self._concept.id_shape is not None

    def _start(self, parts: CallParts, closing: bool = False) -> None:
        parser = self._parser
        identifier = self._concept.served_id(
            parser,
            parts.call_id or None,
            parts.name or "",
            parts.offset,
            parts.spare_id,
            deferred=not closing,
        )
        if identifier == parts.spare_id:
            parts.spare_id = None
        # Made here (none written, or a repeat replaced): a call given up hands it on.
        parts.generated = identifier != parts.call_id
        parts.call_id = identifier
        parts.index = parser.next_call_index()
        parser.emit(ToolCallStart(parts.index, identifier, parts.name or ""))
        self._started = True

    def feed(self, text: str, offset: int) -> None:
        self._text.append(text)
        if self._started:
            parts = self._parser.context(CallParts)
            assert parts.index is not None
            self._parser.emit(ToolCallDelta(parts.index, text))

    def close(self, marker: str | None, offset: int) -> None:
        parser = self._parser
        parts = parser.context(CallParts)
        text = "".join(self._text)
        closing = closing_marker(parser, marker)
        if parts.name is None:  # refused already: the rest is content
            parser.emit(TextDelta("".join(parts.raw) + text + closing))
            parts.raw = []
            return
        parts.raw.append(text)
        arguments = text.strip()
        problem = arguments_problem(arguments or "{}")
        if (self._closed and not closing) or (marker is None and not arguments):
            problem = "the call is not closed"
        if problem is not None:
            parts.raw.append(closing)
            give_deferred(parser, read=False)
            malformed_call(parser, parts, problem, "a JSON object of arguments")
            return
        if not self._started:
            self._start(parts, closing=True)
            assert parts.index is not None
            parser.emit(ToolCallDelta(parts.index, arguments or "{}"))
        give_deferred(parser, read=True)
        assert parts.index is not None
        parser.emit(ToolCallEnd(parts.index))
        parts.raw = []
