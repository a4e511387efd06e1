"""A call's JSON arguments are an object, whatever else the tool's schema says."""

from __future__ import annotations

from typing import Any

import pytest

from pawlette.emit.turn_rules import arguments_schema


@pytest.mark.parametrize(
    ("schema", "held"),
    [
        ({}, {"type": "object"}),
        ({"properties": {"x": {}}}, {"properties": {"x": {}}, "type": "object"}),
        ({"type": ["object", "null"]}, {"type": "object"}),
        ({"type": "object"}, {"type": "object"}),
        ({"type": "string"}, {"type": "string"}),  # no object to hold it to: left as written
    ],
)
def test_arguments_are_held_to_objects(schema: dict[str, Any], held: dict[str, Any]) -> None:
    assert arguments_schema(schema) == held
