"""Python-literal calls: a concept of the declaration layer, with all four of its interpreters.

A layout whose ``calls`` is a :class:`PythonCalls` writes every call of a turn as one Python
list of calls, each argument a keyword whose value is a Python literal::

    OPEN [get_weather(city='Paris', days=3),now()] CLOSE

(MediaTek's Breeze 2 spells ``OPEN`` ``<|python_tag|>``/``<|use_tool|>`` and has no ``CLOSE``:
its list runs to the end of the turn.)  Strings are quoted in one ``quote`` style, or as
Python's ``repr`` picks per string (``"it's"``), which is MRPromptV3's.  Nothing is ever
evaluated: the reader is a streaming Python-literal tokenizer.

The building block, in one place:

- **the codec**: :mod:`pawlette.codecs.python_calls` (:func:`encode_calls` for writing, the
  streaming :class:`~pawlette.codecs.python_calls.PythonCallDecoder` for reading);
- **the writer**: :func:`write_calls` (segments, trainable, kind ``tool_call``);
- **the parse table**: :func:`table_rows` adds the assistant's call state and its rows, read
  by :func:`call_list_reader` (the decoder bound to the parser, call ids remembered so
  results answer the call at their position);
- **the Jinja**: :data:`JINJA_MACROS` (``python_literal``/``python_string`` as the codec
  writes them, ``is_identifier``, and ``python_call_list(calls, where, quote, between)``)
  and :func:`jinja_calls`, the branch of an assistant turn;
- **the grammar**: :class:`PythonCallSet` (each call's keyword arguments under its tool's
  JSON schema, strings that never spell a marker, via :mod:`pawlette.export.python_schema`),
  and :func:`call_prefix` for the forced prefixes.

The lower-level pieces (:func:`call_list_reader`, :data:`JINJA_MACROS`,
:func:`keyword_arguments`) take plain values, so a layout that frames Python calls its own way
(ChatGLM3's code interpreter) uses them without the concept.
"""

# ruff: noqa: E501  (Jinja source: one tag per line reads better than wrapped tags)

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..codecs.python_literals import Quote, encode_call, encode_calls
from ..engine.machine import Parser, Reader, ReaderFactory
from ..errors import UnsupportedFeature
from ..export.grammar_ast import Lit, Node, Ref, Repeat, Rules, alt, optional, seq
from ..export.python_schema import PythonValues, SchemaToPython
from ..export.templates._common import IDENTIFIER_MACRO, PYTHON_LITERAL_MACROS, jinja_string
from ..export.turns._common import parameters
from ..types import Message, Tool
from .layout import Fence
from .python_reader import CallPairing, PythonCallListReader
from .readers import forget_started_call, remember_started_call

if TYPE_CHECKING:  # the interpreters hand themselves in; importing them here would cycle
    from .jinja import _Emitter
    from .table import _Table
    from .write import _Render


@dataclass(frozen=True)
class PythonCalls:
    """Calls written as one Python list: ``open`` + ``[f(a=1),g()]`` + ``close``.

    ``close=()``: the list runs to the end of the turn (the turn's end fence closes it).
    ``separator`` comes before the list when text precedes it (``with_content``).
    ``between`` is written between two calls (MRPromptV3 writes ``,``; the grammar allows a
    space after the comma, as the seed writes, and the reader reads any whitespace there).
    ``quote``: ``"'"``, ``'"'`` or ``"repr"`` (the quote Python's ``repr`` picks per string).
    ``parallel``: several calls in one list.
    """

    open: Fence
    close: Fence = ()
    separator: Fence = ()
    between: str = ","
    quote: Quote = "'"
    parallel: bool = True
    with_content: bool = True

    arguments: ClassVar[Literal["tojson"]] = "tojson"
    """As :class:`~.layout.JsonCalls`' ``"tojson"``: arguments are written from the parsed
    object, so the Jinja template takes them as objects."""


# ------------------------------------------------------------------ writer


def encoded(calls: PythonCalls, message: Message, index: int) -> str:
    """The call list of an assistant message, as the codec writes it."""
    pairs = [(call.name, call.arguments) for call in message.tool_calls]
    path = f"messages[{index}].tool_calls"
    return encode_calls(pairs, quote=calls.quote, separator=calls.between, path=path)


def check_calls(calls: PythonCalls, layout_name: str, message: Message, index: int) -> None:
    """Refuse what the layout cannot write (text beside the calls, parallel calls)."""
    if message.text and not calls.with_content:
        raise UnsupportedFeature(
            f"messages[{index}].content",
            "text beside tool calls",
            "text or calls",
            f"{layout_name} writes one or the other per turn: split the message",
        )
    if len(message.tool_calls) > 1 and not calls.parallel:
        raise UnsupportedFeature(
            f"messages[{index}].tool_calls",
            f"{len(message.tool_calls)} calls",
            f"one call per turn: {layout_name} has no parallel calls",
        )


def write_calls(render: _Render, message: Message, index: int, *, after_text: bool) -> None:
    """The writer's branch for a :class:`PythonCalls` layout (called by :mod:`.write`)."""
    calls = render.layout.calls
    assert isinstance(calls, PythonCalls)
    check_calls(calls, render.layout.name, message, index)
    if after_text:
        render.fence(calls.separator, "tool_call", trainable=True)
    render.fence(calls.open, "tool_call", trainable=True)
    render.writer.text(encoded(calls, message, index), "tool_call", trainable=True)
    render.fence(calls.close, "tool_call", trainable=True)


# ------------------------------------------------------------------ parse table


class _DeclaredPairing(CallPairing):
    """Calls remembered where the declared layouts' result readers look for them."""

    def remember(self, parser: Parser, call_id: str) -> None:
        remember_started_call(parser, call_id)

    def forget(self, parser: Parser) -> None:
        forget_started_call(parser)


DECLARED_PAIRING: CallPairing = _DeclaredPairing()


def call_list_reader(pairing: CallPairing | None = None) -> ReaderFactory:
    """A state whose text is one call list ``[f(a=1), g()]`` of at least one call (its calls
    remembered by ``pairing``: the engine's :mod:`~pawlette.engine.call_results` unless
    given)."""

    def make(parser: Parser) -> Reader:
        return PythonCallListReader(parser, pairing)

    return make


def table_rows(table: _Table, texts: tuple[str, ...]) -> None:
    """The assistant's call rows (called by :mod:`.table` from the states in ``texts``)."""
    from .readers import BetweenCallsReader

    calls = table.layout.calls
    assert isinstance(calls, PythonCalls)
    builder = table.builder
    builder.state("assistant.call", call_list_reader(DECLARED_PAIRING), "assistant")
    openings = sorted({table.text(calls.open), table.text(calls.separator, calls.open)})
    for opening in openings:
        for state in texts:
            table.on(state, opening, "assistant.call")
    if not calls.close:
        table.ends("assistant.call", "assistant")
        return
    builder.state("assistant.after_call", BetweenCallsReader, "assistant")
    table.on("assistant.call", table.text(calls.close), "assistant.after_call")
    table.ends("assistant.after_call", "assistant")


def named_head(calls: PythonCalls, name: str) -> str:
    """What a call list forced to call ``name`` starts with after ``open``: ``[name(``."""
    return "[" + encode_call(name, "{}", quote=calls.quote, path="tool_choice.function")[:-1]


# ------------------------------------------------------------------ Jinja

_CALL_LIST_MACRO = r"""{%- macro python_call_list(calls, where, quote, between) -%}
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
{%- set keywords.text = keywords.text ~ (', ' if loop.index0 else '') ~ key ~ '=' ~ python_literal(value, quote, path ~ '.arguments.' ~ key) -%}
{%- endfor -%}
{{- (between if loop.index0 else '') ~ call.function.name ~ '(' ~ keywords.text ~ ')' -}}
{%- endfor -%}
{%- endmacro -%}
"""

JINJA_MACROS = PYTHON_LITERAL_MACROS + IDENTIFIER_MACRO + _CALL_LIST_MACRO
"""Macros a template writing Python calls defines once, before its messages:
``python_literal(value, quote, where)``, ``python_string(text, quote)``,
``is_identifier(name)`` and ``python_call_list(calls, where, quote, between)`` (the calls
without their brackets: ``f(a=1),g()``; arguments must be objects)."""


def jinja_call_list(calls: PythonCalls, message: str, index: str) -> str:
    """A Jinja expression: the bracketed call list of ``message`` (a Jinja expression)."""
    where = f"'messages[' ~ {index} ~ ']'"
    return (
        f"'[' ~ python_call_list({message}.tool_calls, {where}, {jinja_string(calls.quote)}, "
        f"{jinja_string(calls.between)}) ~ ']'"
    )


def jinja_calls(emitter: _Emitter) -> None:
    """The Jinja branch of an assistant turn's calls (called by :mod:`.jinja`)."""
    layout = emitter.layout
    calls = layout.calls
    assert isinstance(calls, PythonCalls)
    emitter.out("{%- if message.tool_calls is defined and message.tool_calls -%}")
    has_text = "(message.content is defined and message.content)"
    if not calls.with_content:
        emitter.raise_if(has_text, f"content alongside tool calls: {layout.name}")
    if not calls.parallel:
        emitter.raise_if("message.tool_calls | length > 1", f"one call per turn: {layout.name}")
    emitter.out(f"{{%- if {has_text} -%}}")
    emitter.fence(calls.separator)
    emitter.out("{%- endif -%}")
    emitter.fence(calls.open)
    emitter.out(f"{{{{- {jinja_call_list(calls, 'message', 'loop.index0')} -}}}}")
    emitter.fence(calls.close)
    emitter.out("{%- endif -%}")


# ------------------------------------------------------------------ grammar


def keyword_arguments(values: PythonValues, number: int, tool: Tool) -> Node:
    """A tool's keyword arguments (``a='x', b=1``) under its schema, in ``values``' rules."""
    converter = SchemaToPython(values, f"args_{number}", f"tools[{number}].parameters")
    return converter.keyword_arguments(parameters(tool))


class PythonCallSet:
    """The grammar of one turn's call list (the counterpart of :mod:`.grammar`'s JSON calls).

    ``OPEN [CALL (between CALL)*] CLOSE``, each ``CALL`` = ``name(`` keyword arguments ``)``;
    ``opening`` and ``closing`` are the grammar nodes of the fences around the list (a layout's
    ``open``/``close``, or what a format writes there instead, breeze's decision token).
    ``only``: the one tool a named ``tool_choice`` allows.
    """

    def __init__(
        self,
        calls: PythonCalls,
        tools: tuple[Tool, ...],
        only: str | None,
        opening: list[Node],
        closing: list[Node],
    ) -> None:
        self.calls = calls
        self.tools = list(enumerate(tools))
        self.only = only
        self.opening = opening
        self.closing = closing
        self._arguments: dict[tuple[int, int], Node] = {}
        self._values: dict[int, PythonValues] = {}

    def allowed(self) -> list[tuple[int, Tool]]:
        return [(n, tool) for n, tool in self.tools if self.only is None or tool.name == self.only]

    def _keywords(self, rules: Rules, number: int, tool: Tool) -> Node:
        found = self._arguments.get((id(rules), number))
        if found is None:  # once per tool and rule set: calls with and without a head share it
            values = self._values.get(id(rules))
            if values is None:
                values = self._values[id(rules)] = PythonValues(rules, self.calls.quote)
            found = self._arguments[id(rules), number] = keyword_arguments(values, number, tool)
        return found

    def call(self, rules: Rules, *, headless: bool = False) -> Node:
        """One call of an allowed tool (``headless``: without ``name(``, after a forced one)."""
        rule = "call_rest" if headless else "call"
        if rule in rules.rules:  # once per grammar: its schema's rules are named, not redefined
            return Ref(rule)
        options = []
        for number, tool in self.allowed():
            head: Node = Lit("") if headless else Lit(tool.name + "(")
            name = f"call_{number}" + ("_rest" if headless else "")
            body = seq(head, self._keywords(rules, number, tool), Lit(")"))
            options.append(rules.add(name, body))
        return rules.add(rule, alt(*options))

    def more(self, rules: Rules, parallel: bool) -> Node:
        """The calls after the first (none when the request or the layout is serial)."""
        if not (parallel and self.calls.parallel):
            return Lit("")
        comma = self.calls.between.rstrip() or ","
        return Repeat(seq(Lit(comma), optional(Lit(" ")), self.call(rules)))

    def many(self, rules: Rules, parallel: bool) -> Node:
        """The whole list with its fences."""
        return seq(
            *self.opening,
            Lit("["),
            self.call(rules),
            self.more(rules, parallel),
            Lit("]"),
            *self.closing,
        )

    def after_prefix(self, rules: Rules, prefix: str, parallel: bool) -> Node:
        """The list after a forced prefix: ``open`` (``required``) or ``open[name(``."""
        opening = "".join(getattr(node, "text", "") for node in self.opening)
        rest = prefix[len(opening) :] if prefix.startswith(opening) else prefix
        if rest.startswith("[") and rest.endswith("("):  # a named call: its head is written
            first = self.call(rules, headless=True)
            start: list[Node] = []
        else:
            first = self.call(rules)
            start = [Lit("[")] if not rest else []
        return seq(
            *start,
            first,
            self.more(rules, parallel),
            Lit("]"),
            *self.closing,
        )


def call_prefix(calls: PythonCalls, opening: str, name: str | None) -> str:
    """The forced prefix: ``opening`` (the open fence's text), then ``[name(`` for ``name``."""
    return opening if name is None else opening + named_head(calls, name)


def is_python(calls: Any) -> bool:
    """Whether a layout's ``calls`` is this concept (the shared interpreters dispatch on it)."""
    return isinstance(calls, PythonCalls)
