"""MeetKai's Functionary v3.1 (Llama 3.1 based): ``<function=NAME>{json}</function>`` calls.

The wire format (``<|...|>`` are Llama 3's special tokens)::

    <|begin_of_text|><|start_header_id|>system<|end_header_id|>


    Cutting Knowledge Date: December 2023


    You have access to the following functions:

    Use the function 'get_weather' to 'Get the weather.'
    {&#34;name&#34;: &#34;get_weather&#34;, ...}


    Think very carefully before calling functions.
    ...
    - Put the entire function call reply on one line

    <|eot_id|><|start_header_id|>system<|end_header_id|>

    You are terse.<|eot_id|><|start_header_id|>user<|end_header_id|>

    Weather in Paris?<|eot_id|><|start_header_id|>assistant<|end_header_id|>

    <function=get_weather>{"city": "Paris"}</function><|eom_id|><|start_header_id|>ipython<|end_header_id|>

    18°C<|eot_id|><|start_header_id|>assistant<|end_header_id|>

Decisions (reference: ``meetkai-functionary-medium-v3.1.jinja`` in llama.cpp's
``models/templates``):

- **The generated system turn** is always written first and holds no caller message: a
  blank line, ``Cutting Knowledge Date: December 2023`` and, with tools, the tools and the
  template's instructions.  The caller's system messages are turns of their own, in place.
- **Tools** are written as the template writes them under Hugging Face's renderer: each as
  ``Use the function 'NAME' to 'DESCRIPTION'`` and the ``function`` object's JSON, all of it
  HTML-escaped (the template adds plain strings to ``|safe`` markup, so Jinja escapes them:
  ``"`` is ``&#34;``).  llama.cpp's renderer (minja) writes the same text unescaped: the
  option ``escaped_tools=False`` writes that.  A tool without a description is written with
  an empty one (a recorded loss: the template fails on it).  Reading a conversation gives the tools back.
- **Calls**: after the turn's text, each ``<function=NAME>`` + the arguments' JSON +
  ``</function>``, with nothing between; a turn with calls ends with ``<|eom_id|>``, any
  other with ``<|eot_id|>`` (both end a turn when a model writes them).  No ids are written
  (results answer calls by position).  The template writes a call named ``python`` as
  ``<|python_tag|>`` + its arguments' JSON: such a call is refused.
- **Results** are ``ipython`` turns, one per tool message, their text as given.
- **Reading** follows llama.cpp: text, then calls in ``<function=NAME>{json}</function>``
  (a call that is not one, such as one cut before ``</function>``, stays content with a
  warning); several calls and text before them are read.
- Names and ``reasoning_content`` are not written (recorded losses).

The calls are plain text (``<function=`` is no special token), so the layout sets
``markers_in_text``: output read from token ids is read as the text they decode to.  Both
exported grammars accept text followed by a call (the Lark one ends the text where the
opener starts).

Remaining differences from the template: content given as parts is written as its text
(the template fails on a list); a role other than the four is refused (the template writes
it as its own header).
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from pawlette.declare import (
    CallTurnEnd,
    Concept,
    Frame,
    Ignored,
    Layout,
    Marker,
    NamedCalls,
    Results,
    declare,
    fence,
)
from pawlette.declare.pieces import Fence
from pawlette.declare.readers import DeclaredTools, Described
from pawlette.engine.kept import Kept, marshal_key
from pawlette.engine.readers import WholeTextReader
from pawlette.errors import RequestError, UnsupportedFeature
from pawlette.types import Tool, ToolsDeclared

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import Parser, ReaderFactory

BEGIN = Marker("<|begin_of_text|>")
HEADER, HEADER_END = Marker("<|start_header_id|>"), Marker("<|end_header_id|>")
END_OF_TURN, END_OF_MESSAGE = Marker("<|eot_id|>"), Marker("<|eom_id|>")
PYTHON_TAG = "<|python_tag|>"

CUTTING_KNOWLEDGE = "\nCutting Knowledge Date: December 2023\n\n"
ITEM_START = "Use the function '"
TOOLS_INTRO = "\nYou have access to the following functions:\n\n"
TOOLS_INSTRUCTIONS = (
    "\nThink very carefully before calling functions.\nIf a you choose to call a function ONLY "
    "reply in the following format:\n<{start_tag}={function_name}>{parameters}{end_tag}\nwhere"
    "\n\nstart_tag => `<function`\nparameters => a JSON dict with the function argument name "
    "as key and function argument value as value.\nend_tag => `</function>`\n\nHere is an "
    'example,\n<function=example_function_name>{"example_name": "example_value"}</function>'
    "\n\nReminder:\n- If looking for real time information use relevant functions before "
    "falling back to brave_search\n- Function calls MUST follow the specified format, start "
    "with <function= and end with </function>\n- Required parameters MUST be specified\n- "
    "Only call one function at a time\n- Put the entire function call reply on one line\n\n"
)


def markup_escaped(text: str) -> str:
    """``text`` as Jinja's markup escapes it when added to ``|safe`` text (MarkupSafe's
    five replacements, ``&`` first)."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&#34;")
        .replace("'", "&#39;")
    )


def markup_unescaped(text: str) -> str:
    """What :func:`markup_escaped` was given (``&amp;`` last)."""
    return (
        text.replace("&#39;", "'")
        .replace("&#34;", '"')
        .replace("&gt;", ">")
        .replace("&lt;", "<")
        .replace("&amp;", "&")
    )


_DECODER = json.JSONDecoder()


def tool_items(text: str) -> tuple[list[Tool], int]:
    """The tools written as ``Use the function 'NAME' to 'DESCRIPTION'`` + the function's
    JSON + a blank line, each; and where they end.  A description may hold anything, so the
    JSON is the first one after a ``'`` and a newline whose name and description give back
    the line before it."""
    tools: list[Tool] = []
    position = 0
    while text.startswith(ITEM_START, position):
        found = None
        candidate = text.find("'\n{", position)
        while candidate >= 0 and found is None:
            try:
                value, end = _DECODER.raw_decode(text, candidate + 2)
            except json.JSONDecodeError:
                value, end = None, -1
            if (
                isinstance(value, dict)
                and isinstance(value.get("name"), str)
                and text.startswith("\n\n", end)
                and text[position : candidate + 1] == item_line(value)
            ):
                found = (Tool(name=value["name"], definition=value), end + 2)
            candidate = text.find("'\n{", candidate + 1)
        if found is None:
            break
        tools.append(found[0])
        position = found[1]
    return tools, position


def item_line(definition: dict[str, Any]) -> str:
    description = definition.get("description")
    text = description if isinstance(description, str) else ""
    return f"{ITEM_START}{definition['name']}' to '{text}'"


class _ToolsReader(WholeTextReader):
    """The generated system turn's text: the tools it declares (no message)."""

    __slots__ = ("_escaped",)

    def __init__(self, parser: Parser, escaped: bool) -> None:
        super().__init__(parser)
        self._escaped = escaped

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        if not text:
            return
        tools: list[Tool] = []
        rest = text
        if text.startswith(TOOLS_INTRO) and text.endswith(TOOLS_INSTRUCTIONS):
            items = text[len(TOOLS_INTRO) : len(text) - len(TOOLS_INSTRUCTIONS)]
            if self._escaped:
                items = markup_unescaped(items)
            tools, position = tool_items(items)
            rest = "" if position == len(items) else items[position:]
        if rest:
            self._parser.malformed(
                self._offset,
                f"tools text {rest[:60]!r}",
                "the tools as the template writes them",
                rest,
            )
            return
        self._parser.emit(ToolsDeclared(tuple(tools)))
        self._parser.context(DeclaredTools).tools = tuple(tools)


@dataclass(frozen=True)
class GeneratedSystemTurn(Concept):
    """The system turn the template writes before the messages, holding no caller message:
    ``open`` (the header and the knowledge date), the tools with ``tools_open`` before and
    ``tools_close`` after them, then ``end``.  ``escaped``: the tools' text is HTML-escaped
    as Hugging Face's renderer escapes it."""

    open: Fence
    end: Fence
    tools_open: Fence = ()
    tools_close: Fence = ()
    escaped: bool = True

    handles: ClassVar[frozenset[str]] = frozenset({"tools"})
    STATE: ClassVar[str] = "functionary.system"

    def check(self, out: Render) -> None:
        out.handled.add("tools")  # (out.handles without its call: every render asks)
        for number, tool in enumerate(out.tools):
            if tool.kind != "function":
                raise UnsupportedFeature(f"tools[{number}].type", f"{tool.kind!r}", "'function'")
            if tool.description is None:
                out.lose(
                    f"tools[{number}].function.description",
                    "none given: written as '' (the template fails on a tool without one)",
                )

    def item(self, name: str, description: str, definition: Any) -> str:
        data = json.dumps(definition, ensure_ascii=False)
        if self.escaped:  # the template's own literals are |safe: only the values escape
            name, description, data = (markup_escaped(t) for t in (name, description, data))
        return f"{ITEM_START}{name}' to '{description}'\n{data}"

    @cached_property
    def _items(self) -> Kept[tuple[str, ...]]:
        return Kept(limit=256, longest=1 << 16)

    def items(self, tools: tuple[Tool, ...]) -> tuple[str, ...]:
        """Each tool's item, kept by the tools' content (the same tools come with every
        request)."""
        return self._items.get(
            marshal_key([(tool.name, tool.definition) for tool in tools]),
            lambda: tuple(
                self.item(tool.name, tool.description or "", dict(tool.definition))
                for tool in tools
            ),
        )

    def write_start(self, out: Render) -> None:
        out.at(None, -1)
        out.fence(self.open, "header")
        if out.tools:
            out.fence(self.tools_open, "tools")
            for item in self.items(out.tools):
                out.text(item, "tools")
                out.raw("\n\n", "tools")
            out.fence(self.tools_close, "tools")
        out.fence(self.end, "header")

    def rows(self, table: Table) -> None:
        escaped = self.escaped
        make: ReaderFactory = lambda parser: _ToolsReader(parser, escaped)  # noqa: E731
        table.state(self.STATE, Described("tool declarations", make, escaped=escaped))
        table.on("outside", table.text(self.open), self.STATE)
        table.on(self.STATE, table.text(self.end), "outside")

    def jinja_start(self, out: Template) -> None:
        out.fence(self.open)
        out.out("{%- if has_tools -%}")
        out.fence(self.tools_open)
        out.out("{%- for tool in tools -%}")
        # Escaped by hand, not by markup: the template runs the same in engines without
        # markup (llama.cpp's), and Hugging Face's gives plain strings no escaping.
        escape = (
            '| replace("&", "&amp;") | replace("<", "&lt;") | replace(">", "&gt;")'
            ' | replace(\'"\', "&#34;") | replace("\'", "&#39;")'
            if self.escaped
            else ""
        )
        out.literal(ITEM_START)
        out.out(f"{{{{- tool.function.name {escape} -}}}}")
        out.literal("' to '")
        out.out(f'{{{{- (tool.function.description or "") {escape} -}}}}')
        out.literal("'\n")
        out.out(f"{{{{- tool.function | tojson {escape} -}}}}")
        out.literal("\n\n")
        out.out("{%- endfor -%}")
        out.fence(self.tools_close)
        out.out("{%- endif -%}")
        out.fence(self.end)


@dataclass(frozen=True)
class PythonRefused(CallTurnEnd):
    """:class:`~pawlette.declare.CallTurnEnd` (``<|eom_id|>``), and a call named
    ``refused_name`` refused (the template writes it otherwise)."""

    refused_name: str = "python"

    def check(self, out: Render) -> None:
        for index, message in enumerate(out.messages):
            for number, call in enumerate(message.tool_calls or ()):
                if call.name == self.refused_name:
                    raise RequestError(
                        f"messages[{index}].tool_calls[{number}].function.name",
                        repr(call.name),
                        f"another name: {out.layout.name}'s template writes a "
                        f"{self.refused_name!r} call as {PYTHON_TAG} + code, which this "
                        "format does not write",
                    )


@dataclass(frozen=True)
class FunctionaryOptions:
    """``escaped_tools``: the tools' text HTML-escaped, as Hugging Face's renderer writes
    the template (llama.cpp's writes it unescaped)."""

    escaped_tools: bool = True


def header(role: str) -> Frame:
    also = (fence(END_OF_MESSAGE),) if role == "assistant" else ()
    return Frame(
        open=fence(HEADER, role, HEADER_END, "\n\n"), end=fence(END_OF_TURN), also_end=also
    )


def layout(options: FunctionaryOptions) -> Layout:
    return Layout(
        name="functionary",
        summary="MeetKai Functionary v3.1: Llama 3 header ids, <function=NAME>{json}</function> calls",
        begin=fence(BEGIN),
        frames={
            **{role: header(role) for role in ("system", "user", "assistant")},
            "tool": header("ipython"),
        },
        concepts=(
            GeneratedSystemTurn(
                open=fence(HEADER, "system", HEADER_END, "\n\n" + CUTTING_KNOWLEDGE),
                end=fence(END_OF_TURN),
                tools_open=fence(TOOLS_INTRO),
                tools_close=fence(TOOLS_INSTRUCTIONS),
                escaped=options.escaped_tools,
            ),
            NamedCalls(
                open=fence("<function="),
                arguments_open=fence(">"),
                close=fence("</function>"),
                loose=False,
            ),
            PythonRefused(end=fence(END_OF_MESSAGE)),
            Results(),
            Ignored(("name", "reasoning")),
        ),
        options=options,
        from_options=layout,
        extra_special=(PYTHON_TAG,),
        markers_in_text=True,  # the calls are plain text: <function= is no special token
        variants={"llama.cpp": FunctionaryOptions(escaped_tools=False)},
        template_variables=lambda options: {},
    )


FORMAT = declare(layout(FunctionaryOptions()))
