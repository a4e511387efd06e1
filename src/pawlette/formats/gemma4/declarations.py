"""A tool as Gemma 4's template declares it: ``declaration:NAME{description:...,parameters:{...}}``.

The template's ``format_function_declaration`` writes a function's description, its
parameters' ``properties`` (each with its description, an enum of a string, the items of an
array, the properties and required names of an object, and its type in capitals),
``required`` and ``type``, all in the value syntax of :mod:`.values`; keys are sorted as
Jinja's ``dictsort`` sorts them.  Everything else in a schema (``minimum``, ``format``,
``default``, ``additionalProperties`` ...) is not written, and an object parameter without
``properties`` has its own keys written as its properties (as the template does).

Two templates of the family differ here (``interleaved``: Gemma 4's interleaved-thinking
template): the 31B-it template writes ``nullable`` before an object's properties and an
array's ``items`` only when they are a non-empty object; the interleaved one writes
``nullable`` first, an object's properties and required names in the type's place, and
``items`` after a comma that is always there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...engine.kept import Kept, marshal_key
from .values import QUOTE, sorted_items, write_value

_STANDARD = ("description", "type", "properties", "required", "nullable")


def _upper(value: Any) -> str:
    return str(value).upper() if value is not None else ""


def _quoted(text: Any) -> str:
    return QUOTE + ("" if text is None else str(text)) + QUOTE


def _required(names: Any) -> str:
    return "required:[" + ",".join(_quoted(name) for name in names or ()) + "]"


class _Commas:
    """The template's ``add_comma``: a comma before every part but the first."""

    def __init__(self, started: bool = False) -> None:
        self.started = started

    def __call__(self) -> str:
        if self.started:
            return ","
        self.started = True
        return ""


def _items(items: Mapping[str, Any], interleaved: bool) -> str:
    parts = []
    for key, value in sorted_items(items):
        if value is None:
            continue
        if key == "properties":
            inner = _parameters(value, interleaved) if isinstance(value, Mapping) else ""
            parts.append("properties:{" + inner + "}")
        elif key == "required":
            parts.append(_required(value))
        elif key == "type":
            if isinstance(value, str):
                parts.append("type:" + write_value(value.upper(), quote_keys=True))
            else:
                upper = [str(item).upper() for item in value]
                parts.append("type:" + write_value(upper, quote_keys=True))
        else:
            parts.append(key + ":" + write_value(value, quote_keys=True))
    return "items:{" + ",".join(parts) + "}"


def _object_parts(value: Mapping[str, Any], interleaved: bool, comma: _Commas) -> str:
    text = ""
    properties = value.get("properties")
    if interleaved:
        text += ",properties:{"
        if isinstance(properties, Mapping):
            text += _parameters(properties, interleaved)
        else:
            text += _parameters(value, interleaved)
        text += "}"
        if value.get("required"):
            text += "," + _required(value.get("required"))
        return text
    text += comma() + "properties:{"
    text += _parameters(properties if isinstance(properties, Mapping) else value, interleaved)
    text += "}"
    if value.get("required"):
        text += comma() + _required(value.get("required"))
    return text


def _parameter(key: str, value: Mapping[str, Any], interleaved: bool) -> str:
    text = key + ":{"
    comma = _Commas()
    if value.get("description"):
        text += "description:" + _quoted(value["description"])
        comma.started = True
    if interleaved and value.get("nullable"):
        text += comma() + "nullable:true"
    kind = _upper(value.get("type"))
    if kind == "STRING":
        if value.get("enum"):
            text += comma() + "enum:" + write_value(value["enum"], quote_keys=True)
    elif kind == "OBJECT" and interleaved:
        text += _object_parts(value, interleaved, comma)
    elif kind == "ARRAY":
        items = value.get("items")
        if interleaved:
            if isinstance(items, Mapping) and items:
                text += "," + _items(items, interleaved)
        elif isinstance(items, Mapping) and items:
            text += comma() + _items(items, interleaved)
    if not interleaved:
        if value.get("nullable"):
            text += comma() + "nullable:true"
        if kind == "OBJECT":
            text += _object_parts(value, interleaved, comma)
    return text + comma() + "type:" + _quoted(kind) + "}"


def _parameters(properties: Mapping[str, Any], interleaved: bool) -> str:
    """The template's ``format_parameters``: each property that is not a schema keyword."""
    return ",".join(
        _parameter(key, value if isinstance(value, Mapping) else {}, interleaved)
        for key, value in sorted_items(properties)
        if key not in _STANDARD
    )


_DECLARATIONS: Kept[str] = Kept(limit=256, longest=1 << 14)
"""Declarations by the function's content and the template (every request's check writes its
tools' declarations again)."""


def declaration(function: Mapping[str, Any], *, interleaved: bool = False) -> str:
    """One tool's declaration (OpenAI's ``function`` object), as the template writes it
    between ``<|tool>`` and ``<tool|>``."""
    key = marshal_key(function)
    return _DECLARATIONS.get(
        None if key is None else (b"i" if interleaved else b"-") + key,
        lambda: _written(function, interleaved),
    )


def _written(function: Mapping[str, Any], interleaved: bool) -> str:
    text = "declaration:" + str(function.get("name", "")) + "{description:"
    text += _quoted(function.get("description"))
    parameters = function.get("parameters")
    if parameters:
        text += ",parameters:{"
        if parameters.get("properties"):
            text += "properties:{" + _parameters(parameters["properties"], interleaved) + "},"
        if parameters.get("required"):
            text += _required(parameters["required"]) + ","
        if parameters.get("type"):
            text += "type:" + _quoted(_upper(parameters["type"])) + "}"
    if "response" in function:
        response = function["response"] or {}
        text += ",response:{"
        if response.get("description"):
            text += "description:" + _quoted(response["description"]) + ","
        if _upper(response.get("type")) == "OBJECT":
            text += "type:" + _quoted(_upper(response.get("type"))) + "}"
    return (text + "}").strip()
