"""IFM-K2-Horizon's XML presentation of tools (its template's ``tool_presentation_format``
``xml``).

Each tool (its function object) is written on a line of its own::

    <function name=get_weather><description>Get the weather.</description><parameters><param
    name=city type=string required=true>The city name.</param><param name=unit type=string
    enum="celsius"|"fahrenheit" default="celsius"/></parameters></function>

(one line: wrapped here).  Attribute values are not quoted, except allowed values and a
default that is text (in double quotes, ``\\`` and ``"`` escaped).  A schema's type is
compact: ``array[string]``, ``string|null``, ``anyOf[integer|string]``, a ``$ref``'s
definition name.  A parameter is ``<param name=NAME type=TYPE>``, ``required=true`` when the
parameters list it, its allowed values and default, then every key the presentation does
not place (``title``, ``minimum``, ``$ref``...) as ``KEY=VALUE`` (text with its whitespace
runs made one space, other values as Python literals, the empty text as ``""``); inside it
its description as given, its properties (each a ``param``), ``<items>``, ``<oneOf>`` and
``<anyOf>`` (each schema a ``<variant>``), ``<additionalProperties>``,
``<patternProperties>`` (each a ``<patternProperty pattern=...>``) and ``<returns>``; with
nothing inside it, it closes itself (``/>``).  A nested schema is written alike, its
description as a ``<description>`` element.  ``$ref`` to the parameters' definitions are
inlined as the Markdown presentation inlines them (:class:`.schema.References`).

Where the tools hold what this presentation does not write, every tool is written as JSON
(:func:`.schema.presentable`), and where the template raises, the format refuses
(:func:`.schema.problem`; a function's description that is no text is written as Python
prints it, as the template does).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .schema import RENDERED_KEYS, References, python_literal, schema_type

__all__ = ["compact_type", "listing", "tool_xml"]


def _text(value: str) -> str:
    """Text in an attribute or an element: its whitespace runs made one space."""
    return " ".join(value.split())


def _value(value: Any) -> str:
    return _text(value) if isinstance(value, str) else python_literal(value)


def _quoted(value: Any) -> str:
    """An allowed value (and a default that is text): in double quotes, escaped."""
    text = value if isinstance(value, str) else python_literal(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _attribute(name: str, value: Any) -> str:
    return f" {name}=" + ('""' if isinstance(value, str) and not value else _value(value))


def compact_type(spec: Any) -> str:
    """A schema's type as the XML presentation names it."""
    return schema_type(spec, "|", "array[", "]")


def _has_children(spec: Any, *, description: bool) -> bool:
    if not isinstance(spec, dict):
        return False
    return bool(
        (description and "description" in spec)
        or spec.get("properties")
        or "items" in spec
        or spec.get("oneOf")
        or spec.get("anyOf")
        or isinstance(spec.get("additionalProperties"), dict)
        or isinstance(spec.get("patternProperties"), dict)
        or "returns" in spec
    )


class _Tool(References):
    """One tool's XML writer: its definitions (:class:`.schema.References`) and the text
    written."""

    def __init__(self, parameters: Any) -> None:
        super().__init__(parameters)
        self.parts: list[str] = []

    def write(self, text: str) -> None:
        self.parts.append(text)

    def attributes(self, spec: dict[str, Any]) -> None:
        """Allowed values and default, then what has no place of its own."""
        if spec.get("enum"):
            self.write(" enum=" + "|".join(map(_quoted, spec["enum"])))
        if "default" in spec:
            value = spec["default"]
            self.write(" default=" + (_quoted(value) if isinstance(value, str) else _value(value)))
        for key in ("additionalProperties", "patternProperties"):
            if key in spec and not isinstance(spec[key], dict):
                self.write(_attribute(key, spec[key]))
        for key, value in spec.items():
            if key not in RENDERED_KEYS:
                self.write(_attribute(key, value))

    def node(self, tag: str, spec: Any) -> None:
        """A nested schema (items, a variant, additional properties, returns)."""
        spec = self.inline(spec)
        if not isinstance(spec, dict):
            self.write(f"<{tag}>{_value(spec)}</{tag}>")
            return
        self.write(f"<{tag} type={compact_type(spec)}")
        self.attributes(spec)
        self.close(tag, spec, description=True)

    def close(self, tag: str, spec: dict[str, Any], *, description: bool) -> None:
        if _has_children(spec, description=description):
            self.write(">")
            self.children(spec, description=description)
            self.write(f"</{tag}>")
        else:
            self.write("/>")

    def pattern_property(self, pattern: str, spec: Any) -> None:
        spec = self.inline(spec)
        self.write("<patternProperty" + _attribute("pattern", pattern))
        if not isinstance(spec, dict):
            self.write(f">{_value(spec)}</patternProperty>")
            return
        self.write(f" type={compact_type(spec)}")
        self.attributes(spec)
        self.close("patternProperty", spec, description=True)

    def children(self, spec: dict[str, Any], *, description: bool) -> None:
        if description and "description" in spec:
            self.write(f"<description>{spec['description']}</description>")
        if spec.get("properties"):
            for name, child in spec["properties"].items():
                self.parameter(name, child, spec.get("required"))
        if "items" in spec:
            self.node("items", spec["items"])
        for key in ("oneOf", "anyOf"):
            if spec.get(key):
                self.write(f"<{key}>")
                for variant in spec[key]:
                    self.node("variant", variant)
                self.write(f"</{key}>")
        if isinstance(spec.get("additionalProperties"), dict):
            self.node("additionalProperties", spec["additionalProperties"])
        patterns = spec.get("patternProperties")
        if isinstance(patterns, dict):
            self.write("<patternProperties>")
            for pattern, child in patterns.items():
                self.pattern_property(pattern, child)
            self.write("</patternProperties>")
        elif "patternProperties" in spec:
            self.write(f"<patternProperties>{_value(patterns)}</patternProperties>")
        if isinstance(spec.get("returns"), dict):
            self.node("returns", spec["returns"])
        elif "returns" in spec:
            self.write(f"<returns>{_value(spec['returns'])}</returns>")

    def parameter(self, name: str, spec: Any, required: Any) -> None:
        spec = self.inline(spec)
        self.write(f"<param name={name} type={compact_type(spec)}")
        if name in (required or []):
            self.write(" required=true")
        if not isinstance(spec, dict):
            self.write("/>")
            return
        self.attributes(spec)
        if spec.get("description") or _has_children(spec, description=False):
            self.write(">")
            if spec.get("description"):
                self.write(str(spec["description"]))
            self.children(spec, description=False)
            self.write("</param>")
        else:
            self.write("/>")


def tool_xml(definition: Mapping[str, Any]) -> str:
    """One tool (its function object) as the presentation writes it, from its newline."""
    writer = _Tool(definition.get("parameters"))
    parameters = writer.root(definition.get("parameters"))
    writer.write(f"\n<function name={definition.get('name')}>")
    if definition.get("description"):
        writer.write(f"<description>{definition['description']}</description>")
    writer.write("<parameters>")
    if parameters and isinstance(parameters, dict) and parameters.get("properties"):
        for name, spec in parameters["properties"].items():
            writer.parameter(name, spec, parameters.get("required"))
    elif isinstance(parameters, dict) and (
        parameters.get("oneOf") or parameters.get("anyOf") or "items" in parameters
    ):
        writer.children(parameters, description=False)
    writer.write("</parameters>")
    returns_key = "returns" if "returns" in definition else "response"
    if isinstance(definition.get(returns_key), dict):
        writer.node("returns", definition[returns_key])
    elif returns_key in definition:
        writer.write(f"<returns>{_value(definition[returns_key])}</returns>")
    writer.write("</function>")
    return "".join(writer.parts)


def listing(definitions: Iterable[Mapping[str, Any]]) -> str:
    """The tools (their function objects) as XML, each on a line of its own."""
    return "".join(map(tool_xml, definitions))
