"""The exported template's macros for Gemma 4's value syntax and tool declarations: the
counterparts of :mod:`.values` and :mod:`.declarations`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...declare.jinja import Template

_VALUES = r"""{%- macro gemma_value(value, quote_keys) -%}
{%- if value is string -%}{{- '<|"|>' ~ value ~ '<|"|>' -}}
{%- elif value is boolean -%}{{- 'true' if value else 'false' -}}
{%- elif value is mapping -%}{{- '{' ~ gemma_members(value, quote_keys) ~ '}' -}}
{%- elif value is sequence -%}{{- '[' -}}
{%- for item in value -%}{{- (',' if loop.index0 else '') ~ gemma_value(item, quote_keys) -}}
{%- endfor -%}
{{- ']' -}}
{%- else -%}{{- value -}}{%- endif -%}
{%- endmacro -%}
{%- macro gemma_members(value, quote_keys) -%}
{%- for key, item in value | dictsort -%}
{%- set name = ('<|"|>' ~ key ~ '<|"|>') if quote_keys else key -%}
{{- (',' if loop.index0 else '') ~ name ~ ':' ~ gemma_value(item, quote_keys) -}}
{%- endfor -%}
{%- endmacro -%}"""

_REQUIRED = r"""{%- macro gemma_required(names) -%}
{{- 'required:[' -}}{%- for name in names or [] -%}
{{- (',' if loop.index0 else '') ~ '<|"|>' ~ name ~ '<|"|>' -}}{%- endfor -%}{{- ']' -}}
{%- endmacro -%}
{%- macro gemma_items(items) -%}
{{- 'items:{' -}}
{%- set part = namespace(first=true) -%}
{%- for key, value in items | dictsort -%}{%- if value is not none -%}
{{- '' if part.first else ',' -}}{%- set part.first = false -%}
{%- if key == 'properties' -%}{{- 'properties:{' -}}{%- if value is mapping -%}
{{- gemma_parameters(value) -}}{%- endif -%}{{- '}' -}}
{%- elif key == 'required' -%}{{- gemma_required(value) -}}
{%- elif key == 'type' -%}
{%- if value is string -%}{{- 'type:' ~ gemma_value(value | upper, true) -}}
{%- else -%}{{- 'type:' ~ gemma_value(value | map('upper') | list, true) -}}{%- endif -%}
{%- else -%}{{- key ~ ':' ~ gemma_value(value, true) -}}
{%- endif -%}
{%- endif -%}{%- endfor -%}
{{- '}' -}}
{%- endmacro -%}"""

# The template's format_parameters, as the 31B-it template orders the parts (a comma before
# each part but the first); ``comma`` is that template's add_comma.
_PARAMETERS = r"""{%- macro gemma_parameters(properties) -%}
{%- set first = namespace(done=false) -%}
{%- for key, value in properties | dictsort -%}
{%- if key not in ['description', 'type', 'properties', 'required', 'nullable'] -%}
{{- ',' if first.done else '' -}}{%- set first.done = true -%}
{%- set comma = namespace(on=false) -%}
{{- key ~ ':{' -}}
{%- if value.description -%}{{- 'description:<|"|>' ~ value.description ~ '<|"|>' -}}
{%- set comma.on = true -%}{%- endif -%}
{%- set kind = (value.type | upper) if value.type is defined and value.type is not none else '' -%}
@INTERLEAVED_NULLABLE@
{%- if kind == 'STRING' -%}
{%- if value.enum -%}{{- ',' if comma.on else '' -}}{%- set comma.on = true -%}
{{- 'enum:' ~ gemma_value(value.enum, true) -}}{%- endif -%}
@INTERLEAVED_OBJECT@
{%- elif kind == 'ARRAY' -%}
{%- if value['items'] is mapping and value['items'] -%}@ARRAY_COMMA@
{{- gemma_items(value['items']) -}}
{%- endif -%}
{%- endif -%}
@NULLABLE_AND_OBJECT@
{{- ',' if comma.on else '' -}}{{- 'type:<|"|>' ~ kind ~ '<|"|>}' -}}
{%- endif -%}
{%- endfor -%}
{%- endmacro -%}"""

_NULLABLE = (
    "{%- if value.nullable -%}{{- ',' if comma.on else '' -}}{%- set comma.on = true -%}"
    "{{- 'nullable:true' -}}{%- endif -%}"
)

# An object parameter: its properties (or, without them, its own keys) and required names.
_OBJECT_31B = (
    "{%- if kind == 'OBJECT' -%}"
    "{{- ',' if comma.on else '' -}}{%- set comma.on = true -%}{{- 'properties:{' -}}"
    "{{- gemma_parameters(value.properties if value.properties is mapping else value) -}}"
    "{{- '}' -}}"
    "{%- if value.required -%}{{- ',' if comma.on else '' -}}{%- set comma.on = true -%}"
    "{{- gemma_required(value.required) -}}{%- endif -%}"
    "{%- endif -%}"
)
_OBJECT_INTERLEAVED = (
    "{%- elif kind == 'OBJECT' -%}{{- ',properties:{' -}}"
    "{{- gemma_parameters(value.properties if value.properties is mapping else value) -}}"
    "{{- '}' -}}"
    "{%- if value.required -%}{{- ',' ~ gemma_required(value.required) -}}{%- endif -%}"
)

_DECLARATION = r"""{%- macro gemma_declaration(function) -%}
{%- set described = function.description is defined and function.description is not none -%}
{{- 'declaration:' ~ function.name ~ '{description:<|"|>' -}}
{{- (function.description if described else '') ~ '<|"|>' -}}
{%- set parameters = function.parameters if function.parameters is defined else none -%}
{%- if parameters -%}
{{- ',parameters:{' -}}
{%- if parameters.properties -%}
{{- 'properties:{' ~ gemma_parameters(parameters.properties) ~ '},' -}}{%- endif -%}
{%- if parameters.required -%}{{- gemma_required(parameters.required) ~ ',' -}}{%- endif -%}
{%- if parameters.type -%}{{- 'type:<|"|>' ~ (parameters.type | upper) ~ '<|"|>}' -}}{%- endif -%}
{%- endif -%}
{%- if function.response is defined -%}
{%- set response = function.response or {} -%}
{{- ',response:{' -}}
{%- if response.description -%}{{- 'description:<|"|>' ~ response.description ~ '<|"|>,' -}}
{%- endif -%}
{%- if response.type is defined and (response.type | upper) == 'OBJECT' -%}
{{- 'type:<|"|>OBJECT<|"|>}' -}}{%- endif -%}
{%- endif -%}
{{- '}' -}}
{%- endmacro -%}"""


def define_values(out: Template) -> None:
    """``gemma_value(value, quote_keys)`` and ``gemma_members(object, quote_keys)``, once."""
    out.macro("gemma_values", _VALUES)


def define(out: Template, *, interleaved: bool) -> None:
    """The value macros and ``gemma_declaration(function)`` (``interleaved``: as the
    interleaved-thinking template writes declarations), once."""
    define_values(out)
    parameters = _PARAMETERS
    if interleaved:
        parameters = (
            parameters.replace("@INTERLEAVED_NULLABLE@", _NULLABLE)
            .replace("@INTERLEAVED_OBJECT@", _OBJECT_INTERLEAVED)
            .replace("@ARRAY_COMMA@", "{{- ',' -}}")
            .replace("@NULLABLE_AND_OBJECT@", "")
        )
    else:
        parameters = (
            parameters.replace("@INTERLEAVED_NULLABLE@", "")
            .replace("@INTERLEAVED_OBJECT@", "")
            .replace("@ARRAY_COMMA@", "{{- ',' if comma.on else '' -}}{%- set comma.on = true -%}")
            .replace("@NULLABLE_AND_OBJECT@", _NULLABLE + _OBJECT_31B)
        )
    out.macro("gemma_declarations", _REQUIRED + "\n" + parameters + "\n" + _DECLARATION)
