"""The tools described as XML tags, as Qwen3-Coder's and Nemotron 3's templates write them::

    <function>
    <name>get_weather</name>
    <description>Get the weather.</description>
    <parameters>
    <parameter>
    <name>city</name>
    <type>string</type>
    <description>City name</description>
    </parameter>
    <required>["city"]</required>
    </parameters>
    </function>

Each tool's function object: its name, its description (trimmed) when it has one, then its
parameters: per property its name, ``type`` and (trimmed) ``description``, then every other
key of the property as ``<KEY>VALUE</KEY>``; then the other keys of the parameters object
(``required``, ``additionalProperties``...), then the other keys of the function.  A value
that is an object or an array is written as JSON (``tojson``), any other as Python's ``str``
of it (``True``, ``None``: the templates' ``| string``).  Nemotron's template (``enum=True``)
writes a property's ``enum`` right after its description and the parameters' ``required``
after their other keys.

Reading a block gives each tool back with what the tags say: the name, the description,
``parameters`` as an object schema whose properties carry their tags (a value read as JSON
where it is JSON, ``True``/``False``/``None`` as Python writes them, else the text).  What
the XML cannot say is lost in reading: the order of keys the template moves, whether
``parameters`` had ``"type": "object"``, a ``type`` that was a list.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pawlette.declare import ToolsBlock
from pawlette.declare.readers import ToolItemsReader
from pawlette.engine.kept import Kept, marshal_key
from pawlette.engine.machine import Parser, ReaderFactory
from pawlette.types import Tool

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table


def _json(value: Any) -> str:
    """Jinja's ``tojson`` under transformers (non-ASCII kept, ``", "``/``": "``)."""
    return json.dumps(value, ensure_ascii=False)


def _tag(key: object, value: Any) -> str:
    """One extra key as the templates write it."""
    if isinstance(value, (dict, list, tuple)):
        return f"\n<{key}>{_json(value)}</{key}>"
    return f"\n<{key}>{value}</{key}>"


def _extra(value: Any, handled: tuple[str, ...]) -> str:
    if not isinstance(value, dict):
        return ""
    return "".join(_tag(key, item) for key, item in value.items() if key not in handled)


def describe(definition: dict[str, Any], *, enum: bool = False) -> str:
    """One tool (its function object) as the templates write it, from ``\\n<function>``."""
    parts = [f"\n<function>\n<name>{definition.get('name')}</name>"]
    if "description" in definition:
        parts.append(f"\n<description>{str(definition['description']).strip()}</description>")
    parts.append("\n<parameters>")
    parameters = definition.get("parameters")
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    if isinstance(properties, dict):
        for name, fields in properties.items():
            parts.append(f"\n<parameter>\n<name>{name}</name>")
            if isinstance(fields, dict):
                if "type" in fields:
                    parts.append(f"\n<type>{fields['type']}</type>")
                if "description" in fields:
                    parts.append(
                        f"\n<description>{str(fields['description']).strip()}</description>"
                    )
                handled: tuple[str, ...] = ("name", "type", "description")
                if enum and "enum" in fields:
                    parts.append(f"\n<enum>{_json(fields['enum'])}</enum>")
                    handled += ("enum",)
                parts.append(_extra(fields, handled))
            parts.append("\n</parameter>")
    if enum:
        parts.append(_extra(parameters, ("type", "properties", "required")))
        if isinstance(parameters, dict) and "required" in parameters:
            parts.append(f"\n<required>{_json(parameters['required'])}</required>")
    else:
        parts.append(_extra(parameters, ("type", "properties")))
    parts.append("\n</parameters>")
    parts.append(_extra(definition, ("type", "name", "description", "parameters")))
    parts.append("\n</function>")
    return "".join(parts)


# ---------------------------------------------------------------------- the Jinja template

_EXTRA_MACRO = (
    "{%- macro xml_extra_keys(value, handled) -%}{%- if value is mapping -%}"
    "{%- for key in value if key not in handled -%}"
    "{%- if value[key] is mapping or (value[key] is sequence and value[key] is not string) -%}"
    "{{- '\\n<' ~ key ~ '>' ~ (value[key] | tojson) ~ '</' ~ key ~ '>' -}}"
    "{%- else -%}{{- '\\n<' ~ key ~ '>' ~ (value[key] | string) ~ '</' ~ key ~ '>' -}}"
    "{%- endif -%}{%- endfor -%}{%- endif -%}{%- endmacro -%}"
)


def _jinja_tool(enum: bool) -> str:
    """The Jinja of one tool (``tool``: its function object), as :func:`describe` writes."""
    lines = [
        "{{- '\\n<function>\\n<name>' ~ tool.name ~ '</name>' -}}",
        "{%- if tool.description is defined -%}"
        "{{- '\\n<description>' ~ (tool.description | trim) ~ '</description>' -}}{%- endif -%}",
        "{{- '\\n<parameters>' -}}",
        "{%- if tool.parameters is defined and tool.parameters is mapping and "
        "tool.parameters.properties is defined and tool.parameters.properties is mapping -%}",
        "{%- for name, fields in tool.parameters.properties | items -%}",
        "{{- '\\n<parameter>\\n<name>' ~ name ~ '</name>' -}}",
        "{%- if fields is mapping -%}",
        "{%- if fields.type is defined -%}"
        "{{- '\\n<type>' ~ (fields.type | string) ~ '</type>' -}}{%- endif -%}",
        "{%- if fields.description is defined -%}"
        "{{- '\\n<description>' ~ (fields.description | trim) ~ '</description>' -}}"
        "{%- endif -%}",
    ]
    if enum:
        lines += [
            "{%- if fields.enum is defined -%}"
            "{{- '\\n<enum>' ~ (fields.enum | tojson) ~ '</enum>' -}}{%- endif -%}",
            "{{- xml_extra_keys(fields, ['name', 'type', 'description', 'enum']) -}}",
        ]
    else:
        lines.append("{{- xml_extra_keys(fields, ['name', 'type', 'description']) -}}")
    lines += ["{%- endif -%}", "{{- '\\n</parameter>' -}}", "{%- endfor -%}", "{%- endif -%}"]
    if enum:
        lines += [
            "{{- xml_extra_keys(tool.parameters, ['type', 'properties', 'required']) -}}",
            "{%- if tool.parameters is mapping and tool.parameters.required is defined -%}"
            "{{- '\\n<required>' ~ (tool.parameters.required | tojson) ~ '</required>' -}}"
            "{%- endif -%}",
        ]
    else:
        lines.append("{{- xml_extra_keys(tool.parameters, ['type', 'properties']) -}}")
    lines += [
        "{{- '\\n</parameters>' -}}",
        "{{- xml_extra_keys(tool, ['type', 'name', 'description', 'parameters']) -}}",
        "{{- '\\n</function>' -}}",
    ]
    return "".join(lines)


# ---------------------------------------------------------------------- reading


def _value(text: str) -> Any:
    """A tag's text as the writer's ``tojson`` / ``str`` wrote it."""
    if text in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[text]
    try:
        return json.loads(text)
    except ValueError:
        return text


class _Cursor:
    """Reads the tags of one block, one after another."""

    def __init__(self, text: str, position: int) -> None:
        self.text = text
        self.position = position

    def literal(self, expected: str) -> bool:
        if self.text.startswith(expected, self.position):
            self.position += len(expected)
            return True
        return False

    def peek_tag(self) -> str | None:
        """The name of the ``\\n<KEY>`` tag at the cursor (None: no such tag)."""
        if not self.text.startswith("\n<", self.position):
            return None
        end = self.text.find(">", self.position + 2)
        if end < 0:
            return None
        key = self.text[self.position + 2 : end]
        return None if not key or key.startswith("/") or "\n" in key else key

    def tag(self) -> tuple[str, str] | None:
        """``\\n<KEY>VALUE</KEY>`` at the cursor."""
        key = self.peek_tag()
        if key is None:
            return None
        start = self.position + len(key) + 3
        end = self.text.find(f"</{key}>", start)
        if end < 0:
            return None
        self.position = end + len(key) + 3
        return key, self.text[start:end]


def read_tool(cursor: _Cursor) -> Tool | None:
    """One ``\\n<function>...\\n</function>`` item at the cursor (None: not one; the cursor
    may have moved)."""
    if not cursor.literal("\n<function>"):
        return None
    named = cursor.tag()
    if named is None or named[0] != "name":
        return None
    definition: dict[str, Any] = {"name": named[1]}
    if cursor.peek_tag() == "description":
        found = cursor.tag()
        if found is None:
            return None
        definition["description"] = found[1]
    if not cursor.literal("\n<parameters>"):
        return None
    properties: dict[str, Any] = {}
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    while cursor.literal("\n<parameter>"):
        named = cursor.tag()
        if named is None or named[0] != "name":
            return None
        fields: dict[str, Any] = {}
        while not cursor.literal("\n</parameter>"):
            found = cursor.tag()
            if found is None:
                return None
            key, text = found
            fields[key] = text if key in ("type", "description") else _value(text)
        properties[named[1]] = fields
    while not cursor.literal("\n</parameters>"):
        found = cursor.tag()
        if found is None:
            return None
        parameters[found[0]] = _value(found[1])
    definition["parameters"] = parameters
    while not cursor.literal("\n</function>"):
        found = cursor.tag()
        if found is None:
            return None
        definition[found[0]] = _value(found[1])
    return Tool(name=definition["name"], definition=definition)


class XmlToolItemsReader(ToolItemsReader):
    """The tools of an XML block (then, as for JSON items, nothing else)."""

    __slots__ = ()

    def _items(self, text: str) -> tuple[list[Tool], int]:
        tools: list[Tool] = []
        position = 0
        while True:
            cursor = _Cursor(text, position)
            tool = read_tool(cursor)
            if tool is None:
                return tools, position
            tools.append(tool)
            position = cursor.position


@dataclass(frozen=True)
class XmlToolsBlock(ToolsBlock):
    """The tools block of Qwen3-Coder and Nemotron 3: each tool's function object as XML tags
    (see the module docstring); ``enum``: Nemotron's placement of ``enum`` and ``required``.
    Everything else (place, fences, separator) is :class:`~pawlette.declare.ToolsBlock`'s."""

    enum: bool = False

    @cached_property
    def _texts(self) -> Kept[tuple[str, ...]]:
        return Kept(limit=256, longest=1 << 14)

    def block(self, out: Any, *, separated: bool = False) -> None:
        out.fence(self.separated_open if separated else self.open, "tools")
        definitions = [tool.definition for tool in out.tools]
        # (Kept by the tools' content: the same tools come with every request.)
        texts = self._texts.get(
            marshal_key(definitions),
            lambda: tuple(describe(dict(d), enum=self.enum) for d in definitions),
        )
        for text in texts:
            out.text(text, "tools")
        out.fence(self.close, "tools")

    def items_reader(self, table: Table) -> ReaderFactory:
        def reader(parser: Parser) -> XmlToolItemsReader:
            return XmlToolItemsReader(parser, "", "", "function", False, False)

        return reader

    def jinja_block(self, out: Template, *, separated: bool = False) -> None:
        out.macro("xml_extra_keys", _EXTRA_MACRO)
        out.fence(self.separated_open if separated else self.open)
        out.out("{%- for tool in tools -%}")
        out.out("{%- set tool = tool.function if tool.function is defined else tool -%}")
        out.out(_jinja_tool(self.enum))
        out.out("{%- endfor -%}")
        out.fence(self.close)
