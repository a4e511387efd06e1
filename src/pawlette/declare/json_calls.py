"""Calls written as JSON objects that hold their name: ``{"name": NAME, "arguments": {...}}``.

Each call is ``open`` + the object + ``close``; ``separator`` comes before a call that follows
text or another call.  Hermes and Qwen write ``<tool_call>\\n{...}\\n</tool_call>``; Llama 3
writes one bare object as the whole turn (``open=None``).

>>> from pawlette.declare import JsonCalls, Marker, fence
>>> calls = JsonCalls(open=fence(Marker("<tool_call>")), close=fence(Marker("</tool_call>")))
>>> calls.head("get_weather")
'{"name": "get_weather", "arguments": '
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from json.encoder import encode_basestring as string
from json.encoder import encode_basestring_ascii as ascii_string
from typing import TYPE_CHECKING, ClassVar, Literal

from ..emit.grammar_ast import Lit, Node, Rules, seq
from ..emit.jinja_text import jinja_string
from ..engine.machine import ReaderFactory
from ..engine.readers import CallEnvelope
from ..errors import FormatError
from ..types import ToolCall
from .calls import Content, SectionedCallConcept, arguments_json
from .grammar import SectionedCalls, text_before_calls
from .pieces import Fence
from .pieces import Lit as LayoutText
from .readers import call_reader

if TYPE_CHECKING:
    from .grammar import Turn
    from .jinja import Template
    from .layout import Layout
    from .table import Table
    from .write import Render


@dataclass(frozen=True)
class JsonCalls(SectionedCallConcept):
    """Calls as JSON objects holding their name.

    Fields:

    - ``open`` / ``close``: the fences around each call.  ``open=None``: a call is one bare
      JSON object that is the whole assistant turn (Llama 3).
    - ``separator``: before a call that follows text or another call.
    - ``name_key`` / ``arguments_key`` / ``id_key``: the object's keys (``id_key`` None: the
      format writes no call ids; pairing results with calls is by position).
    - ``arguments``: ``"tojson"`` writes them as Jinja's ``tojson`` of the parsed object
      (what Hugging Face templates do), ``"verbatim"`` as the caller's string.
    - ``ascii``: with ``arguments="tojson"``, every non-ASCII character of the arguments
      escaped (``\\u00fc``), as ``tojson(ensure_ascii=True)`` writes them (Reka's templates).
      The exported Jinja template escapes arguments given as an object; arguments given as a
      string it writes as given, since Jinja cannot parse them.  Default False: kept.
    - ``parallel``: several calls in one turn; ``with_content``: text before the calls.
    - ``drops_content``: with ``with_content=False``, a turn's text alongside its calls is
      not written and recorded as a loss (Meta's Llama 3 templates drop it), instead of
      refused.
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
    """

    open: Fence | None = ()
    close: Fence = ()
    separator: Fence = ()
    name_key: str = "name"
    arguments_key: str = "arguments"
    id_key: str | None = None
    arguments: Literal["tojson", "verbatim"] = "tojson"
    parallel: bool = True
    with_content: bool = True
    loose: bool = True
    also_arguments_keys: tuple[str, ...] = ()
    text_after: bool = False
    drops_content: bool = False
    first_only: bool = False
    ascii: bool = False

    handles: ClassVar[frozenset[str]] = frozenset({"calls"})

    @property
    def text_separator(self) -> Fence:  # type: ignore[override]
        """Text is separated from the calls as a call from the one before it."""
        return self.separator

    def validate(self, layout: Layout) -> None:
        self.check_choices(layout, "arguments")
        if self.open is not None and not self.open and not self.close:
            raise FormatError(
                f"{layout.name}: JsonCalls: empty open and close fences; expected fences "
                "around each call, or open=None for one bare JSON object as the whole turn"
            )
        if self.open is None and self.parallel:
            # A bare object is the whole turn: a second one could not be read as a call.
            raise FormatError(
                f"{layout.name}: JsonCalls.parallel: True with open=None; expected "
                "parallel=False (one bare JSON object is the whole turn), or an open fence "
                "before each call"
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
        """The reader of an assistant turn that is text or one bare call (``open=None``)."""
        from .bare_calls import bare_call_reader

        return bare_call_reader(self.envelope)

    def head(self, name: str, call_id: str | None = None) -> str:
        """The object's text up to its arguments."""
        # (json_string of a str is json's C encode_basestring: called directly, once a call.)
        if self.id_key is not None and call_id is not None:
            return f"{self._id_head}{string(call_id)}, {self._name_head}{string(name)}{self._tail}"
        return f"{{{self._name_head}{string(name)}{self._tail}"

    @cached_property
    def _id_head(self) -> str:
        return f"{{{ascii_string(self.id_key or '')}: "

    @cached_property
    def _name_head(self) -> str:
        return f"{ascii_string(self.name_key)}: "

    @cached_property
    def _tail(self) -> str:
        return f", {ascii_string(self.arguments_key)}: "

    # ------------------------------------------------------------------ the writer

    @cached_property
    def content(self) -> Content:  # type: ignore[override]
        """What is done with a turn's text beside its calls (:data:`.calls.Content`)."""
        if self.with_content:
            return "written"
        return "dropped" if self.drops_content else "refused"

    def write_call(self, out: Render, index: int, number: int, call: ToolCall) -> None:
        verbatim = self.arguments == "verbatim"
        arguments = arguments_json(call.arguments, index, number, verbatim, ascii=self.ascii)
        out.text(f"{self.head(call.name, call.id)}{arguments}}}", "tool_call", trainable=True)

    # ------------------------------------------------------------------ the parse table

    def closed_call_reader(self, close: str, closes: frozenset[str]) -> tuple[ReaderFactory, bool]:
        """The reader of a call closed by ``close`` (or another of ``closes``; ``""``: by the
        end of the turn), and whether the end of the turn may come in it."""
        reader = call_reader(self.envelope, close, ends_turn=not close, also_close=closes)
        return reader, not close

    def rows(self, table: Table) -> None:
        if self.open is None:
            for state in ("assistant.head", "assistant.body"):
                table.reader(state, self.bare_reader())
            return
        close = table.text(self.close)
        closes = table.spellings(self.loose, self.close)
        reader, ends = self.closed_call_reader(close, frozenset(closes))
        openings = self.opening_rows(table, self.open, "assistant.call", reader, ends=ends)
        if close and self.text_after:
            for spelling in closes:
                table.on("assistant.call", spelling, "assistant.body")
        elif close:
            table.after_calls("assistant.call", closes, reopen=openings)

    # ------------------------------------------------------------------ the Jinja template

    def jinja_setup(self, out: Template) -> None:
        out.object_arguments = out.object_arguments or self.arguments == "tojson"

    def jinja_call(self, out: Template) -> None:
        # One expression, so a format that escapes markers escapes the call's text as one.
        head = jinja_string("{" + self._name_head)
        if self.id_key is not None:
            id_head = jinja_string(self._id_head)
            head = f"{id_head} ~ call.id | tojson ~ {jinja_string(', ' + self._name_head)}"
        arguments = (
            "(call.function.arguments | trim if call.function.arguments is string"
            f" else call.function.arguments | tojson{'(ensure_ascii=True)' if self.ascii else ''})"
        )
        tail = jinja_string(self._tail)
        out.value(
            f"{head} ~ call.function.name | tojson ~ {tail} ~ {arguments} ~ {jinja_string('}')}"
        )

    # ------------------------------------------------------------------ the turn grammar

    def grammar(self, turn: Turn) -> None:
        turn.calls = _JsonCallSet(self, turn)
        if self.open is None:
            from .bare_calls import bare_text

            turn.content = bare_text(turn)


class _JsonCallSet(SectionedCalls):
    """The turn grammar of :class:`JsonCalls` (see :class:`.grammar.CallSet`)."""

    def __init__(self, calls: JsonCalls, turn: Turn) -> None:
        super().__init__(calls, turn)
        self.with_content = self.with_content and calls.open is not None

    def items(self, turn: Turn, rules: Rules, number: int) -> list[Node]:
        from ..emit.turn_rules import json_arguments

        calls = self.calls
        tool = turn.tools[number]
        head: list[Node] = [Lit(turn.escaped(calls.head(tool.name)))]
        if calls.id_key is not None:  # a free id, a JSON string that spells no marker
            head = [
                Lit(calls._id_head + '"'),
                turn.id_rest(),
                Lit(", " + turn.escaped(calls.head(tool.name))[1:]),
            ]
        return [
            *turn.nodes(calls.open or ()),
            *head,
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
        lexeme (see :func:`.grammar.text_before`), the first call the rest of its open.
        None: text and calls as :meth:`after_text` and :meth:`many` give them."""
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
        if name is None:
            return self.lead or "{" + calls._name_head
        if calls.id_key is not None:  # through the opening quote of the free id
            return self.lead + calls._id_head + '"'
        return self.lead + calls.head(name)
