"""IFM-K2-Horizon's Markdown presentation of tools, its template's default.

Each tool (its function object) is written as::

    ## get_weather
    Get the current weather for a city.

    **Parameters**
    - `city` *(string, required)* - The city name.
    - `unit` *(string)*
      - Allowed values: `celsius`, `fahrenheit`
    - `days` *(integer)* - Days of forecast.
      - minimum: 1

the tools joined by a newline, each opening with one.  A parameter's line gives its name,
its type (``array of string``, ``string or null``, ``anyOf[integer or string]``, a ``$ref``'s
definition name), ``required`` when the parameters list it, and its description (later lines
indented under it); below it, indented two more spaces: its allowed values and its default
as literals (strings in backquotes, newlines as ``\\n``; other values as Python's literals
with every run of whitespace in a string made one space: ``['a', 1, True]``), then its
additional properties, its properties (each a parameter line), its items, its ``oneOf`` and
``anyOf`` variants (numbered from 1), its pattern properties, its returns, then every other
key as ``KEY: VALUE``.  Nested schemas give their description as a ``Description`` line.
A ``$ref`` to ``#/$defs/NAME`` (or ``#/definitions/NAME``) of the parameters is written as
the definition with the referring schema's keys over it, each definition at most once per
tool (later references give its name alone).  Parameters without properties are ``- None``,
unless they are one ``oneOf``/``anyOf``/``items`` schema, then written as one.  A function's
``returns`` (else its ``response``) follows as ``**Returns**``.

When any tool holds what the pretty presentations do not write, every tool is written as
JSON instead (:func:`.schema.presentable`); where the template raises on a schema, the
format refuses (:func:`.schema.problem`, which also refuses a description at the function's
top that is no text: the Markdown joins it to text).  A tool without ``parameters``, which
the template refuses too, is written as one without parameters (``- None``), as the JSON
presentation writes such a tool where the template refuses it as well.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .schema import RENDERED_KEYS, References, python_literal, schema_type

__all__ = ["listing", "tool_markdown", "type_text"]


# ---------------------------------------------------------------------- values


def _plain_value(value: Any) -> str:
    """A value in a ``KEY: VALUE`` line: text as it is, the empty text as ``""``."""
    if isinstance(value, str):
        return value if value else '""'
    return python_literal(value)


def _literal(value: Any) -> str:
    """An allowed value or a default: text in backquotes (newlines as ``\\n``)."""
    if isinstance(value, str):
        return "`" + value.replace("\n", "\\n") + "`" if value else '""'
    return "`" + python_literal(value) + "`"


def type_text(spec: Any) -> str:
    """A schema's type as the presentation names it."""
    return schema_type(spec, " or ", "array of ", "", booleans=True)


# ---------------------------------------------------------------------- one tool


class _Tool(References):
    """One tool's Markdown writer: its definitions (:class:`.schema.References`) and the
    text written."""

    def __init__(self, parameters: Any) -> None:
        super().__init__(parameters)
        self.parts: list[str] = []

    def write(self, text: str) -> None:
        self.parts.append(text)

    # ------------------------------------------------------------------ schemas

    def parameter(self, name: str, spec: Any, required: Any, indent: str) -> None:
        spec = self.inline(spec)
        self.write(f"\n{indent}- `{name}` *({type_text(spec)}")
        if name in (required or []):
            self.write(", required")
        self.write(")*")
        if not isinstance(spec, dict):
            self.details(spec, indent, values=False)
            return
        if spec.get("description"):
            description = str(spec["description"])  # (Jinja's replace takes any value's str)
            self.write(" - " + description.replace("\n", "\n" + indent + "  "))
        if spec.get("enum"):
            self.write(f"\n{indent}  - Allowed values: " + ", ".join(map(_literal, spec["enum"])))
        if "default" in spec:
            self.write(f"\n{indent}  - Default: " + _literal(spec["default"]))
        self.details(spec, indent, values=False)

    def details(self, spec: Any, indent: str, *, values: bool) -> None:
        spec = self.inline(spec)
        if isinstance(spec, dict):
            self.annotations(spec, indent, "  ", values=values)
            self.structure(spec, indent)
            self.extras(spec, indent + "  ")
        elif spec is not True and spec is not False:
            self.write(f"\n{indent}  - Value: " + _literal(spec))

    def annotations(self, spec: dict[str, Any], indent: str, step: str, *, values: bool) -> None:
        """Description, allowed values, default (``values``), additional properties; each a
        line ``step`` deeper than ``indent``."""
        lead = f"\n{indent}{step}- "
        if values and "description" in spec:
            # (continued lines four spaces in from the schema's own indent, at any depth)
            text = str(spec["description"]).replace("\n", "\n" + indent + "    ")
            self.write(lead + "Description: " + _plain_value(text))
        if values and "enum" in spec:
            self.write(lead + "Allowed values: " + ", ".join(map(_literal, spec["enum"])))
        if values and "default" in spec:
            self.write(lead + "Default: " + _literal(spec["default"]))
        if "additionalProperties" in spec:
            extra = spec["additionalProperties"]
            if isinstance(extra, dict):
                self.write(lead + f"Additional properties *({type_text(extra)})*")
                self.details(extra, indent + step, values=True)
            else:
                self.write(lead + "Additional properties: " + _plain_value(extra))

    def structure(self, spec: dict[str, Any], indent: str) -> None:
        if spec.get("properties"):
            for name, child in spec["properties"].items():
                self.parameter(name, child, spec.get("required"), indent + "  ")
        self.nested(spec, indent + "  ")

    def nested(self, spec: dict[str, Any], inner: str) -> None:
        """Items, variants, pattern properties and returns, their lines at ``inner``."""
        if "items" in spec:
            items = spec["items"]
            if isinstance(items, dict):
                self.write(f"\n{inner}- Items *({type_text(items)})*")
                self.details(items, inner, values=True)
            else:
                self.write(f"\n{inner}- Items: " + _plain_value(items))
        for key in ("oneOf", "anyOf"):
            if spec.get(key):
                self.write(f"\n{inner}- {key}:")
                for number, variant in enumerate(spec[key], 1):
                    self.write(f"\n{inner}  - Variant {number} *({type_text(variant)})*")
                    self.details(variant, inner + "  ", values=True)
        patterns = spec.get("patternProperties")
        if isinstance(patterns, dict):
            self.write(f"\n{inner}- Pattern properties:")
            for pattern, child in patterns.items():
                if isinstance(child, dict):
                    self.write(f"\n{inner}  - `{pattern}` *({type_text(child)})*")
                    self.details(child, inner + "  ", values=True)
                else:
                    self.write(f"\n{inner}  - `{pattern}`: " + _plain_value(child))
        elif "patternProperties" in spec:
            self.write(f"\n{inner}- Pattern properties: " + _plain_value(patterns))
        if isinstance(spec.get("returns"), dict):
            self.write(f"\n{inner}- Returns *({type_text(spec['returns'])})*")
            self.details(spec["returns"], inner, values=True)
        elif "returns" in spec:
            self.write(f"\n{inner}- Returns: " + _plain_value(spec["returns"]))

    def extras(self, spec: dict[str, Any], inner: str) -> None:
        for key, value in spec.items():
            if key not in RENDERED_KEYS:
                self.write(f"\n{inner}- {key}: " + _plain_value(value))

    def parameters_schema(self, spec: Any) -> None:
        """Parameters without properties that are one schema (variants or items)."""
        spec = self.inline(spec)
        if not isinstance(spec, dict):
            return
        self.annotations(spec, "", "", values=True)
        self.nested(spec, "")
        self.extras(spec, "")


def tool_markdown(definition: Mapping[str, Any]) -> str:
    """One tool (its function object) as the presentation writes it, from its ``\\n##``."""
    writer = _Tool(definition.get("parameters"))
    parameters = writer.root(definition.get("parameters"))
    writer.write("\n## " + str(definition.get("name")))
    if definition.get("description"):
        writer.write("\n" + str(definition["description"]))
    writer.write("\n\n**Parameters**")
    if parameters and isinstance(parameters, dict) and parameters.get("properties"):
        required = parameters.get("required")
        for name, spec in parameters["properties"].items():
            writer.parameter(name, spec, required, "")
    elif isinstance(parameters, dict) and (
        parameters.get("oneOf") or parameters.get("anyOf") or "items" in parameters
    ):
        writer.parameters_schema(parameters)
    else:
        writer.write("\n- None")
    returns_key = "returns" if "returns" in definition else "response"
    if returns_key in definition:
        returns = definition[returns_key]
        if isinstance(returns, dict):
            writer.write(f"\n\n**Returns**\n- Return *({type_text(returns)})*")
            writer.details(returns, "", values=True)
        else:
            writer.write("\n\n**Returns**\n- " + _plain_value(returns))
    return "".join(writer.parts)


def listing(definitions: Iterable[Mapping[str, Any]]) -> str:
    """The tools (their function objects) as Markdown, one after another."""
    return "\n".join(map(tool_markdown, definitions))
