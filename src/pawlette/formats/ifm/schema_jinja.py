"""The exported chat template's Jinja that both of IFM-K2-Horizon's pretty presentations of
tools (Markdown and XML) read, as :mod:`.schema` is for their writers:

- ``ifm_presentable(tools)``: ``yes`` when the tools are written in the pretty presentation
  (else the block holds each tool's JSON), as :func:`.schema.presentable` tells;
- ``ifm_faults(tools, text_description)``: where the template raises on the tools, each
  followed by what was expected (empty: nowhere), as :func:`.schema.problem` finds it;
- ``ifm_py(value)``: a value as the template's Python literal;
- the ``ifm_refs`` namespace: the definitions of the tool being written and those already
  written, set by :func:`tool_references` and read by :func:`inline` (the fragment that
  replaces a schema's ``$ref``, as :meth:`.schema.References.inline` does).
"""

from __future__ import annotations

from .schema import FUNCTION_KEYS, QUIET_KEYS, ROOT_KEYS

__all__ = ["SHARED_MACROS", "inline", "jinja_list", "tool_references"]


def jinja_list(keys: tuple[str, ...]) -> str:
    """``keys`` as a Jinja list literal."""
    return "[" + ", ".join(f"'{key}'" for key in keys) + "]"


_ROOT_KEYS = jinja_list(ROOT_KEYS)
_FUNCTION_KEYS = jinja_list(FUNCTION_KEYS)
_QUIET = f"'{QUIET_KEYS}'"


def inline(name: str) -> str:
    """The Jinja that replaces the ``$ref`` of the schema in variable ``name`` by its
    definition, once per definition (the definition's own ``$ref`` replaced too)."""
    return (
        r"""
{%- if NAME is mapping and NAME['$ref'] is string -%}
{%- set target = ifm_ref_target(NAME['$ref']) -%}
{%- if target and ('|' ~ target[1:] ~ '|') not in ifm_refs.seen
    and ifm_refs.defs[target[1:]] is mapping -%}
{%- set ifm_refs.seen = ifm_refs.seen ~ target[1:] ~ '|' -%}
{%- set NAME = dict((ifm_refs.defs[target[1:]] | items | list)
    + (NAME | items | rejectattr('0', 'eq', '$ref') | list)) -%}
{%- if NAME['$ref'] is string -%}
{%- set target = ifm_ref_target(NAME['$ref']) -%}
{%- if target and ifm_refs.defs[target[1:]] is mapping -%}
{%- set ifm_refs.seen = ifm_refs.seen ~ target[1:] ~ '|' -%}
{%- set NAME = dict((ifm_refs.defs[target[1:]] | items | list)
    + (NAME | items | rejectattr('0', 'eq', '$ref') | list)) -%}
{%- endif -%}
{%- endif -%}
{%- endif -%}
{%- endif -%}"""
    ).replace("NAME", name)


def tool_references(parameters: str) -> str:
    """The Jinja that sets ``ifm_refs`` for a tool whose parameters are in variable
    ``parameters``, and replaces the parameters' own ``$ref`` (one level)."""
    return (
        r"""
{%- set ifm_refs.defs = {} -%}
{%- if NAME is mapping and NAME['$defs'] is mapping -%}
{%- set ifm_refs.defs = NAME['$defs'] -%}
{%- elif NAME is mapping and NAME['definitions'] is mapping -%}
{%- set ifm_refs.defs = NAME['definitions'] -%}
{%- endif -%}
{%- set ifm_refs.seen = '|' -%}
{%- if NAME is mapping and NAME['$ref'] is string -%}
{%- set target = ifm_ref_target(NAME['$ref']) -%}
{%- if target and ifm_refs.defs[target[1:]] is mapping -%}
{%- set ifm_refs.seen = ifm_refs.seen ~ target[1:] ~ '|' -%}
{%- set NAME = dict((ifm_refs.defs[target[1:]] | items | list)
    + (NAME | items | rejectattr('0', 'eq', '$ref') | list)) -%}
{%- endif -%}
{%- endif -%}"""
    ).replace("NAME", parameters)


_VALUES = r"""
{%- set ifm_refs = namespace(defs={}, seen='|') -%}
{%- macro ifm_ref_target(reference) -%}
{%- if reference.startswith('#/$defs/') -%}{{- '>' ~ reference[8:] -}}
{%- elif reference.startswith('#/definitions/') -%}{{- '>' ~ reference[14:] -}}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_py(value) -%}
{%- if value is string -%}
{{- "'" ~ (value.split() | join(' ') | replace('\\', '\\\\') | replace("'", "\\'")) ~ "'" -}}
{%- elif value is sameas true -%}{{- 'True' -}}
{%- elif value is sameas false -%}{{- 'False' -}}
{%- elif value is none -%}{{- 'None' -}}
{%- elif value is mapping -%}
{{- '{' -}}
{%- for key, item in value | items -%}
{%- if not loop.first -%}{{- ', ' -}}{%- endif -%}
{{- ifm_py(key) ~ ': ' ~ ifm_py(item) -}}
{%- endfor -%}
{{- '}' -}}
{%- elif value is sequence -%}
{{- '[' -}}
{%- for item in value -%}
{%- if not loop.first -%}{{- ', ' -}}{%- endif -%}
{{- ifm_py(item) -}}
{%- endfor -%}
{{- ']' -}}
{%- else -%}{{- value -}}
{%- endif -%}
{%- endmacro -%}
"""

_CLASSIFY = (
    r"""
{%- macro ifm_nests(value) -%}
{%- if value is mapping -%}{{- 'y' -}}
{%- elif value is sequence and value is not string -%}
{%- for item in value -%}{{- ifm_nests(item) -}}{%- endfor -%}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_flaws(spec) -%}
{%- if spec is mapping -%}
{%- for key, value in spec | items -%}
{%- if key == '$ref' -%}
{%- if not (value is string and (value.startswith('#/$defs/')
    or value.startswith('#/definitions/'))) -%}{{- 'x' -}}{%- endif -%}
{%- elif key == '$defs' or key == 'definitions' -%}
{%- if value is mapping -%}
{%- for definition_name, definition in value | items -%}
{{- ifm_flaws(definition) -}}
{%- endfor -%}
{%- else -%}{{- 'x' -}}
{%- endif -%}
{%- elif key == 'type' -%}
{%- if value is mapping -%}{{- 'x' -}}{%- endif -%}
{%- elif key == 'enum' or key == 'oneOf' or key == 'anyOf' -%}
{%- if value is string or value is mapping or value is not sequence -%}{{- 'x' -}}{%- endif -%}
{%- elif key == 'required' -%}
{%- if value and not spec.properties -%}{{- 'x' -}}{%- endif -%}
{%- elif key == 'items' or ('|' ~ key ~ '|') in """
    + _QUIET
    + r""" -%}
{%- elif value is mapping -%}
{%- for inner_key, item in value | items -%}{{- ifm_nests(item) -}}{%- endfor -%}
{%- elif value is sequence and value is not string -%}{{- ifm_nests(value) -}}
{%- endif -%}
{%- endfor -%}
{%- if spec.properties -%}
{%- for child_name, child in spec.properties | items -%}{{- ifm_flaws(child) -}}{%- endfor -%}
{%- endif -%}
{%- if 'items' in spec -%}{{- ifm_flaws(spec['items']) -}}{%- endif -%}
{%- for key in ['oneOf', 'anyOf'] if spec[key] -%}
{%- for child in spec[key] -%}{{- ifm_flaws(child) -}}{%- endfor -%}
{%- endfor -%}
{%- for key in ['additionalProperties', 'returns'] if spec[key] is mapping -%}
{{- ifm_flaws(spec[key]) -}}
{%- endfor -%}
{%- if spec.patternProperties is mapping -%}
{%- for pattern, child in spec.patternProperties | items -%}
{{- ifm_flaws(child) -}}
{%- endfor -%}
{%- endif -%}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_presentable(tools) -%}
{%- set found = namespace(flaws='') -%}
{%- for tool in tools -%}
{%- set function = tool.function -%}
{%- set parameters = function.parameters -%}
{%- if parameters is not defined or parameters is none -%}
{%- elif parameters is not mapping -%}{%- set found.flaws = found.flaws ~ 'x' -%}
{%- else -%}
{%- set found.flaws = found.flaws ~ ifm_flaws(parameters) -%}
{%- for key, value in parameters | items if key not in """
    + _ROOT_KEYS
    + r""" -%}
{%- if value is mapping or (value is sequence and value is not string) -%}
{%- set found.flaws = found.flaws ~ 'x' -%}
{%- endif -%}
{%- endfor -%}
{%- endif -%}
{%- if function.returns is mapping -%}
{%- set found.flaws = found.flaws ~ ifm_flaws(function.returns) -%}
{%- elif function.returns is not defined and function.response is mapping -%}
{%- set found.flaws = found.flaws ~ ifm_flaws(function.response) -%}
{%- endif -%}
{%- for key, value in function | items if key not in """
    + _FUNCTION_KEYS
    + r""" -%}
{%- if value is mapping or (value is sequence and value is not string) -%}
{%- set found.flaws = found.flaws ~ 'x' -%}
{%- endif -%}
{%- endfor -%}
{%- endfor -%}
{%- if not found.flaws -%}{{- 'yes' -}}{%- endif -%}
{%- endmacro -%}
"""
)

_FAULTS = r"""
{%- macro ifm_fault(spec, path, lenient, variant) -%}
{%- if spec is mapping -%}
{%- set required = spec.required if spec.required is defined else none -%}
{%- if spec.properties and spec.properties is not mapping -%}
{{- path ~ '.properties: expected an object of schemas' -}}
{%- elif not lenient and spec.required is defined
    and (required is string or required is not sequence) -%}
{{- path ~ '.required: expected a list of property names' -}}
{%- elif not lenient and spec.required is defined and required | length > 0
    and not spec.properties and not variant -%}
{{- path ~ '.required: expected properties that define its names' -}}
{%- elif not lenient and spec.required is defined and spec.properties
    and required | reject('in', spec.properties) | list -%}
{{- path ~ '.required: expected the names of properties in properties' -}}
{%- else -%}
{%- for key in ['oneOf', 'anyOf'] if spec[key] and spec[key] is not sequence -%}
{{- path ~ '.' ~ key ~ ': expected a list of schemas' -}}
{%- endfor -%}
{%- for key in ['$defs', 'definitions'] if spec[key] is mapping -%}
{%- for name, definition in spec[key] | items -%}
{{- ifm_fault(definition, path ~ '.' ~ key ~ '.' ~ name, true, false) -}}
{%- endfor -%}
{%- endfor -%}
{%- if spec.properties -%}
{%- for name, child in spec.properties | items -%}
{{- ifm_fault(child, path ~ '.properties.' ~ name, lenient, false) -}}
{%- endfor -%}
{%- endif -%}
{%- if 'items' in spec -%}
{{- ifm_fault(spec['items'], path ~ '.items', lenient, false) -}}
{%- endif -%}
{%- for key in ['oneOf', 'anyOf'] if spec[key] and spec[key] is sequence -%}
{%- for variant_spec in spec[key] -%}
{{- ifm_fault(variant_spec, path ~ '.' ~ key ~ '[' ~ loop.index0 ~ ']', lenient, true) -}}
{%- endfor -%}
{%- endfor -%}
{%- for key in ['additionalProperties', 'returns'] if spec[key] is mapping -%}
{{- ifm_fault(spec[key], path ~ '.' ~ key, lenient, false) -}}
{%- endfor -%}
{%- if spec.patternProperties is mapping -%}
{%- for pattern, child in spec.patternProperties | items -%}
{{- ifm_fault(child, path ~ '.patternProperties.' ~ pattern, lenient, false) -}}
{%- endfor -%}
{%- endif -%}
{%- endif -%}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_faults(tools, text_description) -%}
{%- for tool in tools -%}
{%- set function = tool.function -%}
{%- set path = 'tools[' ~ loop.index0 ~ '].function' -%}
{%- if text_description and function.description
    and function.description is not string -%}
{{- path ~ '.description: expected text' -}}
{%- endif -%}
{{- ifm_fault(function.parameters, path ~ '.parameters', false, false) -}}
{%- if function.returns is mapping -%}
{{- ifm_fault(function.returns, path ~ '.returns', false, false) -}}
{%- elif function.returns is not defined and function.response is mapping -%}
{{- ifm_fault(function.response, path ~ '.response', true, false) -}}
{%- endif -%}
{%- endfor -%}
{%- endmacro -%}
"""

SHARED_MACROS = (_VALUES + _CLASSIFY + _FAULTS).replace("\n    ", " ")
"""The shared macros (see the module docstring), each tag on one line."""
