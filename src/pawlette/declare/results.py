"""Tool results: each tool message in the ``tool`` frame, alone or grouped with its neighbours.

The format writes no call ids here: a result answers the call at its position among the
calls of the assistant message before it (parsing pairs them so: the fold's
:func:`~pawlette.engine.fold.pair_results`).

>>> from pawlette.declare import Results, fence
>>> Results(grouped=True, item_open=fence("\\n<tool_response>\\n")).grouped
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..engine.readers import ScaffoldReader
from ..errors import FormatError, RequestError
from .concept import Concept
from .pieces import Fence
from .readers import ResultIdReader, ResultReader, ResultTextReader

if TYPE_CHECKING:
    from .jinja import Template
    from .layout import Layout
    from .table import Table
    from .write import Render


@dataclass(frozen=True)
class Results(Concept):
    """Tool results in ``Layout.frames["tool"]``.

    Fields:

    - ``grouped``: consecutive tool messages share one turn (its frame opens before the
      first and ends after the last); else each is a turn of its own.
    - ``item_open`` / ``item_close``: around each result's text.
    - ``id_close``: the format writes the ``tool_call_id`` of the call a result answers
      first, then this fence (Mistral's ``[TOOL_RESULTS]ID[TOOL_CONTENT]...``); None: no
      ids (results answer calls by position).  ``id_pattern``: what a written id must match.

    A tool message's ``name`` is accepted and not written (the call it answers names it);
    the rendering records the loss.
    """

    grouped: bool = False
    item_open: Fence = ()
    item_close: Fence = ()
    id_close: Fence | None = None
    id_pattern: str | None = None

    claims: ClassVar[frozenset[str]] = frozenset({"tool"})
    handles: ClassVar[frozenset[str]] = frozenset({"tool_name"})

    def validate(self, layout: Layout) -> None:
        if "tool" not in layout.frames:
            raise FormatError(
                f"{layout.name}: Results: no 'tool' frame; expected Layout.frames['tool'], the "
                "frame of a results turn"
            )
        if self.grouped and not self.item_close:
            raise FormatError(
                f"{layout.name}: Results(grouped=True) without item_close; expected a fence "
                "that ends each result, or the results of a group run together"
            )

    # ------------------------------------------------------------------ the writer

    def turn_roles(self) -> frozenset[str]:
        return frozenset()

    def check(self, out: Render) -> None:
        out.handles("tool_name")
        pattern = None if self.id_pattern is None else re.compile(self.id_pattern)
        for index, message in enumerate(out.messages):
            if message.role != "tool":
                continue
            if message.name is not None:
                out.lose(f"messages[{index}].name", "not written (the call names the tool)")
            if self.id_close is not None:
                found = message.tool_call_id or ""
                if not found or (pattern is not None and not pattern.fullmatch(found)):
                    expected = "the id of the call it answers"
                    if self.id_pattern is not None:
                        expected += f", matching {self.id_pattern}"
                    raise RequestError(
                        f"messages[{index}].tool_call_id", repr(message.tool_call_id), expected
                    )

    def write_message(self, out: Render, index: int) -> None:
        messages = out.messages
        frame = out.frame("tool")
        first = not self.grouped or index == 0 or messages[index - 1].role != "tool"
        last = not self.grouped or index == len(messages) - 1 or messages[index + 1].role != "tool"
        out.role, out.index = "tool", index
        out.at("tool", index)
        if first:
            out.fence(frame.opener(out.previous), "header")
        if self.id_close is not None:
            out.text(out.messages[index].tool_call_id or "", "tool_result")
            out.fence(self.id_close, "tool_result")
        out.fence(self.item_open, "tool_result")
        out.text(out.message_text(index), "tool_result")
        out.fence(self.item_close, "tool_result")
        if last:
            out.fence(frame.end, "close")
            out.fence(frame.after, "separator")
            out.previous = "tool"

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        frame = table.layout.frames["tool"]
        openers = {table.text(frame.open)} | {
            table.text(pieces) for pieces in frame.open_after.values()
        }
        if self.id_close is not None:
            table.fields["tool"] = {"tool_call_id": "tool_call_id"}
            table.state("tool.id", ResultIdReader, "tool")
            table.state("tool.item", ResultTextReader, "tool", ends=not self.item_close)
            for opener in sorted(openers - {""}):
                table.on("outside", opener, "tool.id")
            table.on("tool.id", table.text(self.id_close, self.item_open), "tool.item")
        else:
            table.state("tool.item", ResultReader, "tool", ends=not self.item_close)
            for opener in sorted(openers):
                if opener + table.text(self.item_open):
                    table.on("outside", opener + table.text(self.item_open), "tool.item")
        if not self.item_close:
            return
        table.state("tool.between", ScaffoldReader, "tool", ends=True)
        table.on("tool.item", table.text(self.item_close), "tool.between")
        if self.grouped:
            table.on("tool.between", table.text(self.item_open), "tool.item")

    # ------------------------------------------------------------------ the Jinja template

    def jinja_message(self, out: Template, role: str) -> None:
        frame = out.layout.frames["tool"]
        if self.grouped:
            out.out('{%- if index == 0 or messages[index - 1].role != "tool" -%}')
            out.open_fence("tool")
            out.out("{%- endif -%}")
        else:
            out.open_fence("tool")
        if self.id_close is not None:
            out.out("{{- message.tool_call_id -}}")
            out.fence(self.id_close)
        out.fence(self.item_open)
        out.text()
        out.fence(self.item_close)
        if self.grouped:
            out.out('{%- if loop.last or messages[index + 1].role != "tool" -%}')
        out.fence(frame.end)
        out.fence(frame.after)
        out.out('{%- set ns.previous = "tool" -%}')
        if self.grouped:
            out.out("{%- endif -%}")
