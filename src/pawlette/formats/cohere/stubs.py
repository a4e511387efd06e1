"""Command R+'s tools listing: each tool as a Python function stub, as its tool-use template's
``json_to_python_type`` and ``new_tool_parser`` macros write it::

    ```python
    def get_weather(city: str, days: Optional[int] = None) -> List[Dict]:
        \"\"\"Get the current weather for a city.

        Args:
            city (str): The city name.
            days (Optional[int]): Days of forecast.
        \"\"\"
        pass
    ```

Stubs are joined by a blank line.  A parameter not in ``required`` is ``Optional[T] = None``
(the parameters keep their order: a required one after an optional one is written so).
Types: ``str``, ``float``, ``int`` and ``bool`` for the JSON types; ``List[Union[]]`` for
any array (the template reads ``items`` as the dictionary's method, never the schema);
``Dict[str, T]`` for an object, ``T`` its ``additionalProperties``; ``Union[A,B]`` for a
list of types; ``Union[]`` for a schema without a type, or one that is not an object.
Where the template fails, the stub is still written: an object without
``additionalProperties`` and a type name it does not know (``"null"``: the template recurses
without end) are ``Any``, a parameter without a description has an empty one, a tool without
``parameters`` none.

:func:`tools_text` is the writer's, :data:`JINJA_MACROS` the exported template's; both follow
the same rules branch for branch (the cross-artifact tests render both).  Reading a
conversation gives back the tools as far as their stubs say them (:mod:`.stub_reading`:
names, descriptions, parameters' types, required; not ``items``, ``enum`` or an object's
``properties``).
"""

# ruff: noqa: E501  (the Jinja macros as one text each)

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pawlette.codecs.python_stubs import Listing
from pawlette.declare import ToolsBlock
from pawlette.declare.readers import StubsReader
from pawlette.engine.kept import Kept, marshal_key

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import ReaderFactory

BASIC = {"string": "str", "number": "float", "integer": "int", "boolean": "bool"}
_MISSING = object()


def _text(value: Any) -> str:
    """A value as Jinja prints it (Python's ``str``; nothing for a missing one)."""
    if value is _MISSING:
        return ""
    return value if isinstance(value, str) else str(value)


def python_type(spec: Any) -> str:
    """A schema's Python type as the template's ``json_to_python_type`` writes it."""
    if spec is _MISSING:
        return "Any"  # (the template fails reading a type from nothing)
    if not isinstance(spec, Mapping) or "type" not in spec:
        return "Union[]"  # an undefined type is an empty iterable to the template
    kind = spec["type"]
    if isinstance(kind, str):
        if kind in BASIC:
            return BASIC[kind]
        if kind == "array":
            return "List[Union[]]"
        if kind == "object":
            return "Dict[str, " + python_type(spec.get("additionalProperties", _MISSING)) + "]"
        return "Any"  # (the template recurses into the name's letters without end)
    if isinstance(kind, (list, tuple, Mapping)):
        return "Union[" + ",".join(python_type({"type": item}) for item in kind) + "]"
    return "Any"


def _parameters(function: Mapping[str, Any]) -> tuple[Mapping[str, Any], Sequence[Any]]:
    parameters = function.get("parameters")
    if not isinstance(parameters, Mapping):
        return {}, ()
    properties = parameters.get("properties")
    required = parameters.get("required")
    return (
        properties if isinstance(properties, Mapping) else {},
        required if isinstance(required, (list, tuple)) else (),
    )


def stub(function: Mapping[str, Any]) -> str:
    """One tool (its ``function`` object) as the template's stub."""
    properties, required = _parameters(function)
    signature = []
    arguments = []
    for name, schema in properties.items():
        written = python_type(schema)
        optional = name not in required
        signature.append(f"{name}: " + (f"Optional[{written}] = None" if optional else written))
        shown = f"Optional[{written}]" if optional else written
        described = schema.get("description", _MISSING) if isinstance(schema, Mapping) else ""
        arguments.append(f"{name} ({shown}): {_text(described)}")
    text = (
        "```python\ndef "
        + _text(function.get("name", _MISSING))
        + "("
        + ", ".join(signature)
        + ') -> List[Dict]:\n    """'
        + _text(function.get("description", _MISSING))
    )
    if arguments:
        text += "\n\n    Args:\n        " + "\n        ".join(arguments)
    return text + '\n    """\n    pass\n```'


def tools_text(functions: Sequence[Mapping[str, Any]]) -> str:
    """The tools' stubs, a blank line apart."""
    return "\n\n".join(stub(function) for function in functions)


JINJA_MACROS = """{%- macro plus_type(spec) -%}
{%- if spec is not defined -%}{{- 'Any' -}}
{%- elif spec is not mapping or 'type' not in spec -%}{{- 'Union[]' -}}
{%- elif spec['type'] is string -%}
{%- if spec['type'] in {'string': 1, 'number': 1, 'integer': 1, 'boolean': 1} -%}
{{- {'string': 'str', 'number': 'float', 'integer': 'int', 'boolean': 'bool'}[spec['type']] -}}
{%- elif spec['type'] == 'array' -%}{{- 'List[Union[]]' -}}
{%- elif spec['type'] == 'object' -%}{{- 'Dict[str, ' ~ plus_type(spec['additionalProperties']) ~ ']' -}}
{%- else -%}{{- 'Any' -}}{%- endif -%}
{%- elif spec['type'] is iterable -%}
{{- 'Union[' -}}
{%- for item in spec['type'] -%}{{- plus_type({'type': item}) -}}{%- if not loop.last -%}{{- ',' -}}{%- endif -%}{%- endfor -%}
{{- ']' -}}
{%- else -%}{{- 'Any' -}}{%- endif -%}
{%- endmacro -%}
{%- macro plus_stub(function) -%}
{%- set parameters = function['parameters'] if function['parameters'] is defined and function['parameters'] is mapping else {} -%}
{%- set properties = parameters['properties'] if parameters['properties'] is defined and parameters['properties'] is mapping else {} -%}
{%- set required = parameters['required'] if parameters['required'] is defined and parameters['required'] is sequence and parameters['required'] is not string else [] -%}
{{- '```python\\ndef ' ~ (function['name'] if function['name'] is defined else '') ~ '(' -}}
{%- for name, schema in properties.items() -%}
{%- if not loop.first -%}{{- ', ' -}}{%- endif -%}
{{- name ~ ': ' -}}
{%- if name in required -%}{{- plus_type(schema) -}}{%- else -%}{{- 'Optional[' ~ plus_type(schema) ~ '] = None' -}}{%- endif -%}
{%- endfor -%}
{{- ') -> List[Dict]:\\n    \"\"\"' -}}
{{- function['description'] if function['description'] is defined else '' -}}
{%- if properties -%}
{{- '\\n\\n    Args:\\n        ' -}}
{%- for name, schema in properties.items() -%}
{%- if not loop.first -%}{{- '\\n        ' -}}{%- endif -%}
{{- name ~ ' (' -}}
{%- if name in required -%}{{- plus_type(schema) -}}{%- else -%}{{- 'Optional[' ~ plus_type(schema) ~ ']' -}}{%- endif -%}
{{- '): ' -}}
{%- if schema is mapping and schema['description'] is defined -%}{{- schema['description'] -}}{%- endif -%}
{%- endfor -%}
{%- endif -%}
{{- '\\n    \"\"\"\\n    pass\\n```' -}}
{%- endmacro -%}"""
"""The exported template's macros: :func:`python_type` and :func:`stub` as Jinja."""


class _StubsReader(StubsReader):
    """The listing after its heading, read back into the tools its stubs say
    (:mod:`.stub_reading`)."""

    __slots__ = ()

    def _listing(self, text: str) -> Listing:
        from .stub_reading import read_listing  # (it reads by writing: it imports this)

        return read_listing(text)


_STUBS: Kept[str] = Kept(limit=256, longest=1 << 14)
"""The tools' stubs, by the tools' content."""


@dataclass(frozen=True)
class PlusTools(ToolsBlock):
    """The tools in the first system turn, after its text: ``open`` (the ``## Available
    Tools`` heading), then the stubs (:func:`tools_text`; none without tools: the template's
    callers always pass a list), then ``close``."""

    def block(self, out: Render, *, separated: bool = False) -> None:
        out.fence(self.open, "tools")
        if out.tools:
            definitions = [tool.definition for tool in out.tools]
            # (Kept by the tools' content: the same tools come with every request.)
            text = _STUBS.get(
                marshal_key(definitions),
                lambda: tools_text([dict(definition) for definition in definitions]),
            )
            out.text(text, "tools")
        out.fence(self.close, "tools")

    def items_reader(self, table: Table) -> ReaderFactory:
        return _StubsReader

    def jinja_setup(self, out: Template) -> None:
        super().jinja_setup(out)
        out.macro("plus_stub", JINJA_MACROS)

    def jinja_block(self, out: Template, *, separated: bool = False) -> None:
        out.fence(self.open)
        out.out("{%- for tool in (tools or []) -%}")
        out.out("{%- if not loop.first -%}{{- '\\n\\n' -}}{%- endif -%}")
        out.out("{{- plus_stub(tool.function) -}}")
        out.out("{%- endfor -%}")
        out.fence(self.close)
