"""MiniMax M1's calls: one JSON object per line inside ``<tool_calls>``::

    <tool_calls>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    {"name": "get_time", "arguments": {}}
    </tool_calls>

:class:`JsonLineCalls` is :class:`~pawlette.declare.JsonCallList` with no brackets and a
newline between the items; reading takes the JSON values one after another, any whitespace
between them (an object written over several lines too, which vLLM's reader refuses).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import JsonCallList
from pawlette.declare.call_list import CallListReader
from pawlette.engine.call_arguments import load_json

if TYPE_CHECKING:
    from pawlette.declare.table import Table


@dataclass(frozen=True)
class JsonLineCalls(JsonCallList):
    """The calls of a turn as JSON objects, one a line (see the module)."""

    list_open: str = ""
    list_close: str = ""
    item_separator: str | None = "\n"

    def rows(self, table: Table) -> None:
        keys = {role: key for role, key in self.keys}
        # No close needed: a list the turn ends in is read (vLLM reads it so).
        reader = functools.partial(JsonLinesReader, keys=keys, closed=False)
        self.opening_rows(table, self.open or (), "call.list", reader, ends=True)
        table.after_calls("call.list", table.spellings(self.loose, self.close))


class JsonLinesReader(CallListReader):
    """The JSON objects between ``<tool_calls>`` and ``</tool_calls>``, read as one list."""

    __slots__ = ()

    def _read(self, text: str, calls: list[tuple[str, str | None, str]]) -> str | None:
        decoder = json.JSONDecoder()
        pieces: list[str] = []
        position, end = 0, len(text)
        while True:
            while position < end and text[position] in " \t\r\n":
                position += 1
            if position == end:
                break
            try:
                _, after = decoder.raw_decode(text, position)
            except ValueError:
                _, problem = load_json(text[position:])
                return problem or "not one JSON object a line"
            pieces.append(text[position:after])
            position = after
        if not pieces:
            return "no call between the fences"
        return super()._read("[" + ", ".join(pieces) + "]", calls)
