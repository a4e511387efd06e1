"""What the turn grammars of every format build alike."""

from __future__ import annotations

from typing import Any

from ...errors import UnsupportedFeature
from ...format import Format
from ...types import Tool
from ..grammar_ast import JsonSchemaValue, Lit, Rules
from ..json_schema import SchemaToGbnf
from ..text_language import TextLanguage, define

ANY_OBJECT = {"type": "object"}


def function_tools_only(tools: tuple[Tool, ...]) -> None:
    """Refuse tools other than functions (formats without actions)."""
    for number, tool in enumerate(tools):
        if tool.kind != "function":
            raise UnsupportedFeature(f"tools[{number}].type", f"{tool.kind!r}", "'function'")


def parameters(tool: Tool) -> Any:
    """The schema of a tool's arguments (any object when it declares none)."""
    return tool.parameters if tool.parameters is not None else ANY_OBJECT


def json_arguments(rules: Rules, number: int, tool: Tool) -> JsonSchemaValue:
    """The JSON arguments of a call to ``tools[number]`` (GBNF rules defined in ``rules``)."""
    schema = parameters(tool)
    converter = SchemaToGbnf(rules, f"args-{number}", f"tools[{number}].parameters")
    return JsonSchemaValue(schema, gbnf=converter.convert(schema))


def rules_for(fmt: Format) -> Rules:
    """Rules whose first rule is ``start`` (a placeholder to replace), with the format's text
    terminals defined."""
    rules = Rules()
    rules.add("start", Lit(""))
    define(TextLanguage.of(fmt), rules)
    return rules
