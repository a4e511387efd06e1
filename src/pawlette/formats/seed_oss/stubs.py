"""Seed-OSS's tools block: each tool as a Python function stub with a docstring.

::

    Function:
    def get_weather(city: str,days: int):
        \"\"\"
        Get the weather.

        Args:
        - city (str) [必填]: City name
        - days (int) [选填]: Days ahead

        \"\"\"

A parameter's type is the Python name of its schema's ``type`` (``str``, ``int`` for
``number`` and ``integer``, ``bool``, ``list``; ``Any`` for anything else: an object, a list
of types, none); ``[必填]`` marks a required parameter, ``[选填]`` an optional one.  The
description is trimmed; a ``returns`` object with ``properties`` (a key beside
``parameters`` some callers give) is listed under ``Returns:`` (any other schema writes
nothing; a value that is no schema is refused before writing:
:class:`.concepts.StubTools`).  Every other schema keyword (enum, nested properties, items)
is not written: the model sees only these lines (a documented loss).  Reading a
conversation gives back what the stubs say (:mod:`.stub_reading`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_PYTHON_TYPES = {"string": "str", "number": "int", "integer": "int", "boolean": "bool"}
_PYTHON_TYPES["array"] = "list"
REQUIRED, OPTIONAL = " [必填]", " [选填]"
INDENT = "\n    "


def python_type(spec: Any) -> str:
    """The Python name the template gives a parameter's schema type."""
    kind = spec.get("type") if isinstance(spec, Mapping) else None
    return _PYTHON_TYPES.get(kind, "Any") if isinstance(kind, str) else "Any"


def _description(spec: Any) -> str:
    """``spec.description or ""`` as the template writes it after a parameter's colon."""
    value = spec.get("description") if isinstance(spec, Mapping) else None
    return "" if not value else _text(value)


def _text(value: Any) -> str:
    """A value as Jinja's ``string`` writes it (Python's ``str``)."""
    return value if isinstance(value, str) else str(value)


def _properties(schema: Any) -> Mapping[str, Any]:
    found = schema.get("properties") if isinstance(schema, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def stub(definition: Mapping[str, Any]) -> str:
    """One tool's function object as the template writes it, from ``def `` to the docstring's
    closing quotes (the block writes ``\\n\\nFunction:\\ndef `` before each)."""
    parameters = definition.get("parameters")
    properties = _properties(parameters)
    required = parameters.get("required") if isinstance(parameters, Mapping) else None
    names = required if isinstance(required, (list, tuple)) else ()
    signature = ",".join(f"{name}: {python_type(spec)}" for name, spec in properties.items())
    description = definition.get("description")
    parts = [
        f'{definition.get("name")}({signature}):{INDENT}"""{INDENT}',
        "" if "description" not in definition else _text(description).strip(),
        "\n\n",
    ]
    if properties:
        parts.append("    Args:")
        for name, spec in properties.items():
            marker = REQUIRED if name in names else OPTIONAL
            parts.append(f"{INDENT}- {name} ({python_type(spec)}){marker}: {_description(spec)}")
    parts.append("\n")
    returned = _properties(definition.get("returns"))
    if returned:
        parts.append("    Returns:")
        for name, spec in returned.items():
            parts.append(f"{INDENT}- {name} ({python_type(spec)}): {_description(spec)}")
    parts.append(f'{INDENT}"""')
    return "".join(parts)


# ---------------------------------------------------------------------- the Jinja template

JINJA_MACROS = (
    "{%- macro seed_type(spec) -%}"
    "{%- set kind = spec.type if spec is mapping and spec.type is defined else none -%}"
    "{%- if kind == 'string' -%}str{%- elif kind in ('number', 'integer') -%}int"
    "{%- elif kind == 'boolean' -%}bool{%- elif kind == 'array' -%}list"
    "{%- else -%}Any{%- endif -%}{%- endmacro -%}"
    "{%- macro seed_description(spec) -%}"
    "{%- if spec is mapping and spec.description -%}{{- spec.description | string -}}"
    "{%- endif -%}{%- endmacro -%}"
    "{%- macro seed_stub(tool) -%}"
    "{%- set parameters = tool.parameters if tool.parameters is defined else none -%}"
    "{%- set properties = parameters.properties if parameters is mapping "
    "and parameters.properties is defined and parameters.properties is mapping else {} -%}"
    "{%- set required = parameters.required if parameters is mapping "
    "and parameters.required is defined and parameters.required is sequence "
    "and parameters.required is not string else [] -%}"
    "{{- tool.name ~ '(' -}}"
    "{%- for name, spec in properties | items -%}"
    "{{- name ~ ': ' ~ seed_type(spec) -}}{%- if not loop.last -%},{%- endif -%}"
    "{%- endfor -%}"
    '{{- \'):\\n    """\\n    \' -}}'
    "{%- if tool.description is defined -%}{{- tool.description | string | trim -}}{%- endif -%}"
    "{{- '\\n\\n' -}}"
    "{%- if properties -%}{{- '    Args:' -}}"
    "{%- for name, spec in properties | items -%}"
    "{{- '\\n    - ' ~ name ~ ' (' ~ seed_type(spec) ~ ')' -}}"
    "{%- if name in required -%}{{- ' [必填]' -}}{%- else -%}{{- ' [选填]' -}}{%- endif -%}"
    "{{- ': ' ~ seed_description(spec) -}}"
    "{%- endfor -%}{%- endif -%}"
    "{{- '\\n' -}}"
    "{%- set returns = tool.returns if tool.returns is defined else none -%}"
    "{%- if returns is mapping and returns.properties is defined "
    "and returns.properties is mapping and returns.properties -%}{{- '    Returns:' -}}"
    "{%- for name, spec in returns.properties | items -%}"
    "{{- '\\n    - ' ~ name ~ ' (' ~ seed_type(spec) ~ '): ' ~ seed_description(spec) -}}"
    "{%- endfor -%}{%- endif -%}"
    '{{- \'\\n    """\' -}}'
    "{%- endmacro -%}"
)
"""The Jinja macros that write a stub as :func:`stub` does (``seed_stub(tool)``: ``tool``
the function object)."""
