"""Jinja pieces the exported chat templates share.

Every template is written for the environment transformers compiles chat templates in
(``ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`` plus its
``generation`` tag, ``raise_exception`` and a ``tojson`` that takes ``separators``), and uses
only what llama.cpp's own Jinja engine (checked in the tests) and transformers.js (checked by
hand) also implement: the list is in ``pawlette/export/README.md``.  In particular: no Python
string methods, no ``//`` (llama.cpp has no such operator), string literals with only the
escapes every lexer knows (:func:`jinja_string`), no namespace attribute named like a dict
method (llama.cpp resolves ``ns.values`` to the method), string slices but never ``text[i]``,
and no slice that starts past the end of its string.  Every tag strips the whitespace around it
(``{%- ... -%}``), and literal text is written as ``{{- '...' -}}`` expressions, so the output
does not depend on ``trim_blocks``/``lstrip_blocks``.
"""

# ruff: noqa: E501  (Jinja source: one tag per line reads better than wrapped tags)

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..codecs.python_literals import REPR_ESCAPED

# The escapes every engine's lexer knows (llama.cpp's knows only these; no \x, \u or \0).
_LITERAL_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
    "\v": "\\v",
}


def jinja_string(text: str) -> str:
    """``text`` as a double-quoted Jinja string literal that every engine reads the same way.

    Only the escapes all lexers know are used (backslash, quote, ``\\n \\r \\t \\b \\f
    \\v``); other characters, control characters included, are written raw.  A NUL cannot be
    written (engines reading the template as a C string would stop there).
    """
    if "\0" in text:
        raise ValueError(f"{text!r}: a NUL cannot be written in a chat template")
    return '"' + "".join(_LITERAL_ESCAPES.get(character, character) for character in text) + '"'


def jinja_list(items: Iterable[str]) -> str:
    return "[" + ", ".join(jinja_string(item) for item in items) + "]"


def jinja_mapping(items: Mapping[str, str]) -> str:
    """A Jinja dict literal: string keys, values already written as Jinja expressions."""
    return "{" + ", ".join(f"{jinja_string(key)}: {value}" for key, value in items.items()) + "}"


# Checks every template makes, written once: a template's body names them by placeholder.
_FUNCTION_OBJECT = """{%- if tool.function is not defined or tool.function is not mapping -%}
{{- raise_exception('tools[' ~ loop.index0 ~ '].function: missing; expected a function object') -}}
{%- endif -%}"""
_FRAGMENTS = {
    # Inside ``for message in messages``: its ``index`` and ``role`` (developer is system).
    "@MESSAGE_ROLE@": """{%- set index = loop.index0 -%}
{%- set role = 'system' if message.role == 'developer' else message.role -%}""",
    "@CHECK_ROLE@": """{%- if role not in ['system', 'user', 'assistant', 'tool'] -%}
{{- raise_exception('messages[' ~ index ~ '].role: ' ~ message.role ~ '; expected system, user, assistant or tool') -}}
{%- endif -%}""",
    "@CHECK_CALLS_ON_ASSISTANT@": """{%- if role != 'assistant' and message.tool_calls is defined and message.tool_calls -%}
{{- raise_exception('messages[' ~ index ~ '].tool_calls: on a ' ~ role ~ ' message; expected them on assistant messages') -}}
{%- endif -%}""",
    # Inside ``for tool in tools``.
    "@CHECK_FUNCTION_OBJECT@": _FUNCTION_OBJECT,
    # Every tool, for formats that write function tools only.
    "@CHECK_FUNCTION_TOOLS@": """{%- for tool in tools -%}
{%- if tool.type is defined and tool.type != 'function' -%}
{{- raise_exception('tools[' ~ loop.index0 ~ '].type: ' ~ tool.type ~ '; expected function') -}}
{%- endif -%}
"""
    + _FUNCTION_OBJECT
    + "\n{%- endfor -%}",
}


def fill(body: str, values: Mapping[str, str]) -> str:
    """``body`` with its ``@NAME@`` placeholders replaced: by ``values`` (Jinja source), then
    by the shared fragments above."""
    for placeholder, value in {**values, **_FRAGMENTS}.items():
        body = body.replace(placeholder, value)
    return body


def escape_macro(markers: Iterable[str]) -> str:
    """``escape(text, before_marker)``: the writer's backslash escaping of markers in text.

    It is :func:`pawlette.engine.lexer.escape_text`: scan for the leftmost, longest marker; a
    run of ``k`` backslashes before it becomes ``2k + 1``; with ``before_marker`` (a marker
    is written right after the text) a run at the very end is doubled.  Texts without a marker and without a trailing backslash take the fast path.
    Only slices are used, never ``text[i]``: transformers.js measures ``length`` in UTF-16
    units but slices by code point, llama.cpp measures and slices bytes; looping over
    ``range(length)`` with slices visits every position in each (extra positions slice to
    ``''`` and are skipped), and text between markers is copied whole.  The scan goes in blocks
    of 256 positions (``range(0, size, 256)``: llama.cpp has no ``//``) and skips a block
    without a marker's first character or a backslash, which keeps long texts fast and every
    ``range`` under the 100000 Python's sandbox allows.
    """
    ordered = sorted(set(markers), key=lambda marker: (-len(marker), marker))
    starts = "".join(sorted({marker[0] for marker in ordered}))
    return (
        "{%- set escape_markers = " + jinja_list(ordered) + " -%}\n"
        "{%- set escape_starts = " + jinja_string(starts) + " -%}\n"
        "{%- set escape_triggers = " + jinja_list([*starts, "\\"]) + " -%}\n"
        r"""{%- macro escape(text, before_marker) -%}
{%- set scan = namespace(found=false) -%}
{%- for marker in escape_markers -%}
{%- if marker in text -%}{%- set scan.found = true -%}{%- endif -%}
{%- endfor -%}
{%- if not scan.found and (not before_marker or not text or text[-1:] != '\\') -%}
{{- text -}}
{%- else -%}
{%- set scan = namespace(out='', last=0, skip=0, run=0, hit='') -%}
{%- set size = text|length -%}
{%- for start in range(0, size, 256) -%}
{%- set stop = start + 256 if start + 256 < size else size -%}
{%- set piece = text[start:stop] -%}
{%- set look = namespace(busy=false) -%}
{%- for trigger in escape_triggers -%}
{%- if trigger in piece -%}{%- set look.busy = true -%}{%- endif -%}
{%- endfor -%}
{%- if not look.busy -%}
{%- if piece -%}{%- set scan.run = 0 -%}{%- endif -%}
{%- else -%}
{%- for i in range(start, stop) -%}
{%- set char = text[i:i + 1] -%}
{%- if i >= scan.skip and char -%}
{%- set scan.hit = '' -%}
{%- if char in escape_starts -%}
{%- for marker in escape_markers -%}
{%- if not scan.hit and i + marker|length <= size and text[i:i + marker|length] == marker -%}{%- set scan.hit = marker -%}{%- endif -%}
{%- endfor -%}
{%- endif -%}
{%- if scan.hit -%}
{%- set scan.out = scan.out ~ text[scan.last:i] ~ text[i - scan.run:i] ~ '\\' ~ scan.hit -%}
{%- set scan.skip = i + scan.hit|length -%}
{%- set scan.last = scan.skip -%}
{%- set scan.run = 0 -%}
{%- elif char == '\\' -%}
{%- set scan.run = scan.run + 1 -%}
{%- else -%}
{%- set scan.run = 0 -%}
{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- endif -%}
{%- endfor -%}
{{- scan.out ~ text[scan.last:] ~ (text[-scan.run:] if scan.run and before_marker else '') -}}
{%- endif -%}
{%- endmacro -%}
"""
    )


TEXT_MACRO = r"""{%- macro text_of(message, index, format_name) -%}
{%- if message.content is string -%}
{{- message.content -}}
{%- elif message.content is defined and message.content is not none -%}
{%- for part in message.content -%}
{%- if part.type == 'text' -%}
{{- part.text -}}
{%- else -%}
{{- raise_exception('messages[' ~ index ~ '].content[' ~ loop.index0 ~ ']: a ' ~ part.type ~ ' part; ' ~ format_name ~ ' writes text parts only') -}}
{%- endif -%}
{%- endfor -%}
{%- endif -%}
{%- endmacro -%}
"""
"""``text_of(message, index, format_name)``: a message's text (string or text parts)."""


def _python_escapes() -> list[tuple[str, str]]:
    """Python's escapes of the characters ``repr`` does not write raw, NUL left out (see
    :data:`PYTHON_LITERAL_MACROS`)."""
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    codes = [*range(1, 0x20), *range(0x7F, 0xA0)]
    return [(chr(code), named.get(chr(code), f"\\x{code:02x}")) for code in codes]


def _repr_escapes() -> list[tuple[str, str]]:
    """What ``quote="repr"`` escapes beyond :func:`_python_escapes`
    (:data:`pawlette.codecs.python_literals.REPR_ESCAPED`)."""
    return [
        (
            character,
            f"\\x{ord(character):02x}" if ord(character) < 0x100 else f"\\u{ord(character):04x}",
        )
        for character in REPR_ESCAPED
    ]


# A NUL has no literal every engine reads, so it is found with ``tojson`` (which writes it
# ``\u0000`` everywhere): once in the text with its backslashes removed (so ``\u0000`` can only
# come from a NUL), then, when there is one, character by character.
PYTHON_LITERAL_MACROS = (
    "{%- set python_escapes = ["
    + ", ".join(
        f"[{jinja_string(character)}, {jinja_string(escaped)}]"
        for character, escaped in _python_escapes()
    )
    + "] -%}\n"
    + "{%- set repr_escapes = ["
    + ", ".join(
        f"[{jinja_string(character)}, {jinja_string(escaped)}]"
        for character, escaped in _repr_escapes()
    )
    + "] -%}\n"
    + r"""{%- macro python_string(text, quote) -%}
{%- set out = namespace(text=text, quote=quote) -%}
{%- if quote == 'repr' -%}
{%- set out.quote = '"' if ("'" in text and '"' not in text) else "'" -%}
{%- endif -%}
{%- set out.text = out.text|replace('\\', '\\\\') -%}
{%- set out.text = out.text|replace(out.quote, '\\' ~ out.quote) -%}
{%- for pair in python_escapes + (repr_escapes if quote == 'repr' else []) -%}
{%- if pair[0] in out.text -%}{%- set out.text = out.text|replace(pair[0], pair[1]) -%}{%- endif -%}
{%- endfor -%}
{%- if '\\u0000' in (out.text|replace('\\', '')|tojson) -%}
{%- set nul = namespace(text='') -%}
{%- for i in range(out.text|length) -%}
{%- set char = out.text[i:i + 1] -%}
{%- set nul.text = nul.text ~ ('\\x00' if (char|tojson) == '"\\u0000"' else char) -%}
{%- endfor -%}
{%- set out.text = nul.text -%}
{%- endif -%}
{{- out.quote ~ out.text ~ out.quote -}}
{%- endmacro -%}
{%- macro python_literal(value, quote, where) -%}
{%- if value is none -%}
{{- 'None' -}}
{%- elif value is boolean -%}
{{- 'True' if value else 'False' -}}
{%- elif value is string -%}
{{- python_string(value, quote) -}}
{%- elif value is mapping -%}
{{- '{' -}}
{%- for key, item in value|items -%}
{{- (', ' if loop.index0 else '') ~ python_string(key, quote) ~ ': ' ~ python_literal(item, quote, where) -}}
{%- endfor -%}
{{- '}' -}}
{%- elif value is number -%}
{%- if value * 0 != 0 -%}
{{- raise_exception(where ~ ': the number ' ~ value ~ '; expected a finite number (JSON)') -}}
{%- endif -%}
{{- value -}}
{%- else -%}
{{- '[' -}}
{%- for item in value -%}
{{- (', ' if loop.index0 else '') ~ python_literal(item, quote, where) -}}
{%- endfor -%}
{{- ']' -}}
{%- endif -%}
{%- endmacro -%}
"""
)
"""``python_literal(value, quote, where)``: a JSON value as
:func:`pawlette.codecs.python_literals.python_literal` writes it (floats as Python prints
them: engines outside Python print ``1.0`` as ``1``)."""

_KEYWORDS = [
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield",
]
_ASCII = "".join(chr(code) for code in range(128))

IDENTIFIER_MACRO = (
    "{%- set python_keywords = " + jinja_list(_KEYWORDS) + " -%}\n"
    "{%- set identifier_start = "
    + jinja_string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
    + " -%}\n"
    "{%- set identifier_ascii = "
    + jinja_string(_ASCII[1:])
    + " -%}\n"
    + r"""{%- macro is_identifier(name) -%}
{%- set check = namespace(ok=name is string and name|length > 0 and name not in python_keywords) -%}
{%- if check.ok and '\\u0000' in (name|replace('\\', '')|tojson) -%}{%- set check.ok = false -%}{%- endif -%}
{%- if check.ok -%}
{%- for i in range(name|length) -%}
{%- set char = name[i:i + 1] -%}
{%- if char and char in identifier_ascii and char not in identifier_start and (i == 0 or char not in '0123456789') -%}
{%- set check.ok = false -%}
{%- endif -%}
{%- endfor -%}
{%- endif -%}
{{- 'yes' if check.ok else '' -}}
{%- endmacro -%}
"""
)
"""``is_identifier(name)``: ``'yes'`` for a Python identifier that is not a keyword (ASCII
checked exactly; non-ASCII characters are taken as identifier characters)."""
