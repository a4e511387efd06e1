"""MiniMax M1's calls: one JSON object per line inside ``<tool_calls>``::

    <tool_calls>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    {"name": "get_time", "arguments": {}}
    </tool_calls>

:class:`JsonLineCalls` is :class:`~pawlette.declare.JsonCallList` with no brackets and a
newline between the items (reading takes the JSON values one after another, any whitespace
between them: an object written over several lines too, which vLLM's reader refuses), and a
list the turn ends in before ``</tool_calls>`` read as well (vLLM reads it so).
"""

from __future__ import annotations

from dataclasses import dataclass

from pawlette.declare import JsonCallList


@dataclass(frozen=True)
class JsonLineCalls(JsonCallList):
    """The calls of a turn as JSON objects, one a line (see the module)."""

    list_open: str = ""
    list_close: str = ""
    item_separator: str | None = "\n"
    close_optional: bool = True
