"""Calls as turns of their own: ``<|assistant|>NAME\\n```python\\ntool_call(k=v, ...)\\n```\\ ``.

An assistant message is a text turn (``<|assistant|>\\n`` and its text: when it has text, or
no calls) and then one turn per call, the call's name on the turn's metadata line and its
arguments as Python keyword arguments in a fenced block
(:func:`pawlette.codecs.python_literals.encode_call`, double-quoted strings).  The model
writes everything after the message's first ``<|assistant|>``, and each later one.

The code interpreter: a turn whose metadata is ``code_metadata`` (``interpreter``) holds a
fenced program, a call to the built-in tool ``code_tool`` (``code_interpreter``) with the one
argument ``code_argument`` (``code``); it needs no tool declaration.

Reading (:mod:`.readers`): a turn that continues an assistant message joins it when it is a
call, so a message with text and calls comes back as one; a new text turn is a new message.
"""

# ruff: noqa: E501  (Jinja source: one tag per line reads better than wrapped tags)

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from ...codecs.python_literals import Quote, encode_call
from ...declare import Concept, Fence, Marker
from ...emit.grammar_ast import Lit, Node, Ref, Repeat, Rules, alt, optional, seq
from ...emit.grammar_ast import Marker as MarkerNode
from ...emit.jinja_text import IDENTIFIER_MACRO, PYTHON_LITERAL_MACROS, jinja_string
from ...emit.text_language import text_terminal
from ...errors import UnsupportedFeature
from ...types import Tool, ToolCall
from .readers import assistant_turn_reader

if TYPE_CHECKING:
    from ...declare.grammar import Turn
    from ...declare.jinja import Template
    from ...declare.table import Table
    from ...declare.write import Render

TEXT_NE = text_terminal("TEXT", "NE")


@dataclass(frozen=True)
class FencedCalls(Concept):
    """Fields:

    - ``turn``: the marker that opens an assistant turn (each call's turn after the first).
    - ``language``: the fence around a call's body and a program (```` ```python ````).
    - ``callee``: the function a call's body calls (``tool_call(k=v, ...)``).
    - ``quote``: the quote of Python string literals in calls.
    - ``code_metadata`` / ``code_tool`` / ``code_argument``: the code interpreter.
    - ``title``: the format's name in messages.
    """

    turn: Marker
    language: str = "python"
    callee: str = "tool_call"
    quote: Quote = '"'
    code_metadata: str = "interpreter"
    code_tool: str = "code_interpreter"
    code_argument: str = "code"
    title: str = "ChatGLM3"

    handles: ClassVar[frozenset[str]] = frozenset({"calls"})
    closing: ClassVar[str] = "\n```"

    @property
    def opening(self) -> str:
        return f"```{self.language}\n"

    def head(self, name: str) -> str:
        """What a call turn writes after its role marker, up to its arguments."""
        return name + "\n" + self.opening + self.callee + "("

    @cached_property
    def turn_fence(self) -> Fence:
        return (self.turn,)

    # ------------------------------------------------------------------ the writer

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    def check(self, out: Render) -> None:
        out.handles("calls")
        for index, message in enumerate(out.messages):
            for number, call in enumerate(message.tool_calls):
                self.call_turn(call, f"messages[{index}].tool_calls[{number}].function")

    def call_turn(self, call: ToolCall, path: str) -> tuple[str, str]:
        """The metadata line and the fenced body of one call."""
        if call.name == self.code_tool:
            arguments: Any = json.loads(call.arguments)
            code = arguments.get(self.code_argument) if isinstance(arguments, dict) else None
            if not isinstance(code, str) or len(arguments) != 1:
                raise UnsupportedFeature(
                    f"{path}.arguments",
                    f"{call.arguments[:60]!r}",
                    f'{{"{self.code_argument}": "<program>"}}',
                )
            return self.code_metadata, code
        if (
            call.name == self.code_metadata
            or not call.name.strip()
            or call.name != call.name.strip()
            or "\n" in call.name
        ):
            raise UnsupportedFeature(
                f"{path}.name",
                f"{call.name!r}",
                f"a one-line name other than {self.code_metadata!r}",
                f"To run code, call {self.code_tool!r}",
            )
        return call.name, encode_call(self.callee, call.arguments, quote=self.quote, path=path)

    @staticmethod
    def _text_turn(out: Render, index: int) -> bool:
        message = out.messages[index]
        return bool(message.content) or not message.tool_calls

    def hook_is_local(self, hook: str, role: str) -> bool:
        # (the message's own text and calls)
        return hook in ("write_opening", "write_content", "write_closing")

    def write_opening(self, out: Render, index: int) -> None:
        if index >= 0 and self._text_turn(out, index):
            out.raw("\n", "metadata", trainable=True)  # the text turn's empty metadata line

    def write_content(self, out: Render, index: int) -> bool:
        return index >= 0 and not self._text_turn(out, index)  # calls only: no text turn

    def write_closing(self, out: Render, index: int) -> None:
        if index < 0:
            return
        continuation = self._text_turn(out, index)
        for number, call in enumerate(out.messages[index].tool_calls):
            metadata, body = self.call_turn(
                call, f"messages[{index}].tool_calls[{number}].function"
            )
            if continuation:
                out.fence(self.turn_fence, "header", trainable=True)
            # The metadata line and the fenced body are apart, as the reference encodes them.
            out.text(metadata, "metadata", trainable=True)
            out.raw("\n", "metadata", trainable=True)
            out.raw(self.opening, "tool_call", trainable=True)
            out.text(body, "tool_call", trainable=True)
            out.raw(self.closing, "tool_call", trainable=True)
            continuation = True

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        table.reader("assistant.head", assistant_turn_reader(self, continuation=False))
        more = table.state(
            "assistant.more",
            assistant_turn_reader(self, continuation=True),
            "assistant",
            ends=True,
        )
        marker = self.turn.text
        for state in ("assistant.head", "assistant.body", more):
            table.on(state, marker, more)  # a call joins the message (a text turn: a new one)

    # ------------------------------------------------------------------ the Jinja template

    def jinja_setup(self, out: Template) -> None:
        out.object_arguments = True
        out.macro("python_literals", PYTHON_LITERAL_MACROS.strip())
        out.macro("is_identifier", IDENTIFIER_MACRO.strip())
        out.macro("call_turn", _call_macro(self))

    def jinja_opening(self, out: Template, role: str) -> None:
        out.out(
            "{%- set calls = message.tool_calls if message.tool_calls is defined and "
            "message.tool_calls else [] -%}"
        )
        out.out(f"{{%- set text = text_of(message, index, {jinja_string(self.title)}) -%}}")
        out.out("{%- if text or not calls -%}{{- '\\n' -}}{%- endif -%}")

    def jinja_content(self, out: Template, role: str) -> bool:
        out.out("{%- if text or not calls -%}{{- text -}}{%- endif -%}")
        return True

    def jinja_closing(self, out: Template, role: str) -> None:
        turn = jinja_string(self.turn.text)
        out.out("{%- set more = namespace(on=text or not calls) -%}")
        out.out("{%- for call in calls -%}")
        out.out(
            "{%- if more.on -%}{{- " + turn + " -}}{%- endif -%}"
            "{{- call_turn(call, 'messages[' ~ index ~ '].tool_calls[' ~ loop.index0 ~ '].function') -}}"
        )
        out.out("{%- set more.on = true -%}")
        out.out("{%- endfor -%}")

    # ------------------------------------------------------------------ the turn grammar

    def grammar(self, turn: Turn) -> None:
        turn.content = seq(Lit("\n"), optional(TEXT_NE))
        turn.calls = _FencedCallSet(self, turn)
        turn.rules.notes.append(
            f"calls begin right after the generation prompt or after {self.turn.text}: "
            "no lazy trigger"
        )


_CALL_MACRO = r"""{%- macro call_turn(call, path) -%}
{%- if call.function is not defined or call.function is not mapping -%}
{{- raise_exception(path ~ ': missing; expected a function object') -}}
{%- endif -%}
{%- set fn = call.function -%}
{%- if fn.arguments is not mapping -%}
{{- raise_exception(path ~ '.arguments: not an object; expected the arguments as an object (' ~ @TITLE@ ~ ' writes them as Python keyword arguments, and Jinja cannot parse JSON text)') -}}
{%- endif -%}
{%- if fn.name == @CODE_TOOL@ -%}
{%- if fn.arguments|length != 1 or fn.arguments[@CODE_ARGUMENT@] is not defined or fn.arguments[@CODE_ARGUMENT@] is not string -%}
{{- raise_exception(path ~ '.arguments: expected {"' ~ @CODE_ARGUMENT@ ~ '": "<program>"}') -}}
{%- endif -%}
{{- @CODE_METADATA@ ~ @OPENING@ ~ fn.arguments[@CODE_ARGUMENT@] ~ @CLOSING@ -}}
{%- else -%}
{%- if fn.name == @CODE_METADATA@ or not fn.name|trim or fn.name|trim != fn.name or '\n' in fn.name -%}
{{- raise_exception(path ~ '.name: ' ~ fn.name ~ '; expected a one-line name other than ' ~ @CODE_METADATA@) -}}
{%- endif -%}
{%- set keywords = namespace(text='') -%}
{%- for key, value in fn.arguments|items -%}
{%- if not is_identifier(key) -%}
{{- raise_exception(path ~ '.arguments: the argument name ' ~ key ~ '; expected a Python identifier that is not a keyword') -}}
{%- endif -%}
{%- set keywords.text = keywords.text ~ (', ' if loop.index0 else '') ~ key ~ '=' ~ python_literal(value, @QUOTE@, path ~ '.arguments.' ~ key) -%}
{%- endfor -%}
{{- fn.name ~ @OPENING@ ~ @CALLEE@ ~ '(' ~ keywords.text ~ ')' ~ @CLOSING@ -}}
{%- endif -%}
{%- endmacro -%}"""


def _call_macro(calls: FencedCalls) -> str:
    values = {
        "@OPENING@": jinja_string("\n" + calls.opening),
        "@CLOSING@": jinja_string(calls.closing),
        "@CALLEE@": jinja_string(calls.callee),
        "@QUOTE@": jinja_string(calls.quote),
        "@CODE_TOOL@": jinja_string(calls.code_tool),
        "@CODE_ARGUMENT@": jinja_string(calls.code_argument),
        "@CODE_METADATA@": jinja_string(calls.code_metadata),
        "@TITLE@": jinja_string(calls.title),
    }
    text = _CALL_MACRO
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    return text


class _FencedCallSet:
    """The turn grammar of :class:`FencedCalls` (see :class:`pawlette.declare.grammar.CallSet`)::

        \\nTEXT <|user|>                                        a reply
        \\nTEXT (<|assistant|>CALL)+ <|observation|>            a reply, then calls
        CALL (<|assistant|>CALL)* <|observation|>               calls
        CALL = NAME\\n```python\\ntool_call(k=v, ...)\\n```

    Arguments are keyword arguments whose values are Python literals under the tool's schema
    (:mod:`pawlette.emit.python_schema`).  A named choice's forced prefix is the whole call
    head, ``NAME\\n```python\\ntool_call(``, and so is ``required``'s when exactly one function
    (not the code interpreter) is declared; with several, ``required`` has no prefix.  The
    code interpreter is allowed when a tool named ``code_interpreter`` is declared, its
    program being any text.  A call turn has no marker of its own before the first call, so
    there is no trigger for lazy grammars.
    """

    with_content = True
    trigger: str | None = None

    def __init__(self, calls: FencedCalls, turn: Turn) -> None:
        self.calls = calls
        # A tool's argument rules, per rule set (the grammar after a forced prefix has its own).
        self._arguments: dict[tuple[int, int], Node] = {}

    def call(self, turn: Turn, rules: Rules, skip_head: bool = False) -> Node:
        from ...emit.python_schema import PythonValues, SchemaToPython
        from ...emit.turn_rules import parameters

        calls = self.calls
        rule = "call_rest" if skip_head else "call"
        if rule in rules.rules:  # once per grammar: its schema's rules are named, not redefined
            return Ref(rule)
        values = PythonValues(rules, calls.quote)
        options = []
        for number, tool in turn.allowed():
            if tool.name == calls.code_tool:
                body: Node = seq(
                    Lit(calls.code_metadata + "\n" + calls.opening),
                    optional(TEXT_NE),
                    Lit(calls.closing),
                )
            else:
                keywords = self._arguments.get((id(rules), number))
                if keywords is None:  # once per tool: the calls with and without a head share it
                    converter = SchemaToPython(
                        values, f"args_{number}", f"tools[{number}].parameters"
                    )
                    keywords = self._arguments[id(rules), number] = converter.keyword_arguments(
                        parameters(tool)
                    )
                head: Node = Lit("") if skip_head else Lit(calls.head(tool.name))
                body = seq(head, keywords, Lit(")" + calls.closing))
            options.append(rules.add(f"call_{number}" + ("_rest" if skip_head else ""), body))
        return rules.add(rule, alt(*options))

    def _more(self, turn: Turn, rules: Rules, first: Node, parallel: bool) -> Node:
        if not parallel:
            return first
        return seq(first, Repeat(seq(MarkerNode(self.calls.turn.text), self.call(turn, rules))))

    def lazy(self, turn: Turn, rules: Rules, parallel: bool) -> Node:
        return self.many(turn, rules, parallel)

    def many(self, turn: Turn, rules: Rules, parallel: bool) -> Node:
        return self._more(turn, rules, self.call(turn, rules), parallel)

    def after_text(self, turn: Turn, rules: Rules) -> Node:
        return seq(Lit("\n"), TEXT_NE, MarkerNode(self.calls.turn.text))

    def prefix(self, name: str | None) -> str:
        if name is None or name == self.calls.code_tool:
            return ""  # several functions, or a program: no head to force
        return self.calls.head(name)

    def required_for(self, tools: Sequence[Tool] | None) -> str | None:
        """``required``'s prefix: a call's head when one function (not the code
        interpreter) can be called, else none."""
        if tools is None:
            return None  # which function is unknown
        if len(tools) == 1 and tools[0].name != self.calls.code_tool:
            return self.calls.head(tools[0].name)
        return ""

    def after_prefix(self, turn: Turn, rules: Rules, prefix: str, parallel: bool) -> Node:
        return self._more(turn, rules, self.call(turn, rules, skip_head=True), parallel)
