"""The exported chat template's Jinja for IFM-K2-Horizon's Markdown presentation of tools:
macros that write what :mod:`.markdown` writes, beside those both pretty presentations read
(:mod:`.schema_jinja`: whether the tools are written so, where the template raises).

- ``ifm_md_listing(tools)``: the Markdown of the tools.

Every schema is written by ``ifm_md_node(mode, spec, indent, name, required)``: it replaces
the schema's ``$ref`` (:func:`.schema_jinja.inline`) and writes it as a parameter line
(``param``), as the lines below one (``details``: with its description, allowed values and
default; ``quiet``: without), or as parameters that are one schema (``root``).
"""

from __future__ import annotations

from .schema import RENDERED_KEYS
from .schema_jinja import inline, jinja_list, tool_references

__all__ = ["JINJA_MACROS"]


_RENDERED = jinja_list(RENDERED_KEYS)

_VALUES = r"""
{%- macro ifm_md_plain(value) -%}
{%- if value is string -%}{{- value if value else '""' -}}
{%- else -%}{{- ifm_py(value) -}}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_md_literal(value) -%}
{%- if value is string and not value -%}{{- '""' -}}
{%- elif value is string -%}{{- '`' ~ (value | replace('\n', '\\n')) ~ '`' -}}
{%- else -%}{{- '`' ~ ifm_py(value) ~ '`' -}}
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
{%- macro ifm_md_node(mode, spec, indent, name, required) -%}
"""
    + inline("spec")
    + r"""
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
"""
    + tool_references("parameters")
    + r"""
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

JINJA_MACROS = (_VALUES + _TYPES + _SCHEMAS).replace("\n    ", " ")
"""The macros (see the module docstring), one source: each tag on one line (the source
above wraps the long ones for reading; the exported template's lines are merged line by
line when a switch picks the presentation)."""
