"""The exported chat template's Jinja for IFM-K2-Horizon's XML presentation of tools: macros
that write what :mod:`.xml` writes, beside those both pretty presentations read
(:mod:`.schema_jinja`: whether the tools are written so, where the template raises).

- ``ifm_xml_listing(tools)``: the XML of the tools.

Every schema is written by ``ifm_xml_node(mode, tag, spec, required)``: it replaces the
schema's ``$ref`` (:func:`.schema_jinja.inline`) and writes it as a parameter
(``param``: ``tag`` is its name), as a nested schema (``node``: ``<items>``,
``<variant>``...) or as a pattern property (``pattern``: ``tag`` is the pattern).
"""

from __future__ import annotations

from .schema import RENDERED_KEYS
from .schema_jinja import inline, jinja_list, tool_references

__all__ = ["JINJA_MACROS"]

_RENDERED = jinja_list(RENDERED_KEYS)

_VALUES = r"""
{%- macro ifm_xml_value(value) -%}
{%- if value is string -%}{{- value.split() | join(' ') -}}
{%- else -%}{{- ifm_py(value) -}}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_xml_quoted(value) -%}
{%- set text = value if value is string else ifm_py(value) -%}
{{- '"' ~ (text | replace('\\', '\\\\') | replace('"', '\\"')) ~ '"' -}}
{%- endmacro -%}
{%- macro ifm_xml_attribute(name, value) -%}
{{- ' ' ~ name ~ '=' ~ ('""' if value is string and not value else ifm_xml_value(value)) -}}
{%- endmacro -%}
{%- macro ifm_xml_type(spec) -%}
{%- if spec is not mapping -%}{{- 'any' -}}
{%- elif spec.type is defined and spec.type is sequence and spec.type is not string -%}
{%- for name in spec.type -%}
{%- if not loop.first -%}{{- '|' -}}{%- endif -%}
{{- ifm_xml_kind(name, spec) -}}
{%- else -%}{{- 'any' -}}
{%- endfor -%}
{%- elif spec.type -%}{{- ifm_xml_kind(spec.type, spec) -}}
{%- elif spec['$ref'] is string -%}{{- spec['$ref'].split('/') | last -}}
{%- elif spec.oneOf or spec.anyOf -%}
{%- set key = 'oneOf' if spec.oneOf else 'anyOf' -%}
{{- key ~ '[' -}}
{%- for variant in spec[key] -%}
{%- if not loop.first -%}{{- '|' -}}{%- endif -%}
{{- ifm_xml_type(variant) -}}
{%- endfor -%}
{{- ']' -}}
{%- elif spec.properties -%}{{- 'object' -}}
{%- elif 'items' in spec -%}{{- 'array[' ~ ifm_xml_type(spec['items']) ~ ']' -}}
{%- else -%}{{- 'any' -}}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_xml_kind(name, spec) -%}
{%- if name == 'array' -%}
{{- 'array[' ~ (ifm_xml_type(spec['items']) if 'items' in spec else 'any') ~ ']' -}}
{%- elif name -%}{{- name -}}
{%- else -%}{{- 'any' -}}
{%- endif -%}
{%- endmacro -%}
"""

_SCHEMAS = (
    r"""
{%- macro ifm_xml_attributes(spec) -%}
{%- if spec.enum -%}
{{- ' enum=' -}}
{%- for value in spec.enum -%}
{%- if not loop.first -%}{{- '|' -}}{%- endif -%}
{{- ifm_xml_quoted(value) -}}
{%- endfor -%}
{%- endif -%}
{%- if spec.default is defined -%}
{{- ' default=' ~ (ifm_xml_quoted(spec.default) if spec.default is string
    else ifm_xml_value(spec.default)) -}}
{%- endif -%}
{%- for key in ['additionalProperties', 'patternProperties']
    if spec[key] is defined and spec[key] is not mapping -%}
{{- ifm_xml_attribute(key, spec[key]) -}}
{%- endfor -%}
{%- for key, value in spec | items if key not in """
    + _RENDERED
    + r""" -%}
{{- ifm_xml_attribute(key, value) -}}
{%- endfor -%}
{%- endmacro -%}
{%- macro ifm_xml_has_children(spec, description) -%}
{%- if (description and spec.description is defined) or spec.properties or 'items' in spec
    or spec.oneOf or spec.anyOf or spec.additionalProperties is mapping
    or spec.patternProperties is mapping or spec.returns is defined -%}{{- 'yes' -}}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_xml_children(spec, description) -%}
{%- if description and spec.description is defined -%}
{{- '<description>' ~ spec.description ~ '</description>' -}}
{%- endif -%}
{%- if spec.properties -%}
{%- for name, child in spec.properties | items -%}
{{- ifm_xml_node('param', name, child, spec.required) -}}
{%- endfor -%}
{%- endif -%}
{%- if 'items' in spec -%}{{- ifm_xml_node('node', 'items', spec['items'], []) -}}{%- endif -%}
{%- for key in ['oneOf', 'anyOf'] if spec[key] -%}
{{- '<' ~ key ~ '>' -}}
{%- for variant in spec[key] -%}{{- ifm_xml_node('node', 'variant', variant, []) -}}{%- endfor -%}
{{- '</' ~ key ~ '>' -}}
{%- endfor -%}
{%- if spec.additionalProperties is mapping -%}
{{- ifm_xml_node('node', 'additionalProperties', spec.additionalProperties, []) -}}
{%- endif -%}
{%- if spec.patternProperties is mapping -%}
{{- '<patternProperties>' -}}
{%- for pattern, child in spec.patternProperties | items -%}
{{- ifm_xml_node('pattern', pattern, child, []) -}}
{%- endfor -%}
{{- '</patternProperties>' -}}
{%- elif spec.patternProperties is defined -%}
{{- '<patternProperties>' ~ ifm_xml_value(spec.patternProperties) ~ '</patternProperties>' -}}
{%- endif -%}
{%- if spec.returns is mapping -%}
{{- ifm_xml_node('node', 'returns', spec.returns, []) -}}
{%- elif spec.returns is defined -%}
{{- '<returns>' ~ ifm_xml_value(spec.returns) ~ '</returns>' -}}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_xml_node(mode, tag, spec, required) -%}
"""
    + inline("spec")
    + r"""
{%- if mode == 'param' -%}
{{- '<param name=' ~ tag ~ ' type=' ~ ifm_xml_type(spec) -}}
{%- if tag in (required or []) -%}{{- ' required=true' -}}{%- endif -%}
{%- if spec is not mapping -%}{{- '/>' -}}
{%- else -%}
{{- ifm_xml_attributes(spec) -}}
{%- if spec.description or ifm_xml_has_children(spec, false) -%}
{{- '>' -}}
{%- if spec.description -%}{{- spec.description -}}{%- endif -%}
{{- ifm_xml_children(spec, false) ~ '</param>' -}}
{%- else -%}{{- '/>' -}}
{%- endif -%}
{%- endif -%}
{%- else -%}
{%- set name = 'patternProperty' if mode == 'pattern' else tag -%}
{%- set head = '<patternProperty' ~ ifm_xml_attribute('pattern', tag)
    if mode == 'pattern' else '<' ~ tag -%}
{%- if spec is not mapping -%}
{{- head ~ '>' ~ ifm_xml_value(spec) ~ '</' ~ name ~ '>' -}}
{%- else -%}
{{- head ~ ' type=' ~ ifm_xml_type(spec) ~ ifm_xml_attributes(spec) -}}
{%- if ifm_xml_has_children(spec, true) -%}
{{- '>' ~ ifm_xml_children(spec, true) ~ '</' ~ name ~ '>' -}}
{%- else -%}{{- '/>' -}}
{%- endif -%}
{%- endif -%}
{%- endif -%}
{%- endmacro -%}
{%- macro ifm_xml_listing(tools) -%}
{%- for tool in tools -%}
{%- set function = tool.function -%}
{%- set parameters = function.parameters -%}
"""
    + tool_references("parameters")
    + r"""
{{- '\n<function name=' ~ function.name ~ '>' -}}
{%- if function.description -%}
{{- '<description>' ~ function.description ~ '</description>' -}}
{%- endif -%}
{{- '<parameters>' -}}
{%- if parameters and parameters.properties -%}
{%- for name, child in parameters.properties | items -%}
{{- ifm_xml_node('param', name, child, parameters.required) -}}
{%- endfor -%}
{%- elif parameters is mapping
    and (parameters.oneOf or parameters.anyOf or 'items' in parameters) -%}
{{- ifm_xml_children(parameters, false) -}}
{%- endif -%}
{{- '</parameters>' -}}
{%- set key = 'returns' if function.returns is defined else 'response' -%}
{%- if function[key] is mapping -%}
{{- ifm_xml_node('node', 'returns', function[key], []) -}}
{%- elif function[key] is defined -%}
{{- '<returns>' ~ ifm_xml_value(function[key]) ~ '</returns>' -}}
{%- endif -%}
{{- '</function>' -}}
{%- endfor -%}
{%- endmacro -%}
"""
)

JINJA_MACROS = (_VALUES + _SCHEMAS).replace("\n    ", " ")
"""The macros (see the module docstring), one source: each tag on one line (the source
above wraps the long ones for reading)."""
