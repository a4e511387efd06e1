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

When any tool holds what this presentation does not write (a ``$ref`` out of the
parameters, an ``enum`` or ``oneOf``/``anyOf`` that is no list, a ``type`` that is an object,
``required`` names without properties in a variant, a key the presentation does not know
whose value nests objects, such a key at the parameters' or the function's top), the
template writes every tool as JSON instead, as its ``json`` presentation does:
:func:`presentable` tells which.

Where the template raises on a schema (``required`` that is no list or names a property
that is not there, ``properties`` that is no object, ``oneOf``/``anyOf`` that cannot be
walked, a description at the function's top that is no text), :func:`problem` says where,
and the format refuses.  A tool without ``parameters``, which the template refuses too, is
written as one without parameters (``- None``), as the JSON presentation writes such a tool
where the template refuses it as well.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "FUNCTION_KEYS",
    "QUIET_KEYS",
    "RENDERED_KEYS",
    "ROOT_KEYS",
    "listing",
    "presentable",
    "problem",
    "python_literal",
    "type_text",
]

RENDERED_KEYS = (
    "type",
    "description",
    "enum",
    "default",
    "properties",
    "required",
    "items",
    "oneOf",
    "anyOf",
    "additionalProperties",
    "patternProperties",
    "returns",
)
"""The keys of a schema the presentation writes in their own places; any other is written
as ``KEY: VALUE`` after them."""

QUIET_KEYS = (
    "|description|default|title|examples|properties|patternProperties|additionalProperties|returns|"
)
"""The keys whose values may nest objects anywhere in a presentable schema, as one
pipe-delimited text: the template tests ``'|' ~ key ~ '|'`` in it (a substring test, kept)."""

ROOT_KEYS = (
    "type",
    "description",
    "enum",
    "default",
    "properties",
    "required",
    "optional",
    "title",
    "items",
    "oneOf",
    "anyOf",
    "additionalProperties",
    "patternProperties",
    "returns",
    "examples",
    "$defs",
    "definitions",
    "$ref",
)
"""The parameters' top keys that may hold objects or lists in a presentable tool."""

FUNCTION_KEYS = ("name", "description", "parameters", "returns", "response", "type", "function")
"""The function's keys that may hold objects or lists in a presentable tool."""

_PREFIXES = ("#/$defs/", "#/definitions/")


# ---------------------------------------------------------------------- Jinja's tests


def _is_sequence(value: Any) -> bool:
    """Jinja's ``sequence`` test on a JSON value: text, lists and objects all pass."""
    return isinstance(value, (str, list, tuple, dict))


def _is_list(value: Any) -> bool:
    return isinstance(value, (list, tuple))


def _container(value: Any) -> bool:
    return isinstance(value, (dict, list, tuple))


def _members(value: Any) -> Iterable[Any]:
    """What ``{% for item in value %}`` walks: a list's items, an object's keys, a text's
    characters (the last two only in schemas that are not presentable anyway)."""
    return value if _is_sequence(value) else ()


def _nests_object(value: Any) -> bool:
    if isinstance(value, dict):
        return True
    return _is_list(value) and any(_nests_object(item) for item in value)


def _definition_name(reference: Any) -> str | None:
    """The definition a local ``$ref`` names (None: not ``#/$defs/...`` nor
    ``#/definitions/...``)."""
    if isinstance(reference, str):
        for prefix in _PREFIXES:
            if reference.startswith(prefix):
                return reference[len(prefix) :]
    return None


# ---------------------------------------------------------------------- refusals


def _schema_problem(
    spec: Any, path: str, *, lenient: bool, variant: bool = False
) -> tuple[str, str, str] | None:
    """Where the template raises on a schema: (where, what was found, what was expected)."""
    if not isinstance(spec, dict):
        return None
    properties = spec.get("properties")
    if properties and not isinstance(properties, dict):
        return f"{path}.properties", f"a {type(properties).__name__}", "an object of schemas"
    if not lenient and "required" in spec:
        required = spec["required"]
        if isinstance(required, str) or not _is_sequence(required):
            return f"{path}.required", repr(required), "a list of property names"
        if len(required) > 0 and not properties and not variant:
            return (
                f"{path}.required",
                f"{len(required)} names and no properties",
                "properties that define them",
            )
        if properties:
            for name in required:
                if not isinstance(name, str) or name not in properties:
                    return f"{path}.required", repr(name), "the name of a property in properties"
    for key in ("oneOf", "anyOf"):
        if spec.get(key) and not _is_sequence(spec[key]):  # (the template loops over it)
            return f"{path}.{key}", repr(spec[key]), "a list of schemas"
    for key in ("$defs", "definitions"):
        definitions = spec.get(key)
        if isinstance(definitions, dict):
            for name, definition in definitions.items():
                found = _schema_problem(definition, f"{path}.{key}.{name}", lenient=True)
                if found:
                    return found
    return _children_problem(spec, path, lenient=lenient)


def _children_problem(
    spec: dict[str, Any], path: str, *, lenient: bool
) -> tuple[str, str, str] | None:
    children: list[tuple[Any, str, bool]] = []
    if spec.get("properties"):
        children += [
            (child, f"{path}.properties.{name}", False)
            for name, child in spec["properties"].items()
        ]
    if "items" in spec:
        children.append((spec["items"], f"{path}.items", False))
    for key in ("oneOf", "anyOf"):
        if spec.get(key):
            children += [
                (item, f"{path}.{key}[{n}]", True) for n, item in enumerate(_members(spec[key]))
            ]
    if isinstance(spec.get("additionalProperties"), dict):
        children.append((spec["additionalProperties"], f"{path}.additionalProperties", False))
    if isinstance(spec.get("patternProperties"), dict):
        children += [
            (child, f"{path}.patternProperties.{pattern}", False)
            for pattern, child in spec["patternProperties"].items()
        ]
    if isinstance(spec.get("returns"), dict):
        children.append((spec["returns"], f"{path}.returns", False))
    for child, where, variant in children:
        found = _schema_problem(child, where, lenient=lenient, variant=variant)
        if found:
            return found
    return None


def problem(definition: Mapping[str, Any], path: str) -> tuple[str, str, str] | None:
    """Where IFM-K2-Horizon's template raises on one tool (``definition``: its function
    object, at ``path``) with the Markdown presentation: (where, what was found, what was
    expected), or None."""
    parameters = definition.get("parameters")
    description = definition.get("description")
    if description and not isinstance(description, str):
        return f"{path}.description", f"a {type(description).__name__}", "text"
    found = _schema_problem(parameters, f"{path}.parameters", lenient=False)
    if found:
        return found
    if isinstance(definition.get("returns"), dict):
        found = _schema_problem(definition["returns"], f"{path}.returns", lenient=False)
    elif "returns" not in definition and isinstance(definition.get("response"), dict):
        found = _schema_problem(definition["response"], f"{path}.response", lenient=True)
    return found


# ---------------------------------------------------------------------- presentable


def _plain_schema(spec: Any) -> bool:
    """Whether the presentation writes a schema whole (the template's classification)."""
    if not isinstance(spec, dict):
        return True
    for key, value in spec.items():
        if key == "$ref":
            if _definition_name(value) is None:
                return False
        elif key in ("$defs", "definitions"):
            if not isinstance(value, dict) or not all(map(_plain_schema, value.values())):
                return False
        elif key == "type":
            if isinstance(value, dict):
                return False
        elif key in ("enum", "oneOf", "anyOf"):
            if not _is_list(value):
                return False
        elif key == "items":
            pass  # any items: an object as a schema, anything else as its literal
        elif key == "required":
            if value and not spec.get("properties"):
                return False
        elif f"|{key}|" in QUIET_KEYS:
            pass
        elif isinstance(value, dict):
            if any(_nests_object(item) for item in value.values()):
                return False
        elif _is_list(value) and _nests_object(value):
            return False
    children: list[Any] = []
    if spec.get("properties"):
        children += spec["properties"].values()
    if "items" in spec:
        children.append(spec["items"])
    for key in ("oneOf", "anyOf"):
        if spec.get(key):
            children += _members(spec[key])
    for key in ("additionalProperties", "returns"):
        if isinstance(spec.get(key), dict):
            children.append(spec[key])
    if isinstance(spec.get("patternProperties"), dict):
        children += spec["patternProperties"].values()
    return all(map(_plain_schema, children))


def _plain_tool(definition: Mapping[str, Any]) -> bool:
    parameters = definition.get("parameters")
    if parameters is not None:  # (none: the template raises; written as no parameters)
        if not isinstance(parameters, dict) or not _plain_schema(parameters):
            return False
        if any(key not in ROOT_KEYS and _container(value) for key, value in parameters.items()):
            return False
    if isinstance(definition.get("returns"), dict) and not _plain_schema(definition["returns"]):
        return False
    response = definition.get("response")
    if "returns" not in definition and isinstance(response, dict) and not _plain_schema(response):
        return False
    return not any(
        key not in FUNCTION_KEYS and _container(value) for key, value in definition.items()
    )


def presentable(definitions: Iterable[Mapping[str, Any]]) -> bool:
    """Whether the template writes these tools (their function objects) as Markdown: else
    it writes all of them as JSON."""
    return all(map(_plain_tool, definitions))


# ---------------------------------------------------------------------- values


def python_text(value: str) -> str:
    """A string as the template's Python literal: whitespace runs made one space, quoted."""
    collapsed = " ".join(value.split())
    return "'" + collapsed.replace("\\", "\\\\").replace("'", "\\'") + "'"


def python_literal(value: Any) -> str:
    """A JSON value as the template writes it as a Python literal."""
    if isinstance(value, str):
        return python_text(value)
    if value is True:
        return "True"
    if value is False:
        return "False"
    if value is None:
        return "None"
    if isinstance(value, dict):
        pairs = (f"{python_literal(key)}: {python_literal(item)}" for key, item in value.items())
        return "{" + ", ".join(pairs) + "}"
    if _is_list(value):
        return "[" + ", ".join(map(python_literal, value)) + "]"
    return str(value)


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


def _type_name(name: Any, spec: dict[str, Any]) -> str:
    if name == "array":
        return "array of " + (type_text(spec["items"]) if "items" in spec else "any")
    return str(name) if name else "any"


def type_text(spec: Any) -> str:
    """A schema's type as the presentation names it."""
    if spec is True or spec is False:
        return str(spec)
    if not isinstance(spec, dict):
        return "any"
    kind = spec.get("type")
    if _is_list(kind) or isinstance(kind, dict):  # (an object type: never presentable)
        return " or ".join(_type_name(name, spec) for name in kind) if kind else "any"
    if kind:
        return _type_name(kind, spec)
    if isinstance(spec.get("$ref"), str):
        return str(spec["$ref"].split("/")[-1])
    for key in ("oneOf", "anyOf"):
        if spec.get(key):
            return key + "[" + " or ".join(map(type_text, spec[key])) + "]"
    if spec.get("properties"):
        return "object"
    if "items" in spec:
        return "array of " + type_text(spec["items"])
    return "any"


# ---------------------------------------------------------------------- one tool


class _Tool:
    """One tool's writer: its definitions, and those already written (a definition is
    written once per tool, as a pipe-delimited text the template tests by substring)."""

    def __init__(self, parameters: Any) -> None:
        definitions: Any = {}
        if isinstance(parameters, dict):
            for key in ("$defs", "definitions"):
                if isinstance(parameters.get(key), dict):
                    definitions = parameters[key]
                    break
        self.definitions: dict[str, Any] = definitions
        self.seen = "|"
        self.parts: list[str] = []

    def _merged(self, spec: dict[str, Any], name: str) -> dict[str, Any]:
        merged = dict(self.definitions[name])
        merged.update((key, value) for key, value in spec.items() if key != "$ref")
        self.seen += name + "|"
        return merged

    def _found(self, spec: dict[str, Any]) -> str | None:
        name = _definition_name(spec.get("$ref"))
        if name is not None and isinstance(self.definitions.get(name), dict):
            return name
        return None

    def inline(self, spec: Any) -> Any:
        """``spec`` with its ``$ref`` replaced by the definition, once per definition; the
        definition's own ``$ref`` replaced too (that one whether written before or not)."""
        if not isinstance(spec, dict):
            return spec
        name = self._found(spec)
        if name is None or f"|{name}|" in self.seen:
            return spec
        spec = self._merged(spec, name)
        second = self._found(spec)
        return spec if second is None else self._merged(spec, second)

    def root(self, parameters: Any) -> Any:
        """The parameters with their own ``$ref`` replaced (one level)."""
        if isinstance(parameters, dict):
            name = self._found(parameters)
            if name is not None:
                return self._merged(parameters, name)
        return parameters

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
