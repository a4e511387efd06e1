"""Tool results as one Python list (Breeze 2).

Each run of tool messages is one results turn (the ``tool`` frame) holding a Python list of
the results, in the order of the calls they answer (the calls of the message before the run,
matched by ``tool_call_id``; a call without a result gets ``None``; messages answering no
call follow)::

    <|start_header_id|>ipython<|end_header_id|>\\n\\n[{'temperature': 25}, 'sunny', None]<|eot_id|>

A result whose content is JSON is written as that value (a JSON string as its text, as
MediaTek's ``MRPromptV3`` does with ``json.loads``), any other content as a string; parsing
turns a string back into the content and any other value into its JSON (``json.dumps``),
and each item answers the next call in order (the fold pairs them:
:func:`pawlette.engine.fold.pair_results`).  A tool message's ``name`` is not written (the
call it answers names it) and is allowed.  In the chat template, JSON text is decoded where
Jinja can; a result string that may be a JSON object or array raises, as Jinja has no JSON
parser: give it parsed.  The model never writes results, so the turn grammar has no part
here.
"""

# ruff: noqa: E501  (Jinja source: one tag per line reads better than wrapped tags)

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ...blocks.results import result_text, results_in_call_order
from ...codecs.python_calls import python_literal_or_none
from ...codecs.python_literals import Quote, python_literal
from ...declare import Concept
from ...declare.python_calls import literal_macros
from ...emit.jinja_text import jinja_string
from ...engine.readers import WholeTextReader
from ...errors import FormatError, UnsupportedFeature
from ...types import TextDelta, TextPart

if TYPE_CHECKING:
    from ...declare.jinja import Template
    from ...declare.layout import Layout
    from ...declare.table import Table
    from ...declare.write import Render


@dataclass(frozen=True)
class PythonResults(Concept):
    """A run of tool results as one Python list in ``Layout.frames["tool"]`` (see the
    module docstring).  ``quote``: as :class:`~pawlette.declare.PythonCalls`' (``repr``:
    MRPromptV3's); ``between``: between two results."""

    quote: Quote = "repr"
    between: str = ", "

    claims: ClassVar[frozenset[str]] = frozenset({"tool"})
    handles: ClassVar[frozenset[str]] = frozenset({"tool_name"})

    def validate(self, layout: Layout) -> None:
        if "tool" not in layout.frames:
            raise FormatError(
                f"{layout.name}: PythonResults: no 'tool' frame; expected Layout.frames['tool'], "
                "the frame of a results turn"
            )

    # ------------------------------------------------------------------ the writer

    def check(self, out: Render) -> None:
        out.handles("tool_name")
        if out.present.isdisjoint(("metadata", "parts")):
            return
        for index, message in enumerate(out.messages):
            if message.role != "tool":
                continue
            if message.metadata:
                raise UnsupportedFeature(f"messages[{index}].metadata", "metadata", "none")
            content = message.content
            if content and (len(content) != 1 or type(content[0]) is not TextPart):
                for number, part in enumerate(content):
                    if not isinstance(part, TextPart):
                        path = f"messages[{index}].content[{number}]"
                        raise UnsupportedFeature(
                            path, f"a {type(part).__name__}", "text parts only"
                        )

    def write_message(self, out: Render, index: int) -> None:
        messages = out.messages
        if index > 0 and messages[index - 1].role == "tool":
            return  # written with the first message of its run
        end = index
        while end < len(messages) and messages[end].role == "tool":
            end += 1
        before = messages[index - 1] if index > 0 else None
        calls = [call.id for call in before.tool_calls] if before is not None else []
        ordered = results_in_call_order(messages[index:end], calls)
        values = [None if slot is None else written_value(slot.text) for slot in ordered]
        listing = python_literal(values, quote=self.quote, path=f"messages[{index}].content")
        frame = out.frame("tool")
        out.role, out.index = "tool", index
        out.at("tool", index)
        out.fence(frame.opener(out.previous), "header")
        out.text(listing, "tool_result")
        out.fence(frame.end, "end")
        out.fence(frame.after, "separator")
        out.previous = "tool"

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        frame = table.layout.frames["tool"]
        table.first_state["tool"] = table.state("tool.list", ResultListReader, "tool", ends=True)
        table.on("outside", table.text(frame.open), "tool.list")

    # ------------------------------------------------------------------ the Jinja template

    def jinja_setup(self, out: Template) -> None:
        out.parsed_results = True
        literal_macros(out)
        out.macro("result_value", JINJA_MACROS)

    def jinja_message(self, out: Template, role: str) -> None:
        """At the last message of a run, the run's results in call order."""
        from ...declare.jinja import Template

        out.raise_if(
            "message.metadata is defined and message.metadata",
            f"messages: metadata on a tool message: {out.layout.name} has no place for it",
        )
        frame = out.layout.frames["tool"]
        pieces = []
        for fences in ((frame.open,), (frame.end, frame.after)):
            part = Template(out.layout)
            for pieces_of in fences:
                part.fence(pieces_of)
            pieces.append("\n".join(part.lines))
        out.out(
            _RESULTS.replace("@OPEN@", pieces[0] + "\n" if pieces[0] else "")
            .replace("@END@", pieces[1] + '\n{%- set ns.previous = "tool" -%}')
            .replace("@BETWEEN@", jinja_string(self.between))
            .replace("@QUOTE@", jinja_string(self.quote))
        )


# ------------------------------------------------------------------ writing a result

_WHITESPACE = " \t\n\r"  # JSON's
_decode = json.JSONDecoder().raw_decode
_encode_strictly = json.JSONEncoder(allow_nan=False, ensure_ascii=False).encode


def _check_finite(value: object) -> None:
    """Raise ValueError for a value JSON text cannot hold: NaN, an infinity, or a lone
    surrogate (``"\\uD800"`` decodes to one; its Python literal could not be read back)."""
    _encode_strictly(value).encode("utf-8")  # (UnicodeEncodeError is a ValueError)


def written_value(content: str) -> object:
    """A result as ``MRPromptV3`` writes it: its JSON value (a JSON string too), else the text
    (what :func:`~pawlette.blocks.results.result_value` reads, JSON strings decoded).

    ``json.loads`` as its parts, so that text that only starts as JSON (``25°C, sunny``: the
    usual result) is known without a failed parse: raising costs more than the rest.
    """
    start = len(content) - len(content.lstrip(_WHITESPACE))
    try:
        value, end = _decode(content, start)
    except ValueError:
        return content
    if end != len(content) and content[end:].strip(_WHITESPACE):
        return content  # JSON followed by more text (json.loads' "Extra data")
    if isinstance(value, str):
        return value
    try:
        _check_finite(value)  # NaN, infinities and lone surrogates: written as the text
    except ValueError:
        return content
    return value


# ------------------------------------------------------------------ reading a results turn


class ResultListReader(WholeTextReader):
    """A results turn: each item of its Python list a tool message (answering the next call
    in order); text that is not a non-empty list is one tool message."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        value = python_literal_or_none(text, offset=self._offset)
        if not isinstance(value, list) or not value:
            return self._result(text)
        for item in value:
            self._result(result_text(item))

    def _result(self, content: str) -> None:
        parser = self._parser
        parser.begin_message("tool")
        if content:
            parser.emit(TextDelta(content))
        parser.end_message()


# ------------------------------------------------------------------ Jinja

JINJA_MACROS = r"""{%- set json_unescapes = {'"': '"', '\\': '\\', '/': '/', 'n': '\n', 'r': '\r', 't': '\t'} -%}
{%- macro json_trim(text) -%}
{%- set edge = namespace(start=0, end=text|length) -%}
{%- for i in range(text|length) -%}
{%- if edge.start == i and text[i:i + 1] in [' ', '\t', '\n', '\r'] -%}{%- set edge.start = i + 1 -%}{%- endif -%}
{%- endfor -%}
{%- for i in range(text|length) -%}
{%- if edge.end == text|length - i and edge.end > edge.start and text[edge.end - 1:edge.end] in [' ', '\t', '\n', '\r'] -%}{%- set edge.end = edge.end - 1 -%}{%- endif -%}
{%- endfor -%}
{{- text[edge.start:edge.end] -}}
{%- endmacro -%}
{%- macro json_number_kind(text) -%}
{%- set scan = namespace(state='start') -%}
{%- for i in range(text|length) -%}
{%- set c = text[i:i + 1] -%}
{%- if c -%}
{%- set digit = c in '0123456789' -%}
{%- if scan.state == 'start' and c == '-' -%}{%- set scan.state = 'sign' -%}
{%- elif scan.state in ['start', 'sign'] and c == '0' -%}{%- set scan.state = 'zero' -%}
{%- elif scan.state in ['start', 'sign'] and digit -%}{%- set scan.state = 'int' -%}
{%- elif scan.state == 'int' and digit -%}
{%- elif scan.state in ['zero', 'int'] and c == '.' -%}{%- set scan.state = 'dot' -%}
{%- elif scan.state in ['dot', 'fraction'] and digit -%}{%- set scan.state = 'fraction' -%}
{%- elif scan.state in ['zero', 'int', 'fraction'] and c in 'eE' -%}{%- set scan.state = 'e' -%}
{%- elif scan.state == 'e' and c in '+-' -%}{%- set scan.state = 'esign' -%}
{%- elif scan.state in ['e', 'esign', 'exponent'] and digit -%}{%- set scan.state = 'exponent' -%}
{%- else -%}{%- set scan.state = 'bad' -%}
{%- endif -%}
{%- endif -%}
{%- endfor -%}
{{- 'int' if scan.state in ['zero', 'int'] else 'float' if scan.state in ['fraction', 'exponent'] else '' -}}
{%- endmacro -%}
{%- macro json_string(bare, index) -%}
{%- set js = namespace(out='', escape=false) -%}
{%- for i in range(1, bare|length - 1) -%}
{%- set c = bare[i:i + 1] -%}
{%- if js.escape -%}
{%- if c not in json_unescapes -%}
{{- raise_exception('messages[' ~ index ~ '].content: a JSON string result with the escape \\' ~ c ~ '; Jinja cannot decode it: give the result as its text') -}}
{%- endif -%}
{%- set js.out = js.out ~ json_unescapes[c] -%}
{%- set js.escape = false -%}
{%- elif c == '\\' -%}{%- set js.escape = true -%}
{%- else -%}{%- set js.out = js.out ~ c -%}
{%- endif -%}
{%- endfor -%}
{{- js.out -}}
{%- endmacro -%}
{%- macro result_value(message, index, quote) -%}
{%- set content = message.content if message.content is defined else none -%}
{%- if content is string -%}
{%- set bare = json_trim(content) -%}
{%- set kind = json_number_kind(bare) -%}
{%- if bare == 'true' or bare == 'false' or bare == 'null' -%}
{{- {'true': 'True', 'false': 'False', 'null': 'None'}[bare] -}}
{%- elif kind == 'int' -%}
{{- bare|int -}}
{%- elif kind == 'float' and (bare|float) * 0 == 0 -%}
{{- bare|float -}}
{%- elif bare|length > 1 and bare[:1] == '"' and bare[-1:] == '"' -%}
{{- python_string(json_string(bare, index), quote) -}}
{%- elif bare[:1] in ['{', '['] -%}
{{- raise_exception('messages[' ~ index ~ '].content: a tool result that may be JSON text; Jinja cannot parse JSON: give a JSON object or array result parsed, as an object or list') -}}
{%- else -%}
{{- python_string(content, quote) -}}
{%- endif -%}
{%- elif content is none -%}
{{- python_string('', quote) -}}
{%- elif content is mapping or content is number or content is boolean -%}
{{- python_literal(content, quote, 'messages[' ~ index ~ '].content') -}}
{%- else -%}
{%- set joined = namespace(text='', parts=true) -%}
{%- for part in content -%}
{%- if part is not mapping or part.type is not defined -%}{%- set joined.parts = false -%}
{%- elif part.type != 'text' -%}
{{- raise_exception('messages[' ~ index ~ '].content[' ~ loop.index0 ~ ']: a ' ~ part.type ~ ' part; expected text parts only') -}}
{%- else -%}{%- set joined.text = joined.text ~ part.text -%}
{%- endif -%}
{%- endfor -%}
{%- if joined.parts -%}
{{- result_value({'content': joined.text}, index, quote) -}}
{%- else -%}
{{- python_literal(content, quote, 'messages[' ~ index ~ '].content') -}}
{%- endif -%}
{%- endif -%}
{%- endmacro -%}
"""
"""``result_value(message, index, quote)``: a tool message's result as a Python literal
(it needs the Python-literal macros)."""


_RESULTS = r"""{%- if loop.last or messages[index + 1].role != 'tool' -%}
{%- set run = namespace(start=index, open=true) -%}
{%- for back in range(index, -1, -1) -%}
{%- if run.open and messages[back].role == 'tool' -%}{%- set run.start = back -%}{%- else -%}{%- set run.open = false -%}{%- endif -%}
{%- endfor -%}
{%- set before = messages[run.start - 1] if run.start > 0 else none -%}
{%- set slots = namespace(results=[], taken=[], extra=[], calls=[]) -%}
{%- if before is not none and before.tool_calls is defined and before.tool_calls -%}
{%- for call in before.tool_calls -%}
{%- set slots.calls = slots.calls + [call.id if call.id is defined and call.id is not none else ''] -%}
{%- set slots.results = slots.results + [none] -%}
{%- endfor -%}
{%- endif -%}
{%- for number in range(run.start, index + 1) -%}
{%- set item = [number, messages[number]] -%}
{%- set found = namespace(slot=-1) -%}
{%- for call_id in slots.calls -%}
{%- if found.slot < 0 and item[1].tool_call_id is defined and call_id == item[1].tool_call_id and loop.index0 not in slots.taken -%}
{%- set found.slot = loop.index0 -%}
{%- endif -%}
{%- endfor -%}
{%- if found.slot >= 0 -%}
{%- set slots.taken = slots.taken + [found.slot] -%}
{%- set replaced = namespace(results=[]) -%}
{%- for value in slots.results -%}
{%- set replaced.results = replaced.results + [item if loop.index0 == found.slot else value] -%}
{%- endfor -%}
{%- set slots.results = replaced.results -%}
{%- else -%}
{%- set slots.extra = slots.extra + [item] -%}
{%- endif -%}
{%- endfor -%}
@OPEN@{{- '[' -}}
{%- for item in slots.results + slots.extra -%}
{{- (@BETWEEN@ if loop.index0 else '') ~ ('None' if item is none else result_value(item[1], item[0], @QUOTE@)) -}}
{%- endfor -%}
{{- ']' -}}
@END@
{%- endif -%}"""
