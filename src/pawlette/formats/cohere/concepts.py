"""Command R7B's own concepts: its tools listing, the default preamble before the system
text, and the response fences of an answer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pawlette.declare import Concept, ToolsBlock
from pawlette.declare.pieces import Fence
from pawlette.declare.readers import BetweenCallsReader, lead_dropped
from pawlette.emit.jinja_text import jinja_string
from pawlette.engine.json_text import json_string
from pawlette.engine.kept import Kept, marshal_key
from pawlette.engine.readers import WholeTextReader
from pawlette.types import TextDelta, Tool, ToolsDeclared

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import Parser, ReaderFactory

ITEM_INDENT = "    "
ITEM_SEPARATOR = ",\n"


def tool_item(definition: Any) -> str:
    """One tool as the template writes it: name and description between quotes as given
    (not escaped), the parameters as ``tojson``, ``"responses": null``."""
    function = definition if isinstance(definition, dict) else {}
    parameters = function.get("parameters")
    return (
        f'{ITEM_INDENT}{{"name": "{function.get("name", "")}", '
        f'"description": "{function.get("description", "")}", '
        f'"parameters": {json_string(parameters)}, "responses": null}}'
    )


_LISTINGS: Kept[str] = Kept(limit=256, longest=1 << 14)
"""Tools listings, by the tools' content."""


@dataclass(frozen=True)
class CohereTools(ToolsBlock):
    """The tools in the system turn, one item a line (``tool_item``) joined by ``,\\n``
    between ``open`` (ending ``[\\n``) and ``close`` (beginning ``\\n]``); read back as the
    function objects the items hold."""

    def block(self, out: Render, *, separated: bool = False) -> None:
        out.fence(self.separated_open if separated else self.open, "tools")
        definitions = [dict(tool.definition) for tool in out.tools]
        # (Kept by the tools' content: the same tools come with every request.)
        listing = _LISTINGS.get(
            marshal_key(definitions),
            lambda: ITEM_SEPARATOR.join(tool_item(definition) for definition in definitions),
        )
        out.text(listing, "tools")
        out.fence(self.close, "tools")

    def items_reader(self, table: Table) -> ReaderFactory:
        return _ToolItemsReader

    def jinja_block(self, out: Template, *, separated: bool = False) -> None:
        out.fence(self.separated_open if separated else self.open)
        out.out("{%- for tool in (tools or []) -%}")  # (always written: none at all too)
        out.literal(ITEM_INDENT + '{"name": "')
        out.out("{{- tool.function.name -}}")
        out.literal('", "description": "')
        out.out("{{- tool.function.description if tool.function.description is defined -}}")
        out.literal('", "parameters": ')
        out.out("{{- tool.function.parameters | tojson -}}")
        out.literal(', "responses": null}')
        out.out("{%- if not loop.last -%}")
        out.literal(ITEM_SEPARATOR)
        out.out("{%- endif -%}")
        out.out("{%- endfor -%}")
        out.fence(self.close)


class _ToolItemsReader(WholeTextReader):
    """The listing's items, read whole as one JSON array's items; text that is not one is
    kept as the system text, with a warning."""

    __slots__ = ()

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        parser.confirm_message()

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        try:
            value = json.loads("[" + text + "]") if text.strip() else []
        except ValueError:
            value = None
        if not isinstance(value, list) or not all(
            isinstance(item, dict) and isinstance(item.get("name"), str) for item in value
        ):
            self._parser.malformed(
                self._offset, f"tools listing {text[:60]!r}", "JSON tool objects", text
            )
            self._parser.emit(ToolsDeclared(()))
            self._parser.emit(TextDelta(text))
            return
        # "responses" is the template's own; an empty description is how it writes none.
        tools = tuple(
            Tool(
                item["name"],
                {
                    key: found
                    for key, found in item.items()
                    if key != "responses" and not (key == "description" and found == "")
                },
            )
            for item in value
        )
        self._parser.emit(ToolsDeclared(tools))


@dataclass(frozen=True)
class DefaultPreamble(Concept):
    """The first system turn's text begins with ``default`` (after the tools block), then,
    when the conversation's first message is a system message, ``heading`` before its text.
    Reading drops both where the turn's text begins."""

    default: Fence
    heading: Fence

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"system"})

    def write_opening(self, out: Render, index: int) -> None:
        if out.role != "system" or index > 0:
            return
        out.fence(self.default, "header")
        if index == 0 and out.message_text(index):
            out.fence(self.heading, "header")

    def rows(self, table: Table) -> None:
        default = table.text(self.default)
        both = table.text(self.default, self.heading)
        for name in ("system.body", "system.after_tools"):
            state = table.states.get(name)
            if state is not None:
                table.reader(name, lead_dropped(lead_dropped(state.reader, default), both))

    def jinja_opening(self, out: Template, role: str) -> None:
        if role != "system":
            return
        out.out("{%- if index <= 0 -%}")
        out.fence(self.default)
        text = f"text_of(message, index, {jinja_string(out.layout.name)})"
        out.fence_if(f"index == 0 and {text}", self.heading)
        out.out("{%- endif -%}")


@dataclass(frozen=True)
class Response(Concept):
    """An assistant turn without calls writes its text between ``open`` and ``close``
    (``<|START_RESPONSE|>`` … ``<|END_RESPONSE|>``); reading drops them."""

    open: Fence
    close: Fence

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    def write_opening(self, out: Render, index: int) -> None:
        if 0 <= index < len(out.messages) and not out.messages[index].tool_calls:
            out.fence(self.open, "content", trainable=True)

    def write_closing(self, out: Render, index: int) -> None:
        if 0 <= index < len(out.messages) and not out.messages[index].tool_calls:
            out.fence(self.close, "content", trainable=True)

    def rows(self, table: Table) -> None:
        table.state("assistant.responded", BetweenCallsReader, "assistant", ends=True)
        opened = table.text(self.open)
        for state in ("assistant.head", "assistant.body"):
            table.on(state, opened, "assistant.body")
        table.on("assistant.body", table.text(self.close), "assistant.responded")

    def jinja_opening(self, out: Template, role: str) -> None:
        out.fence_if("not (message.tool_calls is defined and message.tool_calls)", self.open)

    def jinja_closing(self, out: Template, role: str) -> None:
        out.fence_if("not (message.tool_calls is defined and message.tool_calls)", self.close)

    def grammar(self, turn: Turn) -> None:
        from pawlette.emit.grammar_ast import seq

        turn.content = seq(*turn.nodes(self.open), turn.content, *turn.nodes(self.close))
