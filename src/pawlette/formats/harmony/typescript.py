"""The tools as gpt-oss's template writes them: a TypeScript ``namespace functions { ... }``.

Each tool is a comment with its description and a function type whose one argument is an
object type of its parameters, each with its description as a comment, ``?`` when it is not
required, its TypeScript type and its default::

    // Get the weather forecast.
    type get_weather = (_: {
    // City name
    location: string,
    days?: number, // default: 2
    }) => any;

The types, as the template spells them (its layout quirks included, so the block is the
template's byte for byte): ``string``, ``number`` (``integer`` too), ``boolean``, an enum as
``"a" | "b"``, ``T[]`` for an array of a simple type (``any[]`` when the item type would be
long or is ``object | object``), a list of types joined with `` | ``, ``oneOf`` as its
variants, a nested object written inline with a newline and the template's indentation
before each property's type, `` | null`` for ``nullable``; anything else is ``any``.

:func:`namespace` is the writer's, :data:`JINJA_MACROS` the exported template's; the two
follow the same rules branch for branch (the cross-artifact tests render both).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...engine.json_text import json_string
from ...engine.kept import Kept, marshal_key

_SIMPLE_ITEMS = {"string": "string[]", "number": "number[]", "integer": "number[]"}
_SIMPLE_ITEMS["boolean"] = "boolean[]"
_NESTED_INDENT = "\n" + " " * 16
"""What the template writes between a nested property's ``: `` and its type."""
_DEFAULT_INDENT = " " * 20
"""What the template writes before a ``oneOf`` variant's default."""


def _present(value: Any) -> bool:
    """Jinja's truth of a value (an empty string, list or mapping is false)."""
    return value is not None and value is not False and value != "" and value != [] and value != {}


def _text(value: Any) -> str:
    """A value joined to text with ``+`` in the template (a string as it is)."""
    if isinstance(value, str):
        return value
    return json_string(value)


def _required(spec: Mapping[str, Any]) -> Sequence[Any]:
    """The names an object schema requires (a ``required`` that is no list: none)."""
    required = spec.get("required")
    return required if isinstance(required, list) else []


def typescript_type(spec: Mapping[str, Any]) -> str:
    """The TypeScript type of one JSON schema (see the module)."""
    kind = spec.get("type")
    nullable = " | null" if _present(spec.get("nullable")) else ""
    if kind == "array":
        items = spec.get("items")
        if not _present(items) or not isinstance(items, Mapping):
            return "any[]" + nullable
        item_type = items.get("type")
        simple = _SIMPLE_ITEMS.get(item_type) if isinstance(item_type, str) else None
        if simple is not None:
            return simple + nullable
        inner = typescript_type(items)
        if inner == "object | object" or len(inner) > 50:
            return "any[]" + nullable
        return inner + "[]" + nullable
    if isinstance(kind, Sequence) and not isinstance(kind, str) and kind:
        return " | ".join(str(item) for item in kind) if len(kind) > 1 else str(kind[0])
    variants = spec.get("oneOf")
    if _present(variants) and isinstance(variants, Sequence):
        # The template means to write ``any`` for several object variants, but the flag it
        # sets inside its loop does not outlive the loop (Jinja's scoping): it never does.
        written = []
        for number, variant in enumerate(variants):
            part = typescript_type(variant)
            if _present(variant.get("description")):
                part += "// " + _text(variant["description"])
            if "default" in variant:
                part += _DEFAULT_INDENT + "// default: " + json_string(variant["default"])
            if number < len(variants) - 1:
                part += " | \n"
            written.append(part)
        return "".join(written)
    if kind == "string":
        enum = spec.get("enum")
        if _present(enum) and isinstance(enum, Sequence):
            return '"' + '" | "'.join(str(item) for item in enum) + '"'
        return "string" + nullable
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "object":
        properties = spec.get("properties")
        if not _present(properties) or not isinstance(properties, Mapping):
            return "object"
        required = _required(spec)
        written = []
        for name, inner in properties.items():
            optional = "" if name in required else "?"
            written.append(f"{name}{optional}: {_NESTED_INDENT}{typescript_type(inner)}")
        return "{\n" + ", ".join(written) + "}"
    return "any"


def _parameter(
    name: str, spec: Mapping[str, Any], required: Sequence[str], defaults_json: bool
) -> str:
    line = ""
    if _present(spec.get("description")):
        line += "// " + _text(spec["description"]) + "\n"
    line += name + ("" if name in required else "?") + ": " + typescript_type(spec)
    if "default" in spec:
        default = spec["default"]
        # gpt-oss's template joins an enum's or a oneOf's default to the text as it is;
        # LLM-jp's writes it as JSON, as it writes every other default.
        text = json_string(default) if defaults_json else _text(default)
        if _present(spec.get("enum")):
            line += ", // default: " + text
        elif _present(spec.get("oneOf")):
            line += "// default: " + text
        else:
            line += ", // default: " + json_string(default)
    return line + ",\n"


def function_type(definition: Mapping[str, Any], defaults_json: bool = False) -> str:
    """One tool: its description as a comment (none when it has none: the template refuses
    such a tool) and its function type; ``defaults_json``: every default written as JSON."""
    text = ""
    if "description" in definition and definition["description"] is not None:
        text += "// " + _text(definition["description"]) + "\n"
    text += "type " + str(definition.get("name", "")) + " = "
    parameters = definition.get("parameters")
    properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
    if not _present(properties) or not isinstance(properties, Mapping):
        return text + "() => any;\n\n"
    assert isinstance(parameters, Mapping)
    required = _required(parameters)
    text += "(_: {\n"
    for name, spec in properties.items():
        schema = spec if isinstance(spec, Mapping) else {}
        text += _parameter(str(name), schema, required, defaults_json)
    return text + "}) => any;\n\n"


_NAMESPACES: Kept[str] = Kept(limit=256, longest=1 << 14)
"""Namespaces by the definitions' content (the same tools come with every request)."""


def namespace(definitions: Sequence[Mapping[str, Any]], defaults_json: bool = False) -> str:
    """The ``functions`` namespace of the request's tools (their ``function`` objects);
    ``defaults_json``: every default written as JSON (LLM-jp's template)."""
    key = marshal_key((definitions, True) if defaults_json else definitions)
    return _NAMESPACES.get(key, lambda: _namespace(definitions, defaults_json))


def _namespace(definitions: Sequence[Mapping[str, Any]], defaults_json: bool) -> str:
    body = "".join(function_type(definition, defaults_json) for definition in definitions)
    return "## functions\n\nnamespace functions {\n\n" + body + "} // namespace functions"


def _literal(text: str) -> str:
    return "{{- " + json.dumps(text) + " -}}"


_MACROS = (
    """
{%- macro harmony_text(value) -%}
{%- if value is string -%}{{- value -}}{%- else -%}{{- value | tojson -}}{%- endif -%}
{%- endmacro -%}
{%- macro harmony_type(spec) -%}
{%- set nullable = " | null" if spec.nullable is defined and spec.nullable else "" -%}
{%- if spec.type is defined and spec.type == "array" -%}
{%- if spec['items'] is defined and spec['items'] and spec['items'] is mapping -%}
{%- set item = spec['items'] -%}
{%- if item.type is defined and item.type in ["string", "number", "integer", "boolean"] -%}
{{- ("number" if item.type == "integer" else item.type) ~ "[]" ~ nullable -}}
{%- else -%}
{%- set inner = harmony_type(item) -%}
{%- if inner == "object | object" or inner | length > 50 -%}
{{- "any[]" ~ nullable -}}
{%- else -%}
{{- inner ~ "[]" ~ nullable -}}
{%- endif -%}
{%- endif -%}
{%- else -%}
{{- "any[]" ~ nullable -}}
{%- endif -%}
{%- elif spec.type is defined and spec.type is iterable and spec.type is not string"""
    """ and spec.type is not mapping and spec.type | length > 0 -%}
{{- spec.type | join(" | ") -}}
{%- elif spec.oneOf is defined and spec.oneOf -%}
{%- for variant in spec.oneOf -%}
{{- harmony_type(variant) -}}
{%- if variant.description is defined and variant.description -%}"""
    """{{- "// " ~ harmony_text(variant.description) -}}{%- endif -%}
{%- if variant.default is defined -%}"""
    f"""{_literal(_DEFAULT_INDENT + "// default: ")}"""
    """{{- variant.default | tojson -}}{%- endif -%}
{%- if not loop.last -%}{{- " | \\n" -}}{%- endif -%}
{%- endfor -%}
{%- elif spec.type is defined and spec.type == "string" -%}
{%- if spec.enum is defined and spec.enum -%}
{{- '"' ~ spec.enum | join('" | "') ~ '"' -}}
{%- else -%}
{{- "string" ~ nullable -}}
{%- endif -%}
{%- elif spec.type is defined and spec.type in ["number", "integer"] -%}
{{- "number" -}}
{%- elif spec.type is defined and spec.type == "boolean" -%}
{{- "boolean" -}}
{%- elif spec.type is defined and spec.type == "object" -%}
{%- if spec.properties is defined and spec.properties -%}
{%- set required = spec.required if spec.required is defined and spec.required is iterable"""
    """ and spec.required is not string and spec.required is not mapping else [] -%}
{{- "{\\n" -}}
{%- for name, inner in spec.properties.items() -%}
{{- name -}}{%- if name not in required -%}{{- "?" -}}{%- endif -%}"""
    f"""{_literal(": " + _NESTED_INDENT)}"""
    """{{- harmony_type(inner) -}}
{%- if not loop.last -%}{{- ", " -}}{%- endif -%}
{%- endfor -%}
{{- "}" -}}
{%- else -%}
{{- "object" -}}
{%- endif -%}
{%- else -%}
{{- "any" -}}
{%- endif -%}
{%- endmacro -%}
{%- macro harmony_namespace(tools) -%}
{{- "## functions\\n\\nnamespace functions {\\n\\n" -}}
{%- for tool in tools -%}
{%- set function = tool.function if tool.function is defined else tool -%}
{%- if function.description is defined and function.description is not none -%}
{{- "// " ~ harmony_text(function.description) ~ "\\n" -}}
{%- endif -%}
{{- "type " ~ function.name ~ " = " -}}
{%- set parameters = function.parameters if function.parameters is defined"""
    """ and function.parameters is mapping else {} -%}
{%- if parameters.properties is defined and parameters.properties"""
    """ and parameters.properties is mapping -%}
{%- set required = parameters.required if parameters.required is defined"""
    """ and parameters.required is iterable and parameters.required is not string"""
    """ and parameters.required is not mapping else [] -%}
{{- "(_: {\\n" -}}
{%- for name, spec in parameters.properties.items() -%}
{%- if spec.description is defined and spec.description -%}"""
    """{{- "// " ~ harmony_text(spec.description) ~ "\\n" -}}{%- endif -%}
{{- name -}}{%- if name not in required -%}{{- "?" -}}{%- endif -%}
{{- ": " -}}{{- harmony_type(spec) -}}
{%- if spec.default is defined -%}
{%- if spec.enum is defined and spec.enum -%}"""
    """{{- ", // default: " ~ harmony_text(spec.default) -}}
{%- elif spec.oneOf is defined and spec.oneOf -%}"""
    """{{- "// default: " ~ harmony_text(spec.default) -}}
{%- else -%}{{- ", // default: " ~ spec.default | tojson -}}
{%- endif -%}
{%- endif -%}
{{- ",\\n" -}}
{%- endfor -%}
{{- "}) => any;\\n\\n" -}}
{%- else -%}
{{- "() => any;\\n\\n" -}}
{%- endif -%}
{%- endfor -%}
{{- "} // namespace functions" -}}
{%- endmacro -%}
"""
)


def jinja_macros(defaults_json: bool = False) -> str:
    """The template's macros: ``harmony_namespace(tools)`` writes :func:`namespace` (with
    the same ``defaults_json``)."""
    if not defaults_json:
        return _MACROS
    written = _MACROS.replace(
        '{{- ", // default: " ~ harmony_text(spec.default) -}}',
        '{{- ", // default: " ~ spec.default | tojson -}}',
    ).replace(
        '{{- "// default: " ~ harmony_text(spec.default) -}}',
        '{{- "// default: " ~ spec.default | tojson -}}',
    )
    assert written.count("spec.default | tojson") == 3, "the macros' defaults moved"
    return written


JINJA_MACROS = jinja_macros()
"""The gpt-oss template's macros (see :func:`jinja_macros`)."""
