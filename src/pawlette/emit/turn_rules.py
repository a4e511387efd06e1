"""What the turn grammars of every format build alike: JSON arguments by schema, the rules
a format starts from, the checks on tools."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import UnsupportedFeature
from ..format import Format
from ..types import Tool
from .grammar_ast import JsonSchemaValue, Lit, Node, Rules, Terminal, optional
from .json_lark import SchemaToLark
from .json_schema import JSON_ESCAPE, SchemaToGbnf
from .text_language import TextLanguage, define, gbnf_string_rules, gbnf_text_rule

ANY_OBJECT = {"type": "object"}
NO_ARGUMENTS = {"type": "object", "properties": {}, "additionalProperties": False}
"""A tool without ``parameters``: OpenAI documents that omitting them defines a function with
an empty parameter list, so its arguments are ``{}`` (no keyword arguments in Python calls)."""


STOP: Lit = Lit("")
"""Where the turn's stop marker stands: the grammar ends there, and the engine's own stop
ends generation.  llama.cpp never lets a grammar accept an end-of-generation token (it allows
one only once the grammar is complete: ``src/llama-grammar.cpp``), so a grammar that ended
with the stop marker could never be completed: the engine fails where nothing else is
allowed and runs to the length limit where more text is.  llguidance (vLLM, llama.cpp's
``%llguidance`` grammars) likewise allows the end-of-sequence token once the grammar is
accepting.  The format's stop markers are the model's end-of-generation tokens; the engine
strips a stop it was sent, and every parser reads a turn without its stop marker as ended by
it."""


def function_tools_only(tools: tuple[Tool, ...]) -> None:
    """Refuse tools other than functions (formats without actions)."""
    for number, tool in enumerate(tools):
        if tool.kind != "function":
            raise UnsupportedFeature(f"tools[{number}].type", f"{tool.kind!r}", "'function'")


def parameters(tool: Tool) -> Any:
    """The schema of a tool's arguments (no arguments when it declares none)."""
    return tool.parameters if tool.parameters is not None else NO_ARGUMENTS


LARK_JSON_NOTE = (
    "JSON arguments are rules from each tool's schema, with strings that spell no "
    "marker, bounded whitespace; a string, number or integer under a keyword llguidance "
    "enforces (pattern, format, numeric bounds, multipleOf) is llguidance's %json of that "
    "value, lenient: true"
)


class _JsonArguments(SchemaToGbnf):
    """GBNF rules for a schema whose notes go to the syntax they are true of."""

    note_syntax = "gbnf"


def _both(rules: Rules, prefix: str, where: str, schema: Any) -> JsonSchemaValue:
    lark_notes = rules.syntax_notes.setdefault("lark", [])
    if LARK_JSON_NOTE not in lark_notes:
        lark_notes.append(LARK_JSON_NOTE)
    gbnf = _JsonArguments(rules, prefix, where).convert(schema)
    lark = SchemaToLark(rules, prefix, where).convert(schema)
    return JsonSchemaValue(schema, gbnf=gbnf, lark=lark)


def json_arguments(rules: Rules, number: int, tool: Tool) -> JsonSchemaValue:
    """The JSON arguments of a call to ``tools[number]`` (GBNF and Lark rules defined in
    ``rules``): a JSON object under the tool's schema (OpenAI's arguments are an object, and
    every parser reads other JSON as no call)."""
    schema = arguments_schema(parameters(tool))
    return _both(rules, f"args-{number}", f"tools[{number}].parameters", schema)


def arguments_schema(schema: Any) -> Any:
    """``schema`` held to objects: a schema naming no type (``parameters: {}``, as OpenAI's
    guide writes a function without arguments) is given ``"type": "object"`` (keywords of one
    schema all hold, so the rest of it still does), a list of types is narrowed to
    ``"object"`` where it lists it; a schema whose types exclude objects is left as it is."""
    if not isinstance(schema, Mapping):
        return schema
    kind = schema.get("type")
    if kind is None:
        return {**schema, "type": "object"}
    if isinstance(kind, list) and "object" in kind and kind != ["object"]:
        return {**schema, "type": "object"}
    return schema


def json_value(rules: Rules, prefix: str, where: str, schema: Any, root: Any) -> JsonSchemaValue:
    """A JSON value under ``schema``, one part of the schema ``root`` (a parameter of a tool
    whose calls write each argument on its own): ``root``'s ``$defs`` and ``definitions``
    go with it, so the local references in it resolve as they do in ``root``.  Rules are
    named from ``prefix``, notes say ``where``."""
    if isinstance(schema, Mapping) and isinstance(root, Mapping):
        carried = {
            key: root[key] for key in ("$defs", "definitions") if key in root and key not in schema
        }
        schema = {**schema, **carried} if carried else schema
    return _both(rules, prefix, where, schema)


def rules_for(fmt: Format) -> Rules:
    """Rules whose first rule is ``start`` (a placeholder to replace), with the format's text
    terminals defined."""
    rules = Rules()
    rules.add("start", Lit(""))
    language = TextLanguage.of(fmt)
    define(language, rules)
    rules.markers = language.markers
    # JSON strings spell no marker (they come before the schema rules, which keep them).
    rules.gbnf_extra.update(
        gbnf_string_rules(language, "json-str", '"\\', "\\x00-\\x1F", JSON_ESCAPE)
    )
    rules.gbnf_extra["json-char"] = "json-str-char"
    rules.gbnf_extra["json-string"] = '"\\"" json-str-body "\\""'
    rules.gbnf_extra["json-id-rest"] = 'json-str-body "\\""'
    return rules


STRING_KEYWORDS = ("pattern", "minLength", "maxLength", "format")
"""The keywords of a string schema that a value written as free text is not held to."""


def note_unenforced(rules: Rules, where: str, schema: Mapping[str, Any], syntaxes: Any) -> None:
    """Notes, in each of ``syntaxes``, of the string keywords of ``schema`` (a value at
    ``where`` written as free text) that the grammar does not hold the value to."""
    for keyword in STRING_KEYWORDS:
        if keyword not in schema:
            continue
        for syntax in syntaxes:
            label = "GBNF" if syntax == "gbnf" else "Lark"
            note = f"{where}: {keyword!r} is not enforced in {label}"
            notes = rules.syntax_notes.setdefault(syntax, [])
            if note not in notes:
                notes.append(note)


def lark_search(pattern: str) -> str | None:
    """A JSON Schema ``pattern`` (found anywhere in the string unless anchored) as a Lark
    regex the whole value must match; None where its anchors are not simply at its two ends
    (llguidance's lexemes take no anchors)."""
    inner = pattern
    starts, ends = inner.startswith("^"), inner.endswith("$") and not inner.endswith("\\$")
    inner = inner[1 if starts else 0 : len(inner) - 1 if ends else len(inner)]
    if "^" in inner.replace("[^", "") or "$" in inner.replace("\\$", "") or "|" in inner:
        return None
    body = ("" if starts else "(?s:.*)") + f"(?:{inner})" + ("" if ends else "(?s:.*)")
    return body.replace("/", "\\x2F")


def constrained_text(rules: Rules, name: str, where: str, schema: Mapping[str, Any]) -> Node | None:
    """Free text (that spells no marker) under a string schema's ``pattern`` and lengths: in
    Lark a terminal ``name`` intersecting the text with a regex of them (what llguidance's
    %json holds a JSON string to), in GBNF free text (a note at ``where`` says so).  None:
    the schema has no such keyword, or a pattern Lark cannot hold (notes say so)."""
    pattern = schema.get("pattern")
    low, high = schema.get("minLength"), schema.get("maxLength")
    if not isinstance(pattern, str) and low is None and high is None:
        return None
    regex = lark_search(pattern) if isinstance(pattern, str) else None
    if isinstance(pattern, str) and regex is None:
        note_unenforced(rules, where, schema, ("lark", "gbnf"))
        return None
    note_unenforced(rules, where, schema, ("gbnf",))
    parts = ["(TEXT_NE)"]
    if regex is not None:
        parts.append(f"/{regex}/")
    if isinstance(low, int) or isinstance(high, int):
        # A length of another type is no bound, as when it is missing (one bound may be).
        bottom = max(low if isinstance(low, int) else 0, 1)
        top = "" if not isinstance(high, int) else str(high)
        parts.append(f"/(?s:.{{{bottom},{top}}})/")
    rules.lark_extra[name] = " & ".join(parts)
    terminal = Terminal(name, lark="", gbnf=gbnf_text_rule("TEXT", "NE"))
    empty_allowed = not (isinstance(low, int) and low > 0) and (
        not isinstance(pattern, str) or re.search(pattern, "") is not None
    )
    return optional(terminal) if empty_allowed else terminal
