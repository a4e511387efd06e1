"""``ToolsBlock.dump``: every JSON spelling writes what ``json.dumps`` writes, the first time
and from the kept texts (kept by spelling and content: blocks of other spellings sharing the
store never get each other's text)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pawlette.declare import ToolsBlock, fence

SPELLINGS = [
    (ascii, indent, separators)
    for ascii in (False, True)
    for indent in (None, 2, 4)
    for separators in (None, (",", ":"), (", ", ": "))
]
VALUES: list[Any] = [
    {"type": "function", "function": {"name": "get_weather", "description": "Météo — 天气"}},
    [{"name": "a", "parameters": {"type": "object", "properties": {"x": {"type": "number"}}}}],
    {"name": "b", "values": [1, 1.0, True, None, -0.0, "1"]},
]


def _block(ascii: bool, indent: int | None, separators: tuple[str, str] | None) -> ToolsBlock:
    return ToolsBlock(
        place="system",
        open=fence("<tools>"),
        close=fence("</tools>"),
        ascii=ascii,
        indent=indent,
        separators=separators,
    )


@pytest.mark.parametrize("value", VALUES)
def test_every_spelling_writes_json_dumps(value: Any) -> None:
    for _ in range(2):  # made, then found kept
        for ascii, indent, separators in SPELLINGS:
            expected = json.dumps(value, ensure_ascii=ascii, indent=indent, separators=separators)
            assert _block(ascii, indent, separators).dump(value) == expected


def test_equal_values_of_other_types_are_kept_apart() -> None:
    block = _block(False, 2, None)
    assert block.dump({"a": 1}) == '{\n  "a": 1\n}'
    assert block.dump({"a": True}) == '{\n  "a": true\n}'
    assert block.dump({"a": 1.0}) == '{\n  "a": 1.0\n}'
