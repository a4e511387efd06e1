"""Apriel 1.5's tools block: each tool as a Python literal on its own line (the template
writes ``tool|string``, Python's ``repr`` of the tool object), inside the system turn.

In a system message's turn (every one, when the request has tools), the block follows its
text after a newline and ends at ``</available_tools>``.  When the conversation does not begin
with a system message, the template first writes the block in a system turn of its own, the
call instructions after it (``close_alone``), and then, when no system message follows
anywhere, its default system turn: that turn's end and the next turn's opening close the
block too (``default_turn``), so the system turn pawlette writes there without a message is
the template's two.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pawlette.codecs.python_calls import python_literal_or_none
from pawlette.codecs.python_literals import python_literal
from pawlette.declare import ToolsBlock
from pawlette.declare.pieces import Fence
from pawlette.declare.python_calls import literal_macros
from pawlette.declare.readers import DeclaredTools, Described
from pawlette.engine.kept import Kept, marshal_key
from pawlette.engine.readers import WholeTextReader
from pawlette.types import TextDelta, Tool, ToolsDeclared

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import Parser, ReaderFactory


_LITERALS: Kept[str] = Kept(limit=256, longest=1 << 14)
"""Tools written as Python literals, by content."""


@dataclass(frozen=True)
class ReprLineTools(ToolsBlock):
    """:class:`~pawlette.declare.ToolsBlock` whose items are Python literals, one a line
    (``item_close`` is the newline), in every system turn: after a message's text and
    ``separator`` (even an empty text), or, in the turn written when the conversation does not
    begin with a system message, right after the turn's opening and closed by ``close_alone``
    (the call instructions), then ``default_turn`` when the conversation has no system
    message at all (see the module)."""

    close_alone: Fence = ()
    default_turn: Fence = ()

    def dump(self, value: Any) -> str:
        # (Kept by the value's content: the same tools come with every request.)
        return _LITERALS.get(
            marshal_key(value), lambda: python_literal(value, quote="repr", path="tools")
        )

    @staticmethod
    def has_system(out: Render) -> bool:
        return any(message.role == "system" for message in out.messages)

    def _hosts(self, out: Render, index: int) -> bool:
        return bool(out.tools) and out.role == "system"

    def write_closing(self, out: Render, index: int) -> None:
        if not self._hosts(out, index):
            return
        out.fence(self.separated_open if index >= 0 else self.open, "tools")
        for tool in out.tools:
            out.text(self.dump(self.value(tool)), "tools")
            out.fence(self.item_close, "tools")
        if index >= 0:
            out.fence(self.close, "tools")
        elif self.has_system(out):
            out.fence(self.close_alone, "tools")
        else:
            out.fence(self.close_alone + self.default_turn, "tools")

    def items_reader(self, table: Table) -> ReaderFactory:
        return Described("tool literals, one a line", ReprLinesReader)

    def rows(self, table: Table) -> None:
        super().rows(table)
        # The turn written without a system message closes with the call instructions (and
        # the default turn's end and opening, when no system message follows).
        table.on("system.tools", table.text(self.close_alone), "system.after_tools")
        table.on(
            "system.tools", table.text(self.close_alone, self.default_turn), "system.after_tools"
        )

    def jinja_setup(self, out: Template) -> None:
        super().jinja_setup(out)
        literal_macros(out)

    def jinja_closing(self, out: Template, role: str) -> None:
        if role != "system":
            return
        out.out("{%- if has_tools -%}")
        out.fence_if("index >= 0", self.separated_open, self.open)
        out.out("{%- for tool in tools -%}")
        out.out("{{- python_literal(tool, 'repr', 'tools') -}}")
        out.fence(self.item_close)
        out.out("{%- endfor -%}")
        out.out("{%- if index >= 0 -%}")
        out.fence(self.close)
        out.out(f"{{%- elif {JINJA_HAS_SYSTEM} -%}}")
        out.fence(self.close_alone)
        out.out("{%- else -%}")
        out.fence(self.close_alone + self.default_turn)
        out.out("{%- endif -%}")
        out.out("{%- endif -%}")


JINJA_HAS_SYSTEM = '(messages | selectattr("role", "in", ["system", "developer"]) | list)'
"""The template's condition: the conversation has a system message."""


class ReprLinesReader(WholeTextReader):
    """The tools block's lines, each one tool object written as a Python literal."""

    __slots__ = ()
    expected: ClassVar[str] = "one tool a line"

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        parser.confirm_message()

    def values(self, text: str) -> list[object]:
        """The block's tool objects as read (None where one is not a literal)."""
        lines = text.split("\n")[:-1] if text.endswith("\n") else [text]
        return [python_literal_or_none(line) for line in lines]

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        tools: list[Tool] = []
        for value in self.values(text):
            function = value.get("function") if isinstance(value, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                self._parser.malformed(
                    self._offset, f"tools block text {text[:60]!r}", self.expected, text
                )
                self._parser.emit(ToolsDeclared(()))
                self._parser.emit(TextDelta(text))
                return
            tools.append(Tool(function["name"], function))
        declared = self._parser.context(DeclaredTools)
        if declared.tools == tuple(tools):  # every system turn writes them: declared once
            return
        self._parser.emit(ToolsDeclared(tuple(tools)))
        declared.tools = tuple(tools)


@dataclass(frozen=True)
class ConcatenatedReprTools(ReprLineTools):
    """Apriel 1.6's block: :class:`ReprLineTools` with nothing between the items (its template
    writes ``{% for tool in tools %}{{ tool|string }}{% endfor %}``) and the same close in
    every system turn (``close_alone`` equal to ``close``, no ``default_turn``)."""

    def items_reader(self, table: Table) -> ReaderFactory:
        return Described("tool literals run together", ConcatenatedReprReader)


def split_literals(text: str) -> list[Any] | None:
    """The Python literals ``text`` is, one after another with nothing between them, each
    the shortest prefix of the rest that ends with ``}`` and reads as one (None: the text is
    not such a run)."""
    values: list[Any] = []
    start = 0
    while start < len(text):
        end = text.find("}", start)
        while end >= 0:
            value = python_literal_or_none(text[start : end + 1])
            if value is not None:
                break
            end = text.find("}", end + 1)
        if end < 0:
            return None
        values.append(value)
        start = end + 1
    return values


class ConcatenatedReprReader(ReprLinesReader):
    """The tools block's run of tool objects, each written as a Python literal."""

    __slots__ = ()
    expected: ClassVar[str] = "tool objects"

    def values(self, text: str) -> list[object]:
        return list(split_literals(text) or [None])
