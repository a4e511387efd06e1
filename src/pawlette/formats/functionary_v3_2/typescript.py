"""The tools as Functionary v3.2's template writes them: a TypeScript ``namespace functions``.

Each tool is its description as a comment, then ``type NAME = (_: {`` and one line per
parameter (``?`` after the name when it is not required) or ``type NAME = () => any;`` when
it has no properties::

    // Supported function definitions that should be called when necessary.
    namespace functions {

    // Get the weather forecast.
    type get_weather = (_: {
    // City name.
    city: string,
    // Days of forecast. Minimum=1
    days?: number,
    }) => any;

    } // namespace functions

A parameter's comment holds its description (a ``.`` added when it has none at its end),
``Default=``, ``Format=``, ``Maximum=``, ``Minimum=``, ``Maximum length=`` and ``Minimum
length=``; ``examples`` follow as comments of their own.  Types: the schema's ``type`` (a
list joined with `` | ``; ``integer`` and ``float`` written ``number``), an enum as
``"a" | "b"``, `` | null`` for ``nullable``, an object's properties nested inside ``{ }``
indented by four spaces per level, arrays as ``T[]`` (objects and enums inside them too).
Values are written as the template's Jinja writes them with ``~`` (Python's ``str``:
``True``, ``{'a': 1}``), quirks included (a parameter without ``type`` is written
``name: ,``), so the block is the template's byte for byte.  Where the template fails on a
schema, :func:`check` refuses it with its path; a boolean ``items`` schema (on which the
template fails too) is written as an array without item type.

:func:`namespace` is the writer's, :data:`JINJA_MACROS` the exported template's; the two
follow the same rules branch for branch (the cross-artifact tests render both).
"""

# ruff: noqa: E501  (the macros are the template's Jinja, one statement a line)

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pawlette.engine.kept import Kept, checked_once, marshal_key
from pawlette.errors import RequestError

NONE = "<|NONE|>"
"""What the template's helpers return for "no comment" and "no format"."""
HEADER = "// Supported function definitions that should be called when necessary.\nnamespace functions {\n\n"
FOOTER = "} // namespace functions"


def _str(value: Any) -> str:
    """A value as Jinja's ``~`` and ``|string`` write it (Python's ``str``)."""
    return value if isinstance(value, str) else str(value)


def _iterable(value: Any) -> bool:
    """Jinja's ``is iterable``: anything Python can iterate."""
    try:
        iter(value)
    except TypeError:
        return False
    return True


def _offset(depth: int) -> str:
    return "    " * depth if depth >= 1 else ""


def _convert(kind: str) -> str:
    return "number" if kind in ("integer", "float") else kind


def param_type(param: Mapping[str, Any]) -> str:
    """The schema's type as the template spells it (empty without ``type`` or ``oneOf``)."""
    if "type" in param:
        raw = param["type"]
        if _iterable(raw) and not isinstance(raw, str):
            return _convert(" | ".join(_str(item) for item in raw))
        return _convert(_str(raw))
    if "oneOf" in param:
        kinds: list[str] = []
        for item in param["oneOf"]:
            if isinstance(item, Mapping) and "type" in item and _str(item["type"]) not in kinds:
                kinds.append(_str(item["type"]))
        return _convert(" | ".join(kinds))
    return ""


def _format(param: Mapping[str, Any]) -> str:
    if "format" in param:
        return _str(param["format"])
    if "oneOf" in param:
        variants = param["oneOf"]
        last = (
            variants[-1].get("format") if variants and isinstance(variants[-1], Mapping) else None
        )
        text = ""
        for item in variants:
            if isinstance(item, Mapping) and "format" in item:
                text += _str(item["format"]) + ("" if item["format"] == last else " or ")
        return text
    return NONE


_LIMITS = (
    ("maximum", "Maximum"),
    ("minimum", "Minimum"),
    ("maxLength", "Maximum length"),
    ("minLength", "Minimum length"),
)


def _truthy(value: Any) -> bool:
    return bool(value)


def param_info(param: Mapping[str, Any]) -> str:
    """The parameter's comment line (``NONE``: it has none)."""
    kind = param.get("type", "any")
    form = _format(param)
    wanted = (
        "description" in param
        or "default" in param
        or form != NONE
        or any(_truthy(param.get(field)) for field, _ in _LIMITS)
    )
    if not wanted:
        return NONE
    text = "//"
    if "description" in param:
        description = _str(param["description"])
        text += " " + (description if description.endswith(".") else description + ".")
    if "default" in param:
        default = _str(param["default"])
        text += " Default=" + (f'"{default}"' if kind == "string" else default) + "."
    if form != NONE:
        text += " Format=" + form
    for field, label in _LIMITS:
        if field in param:
            text += " " + label + "=" + _str(param[field])
    return text


def enum_text(options: Sequence[Any]) -> str:
    """``"a" | "b" | 3``: no separator after a value equal to the last one."""
    text = ""
    for value in options:
        text += f'"{value}"' if isinstance(value, str) else _str(value)
        if options and value != options[-1]:
            text += " | "
    return text


def _examples(name: str, param: Mapping[str, Any]) -> list[Any]:
    if "examples" not in param:
        return []
    return ["Example " + name + ":", *param["examples"]]


def _comments(comment: str, examples: list[Any], offset: str) -> str:
    text = "" if comment == NONE else "\n" + offset + comment
    for example in examples:
        text += "\n" + offset + "// " + _str(example).replace("'", '"')
    return text


def _with_info(declaration: str, comment: str, examples: list[Any], depth: int) -> str:
    offset = _offset(depth)
    text = _comments(comment, examples, offset) if comment != NONE else ""
    return text + "\n" + offset + declaration


def _items(param: Mapping[str, Any]) -> Any:
    """An array's ``items``; a boolean schema (``true``: any item, ``false``: none beyond
    ``prefixItems``) as none (the template fails on it)."""
    items = param.get("items", {})
    return {} if isinstance(items, bool) else items


def _array(name: str | None, param: Mapping[str, Any], depth: int) -> str:
    offset = _offset(depth)
    items = _items(param)
    if not items:
        return "\n" + offset + (name + ": []" if name else "[]")
    kind = param_type(items)
    if kind == "object":
        head = "\n" + offset + (name + ": {" if name else "{")
        body = parameters(items.get("properties", {}), items.get("required", []), depth + 1)
        return head + body + "\n" + offset + "}[]"
    if kind == "array":
        inner = _array(None, items, depth + 1)
        if not name:
            return "\n" + inner + "[]"
        return "\n" + offset + name + ": " + inner.strip() + "[]"
    if "enum" in items:
        options = enum_text(items["enum"])
        if name is None:
            return "(" + options + ")[]"
        return "\n" + offset + name + ": (" + options + ")[]"
    if name is None:
        return "\n" + kind + "[]"
    return "\n" + offset + name + ": " + kind + "[],"


def parameters(properties: Mapping[str, Any], required: Any, depth: int = 0) -> str:
    """The lines of an object's properties (each starting with a newline)."""
    text = ""
    for name, param in properties.items():
        if not isinstance(param, Mapping):
            continue
        name = _str(name)
        comment = param_info(param)
        examples = _examples(name, param)
        declaration = name
        if _iterable(required) and name not in required:
            declaration += "?"
        kind = param_type(param)
        offset = _offset(depth)
        if kind == "object":
            text += _comments(comment, examples, offset)
            text += "\n" + offset + declaration + ": {"
            text += parameters(param.get("properties", {}), param.get("required", []), depth + 1)
            text += "\n" + offset + "},"
        elif kind == "array":
            if "type" not in _items(param):
                text += _with_info(declaration + ": [],", comment, examples, depth)
            else:
                written = _array(declaration, param, depth)
                text += _comments(comment, examples, offset)
                text += written if written.endswith(",") else written + ","
        else:
            if "enum" in param:
                kind = enum_text(param["enum"])
            if param.get("nullable"):
                kind += " | null"
            text += _with_info(declaration + ": " + kind + ",", comment, examples, depth)
    return text


def function_type(definition: Mapping[str, Any]) -> str:
    """One tool (its ``function`` object): ``""`` for one without a name, as the template."""
    name = definition.get("name")
    if not name:
        return ""
    description = definition.get("description")
    text = "// " + ("" if description is None else _str(description)) + "\n" + "type " + _str(name)
    schema = definition.get("parameters", {})
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not schema or not properties:
        return text + " = () => any;\n\n"
    return (
        text
        + " = (_: {"
        + parameters(properties, schema.get("required", []), 0)
        + "\n}) => any;\n\n"
    )


_NAMESPACES: Kept[str] = Kept(limit=256, longest=1 << 14)
"""Namespaces by the definitions' content (the same tools come with every request)."""


def namespace(definitions: Sequence[Mapping[str, Any]]) -> str:
    """The ``functions`` namespace of the request's tools (their ``function`` objects)."""
    return _NAMESPACES.get(marshal_key(definitions), lambda: _namespace(definitions))


def _namespace(definitions: Sequence[Mapping[str, Any]]) -> str:
    return HEADER + "".join(function_type(item) for item in definitions) + FOOTER


# ---------------------------------------------------------------------- refusals


def _refuse(where: str, value: Any, expected: str) -> None:
    found = f"{type(value).__name__} {_str(value)[:40]!r}"
    raise RequestError(where, found, expected)


@checked_once
def check(definition: Mapping[str, Any], where: str) -> None:
    """Refuse, naming its path (``where``: the tool's ``function``), a schema keyword of a
    type the template fails on where it reads it (its Jinja raises): a description that is no
    string, ``properties`` that are no object, ``examples``, ``enum`` or ``oneOf`` that are no
    list, a ``oneOf`` item that is a number, boolean or null, ``items`` that are none of an
    object, a list or a boolean."""
    if not definition.get("name"):
        return
    description = definition.get("description")
    if description is not None and not isinstance(description, str):
        _refuse(where + ".description", description, "a string")
    schema = definition.get("parameters", {})
    if not isinstance(schema, Mapping) or not schema.get("properties"):
        return
    _check_properties(schema["properties"], where + ".parameters.properties")


def _check_properties(properties: Any, where: str) -> None:
    if not isinstance(properties, Mapping):
        _refuse(where, properties, "an object of parameter schemas")
    for name, param in properties.items():
        if isinstance(param, Mapping):
            _check_parameter(param, f"{where}.{_str(name)}")


def _check_one_of(param: Mapping[str, Any], where: str) -> None:
    if "oneOf" not in param or ("type" in param and "format" in param):
        return  # read for the type without "type", for the format without "format"
    variants = param["oneOf"]
    if not isinstance(variants, list):
        _refuse(where + ".oneOf", variants, "a list of schemas")
    for number, item in enumerate(variants):
        if "format" not in param and not isinstance(item, (str, list, Mapping)):
            _refuse(f"{where}.oneOf[{number}]", item, "a schema")


def _check_parameter(param: Mapping[str, Any], where: str) -> None:
    if "description" in param and not isinstance(param["description"], str):
        _refuse(where + ".description", param["description"], "a string")
    if "examples" in param and not isinstance(param["examples"], list):
        _refuse(where + ".examples", param["examples"], "a list")
    _check_one_of(param, where)
    kind = param_type(param)
    if kind == "object":
        _check_properties(param.get("properties", {}), where + ".properties")
    elif kind == "array":
        _check_items(param, where)
    elif "enum" in param and not isinstance(param["enum"], list):
        _refuse(where + ".enum", param["enum"], "a list of values")


def _check_items(param: Mapping[str, Any], where: str) -> None:
    """An array's ``items``, as :func:`_array` reads them."""
    items = _items(param)
    if not isinstance(items, (Mapping, list)):
        _refuse(where + ".items", items, "a schema")
    if not isinstance(items, Mapping) or not items:
        return
    where += ".items"
    if "type" not in items and "oneOf" in items and not isinstance(items["oneOf"], list):
        _refuse(where + ".oneOf", items["oneOf"], "a list of schemas")
    kind = param_type(items)
    if kind == "object":
        _check_properties(items.get("properties", {}), where + ".properties")
    elif kind == "array":
        _check_items(items, where)
    elif "enum" in items and not isinstance(items["enum"], list):
        _refuse(where + ".enum", items["enum"], "a list of values")


JINJA_MACROS = r"""
{%- macro fv32_type(param) -%}
{%- if "type" in param -%}
{%- set raw = param["type"] -%}
{%- set kind = raw | join(" | ") if (raw is iterable and raw is not string) else raw | string -%}
{{- "number" if kind in ["integer", "float"] else kind -}}
{%- elif "oneOf" in param -%}
{%- set kind = param["oneOf"] | selectattr("type", "defined") | map(attribute="type") | map("string") | unique | join(" | ") -%}
{{- "number" if kind in ["integer", "float"] else kind -}}
{%- endif -%}
{%- endmacro -%}
{%- macro fv32_format(param) -%}
{%- if "format" in param -%}{{- param["format"] | string -}}
{%- elif "oneOf" in param -%}
{%- set variants = param["oneOf"] -%}
{%- set last = variants[-1].get("format") if (variants and variants[-1] is mapping) else none -%}
{%- for item in variants -%}
{%- if item is mapping and "format" in item -%}
{{- item["format"] | string -}}{%- if item["format"] != last -%}{{- " or " -}}{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- else -%}{{- "<|NONE|>" -}}
{%- endif -%}
{%- endmacro -%}
{%- macro fv32_info(param) -%}
{%- set form = fv32_format(param) -%}
{%- if "description" in param or "default" in param or form != "<|NONE|>" or param.get("maximum") or param.get("minimum") or param.get("maxLength") or param.get("minLength") -%}
{{- "//" -}}
{%- if "description" in param -%}
{%- set text = param["description"] | string -%}
{{- " " ~ (text if text.endswith(".") else text ~ ".") -}}
{%- endif -%}
{%- if "default" in param -%}
{%- set value = param["default"] | string -%}
{{- " Default=" ~ (('"' ~ value ~ '"') if param.get("type", "any") == "string" else value) ~ "." -}}
{%- endif -%}
{%- if form != "<|NONE|>" -%}{{- " Format=" ~ form -}}{%- endif -%}
{%- for field, label in [("maximum", "Maximum"), ("minimum", "Minimum"), ("maxLength", "Maximum length"), ("minLength", "Minimum length")] -%}
{%- if field in param -%}{{- " " ~ label ~ "=" ~ param[field] -}}{%- endif -%}
{%- endfor -%}
{%- else -%}{{- "<|NONE|>" -}}
{%- endif -%}
{%- endmacro -%}
{%- macro fv32_enum(options) -%}
{%- for value in options -%}
{{- ('"' ~ value ~ '"') if value is string else value | string -}}
{%- if value != options[-1] -%}{{- " | " -}}{%- endif -%}
{%- endfor -%}
{%- endmacro -%}
{%- macro fv32_comments(comment, examples, offset) -%}
{%- if comment != "<|NONE|>" -%}{{- "\n" ~ offset ~ comment -}}{%- endif -%}
{%- for example in examples -%}
{{- "\n" ~ offset ~ "// " ~ (example | string | replace("'", '"')) -}}
{%- endfor -%}
{%- endmacro -%}
{%- macro fv32_array(name, param, depth) -%}
{%- set offset = "    " * depth -%}
{%- set items = param.get("items", {}) -%}
{%- if items is boolean -%}{%- set items = {} -%}{%- endif -%}
{%- if not items -%}{{- "\n" ~ offset ~ ((name ~ ": []") if name else "[]") -}}
{%- else -%}
{%- set kind = fv32_type(items) -%}
{%- if kind == "object" -%}
{{- "\n" ~ offset ~ ((name ~ ": {") if name else "{") -}}
{{- fv32_parameters(items.get("properties", {}), items.get("required", []), depth + 1) -}}
{{- "\n" ~ offset ~ "}[]" -}}
{%- elif kind == "array" -%}
{%- set inner = fv32_array(none, items, depth + 1) -%}
{%- if not name -%}{{- "\n" ~ inner ~ "[]" -}}
{%- else -%}{{- "\n" ~ offset ~ name ~ ": " ~ (inner | trim) ~ "[]" -}}
{%- endif -%}
{%- elif "enum" in items -%}
{%- set options = fv32_enum(items["enum"]) -%}
{%- if name is none -%}{{- "(" ~ options ~ ")[]" -}}
{%- else -%}{{- "\n" ~ offset ~ name ~ ": (" ~ options ~ ")[]" -}}
{%- endif -%}
{%- elif name is none -%}{{- "\n" ~ kind ~ "[]" -}}
{%- else -%}{{- "\n" ~ offset ~ name ~ ": " ~ kind ~ "[]," -}}
{%- endif -%}
{%- endif -%}
{%- endmacro -%}
{%- macro fv32_parameters(properties, required, depth) -%}
{%- set offset = "    " * depth -%}
{%- for key, param in properties.items() -%}
{%- if param is mapping -%}
{%- set comment = fv32_info(param) -%}
{%- set examples = (["Example " ~ key ~ ":"] + param["examples"] | list) if "examples" in param else [] -%}
{%- set declaration = key ~ ("?" if (required is iterable and key not in required) else "") -%}
{%- set kind = fv32_type(param) -%}
{%- if kind == "object" -%}
{{- fv32_comments(comment, examples, offset) -}}
{{- "\n" ~ offset ~ declaration ~ ": {" -}}
{{- fv32_parameters(param.get("properties", {}), param.get("required", []), depth + 1) -}}
{{- "\n" ~ offset ~ "}," -}}
{%- elif kind == "array" and param.get("items", {}) is not boolean and "type" in param.get("items", {}) -%}
{%- set written = fv32_array(declaration, param, depth) -%}
{{- fv32_comments(comment, examples, offset) -}}
{{- written if written.endswith(",") else written ~ "," -}}
{%- else -%}
{%- if kind == "array" -%}{%- set kind = "[]" -%}{%- endif -%}
{%- if kind != "[]" and "enum" in param -%}{%- set kind = fv32_enum(param["enum"]) -%}{%- endif -%}
{%- if kind != "[]" and param.get("nullable") -%}{%- set kind = kind ~ " | null" -%}{%- endif -%}
{{- fv32_comments(comment, examples if comment != "<|NONE|>" else [], offset) -}}
{{- "\n" ~ offset ~ declaration ~ ": " ~ kind ~ "," -}}
{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- endmacro -%}
{%- macro fv32_namespace(tools) -%}
{{- "// Supported function definitions that should be called when necessary.\nnamespace functions {\n\n" -}}
{%- for tool in tools -%}
{%- set function = tool.function if (tool.function is defined and tool.function) else tool -%}
{%- if function.name is defined and function.name -%}
{%- set description = function.description if (function.description is defined and function.description is not none) else "" -%}
{{- "// " ~ description ~ "\ntype " ~ function.name -}}
{%- set schema = function.parameters if (function.parameters is defined and function.parameters) else {} -%}
{%- if schema and schema.properties is defined and schema.properties -%}
{%- set required = schema.required if schema.required is defined else [] -%}
{{- " = (_: {" ~ fv32_parameters(schema.properties, required, 0) ~ "\n}) => any;\n\n" -}}
{%- else -%}{{- " = () => any;\n\n" -}}
{%- endif -%}
{%- endif -%}
{%- endfor -%}
{{- "} // namespace functions" -}}
{%- endmacro -%}
"""
"""The template's macros: ``fv32_namespace(tools)`` writes :func:`namespace`."""
