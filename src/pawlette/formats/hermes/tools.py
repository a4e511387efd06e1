"""Hermes 2 Pro's tools block: each tool as a JSON-like object whose description is a Python
signature the template builds from the schema (``get_weather(city: str, days: int) - ...``
then an ``Args:`` list), written raw (not JSON-escaped)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pawlette.declare import ToolsBlock
from pawlette.emit.jinja_text import jinja_string
from pawlette.engine.json_text import json_string
from pawlette.engine.kept import Kept, marshal_key
from pawlette.engine.machine import Parser
from pawlette.engine.readers import WholeTextReader
from pawlette.errors import RequestError
from pawlette.openai import derived
from pawlette.types import Tool, ToolsDeclared

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render

BASIC_TYPES = {"string": "str", "number": "float", "integer": "int", "boolean": "bool"}
ITEM_HEAD = '{"type": "function", "function": {"name": "'
DESCRIPTION_HEAD = '", "description": "'
PARAMETERS_HEAD = '", "parameters": '
ITEM_TAIL = "}"  # the template closes one of the two objects it opens
NO_PARAMETERS = {"type": "object", "properties": {}}


def python_type(spec: Any, where: str) -> str:
    """The Python type the template's type macro writes for a JSON schema.  Its quirks are
    kept: an array is ``list[Union[]]`` (the macro passes the schema's key/value pairs, not
    its ``items``), a schema without ``type`` is ``Union[]``, a list of types is
    ``Union[a,b]``.  ``"null"`` and other type names, on which the template's macro recurses
    without end, are written ``None`` and ``Any``."""
    if not isinstance(spec, Mapping) or "type" not in spec:
        return "Union[]"
    kind = spec["type"]
    if isinstance(kind, str):
        if kind in BASIC_TYPES:
            return BASIC_TYPES[kind]
        if kind == "array":
            return "list[Union[]]"
        if kind == "object":
            if "additionalProperties" in spec:
                inner = python_type(spec["additionalProperties"], f"{where}.additionalProperties")
                return f"dict[str, {inner}]"
            return "dict"
        # The template's macro reads any other string as a list of types, one per character,
        # and recurses without end (it cannot render such a tool): "null" is written as
        # Python's None, another type as Any.
        return "None" if kind == "null" else "Any"
    if isinstance(kind, (list, Mapping)):
        return "Union[" + ",".join(python_type({"type": item}, where) for item in kind) + "]"
    return "Any"


def _properties(definition: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    parameters = definition.get("parameters")
    if parameters is None:  # none declared: written as a tool without properties
        return {}
    if not isinstance(parameters, Mapping):
        raise RequestError(f"{where}.parameters", repr(parameters)[:40], "a JSON schema object")
    properties = parameters.get("properties", {})
    if not isinstance(properties, Mapping):
        raise RequestError(
            f"{where}.parameters.properties", repr(properties)[:40], "an object of parameters"
        )
    return properties


def _trimmed(value: Any) -> str:
    """Jinja's ``trim`` of a value (its string, stripped)."""
    return str(value).strip()


def signature(name: str, properties: Mapping[str, Any], where: str) -> str:
    listed = ", ".join(
        f"{key}: {python_type(value, f'{where}.parameters.properties.{key}')}"
        for key, value in properties.items()
    )
    return f"{name}({listed})"


def arguments_text(properties: Mapping[str, Any], where: str) -> str:
    """The ``Args:`` list: one line per parameter, written without newlines between them
    (the template's own layout)."""
    if not properties:
        return ""
    lines = "".join(
        f"        {key}({python_type(value, f'{where}.parameters.properties.{key}')}): "
        + (
            _trimmed(value["description"])
            if isinstance(value, Mapping) and "description" in value
            else ""
        )
        for key, value in properties.items()
    )
    return "    Args:\n" + lines


def description_text(definition: Mapping[str, Any], where: str) -> str:
    name = definition["name"]
    properties = _properties(definition, where)
    text = signature(name, properties, where)
    returns = definition.get("return")
    if returns is not None:
        text += " -> " + python_type(returns, f"{where}.return")
    description = definition.get("description", "")
    if not isinstance(description, str):
        raise RequestError(f"{where}.description", repr(description)[:40], "a string")
    text += f" - {description}\n\n" + arguments_text(properties, where)
    if isinstance(returns, Mapping) and "description" in returns:
        text += f"\n    Returns:\n        {returns['description']}"
    return text


def item_text(definition: Mapping[str, Any], where: str) -> str:
    properties = _properties(definition, where)
    parameters = "{}" if not properties else json_string(definition["parameters"])
    return (
        ITEM_HEAD
        + str(definition["name"])
        + DESCRIPTION_HEAD
        + description_text(definition, where)
        + PARAMETERS_HEAD
        + parameters
        + ITEM_TAIL
    )


_LISTINGS: Kept[str] = Kept(limit=256, longest=1 << 14)
"""Listings kept by the tools' content (the same tools come with every request: each is
written once, where check and block each wrote it)."""


def listing(tools: tuple[Tool, ...]) -> str:
    """The tools' items, one a line (refusing what the template cannot write)."""
    definitions = [tool.definition for tool in tools]
    return _LISTINGS.get(
        marshal_key(definitions),
        lambda: "\n".join(
            item_text(definition, f"tools[{number}].function")
            for number, definition in enumerate(definitions)
        ),
    )


# ------------------------------------------------------------------ reading


_DECODER = json.JSONDecoder()


def _definition(name: str, written: str, parameters: Any) -> dict[str, Any]:
    """A tool's definition from its item: the description the caller gave where the written
    text is the template's signature and ``Args:`` list around it (else the text as
    written); ``{}`` parameters (no properties) as the schema of no parameters."""
    if parameters == {}:
        parameters = dict(NO_PARAMETERS)
    definition: dict[str, Any] = {"name": name}
    description = written
    properties = parameters.get("properties", {}) if isinstance(parameters, dict) else {}
    try:
        head = signature(name, properties, "tool") + " - "
        tail = "\n\n" + arguments_text(properties, "tool")
    except RequestError:  # a schema the template cannot write: the text as written
        head = tail = "\0"
    fits = len(written) >= len(head) + len(tail)
    if fits and written.startswith(head) and written.endswith(tail):
        description = written[len(head) : len(written) - len(tail)]
    if description:
        definition["description"] = description
    definition["parameters"] = parameters
    return definition


def read_items(text: str) -> tuple[list[Tool], int]:
    """The tools of a block's text, and where reading them stopped."""
    tools: list[Tool] = []
    position = 0
    while text.startswith(ITEM_HEAD, position):
        start = position + len(ITEM_HEAD)
        name_end = text.find(DESCRIPTION_HEAD, start)
        if name_end < 0:
            break
        name = text[start:name_end]
        found = None
        search = name_end + len(DESCRIPTION_HEAD)
        while found is None:
            cut = text.find(PARAMETERS_HEAD, search)
            if cut < 0:
                break
            search = cut + 1
            try:
                value, end = _DECODER.raw_decode(text, cut + len(PARAMETERS_HEAD))
            except json.JSONDecodeError:
                continue
            after = end + len(ITEM_TAIL)
            if text.startswith(ITEM_TAIL, end) and (after == len(text) or text[after] == "\n"):
                written = text[name_end + len(DESCRIPTION_HEAD) : cut]
                found = (_definition(name, written, value), after)
        if found is None:
            break
        definition, after = found
        tools.append(Tool(name=name, definition=definition))
        position = after + 1 if after < len(text) else after
    return tools, position


class HermesToolsReader(WholeTextReader):
    """The items of Hermes' tools block (one per line), read whole at the block's close."""

    __slots__ = ()

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        parser.confirm_message()

    def close(self, marker: str | None, offset: int) -> None:
        from pawlette.declare.readers import DeclaredTools

        text = self._text()
        tools, position = read_items(text)
        if position < len(text):
            self._parser.malformed(
                self._offset + position,
                f"tools block text {text[position : position + 60]!r}",
                "one tool per line, as Hermes' template writes it",
                text[position:],
            )
        self._parser.emit(ToolsDeclared(tuple(tools)))
        self._parser.context(DeclaredTools).tools = tuple(tools)


# ------------------------------------------------------------------ the concept


@dataclass(frozen=True)
class HermesTools(ToolsBlock):
    """A :class:`~pawlette.declare.ToolsBlock` whose items are written as Hermes 2 Pro's
    template writes them (see the module).  Reading gives each tool back with its
    description and parameters; a tool with ``return`` reads back with the written
    description (signature included)."""

    def check(self, out: Render) -> None:
        super().check(out)
        derived(
            self.kept, out.tools, lambda: listing(out.tools)
        )  # refuses what the template cannot write
        for number, tool in enumerate(out.tools):
            where = f"tools[{number}].function"
            definition = tool.definition
            properties = _properties(definition, where)
            parameters = definition.get("parameters")
            if not properties and parameters != NO_PARAMETERS:
                out.lose(f"{where}.parameters", "written as {} (it has no properties)")

    def block(self, out: Render, *, separated: bool = False) -> None:
        out.fence(self.open, "tools")
        out.text(derived(self.kept, out.tools, lambda: listing(out.tools)), "tools")
        out.fence(self.close, "tools")

    def rows(self, table: Table) -> None:
        table.state("tools.block", HermesToolsReader)
        table.on("tools.block", table.text(self.close), "outside")
        table.on("outside", table.text(self.open), "tools.block")

    def jinja_setup(self, out: Template) -> None:
        super().jinja_setup(out)
        out.macro("hermes_type", _TYPE_MACRO)

    def jinja_block(self, out: Template, *, separated: bool = False) -> None:
        out.fence(self.open)
        out.out("{%- for tool in tools -%}")
        out.out("{%- set function = tool.function -%}")
        out.out("{%- set properties = {} -%}")
        out.out(
            "{%- if function.parameters is mapping and function.parameters.properties is defined"
            " -%}{%- set properties = function.parameters.properties -%}{%- endif -%}"
        )
        out.literal(ITEM_HEAD)
        out.value("function.name")
        out.literal(DESCRIPTION_HEAD)
        out.value("function.name")
        out.literal("(")
        out.out("{%- for key, value in properties | items -%}")
        out.value("key")
        out.literal(": ")
        out.out("{{- hermes_type(value) -}}")
        out.out("{%- if not loop.last -%}" + '{{- ", " -}}' + "{%- endif -%}")
        out.out("{%- endfor -%}")
        out.literal(")")
        out.out("{%- if function.return is defined -%}")
        out.literal(" -> ")
        out.out("{{- hermes_type(function.return) -}}")
        out.out("{%- endif -%}")
        out.literal(" - ")
        out.out("{%- if function.description is defined -%}")
        out.value("function.description")
        out.out("{%- endif -%}")
        out.literal("\n\n")
        out.out("{%- for key, value in properties | items -%}")
        out.out(
            "{%- if loop.first -%}" + "{{- " + jinja_string("    Args:\n") + " -}}{%- endif -%}"
        )
        out.literal("        ")
        out.value("key")
        out.literal("(")
        out.out("{{- hermes_type(value) -}}")
        out.literal("): ")
        out.out("{%- if value is mapping and value.description is defined -%}")
        out.value("value.description | trim")
        out.out("{%- endif -%}")
        out.out("{%- endfor -%}")
        out.out("{%- if function.return is defined and function.return.description is defined -%}")
        out.literal("\n    Returns:\n        ")
        out.value("function.return.description")
        out.out("{%- endif -%}")
        out.literal(PARAMETERS_HEAD)
        out.out("{%- if properties | length == 0 -%}" + '{{- "{}" -}}' + "{%- else -%}")
        out.out("{{- function.parameters | tojson -}}")
        out.out("{%- endif -%}")
        out.literal(ITEM_TAIL)
        out.out("{%- if not loop.last -%}" + '{{- "\\n" -}}' + "{%- endif -%}")
        out.out("{%- endfor -%}")
        out.fence(self.close)


_BASIC_BRANCHES = "".join(
    f'{{%- elif spec.type == "{kind}" -%}}{{{{- "{name}" -}}}}'
    for kind, name in BASIC_TYPES.items()
)
_TYPE_MACRO = (
    "{%- macro hermes_type(spec) -%}"
    '{%- if spec is not mapping or spec.type is not defined -%}{{- "Union[]" -}}'
    "{%- elif spec.type is string -%}"
    "{%- if false -%}"
    + _BASIC_BRANCHES
    + '{%- elif spec.type == "array" -%}{{- "list[Union[]]" -}}'
    '{%- elif spec.type == "object" and spec.additionalProperties is defined -%}'
    '{{- "dict[str, " -}}{{- hermes_type(spec.additionalProperties) -}}{{- "]" -}}'
    '{%- elif spec.type == "object" -%}{{- "dict" -}}'
    '{%- elif spec.type == "null" -%}{{- "None" -}}'
    '{%- else -%}{{- "Any" -}}'
    "{%- endif -%}"
    "{%- elif spec.type is iterable -%}"
    '{{- "Union[" -}}{%- for item in spec.type -%}{{- hermes_type({"type": item}) -}}'
    '{%- if not loop.last -%}{{- "," -}}{%- endif -%}{%- endfor -%}{{- "]" -}}'
    '{%- else -%}{{- "Any" -}}'
    "{%- endif -%}"
    "{%- endmacro -%}"
)
