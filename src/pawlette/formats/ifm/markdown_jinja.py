"""The exported chat template's Jinja for IFM-K2-Horizon's Markdown presentation of tools:
macros that write what :mod:`.markdown` writes.

- ``ifm_md_presentable(tools)``: ``yes`` when the tools are written as Markdown (else the
  block holds each tool's JSON);
- ``ifm_md_listing(tools)``: the Markdown of the tools;
- ``ifm_md_faults(tools)``: where the template raises on the tools, each followed by what
  was expected (empty: nowhere), as :func:`.markdown.problem` finds it.

Every schema is written by ``ifm_md_node(mode, spec, indent, name, required)``: it replaces
the schema's ``$ref`` (as :meth:`.markdown._Tool.inline` does) and writes it as a parameter
line (``param``), as the lines below one (``details``: with its description, allowed values
and default; ``quiet``: without), or as parameters that are one schema (``root``).  The
definitions of the tool being written and those already written are in the ``ifm_md``
namespace.
"""

from __future__ import annotations

from .markdown import FUNCTION_KEYS, QUIET_KEYS, RENDERED_KEYS, ROOT_KEYS

__all__ = ["JINJA_MACROS"]


def _jinja_list(keys: tuple[str, ...]) -> str:
    """``keys`` as a Jinja list literal."""
    return "[" + ", ".join(f"'{key}'" for key in keys) + "]"


_RENDERED = _jinja_list(RENDERED_KEYS)
_ROOT_KEYS = _jinja_list(ROOT_KEYS)
_FUNCTION_KEYS = _jinja_list(FUNCTION_KEYS)
_QUIET = f"'{QUIET_KEYS}'"

_VALUES = r"""
{%- macro ifm_md_py(value) -%}
{%- if value is string -%}
{{- "'" ~ (value.split() | join(' ') | replace('\\', '\\\\') | replace("'", "\\'")) ~ "'" -}}
{%- elif value is sameas true -%}{{- 'True' -}}
{%- elif value is sameas false -%}{{- 'False' -}}
{%- elif value is none -%}{{- 'None' -}}
{%- elif value is mapping -%}
{{- '{' -}}
{%- for key, item in value | items -%}
{%- if not loop.first -%}{{- ', ' -}}{%- endif -%}
{{- ifm_md_py(key) ~ ': ' ~ ifm_md_py(item) -}}
{%- endfor -%}
{{- '}' -}}
{%- elif value is sequence -%}
{{- '[' -}}
{%- for item in value -%}
{%- if not loop.first -%}{{- ', ' -}}{%- endif -%}
{{- ifm_md_py(item) -}}
{%- endfor -%}
{{- ']' -}}
{%- else -%}{{- value -}}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_md_plain(value) -%}
{%- if value is string -%}{{- value if value else '""' -}}
{%- else -%}{{- ifm_md_py(value) -}}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_md_literal(value) -%}
{%- if value is string and not value -%}{{- '""' -}}
{%- elif value is string -%}{{- '`' ~ (value | replace('\n', '\\n')) ~ '`' -}}
{%- else -%}{{- '`' ~ ifm_md_py(value) ~ '`' -}}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_md_values(values) -%}
{%- for value in values -%}
{%- if not loop.first -%}{{- ', ' -}}{%- endif -%}
{{- ifm_md_literal(value) -}}
{%- endfor -%}
{%- endmacro -%}
"""

_TYPES = r"""
{%- macro ifm_md_kind(name, spec) -%}
{%- if name == 'array' -%}
{{- 'array of ' ~ (ifm_md_type(spec['items']) if 'items' in spec else 'any') -}}
{%- elif name -%}{{- name -}}
{%- else -%}{{- 'any' -}}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_md_type(spec) -%}
{%- if spec is sameas true or spec is sameas false -%}{{- spec -}}
{%- elif spec is not mapping -%}{{- 'any' -}}
{%- elif spec.type is defined and spec.type is sequence and spec.type is not string -%}
{%- for name in spec.type -%}
{%- if not loop.first -%}{{- ' or ' -}}{%- endif -%}
{{- ifm_md_kind(name, spec) -}}
{%- else -%}{{- 'any' -}}
{%- endfor -%}
{%- elif spec.type -%}{{- ifm_md_kind(spec.type, spec) -}}
{%- elif spec['$ref'] is string -%}{{- spec['$ref'].split('/') | last -}}
{%- elif spec.oneOf or spec.anyOf -%}
{%- set key = 'oneOf' if spec.oneOf else 'anyOf' -%}
{{- key ~ '[' -}}
{%- for variant in spec[key] -%}
{%- if not loop.first -%}{{- ' or ' -}}{%- endif -%}
{{- ifm_md_type(variant) -}}
{%- endfor -%}
{{- ']' -}}
{%- elif spec.properties -%}{{- 'object' -}}
{%- elif 'items' in spec -%}{{- 'array of ' ~ ifm_md_type(spec['items']) -}}
{%- else -%}{{- 'any' -}}
{%- endif -%}
{%- endmacro -%}
"""

_SCHEMAS = (
    r"""
{%- set ifm_md = namespace(defs={}, seen='|') -%}
{%- macro ifm_md_target(reference) -%}
{%- if reference.startswith('#/$defs/') -%}{{- '>' ~ reference[8:] -}}
{%- elif reference.startswith('#/definitions/') -%}{{- '>' ~ reference[14:] -}}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_md_node(mode, spec, indent, name, required) -%}
{%- if spec is mapping and spec['$ref'] is string -%}
{%- set target = ifm_md_target(spec['$ref']) -%}
{%- if target and ('|' ~ target[1:] ~ '|') not in ifm_md.seen
    and ifm_md.defs[target[1:]] is mapping -%}
{%- set ifm_md.seen = ifm_md.seen ~ target[1:] ~ '|' -%}
{%- set spec = dict((ifm_md.defs[target[1:]] | items | list)
    + (spec | items | rejectattr('0', 'eq', '$ref') | list)) -%}
{%- if spec['$ref'] is string -%}
{%- set target = ifm_md_target(spec['$ref']) -%}
{%- if target and ifm_md.defs[target[1:]] is mapping -%}
{%- set ifm_md.seen = ifm_md.seen ~ target[1:] ~ '|' -%}
{%- set spec = dict((ifm_md.defs[target[1:]] | items | list)
    + (spec | items | rejectattr('0', 'eq', '$ref') | list)) -%}
{%- endif -%}
{%- endif -%}
{%- endif -%}
{%- endif -%}
{%- if mode == 'param' -%}
{{- '\n' ~ indent ~ '- `' ~ name ~ '` *(' ~ ifm_md_type(spec) -}}
{%- if name in (required or []) -%}{{- ', required' -}}{%- endif -%}
{{- ')*' -}}
{%- if spec is mapping -%}
{%- if spec.description -%}
{{- ' - ' ~ (spec.description | string | replace('\n', '\n' ~ indent ~ '  ')) -}}
{%- endif -%}
{%- if spec.enum -%}
{{- '\n' ~ indent ~ '  - Allowed values: ' ~ ifm_md_values(spec.enum) -}}
{%- endif -%}
{%- if spec.default is defined -%}
{{- '\n' ~ indent ~ '  - Default: ' ~ ifm_md_literal(spec.default) -}}
{%- endif -%}
{%- endif -%}
{{- ifm_md_node('quiet', spec, indent, '', []) -}}
{%- elif mode == 'root' -%}
{%- if spec is mapping -%}
{{- ifm_md_notes(spec, true, '', '') ~ ifm_md_nested(spec, '') ~ ifm_md_extras(spec, '') -}}
{%- endif -%}
{%- elif spec is mapping -%}
{{- ifm_md_notes(spec, mode == 'details', indent, indent ~ '  ') -}}
{%- if spec.properties -%}
{%- for child_name, child in spec.properties | items -%}
{{- ifm_md_node('param', child, indent ~ '  ', child_name, spec.required) -}}
{%- endfor -%}
{%- endif -%}
{{- ifm_md_nested(spec, indent ~ '  ') ~ ifm_md_extras(spec, indent ~ '  ') -}}
{%- elif spec is not sameas true and spec is not sameas false -%}
{{- '\n' ~ indent ~ '  - Value: ' ~ ifm_md_literal(spec) -}}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_md_notes(spec, values, indent, inner) -%}
{%- if values and spec.description is defined -%}
{{- '\n' ~ inner ~ '- Description: '
    ~ ifm_md_plain(spec.description | string | replace('\n', '\n' ~ indent ~ '    ')) -}}
{%- endif -%}
{%- if values and spec.enum is defined -%}
{{- '\n' ~ inner ~ '- Allowed values: ' ~ ifm_md_values(spec.enum) -}}
{%- endif -%}
{%- if values and spec.default is defined -%}
{{- '\n' ~ inner ~ '- Default: ' ~ ifm_md_literal(spec.default) -}}
{%- endif -%}
{%- if spec.additionalProperties is mapping -%}
{{- '\n' ~ inner ~ '- Additional properties *(' ~ ifm_md_type(spec.additionalProperties) ~ ')*'
    ~ ifm_md_node('details', spec.additionalProperties, inner, '', []) -}}
{%- elif spec.additionalProperties is defined -%}
{{- '\n' ~ inner ~ '- Additional properties: ' ~ ifm_md_plain(spec.additionalProperties) -}}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_md_nested(spec, inner) -%}
{%- if 'items' in spec and spec['items'] is mapping -%}
{{- '\n' ~ inner ~ '- Items *(' ~ ifm_md_type(spec['items']) ~ ')*'
    ~ ifm_md_node('details', spec['items'], inner, '', []) -}}
{%- elif 'items' in spec -%}
{{- '\n' ~ inner ~ '- Items: ' ~ ifm_md_plain(spec['items']) -}}
{%- endif -%}
{%- for key in ['oneOf', 'anyOf'] if spec[key] -%}
{{- '\n' ~ inner ~ '- ' ~ key ~ ':' -}}
{%- for variant in spec[key] -%}
{{- '\n' ~ inner ~ '  - Variant ' ~ loop.index ~ ' *(' ~ ifm_md_type(variant) ~ ')*'
    ~ ifm_md_node('details', variant, inner ~ '  ', '', []) -}}
{%- endfor -%}
{%- endfor -%}
{%- if spec.patternProperties is mapping -%}
{{- '\n' ~ inner ~ '- Pattern properties:' -}}
{%- for pattern, child in spec.patternProperties | items -%}
{%- if child is mapping -%}
{{- '\n' ~ inner ~ '  - `' ~ pattern ~ '` *(' ~ ifm_md_type(child) ~ ')*'
    ~ ifm_md_node('details', child, inner ~ '  ', '', []) -}}
{%- else -%}
{{- '\n' ~ inner ~ '  - `' ~ pattern ~ '`: ' ~ ifm_md_plain(child) -}}
{%- endif -%}
{%- endfor -%}
{%- elif spec.patternProperties is defined -%}
{{- '\n' ~ inner ~ '- Pattern properties: ' ~ ifm_md_plain(spec.patternProperties) -}}
{%- endif -%}
{%- if spec.returns is mapping -%}
{{- '\n' ~ inner ~ '- Returns *(' ~ ifm_md_type(spec.returns) ~ ')*'
    ~ ifm_md_node('details', spec.returns, inner, '', []) -}}
{%- elif spec.returns is defined -%}
{{- '\n' ~ inner ~ '- Returns: ' ~ ifm_md_plain(spec.returns) -}}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_md_extras(spec, inner) -%}
{%- for key, value in spec | items if key not in """
    + _RENDERED
    + r""" -%}
{{- '\n' ~ inner ~ '- ' ~ key ~ ': ' ~ ifm_md_plain(value) -}}
{%- endfor -%}
{%- endmacro -%}
{%- macro ifm_md_listing(tools) -%}
{%- for tool in tools -%}
{%- set function = tool.function -%}
{%- set parameters = function.parameters -%}
{%- set ifm_md.defs = {} -%}
{%- if parameters is mapping and parameters['$defs'] is mapping -%}
{%- set ifm_md.defs = parameters['$defs'] -%}
{%- elif parameters is mapping and parameters['definitions'] is mapping -%}
{%- set ifm_md.defs = parameters['definitions'] -%}
{%- endif -%}
{%- set ifm_md.seen = '|' -%}
{%- if parameters is mapping and parameters['$ref'] is string -%}
{%- set target = ifm_md_target(parameters['$ref']) -%}
{%- if target and ifm_md.defs[target[1:]] is mapping -%}
{%- set ifm_md.seen = ifm_md.seen ~ target[1:] ~ '|' -%}
{%- set parameters = dict((ifm_md.defs[target[1:]] | items | list)
    + (parameters | items | rejectattr('0', 'eq', '$ref') | list)) -%}
{%- endif -%}
{%- endif -%}
{{- '\n## ' ~ function.name -}}
{%- if function.description -%}{{- '\n' ~ function.description -}}{%- endif -%}
{{- '\n\n**Parameters**' -}}
{%- if parameters and parameters.properties -%}
{%- for name, child in parameters.properties | items -%}
{{- ifm_md_node('param', child, '', name, parameters.required) -}}
{%- endfor -%}
{%- elif parameters is mapping
    and (parameters.oneOf or parameters.anyOf or 'items' in parameters) -%}
{{- ifm_md_node('root', parameters, '', '', []) -}}
{%- else -%}
{{- '\n- None' -}}
{%- endif -%}
{%- set key = 'returns' if function.returns is defined else 'response' -%}
{%- if function[key] is mapping -%}
{{- '\n\n**Returns**\n- Return *(' ~ ifm_md_type(function[key]) ~ ')*'
    ~ ifm_md_node('details', function[key], '', '', []) -}}
{%- elif function[key] is defined -%}
{{- '\n\n**Returns**\n- ' ~ ifm_md_plain(function[key]) -}}
{%- endif -%}
{%- if not loop.last -%}{{- '\n' -}}{%- endif -%}
{%- endfor -%}
{%- endmacro -%}
"""
)

_CLASSIFY = (
    r"""
{%- macro ifm_md_nests(value) -%}
{%- if value is mapping -%}{{- 'y' -}}
{%- elif value is sequence and value is not string -%}
{%- for item in value -%}{{- ifm_md_nests(item) -}}{%- endfor -%}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_md_flaws(spec) -%}
{%- if spec is mapping -%}
{%- for key, value in spec | items -%}
{%- if key == '$ref' -%}
{%- if not (value is string and (value.startswith('#/$defs/')
    or value.startswith('#/definitions/'))) -%}{{- 'x' -}}{%- endif -%}
{%- elif key == '$defs' or key == 'definitions' -%}
{%- if value is mapping -%}
{%- for definition_name, definition in value | items -%}
{{- ifm_md_flaws(definition) -}}
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
{%- for inner_key, item in value | items -%}{{- ifm_md_nests(item) -}}{%- endfor -%}
{%- elif value is sequence and value is not string -%}{{- ifm_md_nests(value) -}}
{%- endif -%}
{%- endfor -%}
{%- if spec.properties -%}
{%- for child_name, child in spec.properties | items -%}{{- ifm_md_flaws(child) -}}{%- endfor -%}
{%- endif -%}
{%- if 'items' in spec -%}{{- ifm_md_flaws(spec['items']) -}}{%- endif -%}
{%- for key in ['oneOf', 'anyOf'] if spec[key] -%}
{%- for child in spec[key] -%}{{- ifm_md_flaws(child) -}}{%- endfor -%}
{%- endfor -%}
{%- for key in ['additionalProperties', 'returns'] if spec[key] is mapping -%}
{{- ifm_md_flaws(spec[key]) -}}
{%- endfor -%}
{%- if spec.patternProperties is mapping -%}
{%- for pattern, child in spec.patternProperties | items -%}
{{- ifm_md_flaws(child) -}}
{%- endfor -%}
{%- endif -%}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_md_presentable(tools) -%}
{%- set found = namespace(flaws='') -%}
{%- for tool in tools -%}
{%- set function = tool.function -%}
{%- set parameters = function.parameters -%}
{%- if parameters is not defined or parameters is none -%}
{%- elif parameters is not mapping -%}{%- set found.flaws = found.flaws ~ 'x' -%}
{%- else -%}
{%- set found.flaws = found.flaws ~ ifm_md_flaws(parameters) -%}
{%- for key, value in parameters | items if key not in """
    + _ROOT_KEYS
    + r""" -%}
{%- if value is mapping or (value is sequence and value is not string) -%}
{%- set found.flaws = found.flaws ~ 'x' -%}
{%- endif -%}
{%- endfor -%}
{%- endif -%}
{%- if function.returns is mapping -%}
{%- set found.flaws = found.flaws ~ ifm_md_flaws(function.returns) -%}
{%- elif function.returns is not defined and function.response is mapping -%}
{%- set found.flaws = found.flaws ~ ifm_md_flaws(function.response) -%}
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
{%- macro ifm_md_fault(spec, path, lenient, variant) -%}
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
{{- ifm_md_fault(definition, path ~ '.' ~ key ~ '.' ~ name, true, false) -}}
{%- endfor -%}
{%- endfor -%}
{%- if spec.properties -%}
{%- for name, child in spec.properties | items -%}
{{- ifm_md_fault(child, path ~ '.properties.' ~ name, lenient, false) -}}
{%- endfor -%}
{%- endif -%}
{%- if 'items' in spec -%}
{{- ifm_md_fault(spec['items'], path ~ '.items', lenient, false) -}}
{%- endif -%}
{%- for key in ['oneOf', 'anyOf'] if spec[key] and spec[key] is sequence -%}
{%- for variant_spec in spec[key] -%}
{{- ifm_md_fault(variant_spec, path ~ '.' ~ key ~ '[' ~ loop.index0 ~ ']', lenient, true) -}}
{%- endfor -%}
{%- endfor -%}
{%- for key in ['additionalProperties', 'returns'] if spec[key] is mapping -%}
{{- ifm_md_fault(spec[key], path ~ '.' ~ key, lenient, false) -}}
{%- endfor -%}
{%- if spec.patternProperties is mapping -%}
{%- for pattern, child in spec.patternProperties | items -%}
{{- ifm_md_fault(child, path ~ '.patternProperties.' ~ pattern, lenient, false) -}}
{%- endfor -%}
{%- endif -%}
{%- endif -%}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_md_faults(tools) -%}
{%- for tool in tools -%}
{%- set function = tool.function -%}
{%- set path = 'tools[' ~ loop.index0 ~ '].function' -%}
{%- if function.description and function.description is not string -%}
{{- path ~ '.description: expected text' -}}
{%- endif -%}
{{- ifm_md_fault(function.parameters, path ~ '.parameters', false, false) -}}
{%- if function.returns is mapping -%}
{{- ifm_md_fault(function.returns, path ~ '.returns', false, false) -}}
{%- elif function.returns is not defined and function.response is mapping -%}
{{- ifm_md_fault(function.response, path ~ '.response', true, false) -}}
{%- endif -%}
{%- endfor -%}
{%- endmacro -%}
"""

JINJA_MACROS = (_VALUES + _TYPES + _SCHEMAS + _CLASSIFY + _FAULTS).replace("\n    ", " ")
"""The macros (see the module docstring), one source: each tag on one line (the source
above wraps the long ones for reading; the exported template's lines are merged line by
line when a switch picks the presentation)."""
