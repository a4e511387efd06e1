"""What IFM-K2-Horizon's pretty presentations of tools (Markdown, its template's default,
and XML) both read: the schema walk that tells where the template raises on a tool
(:func:`problem`), whether it writes the tools in a pretty presentation or every one as JSON
(:func:`presentable`), the ``$ref`` inlining of a tool's definitions (:class:`References`)
and values as Python literals (:func:`python_literal`).

The template classifies and validates the tools once, whatever the pretty presentation:
where any tool holds what the pretty writers do not write (a ``$ref`` out of the
parameters, an ``enum`` or ``oneOf``/``anyOf`` that is no list, a ``type`` that is an object,
``required`` names without properties in a variant, a key neither writer knows whose value
nests objects, such a key at the parameters' or the function's top), every tool is written
as JSON, as its ``json`` presentation does.  Where it raises on a schema (``required`` that
is no list or names a property that is not there, ``properties`` that is no object,
``oneOf``/``anyOf`` that cannot be walked; with the Markdown presentation also a description
at the function's top that is no text), the format refuses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "FUNCTION_KEYS",
    "QUIET_KEYS",
    "RENDERED_KEYS",
    "ROOT_KEYS",
    "References",
    "definition_name",
    "presentable",
    "problem",
    "python_literal",
    "python_text",
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
"""The keys of a schema both presentations write in their own places; any other is written
after them (Markdown: as ``KEY: VALUE`` lines; XML: as attributes)."""

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


def definition_name(reference: Any) -> str | None:
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


def problem(
    definition: Mapping[str, Any], path: str, *, text_description: bool = True
) -> tuple[str, str, str] | None:
    """Where IFM-K2-Horizon's template raises on one tool (``definition``: its function
    object, at ``path``): (where, what was found, what was expected), or None.
    ``text_description``: the function's description must be text (the Markdown
    presentation joins it to text; the XML one prints any value)."""
    parameters = definition.get("parameters")
    description = definition.get("description")
    if text_description and description and not isinstance(description, str):
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
            if definition_name(value) is None:
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
    """Whether the template writes these tools (their function objects) in its pretty
    presentation (Markdown or XML): else it writes all of them as JSON."""
    return all(map(_plain_tool, definitions))


# ---------------------------------------------------------------------- values


def schema_type(spec: Any, join: str, array: str, close: str, booleans: bool = False) -> str:
    """A schema's type as a presentation names it: its types joined by ``join``, an array's
    items' type between ``array`` and ``close`` (XML: ``|``, ``array[``, ``]``; Markdown:
    `` or ``, ``array of ``, nothing); ``booleans``: a boolean schema is named ``True`` or
    ``False`` (Markdown), else ``any``."""
    if booleans and (spec is True or spec is False):
        return str(spec)
    if not isinstance(spec, dict):
        return "any"

    def inner(value: Any) -> str:
        return schema_type(value, join, array, close, booleans)

    def named(name: Any) -> str:
        if name == "array":
            return array + (inner(spec["items"]) if "items" in spec else "any") + close
        return str(name) if name else "any"

    kind = spec.get("type")
    if isinstance(kind, (list, tuple, dict)):  # (an object type: never presentable)
        return join.join(named(name) for name in kind) if kind else "any"
    if kind:
        return named(kind)
    if isinstance(spec.get("$ref"), str):
        return str(spec["$ref"].split("/")[-1])
    for key in ("oneOf", "anyOf"):
        if spec.get(key):
            return key + "[" + join.join(map(inner, spec[key])) + "]"
    if spec.get("properties"):
        return "object"
    if "items" in spec:
        return array + inner(spec["items"]) + close
    return "any"


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


# ---------------------------------------------------------------------- references


class References:
    """One tool's definitions (its parameters' ``$defs``, else ``definitions``) and those
    already written: a definition is written once per tool (kept as a pipe-delimited text,
    as the template tests it by substring).  Each presentation's writer extends it."""

    def __init__(self, parameters: Any) -> None:
        definitions: Any = {}
        if isinstance(parameters, dict):
            for key in ("$defs", "definitions"):
                if isinstance(parameters.get(key), dict):
                    definitions = parameters[key]
                    break
        self.definitions: dict[str, Any] = definitions
        self.seen = "|"

    def _merged(self, spec: dict[str, Any], name: str) -> dict[str, Any]:
        merged = dict(self.definitions[name])
        merged.update((key, value) for key, value in spec.items() if key != "$ref")
        self.seen += name + "|"
        return merged

    def _found(self, spec: dict[str, Any]) -> str | None:
        name = definition_name(spec.get("$ref"))
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
