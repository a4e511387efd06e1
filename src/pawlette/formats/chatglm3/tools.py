"""The tools listing: a newline and the request's function objects as one JSON list (indent
4, non-ASCII kept), after the first system message's text; with no system message, a system
turn holding only them is written (and read as no message).

The reference tokenizer dumps whatever list it is given; the seed's example and the reference
demos give it function objects.  Parsing takes the list from the first line that is ``[``
alone from which the rest of the turn is a list of function objects; trailing commas (as in
the seed's hand-written list) are accepted (:func:`.readers.split_tools_block`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ...declare import Concept
from ...engine.json_text import kept_indented_json
from ...errors import UnsupportedFeature
from ...export.templates._common import fill
from .readers import headed_text_reader

if TYPE_CHECKING:
    from ...declare.jinja import Template
    from ...declare.table import Table
    from ...declare.write import Render

OPEN = "\n"
"""Written before the tools' JSON list (:func:`.readers.split_tools_block` finds it)."""


@dataclass(frozen=True)
class ToolsListing(Concept):
    """The tools as a JSON list after the first system message's text (see the module)."""

    handles: ClassVar[frozenset[str]] = frozenset({"tools"})

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"system"})

    def check(self, out: Render) -> None:
        out.handles("tools")
        for number, tool in enumerate(out.tools):
            if tool.kind != "function":
                raise UnsupportedFeature(f"tools[{number}].type", f"{tool.kind!r}", "'function'")

    def wants_system_turn(self, out: Render) -> bool:
        return bool(out.tools)

    def write_closing(self, out: Render, index: int) -> None:
        if out.tools and index <= 0:
            # (the JSON kept by the definitions' content: a server gets the same tools with
            # every request)
            listing = kept_indented_json([dict(tool.definition) for tool in out.tools])
            out.text(OPEN + listing, "tools")

    def rows(self, table: Table) -> None:
        table.reader("system.body", headed_text_reader(tools_block=True))

    def jinja_wants_system_turn(self) -> str:
        return "has_tools"

    def jinja_setup(self, out: Template) -> None:
        out.macro(
            "tools_block",
            fill(
                "{%- macro tools_block() -%}\n@CHECK_FUNCTION_TOOLS@\n"
                "{{- '\\n' ~ (tools|map(attribute='function')|list)|tojson(indent=4) -}}\n"
                "{%- endmacro -%}",
                {},
            ),
        )

    def jinja_closing(self, out: Template, role: str) -> None:
        out.out("{%- if has_tools and index <= 0 -%}{{- tools_block() -}}{%- endif -%}")
