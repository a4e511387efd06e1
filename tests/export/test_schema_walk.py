"""The strict reading of tool schemas (schema_walk.closed_objects): objects that say nothing
of further properties are closed; those that allow more, or compose their properties, stay
as written."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest

from pawlette.emit.schema_walk import closed_objects

OPEN = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "when": {"type": "object", "properties": {"day": {"type": "integer"}}},
        "stops": {"type": "array", "items": {"properties": {"name": {"type": "string"}}}},
        "either": {"anyOf": [{"type": "object", "properties": {"a": {}}}, {"type": "null"}]},
        "ref": {"$ref": "#/$defs/place"},
    },
    "$defs": {"place": {"type": "object", "properties": {"lat": {"type": "number"}}}},
}


def test_every_object_that_says_nothing_is_closed() -> None:
    schema = copy.deepcopy(OPEN)
    closed = closed_objects(schema)
    assert schema == OPEN  # not changed in place
    assert closed["additionalProperties"] is False
    properties = closed["properties"]
    assert properties["when"]["additionalProperties"] is False
    assert properties["stops"]["items"]["additionalProperties"] is False  # implied object
    assert properties["either"]["anyOf"][0]["additionalProperties"] is False
    assert "additionalProperties" not in properties["either"]  # composed: its parts are
    assert "additionalProperties" not in properties["ref"]
    assert closed["$defs"]["place"]["additionalProperties"] is False
    assert "additionalProperties" not in properties["city"]
    good = {"city": "x", "when": {"day": 1}, "stops": [{"name": "a"}], "ref": {"lat": 1.0}}
    jsonschema.validate(good, closed)
    for bad in ({**good, "extra": 1}, {**good, "when": {"day": 1, "hour": 2}}):
        jsonschema.validate(bad, OPEN)  # JSON Schema's default allows it
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, closed)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "additionalProperties": True},
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {"type": "object", "patternProperties": {"^x": {}}},
        {"type": "object", "unevaluatedProperties": False},
        {"type": "object", "allOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]},
    ],
)
def test_objects_that_allow_more_or_compose_stay_as_they_are(schema: dict[str, Any]) -> None:
    closed = closed_objects(schema)
    assert closed.get("additionalProperties") == schema.get("additionalProperties")
    if "allOf" in schema:  # the parts of a several-item allOf add up: none is closed
        assert closed["allOf"] == schema["allOf"]
        jsonschema.validate({"a": 1, "b": 2}, closed)


def test_what_is_not_a_schema_is_returned_as_it_is() -> None:
    assert closed_objects(True) is True
    assert closed_objects({"type": "string"}) == {"type": "string"}
