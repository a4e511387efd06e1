"""Calls written as JSON objects that hold their name: ``{"name": NAME, "arguments": {...}}``.

Each call is ``open`` + the object + ``close``; ``separator`` comes before a call that follows
text or another call.  Hermes and Qwen write ``<tool_call>\\n{...}\\n</tool_call>``; Llama 3
writes one bare object as the whole turn (``open=None``).

>>> from pawlette.declare import JsonCalls, Marker, fence
>>> calls = JsonCalls(open=fence(Marker("<tool_call>")), close=fence(Marker("</tool_call>")))
>>> calls.item("get_weather", "call_1", '{"city": "Paris"}')
'{"name": "get_weather", "arguments": {"city": "Paris"}}'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from json.encoder import encode_basestring as string
from json.encoder import encode_basestring_ascii as ascii_string
from typing import TYPE_CHECKING, ClassVar, Literal

from ..codecs.python_calls import python_literal_or_none
from ..emit.grammar_ast import Lit, Node, Rules, seq
from ..emit.jinja_text import jinja_string
from ..engine.machine import Parser, ReaderFactory
from ..engine.readers import CallEnvelope
from ..errors import FormatError
from ..types import ToolCall
from .bare_calls import DECODER, BareCallReader, bare_text
from .call_list import JsonCallObject, key_written_twice
from .calls import (
    CallConcept,
    Content,
    SectionedCallConcept,
    arguments_json,
    arguments_value,
)
from .grammar import SectionedCalls, text_before_calls
from .pieces import Fence, text_of
from .pieces import Lit as LayoutText
from .readers import CallReader, Described

if TYPE_CHECKING:
    from .grammar import Turn
    from .jinja import Template
    from .layout import Layout
    from .table import Table
    from .write import Render


@dataclass(frozen=True)
class JsonCalls(JsonCallObject, SectionedCallConcept):
    """Calls as JSON objects holding their name.

    Fields:

    - ``open`` / ``close``: the fences around each call.  ``close=()``: a call runs to the
      next call's ``open`` or to the turn's end (Llama 4's ``<|python_start|>``).
      ``open=None``: a call is one bare JSON object that is the whole assistant turn (Llama 3).
    - ``separator``: before a call that follows text or another call.
    - ``name_key`` / ``arguments_key`` / ``id_key``: the object's keys (``id_key`` None: the
      format writes no call ids; pairing results with calls is by position).
    - ``arguments``: ``"tojson"`` writes them as Jinja's ``tojson`` of the parsed object
      (what Hugging Face templates do), ``"verbatim"`` as the caller's string, ``"repr"`` as
      Python's ``repr`` of the parsed object (``{'city': 'Paris'}``: what a template that
      writes ``{{ call.arguments }}`` of a dict prints; Phi-4-mini's).  Reading takes the
      arguments as JSON or as a Python literal as :mod:`pawlette.codecs.python_calls` reads
      one (either quote, ``True``/``False``/``None`` and JSON's spellings of them; nothing
      evaluated); the grammar asks for JSON, which reading takes exactly; the exported
      template prints an object as Jinja does (``| string``) and a string as given.
    - ``ascii``: with ``arguments="tojson"``, every non-ASCII character of the arguments
      escaped (``\\u00fc``), as ``tojson(ensure_ascii=True)`` writes them (Reka's templates).
      The exported Jinja template escapes arguments given as an object; arguments given as a
      string it writes as given, since Jinja cannot parse them.  Default False: kept.
    - ``parallel``: several calls in one turn (with ``open=None``: the whole turn is the
      calls, ``separator`` between them: Phi-4-mini's ``{...},{...}``); ``with_content``:
      text before the calls.
    - ``drops_content``: with ``with_content=False``, a turn's text alongside its calls is
      not written and recorded as a loss (Meta's Llama 3 templates drop it), instead of
      refused.
    - ``drops_calls``: with ``with_content=False``, a turn with text writes its text alone:
      its calls are not written and recorded as a loss (Phi-4-mini's template writes a
      turn's text, else its calls), instead of refused.
    - ``first_only``: with ``parallel=False``, a turn's calls after its first are not
      written and recorded as a loss (GigaChat's templates write ``tool_calls[0]``), instead
      of refused.

    Reading only (never written, and allowed by no grammar):

    - ``loose``: ``open``, ``separator`` + ``open`` and ``close`` are also read without the
      whitespace they write around their markers (``<tool_call>{...}</tool_call>``).
    - ``also_arguments_keys``: other keys a model writes the arguments under; a call with
      two of them, or none, is malformed.
    - ``text_after``: text after a call's close is the turn's text, read as content (PCML);
      otherwise only whitespace comes between calls (stray text is kept, with a warning).
    - ``close_optional``: the end of the turn may replace ``close``, as vLLM's hermes parser
      reads Hermes' calls: a call whose close never comes (an engine may cut it as a stop
      string, or the model end its turn after the object) is still a call when its object is
      whole at the end of the turn (Hermes, Bielik, Reka Edge).
    """

    open: Fence | None = ()
    close: Fence = ()
    separator: Fence = ()
    name_key: str = "name"
    arguments_key: str = "arguments"
    id_key: str | None = None
    arguments: Literal["tojson", "verbatim", "repr"] = "tojson"
    parallel: bool = True
    with_content: bool = True
    loose: bool = True
    also_arguments_keys: tuple[str, ...] = ()
    text_after: bool = False
    drops_content: bool = False
    drops_calls: bool = False
    first_only: bool = False
    ascii: bool = False
    close_optional: bool = False

    separators: ClassVar[tuple[str, str]] = (", ", ": ")  # type: ignore[misc]

    @cached_property
    def keys(self) -> tuple[tuple[str, str], ...]:  # type: ignore[override]
        """The object's members in writing order (:class:`~.call_list.JsonCallObject`): the
        id, when the format writes one, then the name and the arguments."""
        named = (("name", self.name_key), ("arguments", self.arguments_key))
        return named if self.id_key is None else (("id", self.id_key), *named)

    @property
    def text_separator(self) -> Fence:  # type: ignore[override]
        """Text is separated from the calls as a call from the one before it."""
        return self.separator

    def validate(self, layout: Layout) -> None:
        if self.open is not None and not self.open and not self.close:
            raise FormatError(
                f"{layout.name}: JsonCalls: empty open and close fences; expected fences "
                "around each call, or open=None for one bare JSON object as the whole turn"
            )
        if self.drops_content and self.with_content:
            raise FormatError(
                f"{layout.name}: JsonCalls.drops_content: True with with_content=True; expected "
                "with_content=False (text beside calls is written, so none is dropped)"
            )
        if self.drops_calls and (self.with_content or self.drops_content):
            raise FormatError(
                f"{layout.name}: JsonCalls.drops_calls: True with "
                + ("with_content=True" if self.with_content else "drops_content=True")
                + "; expected with_content=False and drops_content=False (a turn writes its "
                "text or its calls: one of the two is dropped)"
            )

    @property
    def envelope(self) -> CallEnvelope:
        return CallEnvelope(
            name=self.name_key,
            arguments=self.arguments_key,
            id=self.id_key,
            also_arguments=self.also_arguments_keys,
        )

    def bare_reader(self) -> ReaderFactory:
        """The reader of an assistant turn that is text or bare calls (``open=None``)."""
        envelope, reads = self.envelope, self.json_reader("the end of the turn", joined=True)
        return Described(
            "text or a bare JSON call", lambda parser: BareCallReader(parser, envelope, reads=reads)
        )

    @property
    def bare_separator(self) -> str | None:
        """What is read between two bare calls (the separator without its whitespace;
        None: one call is the whole turn)."""
        if self.open is not None or not self.parallel:
            return None
        return text_of(self.separator).strip()

    # ------------------------------------------------------------------ the writer

    def hook_is_local(self, hook: str, role: str) -> bool:
        """A turn's calls and the text beside them are the message's own: the writer's hooks
        are local (unless a subclass writes them otherwise)."""
        kind = type(self)
        return (hook == "write_content" and kind.write_content is CallConcept.write_content) or (
            hook == "write_closing"
            and kind.write_closing is SectionedCallConcept.write_closing
            and kind.write_call is JsonCalls.write_call
        )

    @cached_property
    def content(self) -> Content:  # type: ignore[override]
        """What is done with a turn's text beside its calls (:data:`.calls.Content`)."""
        if self.with_content:
            return "written"
        if self.drops_content:
            return "dropped"
        return "replaces_calls" if self.drops_calls else "refused"

    def write_call(self, out: Render, index: int, number: int, call: ToolCall) -> None:
        if self.arguments == "repr":  # as Jinja prints the parsed object: Python's repr
            arguments = repr(arguments_value(call.arguments, index, number))
        else:
            verbatim = self.arguments == "verbatim"
            arguments = arguments_json(call.arguments, index, number, verbatim, ascii=self.ascii)
        out.text(self.item(call.name, call.id, arguments), "tool_call", trainable=True)

    # ------------------------------------------------------------------ the parse table

    def json_reader(
        self, close: str, closes: frozenset[str] = frozenset(), *, joined: bool = False
    ) -> ReaderFactory:
        """The reader of a call closed by ``close`` (or another of ``closes``; ``""``, or
        ``joined``: by the end of the turn).  A call that is not one JSON call object is read
        again with arguments written as Python (``arguments="repr"``) and, ``joined``, as
        several joined by :attr:`bare_separator`."""
        separator = self.bare_separator if joined else None
        literal, ends_turn = self.arguments == "repr", joined or not close
        envelope = self.envelope
        if separator is None and not literal:

            def make(parser: Parser) -> CallReader:
                return CallReader(parser, envelope, close, closes, ends_turn)

            return Described("JSON call", make, close=close, ends_turn=ends_turn)
        return Described(
            "JSON call, or calls joined, or with Python arguments",
            lambda parser: _ReadsOtherwise(
                parser, envelope, close, closes, ends_turn, separator, literal
            ),
            close=close,
            ends_turn=ends_turn,
            separator=separator,
            literal=literal,
        )

    def rows(self, table: Table) -> None:
        if self.open is None:
            for state in ("assistant.head", "assistant.body"):
                table.reader(state, self.bare_reader())
            return
        close = table.text(self.close)
        closes = table.spellings(self.loose, self.close)
        # A call closed by close (or another of its spellings; "": by the end of the turn, or
        # also by it with close_optional); ends: the end of the turn may come in it.
        reader: ReaderFactory
        if close and self.close_optional:
            envelope, also = self.envelope, frozenset({*closes, close})
            make: ReaderFactory = lambda parser: CallReader(parser, envelope, close, also, True)  # noqa: E731
            reader, ends = Described("JSON call, its close optional", make, close=close), True
        else:
            reader, ends = self.json_reader(close, frozenset(closes)), not close
        openings = self.opening_rows(table, self.open, "assistant.call", reader, ends=ends)
        if close and self.text_after:
            table.on_each("assistant.call", closes, "assistant.body")
        elif close:
            table.after_calls("assistant.call", closes, reopen=openings)
        elif self.parallel:  # (a call runs to the next call's open or to the turn's end)
            table.on_each("assistant.call", openings, "assistant.call")

    # ------------------------------------------------------------------ the Jinja template

    def jinja_setup(self, out: Template) -> None:
        out.object_arguments = out.object_arguments or self.arguments != "verbatim"

    def jinja_call(self, out: Template) -> None:
        # One expression, so a format that escapes markers escapes the call's text as one.
        # An object as the writer writes it: its JSON, or as Jinja prints it ("repr").
        written = "string" if self.arguments == "repr" else "tojson"
        if self.ascii and self.arguments != "repr":
            written += "(ensure_ascii=True)"
        arguments = (
            "(call.function.arguments | trim if call.function.arguments is string"
            f" else call.function.arguments | {written})"
        )
        values = {"id": "call.id | tojson", "name": "call.function.name | tojson"}
        members = [
            f"{jinja_string(head)} ~ {values.get(role, arguments)}" for role, head in self.heads
        ]
        out.value(" ~ ".join([*members, jinja_string("}")]))

    # ------------------------------------------------------------------ the turn grammar

    def grammar(self, turn: Turn) -> None:
        turn.calls = _JsonCallSet(self, turn)
        if self.open is None:
            turn.content = bare_text(turn)


REPR_NOTE = (
    "call arguments are JSON here; the template writes past calls' arguments as Python's "
    "repr of the object, which reading takes as well"
)


class _JsonCallSet(SectionedCalls):
    """The turn grammar of :class:`JsonCalls` (see :class:`.grammar.CallSet`)."""

    def __init__(self, calls: JsonCalls, turn: Turn) -> None:
        super().__init__(calls, turn)
        self.with_content = self.with_content and calls.open is not None

    def items(self, turn: Turn, rules: Rules, number: int) -> list[Node]:
        from ..emit.turn_rules import json_arguments

        calls = self.calls
        if calls.arguments == "repr" and REPR_NOTE not in rules.notes:
            rules.notes.append(REPR_NOTE)
        tool = turn.tools[number]
        nodes, text = turn.nodes(calls.open or ()), ""
        for role, head in calls.heads:
            if role == "id":  # a free id, a JSON string that spells no marker
                nodes += [Lit(text + head + '"'), turn.id_rest()]
                text = ""
            else:
                text += head + (string(tool.name) if role == "name" else "")
        return [
            *nodes,
            Lit(turn.escaped(text)),
            json_arguments(rules, number, tool),
            *turn.nodes((LayoutText("}"), *calls.close)),
        ]

    def lazy(self, turn: Turn, rules: Rules, parallel: bool) -> Node:
        # A lazy grammar starts at its trigger: layout text the opening writes before it
        # (Bielik's "\n" before <tool_call>) is already behind the engine when it switches on.
        before = self.lead.split(self.trigger, 1)[0] if self.trigger else ""
        if not before:
            return self.many(turn, rules, parallel)
        return self.after_prefix(turn, rules, before, parallel)

    def text_and_calls(self, turn: Turn, rules: Rules, parallel: bool) -> Node | None:
        """Text, then the calls, where no separator comes between and the call's open starts
        with newlines (Bielik's ``\\n<tool_call>``): the text and those newlines are one
        lexeme (see :func:`.grammar.text_before`), the first call the rest of its open.  An
        open spelled as text (``<tool_call>``) is joined to the text as
        :meth:`.grammar.SectionedCalls.text_and_calls` joins it.  None: text and calls as
        :meth:`after_text` and :meth:`many` give them."""
        first = self.first_nodes[0] if self.first_nodes else None
        if isinstance(first, Lit) and first.text.strip("\n"):
            return super().text_and_calls(turn, rules, parallel)  # an open spelled as text
        newlines = len(self.lead) - len(self.lead.lstrip("\n"))
        if self.calls.separator or not newlines:
            return None
        lead = "\n" * newlines
        return seq(
            text_before_calls(turn.layout, (LayoutText(lead),)),
            self.after_prefix(turn, rules, lead, parallel),
        )

    def prefix(self, name: str | None) -> str:
        calls: JsonCalls = self.calls
        first = calls.heads[0][1]
        if name is None:
            return self.lead or "{" + ascii_string(calls.name_key) + ": "
        if calls.id_key is not None:  # through the opening quote of the free id
            return self.lead + first + '"'
        return self.lead + first + string(name) + calls.heads[1][1]


# ---------------------------------------------------------------------- arguments as repr


def _value_end(text: str, start: int) -> int:
    """Where the bracketed Python value starting at ``text[start]`` (``{`` or ``[``) ends,
    strings (quoted either way, with backslash escapes) skipped; -1: it does not."""
    depth = 0
    position = start
    length = len(text)
    while position < length:
        character = text[position]
        if character in "{[(":
            depth += 1
        elif character in "}])":
            depth -= 1
            if depth == 0:
                return position + 1
        elif character in "'\"":
            position += 1
            while position < length and text[position] != character:
                position += 2 if text[position] == "\\" else 1
        position += 1
    return -1


def read_calls(
    text: str, envelope: CallEnvelope, separator: str | None, literal: bool
) -> list[tuple[str, str | None, str]] | None:
    """The calls ``text`` writes (name, id, arguments as JSON): call objects, each JSON or
    (``literal``) Python's ``repr`` of one, joined by ``separator`` with whitespace around
    it (None: one call); None when it is not that."""
    calls: list[tuple[str, str | None, str]] = []
    position = 0
    allowed = {envelope.name, *envelope.arguments_keys, *(key for key, _ in envelope.ignored)}
    if envelope.id is not None:
        allowed.add(envelope.id)
    while True:
        position = len(text) - len(text[position:].lstrip())
        if position >= len(text) or text[position] != "{":
            return None
        try:
            value, end = DECODER.raw_decode(text, position)
            if key_written_twice(text[position:end]) is not None:
                return None
        except ValueError:
            end = _value_end(text, position) if literal else -1
            value = None if end < 0 else python_literal_or_none(text[position:end])
        if not isinstance(value, dict) or not allowed.issuperset(value):
            return None
        name = value.get(envelope.name)
        key = envelope.arguments_key_in(value)
        call_id = value.get(envelope.id) if envelope.id is not None else None
        if not isinstance(name, str) or not name or key is None:
            return None
        if not isinstance(value[key], dict) or not isinstance(call_id, (str, type(None))):
            return None
        if any(member in value and value[member] != fixed for member, fixed in envelope.ignored):
            return None
        calls.append((name, call_id, json.dumps(value[key], ensure_ascii=False)))
        rest = text[end:].lstrip()
        if not rest:
            return calls
        if separator is None:
            return None
        if separator and not rest.startswith(separator):
            return None
        position = len(text) - len(rest) + len(separator)


class _ReadsOtherwise(CallReader):
    """A JSON call whose text, when it is not one call object, is also read as several
    joined by ``separator`` (None: one) and with arguments written as Python (``literal``)."""

    def __init__(
        self,
        parser: Parser,
        envelope: CallEnvelope,
        close: str,
        closes: frozenset[str],
        ends_turn: bool,
        separator: str | None,
        literal: bool,
    ) -> None:
        super().__init__(parser, envelope, close, closes, ends_turn)
        self._separator, self._literal = separator, literal

    def recover(self, text: str) -> list[tuple[str, str | None, str]] | None:
        return read_calls(text, self._envelope, self._separator, self._literal)
