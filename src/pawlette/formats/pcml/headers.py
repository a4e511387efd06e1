"""Headers: ``key="value"`` pairs after a container's open marker, each ended by a separator.

``[USR]name="Alice"[SEP]What's the weather?[/USR]``, ``[OBS]id="c1"[SEP]25°C[/OBS]``: the
value is a JSON string (quotes and backslashes JSON-escaped).  Some keys are message fields
(``fields``: per role, header key to field, written first, in order: a message's ``name``, a
result's ``tool_call_id``); every other key is the message's ``metadata``, written after them
in order.  Header pairs are caller text: escaped where the format escapes markers.

Reading: at the start of a turn, text is held while it can still be a pair (an identifier,
``=``, a JSON string); the separator commits it; anything else is the turn's text, read by the
state's own reader.  A separator after something that is no pair is content, with a warning.
"""

# ruff: noqa: E501  (Jinja source: one tag per line reads better than wrapped tags)

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from json.encoder import encode_basestring as string  # a str as JSON, without json's steps
from typing import TYPE_CHECKING, Any

from pawlette.declare import Concept, Fence, Marker
from pawlette.declare.readers import Described
from pawlette.emit.jinja_text import fill, jinja_string
from pawlette.engine.machine import Parser, Reader, ReaderFactory
from pawlette.engine.readers import HeaderSteps
from pawlette.errors import FormatError, RequestError
from pawlette.types import MetadataItem

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.layout import Layout
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render

KEY = r"[A-Za-z_][A-Za-z0-9_.\-]*"
"""The keys a header can write (and the template checks)."""
_KEY = re.compile(KEY)
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
ROLES = ("system", "user", "assistant", "tool")


@dataclass(frozen=True)
class Headers(Concept):
    """Fields:

    - ``separator``: the marker that ends each pair.
    - ``fields``: per role (``system``, ``user``, ``assistant``, ``tool``), header key to the
      message field it holds (``{"name": "name", "id": "tool_call_id"}``), written in this
      order before the metadata.  A role without a ``name`` field writes no name: a message
      name there is a recorded loss.

    The concept must come after the results concept in the layout (it reads the results'
    state).
    """

    separator: Marker
    fields: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    @property
    def handles(self) -> frozenset[str]:
        # (A result's id written here: results are not paired with calls by position.)
        written = frozenset({"tool_call_id"}) & frozenset(self.fields.get("tool", {}).values())
        return frozenset({"name", "tool_name", "metadata"}) | written

    @cached_property
    def separator_fence(self) -> Fence:
        return (self.separator,)

    def validate(self, layout: Layout) -> None:
        for role, keys in self.fields.items():
            if role not in ROLES:
                raise FormatError(
                    f"{layout.name}: Headers.fields: the role {role!r}; expected one of "
                    + ", ".join(ROLES)
                )
            for key, name in keys.items():
                if not _KEY.fullmatch(key) or name not in ("name", "tool_call_id"):
                    raise FormatError(
                        f"{layout.name}: Headers.fields[{role!r}]: {key!r}: {name!r}; expected "
                        "an identifier for 'name' or 'tool_call_id'"
                    )

    # ------------------------------------------------------------------ the writer

    def check_is_local(self) -> bool:
        return type(self).check is Headers.check  # (the messages' names and metadata)

    @cached_property
    def _unnamed(self) -> frozenset[str]:
        """The names (``"name"``, a tool message's ``"tool_name"``: as :attr:`Render.present`
        calls them) of the roles with no ``name`` field: a message name there is lost."""
        return frozenset(
            "tool_name" if role == "tool" else "name"
            for role in ROLES
            if "name" not in self.fields.get(role, {}).values()
        )

    def check(self, out: Render) -> None:
        out.handles("name", "tool_name", "metadata")
        present = out.present
        if "metadata" not in present and self._unnamed.isdisjoint(present):
            return  # (no metadata, and every name there has its header: nothing to walk)
        for index, message in enumerate(out.messages):
            taken = self.fields.get(message.role, {})
            if message.name is not None and "name" not in taken.values():
                out.lose(f"messages[{index}].name", "not written (no name header)")
            for key, _ in message.metadata:
                if key in taken or not _KEY.fullmatch(key):
                    raise RequestError(
                        f"messages[{index}].metadata.{key}",
                        f"a key {out.layout.name} cannot write"
                        if key not in taken
                        else "a key that is a field",
                        "an identifier other than " + ", ".join(sorted(taken)),
                    )

    def hook_is_local(self, hook: str, role: str) -> bool:
        return hook == "write_opening"  # (the message's own fields)

    def write_opening(self, out: Render, index: int) -> None:
        if index < 0:
            return
        message = out.messages[index]
        if message.name is None and not message.metadata and message.tool_call_id is None:
            return  # (most messages have no header)
        pairs: list[tuple[str, str]] = []
        for key, name in self.fields.get(message.role, {}).items():
            value = getattr(message, name, None)
            if value is not None:
                pairs.append((key, value))
        pairs += message.metadata
        for key, value in pairs:
            out.raw(f"{key}=", "metadata")
            out.text(string(value), "metadata")
            out.fence(self.separator_fence, "metadata")

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        table.fields.update({role: dict(keys) for role, keys in self.fields.items()})
        separator = self.separator.text
        firsts = [table.first_state.get(role) for role in ("system", "user", "assistant")]
        for state in [*firsts, "tool.item"]:
            if state is None or state not in table.states:
                continue
            inner = table.states[state].reader
            table.reader(state, header_first(separator, inner))
            table.on(state, separator, state)

    # ------------------------------------------------------------------ the Jinja template

    def jinja_setup(self, out: Template) -> None:
        out.macro("header", _header_macro(out, self))

    def jinja_lead(self, out: Template, role: str) -> None:
        # (never trainable: before an assistant turn's generation block)
        out.out("{%- if message is not none -%}{{- header(message, index, role) -}}{%- endif -%}")


# ------------------------------------------------------------------ reading


class HeaderFirst(HeaderSteps):
    """``key="value"<separator>`` pairs at the start of a turn, then the state's own reader.

    Each pair is read by a reader of its own (the separator's row returns to the state), so
    the turn's reader is made only once its text begins, or at its end for an empty one."""

    __slots__ = ("_buffer", "_inner", "_make", "_parser", "_separator")
    whole_kind = "headed"  # see pawlette.engine.whole

    def __init__(self, parser: Parser, separator: str, make: ReaderFactory) -> None:
        super().__init__()
        self._parser = parser
        self._separator = separator
        self._make = make
        carried = parser.context(_Carried)
        # After a separator in the turn's text (content, with a warning), the same turn goes
        # on: its reader is the one that read the text before it.
        self._inner: Reader | None = carried.reader if parser.entered_by == separator else None
        carried.reader = None
        self._buffer: list[str] = []

    def whole_reading(self) -> tuple[Reader, frozenset[str]]:
        """How a whole text reads here (see :mod:`pawlette.engine.whole`): as the turn's own
        reader, unless a separator comes (then a header may have been read)."""
        return self._make(self._parser), frozenset((self._separator,))

    def _content(self) -> Reader:
        inner = self._inner
        if inner is None:
            inner = self._inner = self._make(self._parser)
        self._phase = "content"
        return inner

    def feed(self, text: str, offset: int) -> None:
        if self._phase == "content":
            assert self._inner is not None
            self._inner.feed(text, offset)
            return
        for character in text:
            if not self._advance(character):
                held = "".join(self._buffer) + text
                self._buffer = []
                self._content().feed(held, offset)
                return
        self._buffer.append(text)

    def close(self, marker: str | None, offset: int) -> None:
        held = "".join(self._buffer)
        self._buffer = []
        parser = self._parser
        if marker != self._separator:
            inner = self._content()
            if held:
                inner.feed(held, offset - len(held))
            inner.close(marker, offset)
            return
        if self._phase != "done":
            parser.malformed(
                offset, f"{self._separator!r} after {held[-40:]!r}", 'a key="value" header', held
            )
            self._content().feed(held + self._separator, offset - len(held))
            parser.context(_Carried).reader = self._inner
            return
        key, _, value = held.partition("=")
        try:
            decoded = json.loads(value)
        except json.JSONDecodeError:
            parser.malformed(offset, f"header value {value!r}", "a JSON string", held)
            self._content().feed(held + self._separator, offset - len(held))
            parser.context(_Carried).reader = self._inner
            return
        parser.confirm_message()
        parser.emit(MetadataItem(key, decoded))


@dataclass
class _Carried:
    """The reader of a turn's text that a separator interrupted (a parser context)."""

    reader: Reader | None = None


def header_first(separator: str, make: ReaderFactory) -> ReaderFactory:
    first: ReaderFactory = lambda parser: HeaderFirst(parser, separator, make)  # noqa: E731
    return Described("headers, then text", first, reader=make, separator=separator)


# ------------------------------------------------------------------ the Jinja template

_HEADER_MACRO = r"""{%- macro header(message, index, role) -%}
@FIELDS@
{%- if message.metadata is defined and message.metadata is not none -%}
{%- for key, value in message.metadata|items -%}
{%- set check = namespace(ok=key is string and key|length > 0) -%}
{%- if check.ok -%}
{%- for i in range(key|length) -%}
{%- if key[i] not in (@KEY_CHARS@ if i else @KEY_START@) -%}{%- set check.ok = false -%}{%- endif -%}
{%- endfor -%}
{%- endif -%}
{%- if not check.ok or @TAKEN@ -%}
{{- raise_exception('messages[' ~ index ~ '].metadata.' ~ key ~ ': a key @NAME@ cannot write; expected an identifier other than ' ~ @TAKEN_NAMES@) -}}
{%- endif -%}
{%- if value is not string -%}
{{- raise_exception('messages[' ~ index ~ '].metadata.' ~ key ~ ': not a string; expected a string') -}}
{%- endif -%}
{{- key ~ '=' ~ @VALUE(value|tojson)@ ~ @SEP@ -}}
{%- endfor -%}
{%- endif -%}
{%- endmacro -%}
"""


def _role_condition(roles: list[str]) -> str:
    if len(roles) == 1:
        return f"role == {jinja_string(roles[0])}"
    return "role in [" + ", ".join(jinja_string(role) for role in roles) + "]"


def _header_macro(out: Template, headers: Headers) -> str:
    """The ``header`` macro: the field pairs, then the metadata pairs (checked)."""

    def value(expression: str) -> str:
        return f"escape({expression}, true)" if out.escaping else expression

    present = [role for role in ROLES if role in headers.fields]
    keys: dict[tuple[str, str], list[str]] = {}
    for role in present:
        for key, attribute in headers.fields[role].items():
            keys.setdefault((key, attribute), []).append(role)
    fields = []
    taken = []
    for (key, attribute), roles in keys.items():
        test = f"message.{attribute} is defined and message.{attribute} is not none"
        everywhere = len(roles) == len(ROLES)
        condition = test if everywhere else f"{_role_condition(roles)} and {test}"
        fields.append(f"{{%- if {condition} -%}}")
        fields.append(
            f"{{{{- {jinja_string(key + '=')} ~ {value(f'message.{attribute}|tojson')} ~ @SEP@ -}}}}"
        )
        fields.append("{%- endif -%}")
        check = f"key == {jinja_string(key)}"
        taken.append(check if everywhere else f"({_role_condition(roles)} and {check})")
    names: dict[str, str] = {role: ", ".join(sorted(headers.fields[role])) for role in present}
    distinct = sorted(set(names.values()))
    if len(distinct) == 1:
        taken_names = jinja_string(distinct[0])
    else:
        common = max(distinct, key=list(names.values()).count)
        options = [
            f"{jinja_string(text)} if {_role_condition([r for r in present if names[r] == text])}"
            for text in distinct
            if text != common
        ]
        taken_names = "(" + " else ".join([*options, jinja_string(common)]) + ")"
    values: dict[str, Any] = {
        "@FIELDS@": "\n".join(fields),
        "@TAKEN@": " or ".join(taken) if taken else "false",
        "@TAKEN_NAMES@": taken_names,
        "@KEY_START@": jinja_string(_LETTERS),
        "@KEY_CHARS@": jinja_string(_LETTERS + "0123456789.-"),
        "@VALUE(value|tojson)@": value("value|tojson"),
        "@SEP@": jinja_string(headers.separator.text),
        "@NAME@": jinja_string(out.layout.name)[1:-1],
    }
    return fill(_HEADER_MACRO, values)
