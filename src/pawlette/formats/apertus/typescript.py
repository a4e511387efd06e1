"""The tools as Apertus' template writes them: TypeScript-like function types.

Each tool is ``// DESCRIPTION`` then ``type NAME = (_: {`` + one line per parameter +
``}) => any;`` (``type NAME = () => any;`` when its parameters have no properties), tools
one line apart::

    // Get the current weather for a city.
    type get_weather = (_: {
    // The city name.
    city: string,
    unit?: "celsius" | "fahrenheit",
    // Days of forecast.
    days?: number
    }) => any;

A parameter is its description as a ``//`` line, its name, ``?`` when it is not required,
``: `` and its type, then `` , // default: VALUE`` when it has a ``default`` (the value as
text for an enum, as JSON otherwise).  Types: ``string``, ``number`` (numbers and
integers), ``boolean``; a string enum as ``"a" | "b"``; ``T[]`` for an array (``any[]``
without ``items``, or when the item's type is longer than 50 characters); a list of types
joined by `` | ``; `` | null`` after a ``nullable`` string or array; ``any`` for anything
else.  A nested object's members follow ``: `` after a newline and sixteen spaces (the
template's indentation, kept: it writes them so), separated by ``, ``; a ``oneOf`` writes
its variants joined by `` | `` and a newline, each with its description as ``// TEXT`` and
its default after twenty spaces.  The block is the template's byte for byte; what the
template fails on (a default that is not text beside an ``enum`` or a ``oneOf``) is
refused by :func:`check` with its path.  A tool without a description, on which the template
fails, is written with an empty one (``// ``).

:func:`tools_text` is the writer's, :data:`JINJA_MACROS` the exported template's; the two
follow the same rules branch for branch (the cross-artifact tests render both).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pawlette.declare import ToolsBlock
from pawlette.declare.tools import Place
from pawlette.engine.kept import Kept, checked_once, marshal_key
from pawlette.engine.readers import WholeTextReader
from pawlette.errors import RequestError
from pawlette.types import TextDelta

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import ReaderFactory

NESTED = "\n" + " " * 16
"""What the template writes before a nested object member's type (its macro's indentation)."""
VARIANT_DEFAULT = " " * 20
"""What the template writes before a ``oneOf`` variant's default."""
DISABLED = " disabled"
"""What follows ``Tool Capabilities:`` when the request has no tools."""
LONGEST_ITEM = 50
"""An array's item type longer than this is written ``any[]``."""


def _text(value: Any) -> str:
    """A value as Jinja's ``join`` writes it (Python's ``str``)."""
    return value if isinstance(value, str) else str(value)


def _json(value: Any) -> str:
    """A value as transformers' ``tojson`` writes it."""
    return json.dumps(value, ensure_ascii=False)


def _nullable(schema: Mapping[str, Any]) -> str:
    return " | null" if schema.get("nullable") else ""


def schema_type(schema: Mapping[str, Any]) -> str:
    """A parameter's type as the template's ``render_typescript_type`` writes it."""
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        if not items:
            return "any[]" + _nullable(schema)
        item_kind = items.get("type")
        if item_kind == "string":
            written = "string[]"
        elif item_kind in ("number", "integer"):
            written = "number[]"
        elif item_kind == "boolean":
            written = "boolean[]"
        else:
            inner = schema_type(items)
            too_long = inner == "object | object" or len(inner) > LONGEST_ITEM
            written = "any[]" if too_long else inner + "[]"
        return written + _nullable(schema)
    if isinstance(kind, list) and kind:
        return " | ".join(_text(item) for item in kind) if len(kind) > 1 else _text(kind[0])
    if schema.get("oneOf"):
        return _variants(schema["oneOf"])
    if kind == "string":
        if schema.get("enum"):
            return '"' + '" | "'.join(_text(item) for item in schema["enum"]) + '"'
        return "string" + _nullable(schema)
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "object":
        properties = schema.get("properties")
        if not properties:
            return "object"
        required = schema.get("required") or []
        members = [
            name + ("" if name in required else "?") + ": " + NESTED + schema_type(value)
            for name, value in properties.items()
        ]
        return "{\n" + ", ".join(members) + "}"
    return "any"


def _variants(variants: Sequence[Mapping[str, Any]]) -> str:
    # (The template's test for object variants sets a variable inside its loop, which Jinja
    # scopes to the loop: the variants are always written one by one.)
    written = []
    for variant in variants:
        text = schema_type(variant)
        if variant.get("description"):
            text += "// " + _text(variant["description"])
        if "default" in variant:
            text += VARIANT_DEFAULT + "// default: " + _json(variant["default"])
        written.append(text)
    return " | \n".join(written)


def _parameter(name: str, schema: Mapping[str, Any], required: Sequence[str]) -> str:
    text = "// " + _text(schema["description"]) + "\n" if schema.get("description") else ""
    text += name + ("" if name in required else "?") + ": " + schema_type(schema)
    if "default" in schema:
        default = schema["default"]
        if schema.get("enum"):
            text += ", // default: " + _text(default)
        elif schema.get("oneOf"):
            text += "// default: " + _text(default)
        else:
            text += ", // default: " + _json(default)
    return text


def function_type(definition: Mapping[str, Any]) -> str:
    """One tool: its description as a comment, then its ``type`` line(s)."""
    description = _text(definition.get("description") or "")
    text = "// " + description + "\n" + "type " + _text(definition["name"]) + " = "
    parameters = definition.get("parameters")
    if not (parameters and parameters.get("properties")):
        return text + "() => any;"
    required = parameters.get("required") or []
    lines = [
        _parameter(name, schema, required) for name, schema in parameters["properties"].items()
    ]
    return text + "(_: {\n" + ",\n".join(lines) + "\n}) => any;"


def tools_text(definitions: Sequence[Mapping[str, Any]]) -> str:
    """The tools as the template's ``render_tools`` writes them."""
    return "\n".join(function_type(definition) for definition in definitions)


def _refuse(where: str, value: Any, expected: str) -> None:
    raise RequestError(where, f"{type(value).__name__} {value!r}"[:80], expected)


def _check_schema(schema: Any, where: str) -> None:
    if not isinstance(schema, Mapping):
        _refuse(where, schema, "a JSON Schema object (Apertus' template reads its keys)")
        return
    kind = schema.get("type")
    for key in ("enum", "oneOf", "required"):
        if schema.get(key) and not isinstance(schema[key], list):
            _refuse(f"{where}.{key}", schema[key], "a list")
    if "description" in schema and not isinstance(schema["description"], str):
        _refuse(f"{where}.description", schema["description"], "a string")
    if kind == "array" and schema.get("items"):
        _check_schema(schema["items"], f"{where}.items")
    if kind == "object" and schema.get("properties"):
        properties = schema["properties"]
        if not isinstance(properties, Mapping):
            _refuse(f"{where}.properties", properties, "an object of property schemas")
        for key, value in properties.items():
            _check_schema(value, f"{where}.properties.{key}")
    for number, variant in enumerate(schema.get("oneOf") or ()):
        _check_schema(variant, f"{where}.oneOf[{number}]")


@checked_once
def check(definition: Mapping[str, Any], where: str) -> None:
    """Refuse, with its path, what the template fails on."""
    description = definition.get("description")
    if description is not None and not isinstance(description, str):
        _refuse(f"{where}.description", description, "a string")
    parameters = definition.get("parameters")
    if not parameters:
        return
    _check_schema(parameters, f"{where}.parameters")
    properties = parameters.get("properties")
    if not properties:
        return
    for name, schema in properties.items():
        has_text_default = "default" in schema and (schema.get("enum") or schema.get("oneOf"))
        if has_text_default and not isinstance(schema["default"], str):
            _refuse(
                f"{where}.parameters.properties.{name}.default",
                schema["default"],
                "a string beside an enum or a oneOf (the template adds it to text)",
            )


# ruff: noqa: E501  (the macros are Jinja, one statement a line)
JINJA_MACROS = r"""{%- macro apertus_type(schema) -%}
{%- set kind = schema.get('type') -%}
{%- set null = ' | null' if schema.get('nullable') else '' -%}
{%- if kind == 'array' -%}
{%- set items = schema.get('items') -%}
{%- if not items -%}{{- 'any[]' ~ null -}}
{%- elif items.get('type') == 'string' -%}{{- 'string[]' ~ null -}}
{%- elif items.get('type') in ['number', 'integer'] -%}{{- 'number[]' ~ null -}}
{%- elif items.get('type') == 'boolean' -%}{{- 'boolean[]' ~ null -}}
{%- else -%}{%- set inner = apertus_type(items) -%}
{%- if inner == 'object | object' or inner | length > 50 -%}{{- 'any[]' ~ null -}}{%- else -%}{{- inner ~ '[]' ~ null -}}{%- endif -%}
{%- endif -%}
{%- elif kind is sequence and kind is not string and kind is not mapping and kind | length > 0 -%}
{{- kind | join(' | ') -}}
{%- elif schema.get('oneOf') -%}
{%- for variant in schema['oneOf'] -%}
{{- apertus_type(variant) -}}
{%- if variant.get('description') -%}{{- '// ' ~ variant['description'] -}}{%- endif -%}
{%- if 'default' in variant -%}{{- '                    // default: ' ~ (variant['default'] | tojson) -}}{%- endif -%}
{%- if not loop.last -%}{{- ' | \n' -}}{%- endif -%}
{%- endfor -%}
{%- elif kind == 'string' -%}
{%- if schema.get('enum') -%}{{- '"' ~ (schema['enum'] | join('" | "')) ~ '"' -}}{%- else -%}{{- 'string' ~ null -}}{%- endif -%}
{%- elif kind in ['number', 'integer'] -%}{{- 'number' -}}
{%- elif kind == 'boolean' -%}{{- 'boolean' -}}
{%- elif kind == 'object' -%}
{%- if schema.get('properties') -%}
{{- '{\n' -}}
{%- set required = schema.get('required') or [] -%}
{%- for name, value in schema['properties'].items() -%}
{{- name ~ ('' if name in required else '?') ~ ': \n                ' ~ apertus_type(value) -}}
{%- if not loop.last -%}{{- ', ' -}}{%- endif -%}
{%- endfor -%}
{{- '}' -}}
{%- else -%}{{- 'object' -}}{%- endif -%}
{%- else -%}{{- 'any' -}}{%- endif -%}
{%- endmacro -%}
{%- macro apertus_tools(tools) -%}
{%- for tool in tools -%}
{%- set definition = tool.function if tool.function is defined else tool -%}
{{- '// ' ~ (definition.get('description') or '') ~ '\ntype ' ~ definition['name'] ~ ' = ' -}}
{%- set parameters = definition.get('parameters') -%}
{%- if parameters and parameters.get('properties') -%}
{{- '(_: {\n' -}}
{%- set required = parameters.get('required') or [] -%}
{%- for name, schema in parameters['properties'].items() -%}
{%- if schema.get('description') -%}{{- '// ' ~ schema['description'] ~ '\n' -}}{%- endif -%}
{{- name ~ ('' if name in required else '?') ~ ': ' ~ apertus_type(schema) -}}
{%- if 'default' in schema -%}
{%- if schema.get('enum') -%}{{- ', // default: ' ~ schema['default'] -}}
{%- elif schema.get('oneOf') -%}{{- '// default: ' ~ schema['default'] -}}
{%- else -%}{{- ', // default: ' ~ (schema['default'] | tojson) -}}{%- endif -%}
{%- endif -%}
{{- ',\n' if not loop.last else '\n' -}}
{%- endfor -%}
{{- '}) => any;' -}}
{%- else -%}{{- '() => any;' -}}{%- endif -%}
{%- if not loop.last -%}{{- '\n' -}}{%- endif -%}
{%- endfor -%}
{%- endmacro -%}"""


class _DeveloperReader(WholeTextReader):
    """The developer block's text after its opener: `` disabled`` or the tools' types, not
    read back into tools (a TypeScript type is not the JSON schema it was written from)."""

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        if text == DISABLED:
            return
        if text.startswith("\n// "):
            self._parser.lose_tools("TypeScript types")
            return
        self._parser.malformed(
            self._offset,
            f"developer text {text[:60]!r}",
            f"{DISABLED!r} or the tools' types",
            text,
        )
        self._parser.emit(TextDelta(text))


_TEXTS: Kept[str] = Kept(limit=256, longest=1 << 14)
"""The tools' types, by the tools' content."""


@dataclass(frozen=True)
class DeveloperBlock(ToolsBlock):
    """The developer block the template writes after the system turn of every conversation:
    ``open`` (``<|developer_start|>Deliberation: disabled\\nTool Capabilities:``), then
    `` disabled`` without tools or a newline and the tools' types (:func:`tools_text`), then
    ``close``.  Declared with ``place="after_system"``; written after the system turn (the
    conversation's first, its own or the default one) whether or not there are tools."""

    place: Place = "after_system"

    def hook_roles(self, hook: str) -> frozenset[str] | None:
        return frozenset({"system"}) if hook.endswith("_after") else frozenset()

    def check(self, out: Render) -> None:
        super().check(out)
        for number, tool in enumerate(out.tools):
            check(tool.definition, f"tools[{number}].function")

    def block(self, out: Render, *, separated: bool = False) -> None:
        out.fence(self.open, "tools")
        if out.tools:
            definitions = [tool.definition for tool in out.tools]
            # (Kept by the tools' content: the same tools come with every request.)
            text = _TEXTS.get(
                marshal_key(definitions),
                lambda: "\n" + tools_text([dict(definition) for definition in definitions]),
            )
            out.text(text, "tools")
        else:
            out.raw(DISABLED, "tools")
        out.fence(self.close, "tools")

    def write_before(self, out: Render, index: int) -> None:
        return

    def write_after(self, out: Render, index: int) -> None:
        if index <= 0:
            self.block(out)

    def items_reader(self, table: Table) -> ReaderFactory:
        return _DeveloperReader

    def jinja_setup(self, out: Template) -> None:
        super().jinja_setup(out)
        out.macro("apertus_types", JINJA_MACROS)

    def jinja_before(self, out: Template, role: str) -> None:
        return

    def jinja_after(self, out: Template, role: str) -> None:
        if role != "system":
            return
        out.out("{%- if index <= 0 -%}")
        self.jinja_block(out)
        out.out("{%- endif -%}")

    def jinja_block(self, out: Template, *, separated: bool = False) -> None:
        out.fence(self.open)
        out.out("{%- if has_tools -%}")
        out.out("{{- '\\n' ~ apertus_tools(tools) -}}")
        out.out("{%- else -%}")
        out.literal(DISABLED)
        out.out("{%- endif -%}")
        out.fence(self.close)
