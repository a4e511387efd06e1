"""Solar Open's own concept: calls whose id comes before their name.

A concept of :mod:`pawlette.declare` (its share of the writer, the parse table, the Jinja
template and the turn grammar), used only by :mod:`pawlette.formats.solar`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import Fence, NamedCalls
from pawlette.declare.named_calls import CallParts, NameReader, malformed_call
from pawlette.declare.readers import next_state
from pawlette.emit.grammar_ast import CharClass, Lit, Node, Repeat
from pawlette.errors import FormatError

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.layout import Layout
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.types import ToolCall

ID_CHARACTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
"""What a grammar lets a model write as an id before a call's name: the letters, digits,
``_`` and ``-`` of OpenAI's and the models' ids."""


@dataclass(frozen=True)
class IdFirstCalls(NamedCalls):
    """:class:`pawlette.declare.NamedCalls` with the call's id before its name: ``open`` +
    ID + ``name_open`` + NAME + ``arguments_open`` (Solar Open's
    ``<|tool_call:begin|>ID<|tool_call:name|>NAME``).  ``name_open`` is required and
    ``id_open`` unused; the grammars let a model write an id of letters, digits, ``_`` and
    ``-``."""

    name_open: Fence = ()

    def validate(self, layout: Layout) -> None:
        super().validate(layout)
        if not self.name_open or self.id_open is not None:
            raise FormatError(
                f"{layout.name}: IdFirstCalls: name_open {self.name_open!r}, id_open "
                f"{self.id_open!r}; expected the fence between the id and the name as "
                "name_open, and no id_open (the id comes before the name)"
            )

    def write_name(self, out: Render, call: ToolCall, name: str) -> None:
        out.text(call.id, "tool_call", trainable=True)
        out.fence(self.name_open, "tool_call", trainable=True)
        out.text(name, "tool_call", trainable=True)

    def head_states(self, table: Table) -> str:
        table.state("call.id", IdFirstReader, "assistant", ends=True)
        for spelling in table.spellings(self.loose, self.name_open):
            table.on("call.id", spelling, "call.name")
        return "call.id"

    def jinja_name(self, out: Template) -> None:
        out.out("{{- call.id -}}")
        out.fence(self.name_open)
        out.out("{{- call.function.name -}}")

    def name_nodes(self, turn: Turn, name: str) -> list[Node]:
        return [Repeat(CharClass(ID_CHARACTERS), 1, None), *turn.nodes(self.name_open), Lit(name)]

    def forced_name(self, name: str) -> tuple[str, bool]:
        return "", False  # the id comes before the name


class IdFirstReader(NameReader):
    """A call's id, written before its name (:class:`IdFirstCalls`): the call's raw text
    starts here (gathered as :class:`NameReader` gathers a name; only the close differs)."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        parser = self._parser
        parts = parser.context(CallParts)
        text = self._text()
        parts.raw += [text, marker or ""]
        parts.offset = self._offset if self._chunks else offset
        parts.call_id = text.strip() or None
        if next_state(parser, marker) != "call.name":
            parts.raw.pop()
            malformed_call(parser, parts, "no name", "an id, then the call's name")


__all__ = ["IdFirstCalls", "IdFirstReader"]
