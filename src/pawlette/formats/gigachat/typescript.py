"""The tools as GigaChat 3's template writes them: a TypeScript ``namespace functions``.

Each tool is its description's non-blank lines as ``//`` comments, then ``type NAME = (_: {``
+ one line per property + ``}) => any;`` (``type NAME = () => any;`` when its parameters
have no properties), tools one blank line apart::

    namespace functions {
    // Get the weather.
    type get_weather = (_: {
      // City name.
      city: string,
      days?: number, // default: 1
    }) => any;

    } // namespace functions

A property's comments are its description's non-blank lines, then ``format``, ``maxItems``,
``maximum``, ``minItems``, ``minimum`` and ``pattern`` in the order the schema gives them
(``// key: "text"`` for a string, ``// key: VALUE`` otherwise); ``?`` follows the name of a
property that is not required; `` // default: ...`` follows a property with a ``default``.
Types: an object's properties nested two spaces deeper, ``[key: string]: T`` for its
``additionalProperties``; a string enum as ``"a" | "b"``, ``Date`` for a string whose
``format`` is ``date`` or ``date-time``; ``number`` for numbers and integers (their enum as
``1 | 2``); ``boolean``; ``T[]`` for an array (``Array<any>`` without ``items``); ``any``
for anything else (a ``type`` given as a list included).  Values are written as Jinja's
``~`` writes them (Python's ``str``: ``True``, ``['a']``), so the block is the template's byte
for byte; a ``return_parameters`` schema with properties is the function's return type.
Where the template fails on a schema (a schema that is no object, a description that is no
string), :func:`check` refuses it with its path.

:func:`namespace` is the writer's, :data:`JINJA_MACROS` the exported template's; the two
follow the same rules branch for branch (the cross-artifact tests render both).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pawlette.declare import ToolsBlock
from pawlette.engine.kept import Kept, checked_once, marshal_key
from pawlette.engine.readers import WholeTextReader
from pawlette.errors import RequestError
from pawlette.types import TextDelta

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import ReaderFactory

HEADER = "namespace functions {"
FOOTER = "} // namespace functions"
NOTED = ("format", "maxItems", "maximum", "minItems", "minimum", "pattern")
"""The schema keywords the template writes as comments above a property."""


def _str(value: Any) -> str:
    """A value as Jinja's ``~`` writes it (Python's ``str``)."""
    return value if isinstance(value, str) else str(value)


def _comment_lines(text: str, indent: str) -> str:
    return "".join(indent + "// " + line + "\n" for line in text.split("\n") if line.strip())


def _property(key: str, value: Mapping[str, Any], required: Any, indent: str) -> str:
    text = _comment_lines(value["description"], indent) if "description" in value else ""
    for noted, noted_value in value.items():
        if noted in NOTED:
            shown = f'"{noted_value}"' if isinstance(noted_value, str) else _str(noted_value)
            text += indent + "// " + noted + ": " + shown + "\n"
    text += indent + key + ("" if key in required else "?") + ": "
    text += schema_type(value, indent + "  ") + ","
    if "default" in value or "defalut_value" in value:  # the template's spelling, read too
        default = value.get("default", value.get("defalut_value"))
        text += f' // default: "{default}"' if isinstance(default, str) else " // default: "
        text += "" if isinstance(default, str) else _str(default)
    return text + "\n"


def _object(schema: Mapping[str, Any], indent: str) -> str:
    text = "{\n"
    required = schema.get("required", [])
    for key, value in schema.get("properties", {}).items():
        text += _property(key, value, required, indent)
    extra = schema.get("additionalProperties", None)
    extra_type: Mapping[str, Any] | None = None
    if "additionalProperties" in schema:
        if isinstance(extra, Mapping):
            extra_type = extra
        elif extra == True:  # noqa: E712  (Jinja's ``== true``: 1 and 1.0 are true too)
            extra_type = {"type": "any"}
    if extra_type is not None:
        text += indent + "[key: string]: " + schema_type(extra_type, indent + "  ") + "\n"
    return text + indent[: len(indent) - 2] + "}"


def schema_type(schema: Mapping[str, Any], indent: str = "") -> str:
    """The schema as the template's ``json_schema_to_typescript`` writes it."""
    kind = schema.get("type")
    if kind == "object":
        return _object(schema, indent)
    if kind == "string":
        if schema.get("enum"):
            return " | ".join(f'"{_str(option)}"' for option in schema["enum"])
        return "Date" if schema.get("format", "none") in ("date-time", "date") else "string"
    if kind in ("number", "integer"):
        return (
            " | ".join(_str(option) for option in schema["enum"])
            if schema.get("enum")
            else "number"
        )
    if kind == "boolean":
        return "boolean"
    if kind == "array":
        return schema_type(schema["items"], indent) + "[]" if "items" in schema else "Array<any>"
    return "any"


def function_type(definition: Mapping[str, Any]) -> str:
    """One tool: its description's lines as comments, then its ``type`` line."""
    lines = []
    description = definition.get("description")
    if description:
        lines += ["// " + line for line in description.split("\n") if line.strip()]
    name = _str(definition.get("name"))
    parameters = definition.get("parameters")
    if parameters and parameters.get("properties"):
        body = "type " + name + " = (_: " + schema_type(parameters, "  ") + ") => "
    else:
        body = "type " + name + " = () => "
    returns = definition.get("return_parameters")
    if returns and returns.get("properties"):
        body += schema_type(returns, "  ")
    else:
        body += "any"
    return "\n".join([*lines, body + ";\n"])


def namespace(definitions: Sequence[Mapping[str, Any]]) -> str:
    """The tools' namespace as the template writes it (without the blank line after it)."""
    return "\n".join([HEADER, *(function_type(item) for item in definitions), FOOTER])


def _refuse(where: str, value: Any, expected: str) -> None:
    raise RequestError(where, f"{type(value).__name__} {value!r}"[:80], expected)


def _check_schema(schema: Any, where: str) -> None:
    if not isinstance(schema, Mapping):
        _refuse(where, schema, "a JSON Schema object (GigaChat's template reads its keys)")
        return
    kind = schema.get("type")
    enum = schema.get("enum")
    if enum and not isinstance(enum, list):  # written joined by " | "
        _refuse(f"{where}.enum", enum, "a list of values")
    if kind == "object":
        required = schema.get("required", [])
        if not isinstance(required, list):  # each property asks whether it is in it
            _refuse(f"{where}.required", required, "a list of property names")
        properties = schema.get("properties", {})
        if not isinstance(properties, Mapping):
            _refuse(f"{where}.properties", properties, "an object of property schemas")
        for key, value in properties.items():
            _check_schema(value, f"{where}.properties.{key}")
            description = value.get("description")
            if "description" in value and not isinstance(description, str):
                _refuse(f"{where}.properties.{key}.description", description, "a string")
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            _check_schema(extra, f"{where}.additionalProperties")
    if kind == "array" and "items" in schema:
        _check_schema(schema["items"], f"{where}.items")


@checked_once
def check(definition: Mapping[str, Any], where: str) -> None:
    """Refuse, with its path, what the template fails on."""
    description = definition.get("description")
    if description and not isinstance(description, str):
        _refuse(f"{where}.description", description, "a string")
    for key in ("parameters", "return_parameters"):
        value = definition.get(key)
        if value:
            _check_schema(value, f"{where}.{key}")


class _NamespaceReader(WholeTextReader):
    """The tools turn's text: the tools' namespace, not read back into tools (a TypeScript
    type is not the JSON schema it was written from)."""

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        if text.startswith(HEADER) and text.rstrip().endswith(FOOTER):
            if text[len(HEADER) :].rstrip()[: -len(FOOTER)].strip():
                self._parser.lose_tools("TypeScript types")
            return
        self._parser.malformed(
            self._offset,
            f"tools text {text[:60]!r}",
            "the tools' namespace as the template writes it",
            text,
        )
        self._parser.emit(TextDelta(text))


_NAMESPACES: Kept[str] = Kept(limit=256, longest=1 << 14)
"""The tools' namespaces, by the tools' content."""


@dataclass(frozen=True)
class TypeScriptTools(ToolsBlock):
    """:class:`~pawlette.declare.ToolsBlock` whose tools are one TypeScript namespace
    (:func:`namespace`) instead of JSON items."""

    def check(self, out: Render) -> None:
        super().check(out)
        for number, tool in enumerate(out.tools):
            check(tool.definition, f"tools[{number}].function")

    def block(self, out: Render, *, separated: bool = False) -> None:
        out.fence(self.open, "tools")
        definitions = [tool.definition for tool in out.tools]
        # (Kept by the tools' content: the same tools come with every request.)
        text = _NAMESPACES.get(
            marshal_key(definitions),
            lambda: namespace([dict(definition) for definition in definitions]),
        )
        out.text(text, "tools")
        out.fence(self.close, "tools")

    def items_reader(self, table: Table) -> ReaderFactory:
        return _NamespaceReader

    def jinja_setup(self, out: Template) -> None:
        super().jinja_setup(out)
        out.macro("gigachat_ts", JINJA_MACROS)

    def jinja_block(self, out: Template, *, separated: bool = False) -> None:
        out.fence(self.open)
        out.out("{{- gigachat_namespace(tools) -}}")
        out.fence(self.close)


# ruff: noqa: E501  (the macros are Jinja, one statement a line)
JINJA_MACROS = r"""{%- macro gigachat_comments(text, indent) -%}
{%- for line in text.split('\n') -%}{%- if line.strip() -%}{{- indent ~ '// ' ~ line ~ '\n' -}}{%- endif -%}{%- endfor -%}
{%- endmacro -%}
{%- macro gigachat_type(schema, indent) -%}
{%- set kind = schema.get('type') -%}
{%- if kind == 'object' -%}
{{- '{\n' -}}
{%- set required = schema.get('required', []) -%}
{%- for key, value in schema.get('properties', {}).items() -%}
{%- if 'description' in value -%}{{- gigachat_comments(value['description'], indent) -}}{%- endif -%}
{%- for noted, noted_value in value.items() -%}{%- if noted in ['format', 'maxItems', 'maximum', 'minItems', 'minimum', 'pattern'] -%}
{%- if noted_value is string -%}{{- indent ~ '// ' ~ noted ~ ': "' ~ noted_value ~ '"\n' -}}{%- else -%}{{- indent ~ '// ' ~ noted ~ ': ' ~ noted_value ~ '\n' -}}{%- endif -%}
{%- endif -%}{%- endfor -%}
{{- indent ~ key ~ ('' if key in required else '?') ~ ': ' ~ gigachat_type(value, indent ~ '  ') ~ ',' -}}
{%- if 'default' in value or 'defalut_value' in value -%}{%- set default = value.get('default', value.get('defalut_value')) -%}
{%- if default is string -%}{{- ' // default: "' ~ default ~ '"' -}}{%- else -%}{{- ' // default: ' ~ default -}}{%- endif -%}
{%- endif -%}
{{- '\n' -}}
{%- endfor -%}
{%- set extra = none -%}
{%- if schema.additionalProperties is defined -%}
{%- if schema.additionalProperties is mapping -%}{%- set extra = schema.additionalProperties -%}{%- elif schema.additionalProperties == true -%}{%- set extra = {'type': 'any'} -%}{%- endif -%}
{%- endif -%}
{%- if extra is not none -%}{{- indent ~ '[key: string]: ' ~ gigachat_type(extra, indent ~ '  ') ~ '\n' -}}{%- endif -%}
{{- indent[:(indent | length - 2)] ~ '}' -}}
{%- elif kind == 'string' -%}
{%- if schema.get('enum') -%}{%- set quoted = namespace(texts=[]) -%}{%- for option in schema['enum'] -%}{%- set quoted.texts = quoted.texts + ['"' ~ option ~ '"'] -%}{%- endfor -%}{{- quoted.texts | join(' | ') -}}
{%- elif schema.get('format', 'none') in ['date-time', 'date'] -%}{{- 'Date' -}}{%- else -%}{{- 'string' -}}{%- endif -%}
{%- elif kind in ['number', 'integer'] -%}
{%- if schema.get('enum') -%}{{- schema['enum'] | join(' | ') -}}{%- else -%}{{- 'number' -}}{%- endif -%}
{%- elif kind == 'boolean' -%}{{- 'boolean' -}}
{%- elif kind == 'array' -%}
{%- if 'items' in schema -%}{{- gigachat_type(schema['items'], indent) ~ '[]' -}}{%- else -%}{{- 'Array<any>' -}}{%- endif -%}
{%- else -%}{{- 'any' -}}{%- endif -%}
{%- endmacro -%}
{%- macro gigachat_namespace(tools) -%}
{{- 'namespace functions {' -}}
{%- for tool in tools -%}
{%- set definition = tool.function if tool.function is defined else tool -%}
{{- '\n' -}}
{%- if definition.get('description') -%}{%- for line in definition['description'].split('\n') -%}{%- if line.strip() -%}{{- '// ' ~ line ~ '\n' -}}{%- endif -%}{%- endfor -%}{%- endif -%}
{%- set parameters = definition.get('parameters') -%}
{%- if parameters and parameters.get('properties') -%}{{- 'type ' ~ definition.name ~ ' = (_: ' ~ gigachat_type(parameters, '  ') ~ ') => ' -}}
{%- else -%}{{- 'type ' ~ definition.name ~ ' = () => ' -}}{%- endif -%}
{%- set returns = definition.get('return_parameters') -%}
{%- if returns and returns.get('properties') -%}{{- gigachat_type(returns, '  ') -}}{%- else -%}{{- 'any' -}}{%- endif -%}
{{- ';\n' -}}
{%- endfor -%}
{{- '\n} // namespace functions' -}}
{%- endmacro -%}"""
