"""Mistral Nemo's tool results: the call's id after the result's text,
``{"content": TEXT, "call_id": "ID"}``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import Fence, Results
from pawlette.declare.table import begin
from pawlette.engine.readers import ScaffoldReader, WholeTextReader
from pawlette.errors import FormatError
from pawlette.types import MetadataItem, TextDelta

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.layout import Layout
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render


@dataclass(frozen=True)
class IdAfterResults(Results):
    """:class:`pawlette.declare.Results` with each result's ``tool_call_id`` written after
    its text, between ``id_after`` and ``item_close`` (Mistral Nemo's ``{"content": TEXT,
    "call_id": "ID"}``); ``id_close`` is then None (the id is written once)."""

    id_after: Fence = ()

    def validate(self, layout: Layout) -> None:
        super().validate(layout)
        if not self.id_after or self.id_close is not None or not self.item_close:
            raise FormatError(
                f"{layout.name}: IdAfterResults.id_after empty, or with id_close or without "
                "item_close; expected the id written once, after the text and before an "
                "item_close fence"
            )

    def writes_ids(self) -> bool:
        return True

    def write_after_text(self, out: Render, index: int) -> None:
        out.fence(self.id_after, "tool_result")
        out.text(out.messages[index].tool_call_id or "", "tool_result")

    def jinja_after_text(self, out: Template) -> None:
        out.fence(self.id_after)
        out.out("{{- message.tool_call_id -}}")

    def rows(self, table: Table) -> None:
        frame = table.layout.frames["tool"]
        openers = {table.text(frame.open)} | {
            table.text(pieces) for pieces in frame.open_after.values()
        }
        table.fields["tool"] = {"tool_call_id": "tool_call_id"}
        table.state("tool.item", ResultBeforeIdReader, "tool")
        table.state("tool.id", ResultIdAfterReader, "tool")
        for opener in sorted(openers):
            if opener + table.text(self.item_open):
                table.on("outside", opener + table.text(self.item_open), "tool.item", begin("tool"))
        table.on("tool.item", table.text(self.id_after), "tool.id")
        table.state("tool.between", ScaffoldReader, "tool", ends=True)
        table.on("tool.id", table.text(self.item_close), "tool.between")
        if self.grouped:
            table.on("tool.between", table.text(self.item_open), "tool.item", begin("tool"))


class ResultBeforeIdReader(WholeTextReader):
    """A tool result's text before its id (the row into its state begins the message, the
    id's reader ends it)."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        self._parser.emit(TextDelta(self._text()))


class ResultIdAfterReader(WholeTextReader):
    """The id written after a tool result's text: the tool message ends with it."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        self._parser.emit(MetadataItem("tool_call_id", self._text().strip()))
        self._parser.end_message()
