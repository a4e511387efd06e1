"""Calls written as one Python list, ``[f(a=1),g()]`` (:class:`PythonCalls`).

>>> from pawlette.declare import Marker, PythonCalls, fence
>>> PythonCalls(open=fence(Marker("<calls>")), quote="repr").head("get_weather")
'[get_weather('
"""

# ruff: noqa: E501  (Jinja source: one tag per line reads better than wrapped tags)

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..codecs.python_calls import is_plain_identifier
from ..codecs.python_literals import Quote, Spelling, encode_call, encode_calls
from ..codecs.python_stream import CallStream
from ..emit.grammar_ast import Lit, Node, Ref, Repeat, Rules, alt, optional, seq
from ..emit.jinja_text import IDENTIFIER_MACRO, PYTHON_LITERAL_MACROS, jinja_string
from ..emit.python_schema import KEYWORD_EXPECTED, PythonValues, SchemaToPython, TemplateArguments
from ..engine.machine import Parser
from ..errors import FormatError, UnsupportedFeature
from ..types import Tool, ToolCall
from .calls import Content, ListedCallConcept
from .grammar import CallOpening
from .pieces import Fence
from .readers import Described, give_back

if TYPE_CHECKING:
    from .grammar import Turn
    from .jinja import Template
    from .layout import Layout
    from .table import Table
    from .write import Render


@dataclass(frozen=True)
class PythonCalls(ListedCallConcept):
    """Calls as one Python list, each argument a keyword whose value is a Python literal::

        OPEN [get_weather(city='Paris', days=3),now()] CLOSE

    (Breeze 2 spells ``OPEN`` ``<|python_tag|>`` and has no ``CLOSE``; LFM2 writes
    ``<|tool_call_start|>[f(a=1)]<|tool_call_end|>``.)  Nothing is ever evaluated: reading
    is a streaming Python-literal tokenizer (:mod:`pawlette.codecs.python_calls`).

    Fields:

    - ``open`` / ``close``: the fences around the list; ``close=()``: the list runs to the
      end of the turn (the turn's end closes it).
    - ``separator``: before the list when text precedes it (``with_content``).
    - ``between``: written between two calls (Breeze writes ``,``; the grammar allows a space
      after the comma, and the reader reads any whitespace there).
    - ``quote``: ``"'"``, ``'"'`` or ``"repr"`` (the quote Python's ``repr`` picks per string).
    - ``parallel``: several calls in one list; ``with_content``: text before the calls.
    - ``spelling``: ``"literal"``, every argument a Python literal in ``quote``;
      ``"template"`` (with ``quote="repr"``), as LFM2.5's template writes them: a string
      raw between single quotes, an object as JSON, anything else as ``repr`` writes it
      (:data:`pawlette.codecs.python_literals.Spelling`); read so
      (:class:`~pawlette.codecs.python_calls.PythonCallDecoder`'s ``raw_strings``) and
      constrained so (:class:`pawlette.emit.python_schema.TemplateArguments`).

    Arguments are written from the parsed JSON object, so the chat template takes them as
    objects; a call's name and argument names must be Python identifiers (the writer and the
    grammar refuse others).

    Read back, the list is read call by call as it streams: a call that does not read (a
    positional argument, an expression), or that names a tool the request does not offer
    (when it gives tools), is no call; the calls before it stand, and its text and the rest
    of the list are content, after a warning (strict: :class:`~pawlette.errors.ParseError`).
    A call's name is checked at its ``(``, before it begins: streamed, no call to a tool not
    offered ever begins.
    """

    open: Fence
    close: Fence = ()
    separator: Fence = ()
    between: str = ","
    quote: Quote = "'"
    parallel: bool = True
    with_content: bool = True
    spelling: Spelling = "literal"

    def validate(self, layout: Layout) -> None:
        if not self.open:
            raise FormatError(
                f"{layout.name}: PythonCalls: an empty open fence; expected the fence that "
                "starts the call list"
            )
        if self.spelling == "template" and self.quote != "repr":
            raise FormatError(
                f"{layout.name}: PythonCalls.quote: {self.quote!r} with spelling='template'; "
                "expected 'repr' (what Python's str() writes inside a list)"
            )

    def head(self, name: str) -> str:
        """What a call list forced to call ``name`` starts with after ``open``: ``[name(``."""
        return "[" + encode_call(name, "{}", quote=self.quote, path="tool_choice.function")[:-1]

    # ------------------------------------------------------------------ the writer

    @property
    def content(self) -> Content:  # type: ignore[override]
        """Text beside the calls is written before them, or refused (``with_content``)."""
        return "written" if self.with_content else "refused"

    @property
    def text_separator(self) -> Fence:  # type: ignore[override]
        """Text is separated from the list by ``separator``."""
        return self.separator

    def list_text(self, out: Render, index: int, calls: tuple[ToolCall, ...]) -> str:
        """The list of ``calls`` as the codec writes it (the list reads nothing of ``out``)."""
        pairs = [(call.name, call.arguments) for call in calls]
        path = f"messages[{index}].tool_calls"
        return encode_calls(
            pairs, quote=self.quote, separator=self.between, path=path, spelling=self.spelling
        )

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        close = table.text(self.close)
        reader = list_reader if self.spelling == "literal" else raw_list_reader
        self.opening_rows(table, self.open, "assistant.call", reader, ends=not close)
        if close:
            table.after_calls("assistant.call", [close])

    # ------------------------------------------------------------------ the Jinja template

    def jinja_setup(self, out: Template) -> None:
        """The literal macros, ``is_identifier(name)``, ``template_argument(value, where)``
        (an argument as ``spelling="template"`` writes it) and ``python_call_list(calls,
        where, quote, between, spelling)`` (the calls without their brackets: ``f(a=1),g()``;
        arguments must be objects)."""
        out.object_arguments = True
        literal_macros(out)
        out.macro("is_identifier", IDENTIFIER_MACRO)
        out.macro("template_argument", _TEMPLATE_ARGUMENT_MACRO)
        out.macro("python_call_list", _CALL_LIST_MACRO)

    def jinja_list(self, out: Template) -> None:
        """The bracketed call list of ``message``, one expression."""
        out.out(
            "{{- '[' ~ python_call_list(message.tool_calls, 'messages[' ~ index ~ ']', "
            f"{jinja_string(self.quote)}, {jinja_string(self.between)}, "
            f"{jinja_string(self.spelling)}) ~ ']' -}}}}"
        )

    # ------------------------------------------------------------------ the turn grammar

    @property
    def model_open(self) -> Fence:
        """What opens the list a model writes, in the turn grammar: ``open``, or what a
        format writes there instead (a subclass's: Breeze's decision token)."""
        return self.open

    def grammar(self, turn: Turn) -> None:
        check_names(turn.tools)
        turn.calls = PythonCallSet(self, turn, self.model_open)


def check_names(tools: tuple[Tool, ...]) -> None:
    """Refuse a tool whose calls cannot be written: ``name(key=value)`` needs a name that is
    an identifier (the forced prefix ``[name(`` and the grammar would otherwise hold a call the
    parser refuses).  Argument names are checked where the arguments' grammar is built
    (:func:`pawlette.emit.python_schema.check_keyword_names`)."""
    for number, tool in enumerate(tools):
        if not is_plain_identifier(tool.name):
            raise UnsupportedFeature(
                f"tools[{number}].function.name",
                f"the function name {tool.name!r}",
                KEYWORD_EXPECTED,
                "Python-call formats write calls as name(key=value)",
            )


class PythonCallListReader:
    """The text of the state is one call list, ``[f(a=1), g(b='x')]``, of at least one call:
    the state is entered by a marker that announces calls, so an empty list is malformed."""

    __slots__ = ("_calls", "_parser", "_raw")

    def __init__(self, parser: Parser, *, raw_strings: bool = False) -> None:
        self._parser = parser
        self._calls = CallStream(parser, mode="list", raw_strings=raw_strings)
        # The text, kept only until a call begins (then the list is not empty: the call ends,
        # or the decoder fails and gives the text back itself).
        self._raw: list[str] | None = []

    def feed(self, text: str, offset: int) -> None:
        raw = self._raw
        if raw is not None:
            raw.append(text)
        self._calls.feed(text, offset)
        if raw is not None and self._calls.started:
            self._raw = None

    def close(self, marker: str | None, offset: int) -> None:
        calls = self._calls
        calls.finish(offset)
        if calls.calls or calls.failed:
            return
        raw = "".join(self._raw or ())
        give_back(self._parser, offset, f"an empty list of calls {raw.strip()!r}", "a call", raw)


# ---------------------------------------------------------------------- Jinja macros

_CALL_LIST_MACRO = r"""{%- macro python_call_list(calls, where, quote, between, spelling) -%}
{%- for call in calls -%}
{%- set path = where ~ '.tool_calls[' ~ loop.index0 ~ '].function' -%}
{%- if call.function is not defined or call.function is not mapping -%}
{{- raise_exception(path ~ ': missing; expected a function object') -}}
{%- endif -%}
{%- if call.function.arguments is not mapping -%}
{{- raise_exception(path ~ '.arguments: not an object; expected the arguments as an object (they are written as Python keyword arguments, and Jinja cannot parse JSON text)') -}}
{%- endif -%}
{%- if not is_identifier(call.function.name) -%}
{{- raise_exception(path ~ '.name: the function name ' ~ call.function.name ~ '; expected a Python identifier that is not a keyword') -}}
{%- endif -%}
{%- set keywords = namespace(text='') -%}
{%- for key, value in call.function.arguments|items -%}
{%- if not is_identifier(key) -%}
{{- raise_exception(path ~ '.arguments: the argument name ' ~ key ~ '; expected a Python identifier that is not a keyword') -}}
{%- endif -%}
{%- set written = template_argument(value, path ~ '.arguments.' ~ key) if spelling == 'template' else python_literal(value, quote, path ~ '.arguments.' ~ key) -%}
{%- set keywords.text = keywords.text ~ (', ' if loop.index0 else '') ~ key ~ '=' ~ written -%}
{%- endfor -%}
{{- (between if loop.index0 else '') ~ call.function.name ~ '(' ~ keywords.text ~ ')' -}}
{%- endfor -%}
{%- endmacro -%}
"""


_TEMPLATE_ARGUMENT_MACRO = r"""{%- macro template_argument(value, where) -%}
{%- if value is string -%}
{%- if "''" in value or "')" in value or "'," in value or (value and value[-1:] == "'") -%}
{{- raise_exception(where ~ ": a string in which a ' is followed by ', ) or a comma, or ends it; expected a string written raw between single quotes that reads back whole") -}}
{%- endif -%}
{{- "'" ~ value ~ "'" -}}
{%- elif value is mapping -%}
{{- value | tojson -}}
{%- else -%}
{{- python_literal(value, 'repr', where) -}}
{%- endif -%}
{%- endmacro -%}
"""


def literal_macros(out: Template) -> None:
    """``python_literal(value, quote, where)`` and ``python_string(text, quote)``, once."""
    out.macro("python_literal", PYTHON_LITERAL_MACROS)


# ---------------------------------------------------------------------- the turn grammar


def keyword_arguments(
    values: PythonValues, number: int, tool: Tool, spelling: Spelling = "literal"
) -> Node:
    """A tool's keyword arguments (``a='x', b=1``) under its schema, in ``values``' rules
    (``spelling="template"``: as LFM2.5's template writes them, see
    :class:`~pawlette.emit.python_schema.TemplateArguments`)."""
    from ..emit.turn_rules import parameters

    prefix, where = f"args_{number}", f"tools[{number}].parameters"
    if spelling == "template":
        json_values = PythonValues(values.rules, '"', json_values=True)
        converter: SchemaToPython = TemplateArguments(values, json_values, prefix, where)
    else:
        converter = SchemaToPython(values, prefix, where)
    return converter.keyword_arguments(parameters(tool))


class PythonCallSet(CallOpening):
    """The turn grammar of :class:`PythonCalls` (see :class:`pawlette.declare.grammar.CallSet`).

    ``OPEN [CALL (between CALL)*] CLOSE``, each ``CALL`` = ``name(`` keyword arguments ``)``;
    ``opening`` is what opens the list (the calls' ``open``, or what a format writes there
    instead: breeze's decision token).
    """

    calls: PythonCalls

    def __init__(self, calls: PythonCalls, turn: Turn, opening: Fence) -> None:
        super().__init__(calls, turn, opening)
        self.opening = turn.nodes(opening)
        self.closing = turn.nodes(calls.close)
        self._arguments: dict[tuple[int, int], Node] = {}
        self._values: dict[int, PythonValues] = {}

    def _keywords(self, rules: Rules, number: int, tool: Tool) -> Node:
        found = self._arguments.get((id(rules), number))
        if found is None:  # once per tool and rule set: calls with and without a head share it
            values = self._values.get(id(rules))
            if values is None:
                values = self._values[id(rules)] = PythonValues(rules, self.calls.quote)
            found = self._arguments[id(rules), number] = keyword_arguments(
                values, number, tool, self.calls.spelling
            )
        return found

    def call(self, turn: Turn, rules: Rules, *, headless: bool = False) -> Node:
        """One call of an allowed tool (``headless``: without ``name(``, after a forced one)."""
        rule = "call_rest" if headless else "call"
        if rule in rules.rules:  # once per grammar: its schema's rules are named, not redefined
            return Ref(rule)
        options = []
        for number, tool in turn.allowed():
            head: Node = Lit("") if headless else Lit(tool.name + "(")
            name = f"call_{number}" + ("_rest" if headless else "")
            body = seq(head, self._keywords(rules, number, tool), Lit(")"))
            options.append(rules.add(name, body))
        return rules.add(rule, alt(*options))

    def more(self, turn: Turn, rules: Rules, parallel: bool) -> Node:
        """The calls after the first (none when the request or the layout is serial)."""
        if not (parallel and self.calls.parallel):
            return Lit("")
        comma = self.calls.between.rstrip() or ","
        return Repeat(seq(Lit(comma), optional(Lit(" ")), self.call(turn, rules)))

    def many(self, turn: Turn, rules: Rules, parallel: bool) -> Node:
        return seq(*self.opening, self.after_prefix(turn, rules, self.lead, parallel))

    def lazy(self, turn: Turn, rules: Rules, parallel: bool) -> Node:
        return self.many(turn, rules, parallel)

    def prefix(self, name: str | None) -> str:
        return self.lead if name is None else self.lead + self.calls.head(name)

    def after_prefix(self, turn: Turn, rules: Rules, prefix: str, parallel: bool) -> Node:
        """The list after a forced prefix: the opening (``required``) or the opening and
        ``[name(``."""
        rest = prefix[len(self.lead) :] if prefix.startswith(self.lead) else prefix
        if rest.startswith("[") and rest.endswith("("):  # a named call: its head is written
            first = self.call(turn, rules, headless=True)
            start: list[Node] = []
        else:
            first = self.call(turn, rules)
            start = [Lit("[")] if not rest else []
        return seq(*start, first, self.more(turn, rules, parallel), Lit("]"), *self.closing)


list_reader = Described("Python call list", PythonCallListReader)
"""A state whose text is one call list (results pair with calls in the fold)."""

raw_list_reader = Described(
    "Python call list", functools.partial(PythonCallListReader, raw_strings=True), raw_strings=True
)
""":data:`list_reader` for ``spelling="template"``: single-quoted arguments are raw."""
