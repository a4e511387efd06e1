"""The plain render of a layout with containers: OpenAI dicts to segments in one pass.

Rendering is on the serving path.  The general path reads the request into core values
(:mod:`pawlette.openai`) and then writes them (:mod:`.containers`), walking every message
twice and building a :class:`~pawlette.types.Message` per message that nothing keeps.  This
render takes the plain shape that nearly every request has (what the plain readers of
:mod:`pawlette.openai` take: a dict per message with string or text-part content, names,
calls, ids and reasoning, function tools) and checks and writes each message in one step.

It never raises and never decides an error: for anything else (another shape, an invalid
value, text the writer would have to escape at a marker's edge) it returns None and
:meth:`pawlette.Format.render` takes the general path from the start, which reads, checks and
words every error as before.  For every input it renders, its rendering equals the general
path's, segment for segment (tested in tests/declare/test_plain_containers.py).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Collection
from json.encoder import encode_basestring as string  # json_string of a str, without its steps
from marshal import dumps as marshal_dumps
from operator import itemgetter
from sys import getsizeof
from typing import TYPE_CHECKING, Any

from ..engine.json_text import c_encoder, compact_json, compact_pieces
from ..engine.kept import MISSING, Kept
from ..engine.lexer import escape_text, marker_pattern, marker_scan
from ..engine.writer import MAX_CACHED_INDEX
from ..json_values import (
    MAX_INTEGER_DIGITS,
    MAX_JSON_DEPTH,
)
from ..openai import (
    _PLAIN_MESSAGE_KEYS,
    _PLAIN_ROLES,
    _TOOL_KEYS,
    REQUEST_KEYS,
    plain_arguments,
    plain_call_fields,
    plain_text_parts,
    plain_tool_definition,
)
from ..types import Rendering, Role, Segment
from .layout import JsonCalls, Layout

if TYPE_CHECKING:
    from .containers import _Plan

_new_tuple = tuple.__new__
PlainRender = Callable[[object, object, bool], "Rendering | None"]
"""``(messages, tools, add_generation_prompt) -> Rendering``, or None: take the general path."""

_JOIN = "\x00"
"""Joins the caller texts of a render for the checks made once over all of them (no marker
holds it, so a marker found in the joined text is a marker inside one caller text)."""
_BACKSLASH_END = "\\" + _JOIN
_text_of = itemgetter(0)


_dump = c_encoder(compact_json, (",", ":"), allow_nan=False)
"""``compact_json`` of exact JSON values without its per-call steps, refusing NaN."""


def _one_byte_size() -> int:
    """``getsizeof(text) - len(text)`` of a compact string whose characters are all below
    U+0100 (CPython stores such a string one byte a character), which holds no lone surrogate
    and needs no UTF-8 encode to say so (it costs about 0.4 µs on a render's texts, and a
    European text is seldom ASCII).  A string of wider characters is two or four bytes a
    character, so its size less its length is larger for any length, as is a string whose
    UTF-8 form Python keeps (it is encoded: the safe side); -1 (every text is encoded) where
    sizes do not behave so (another Python)."""
    size = getsizeof("\u00e9") - 1
    for length in (1, 2, 7, 300):
        if getsizeof("\u00e9" * length) - length != size:
            return -1
        for wide in ("\u0100", "\ud800", "\U00010000"):
            if getsizeof(wide * length) - length == size:
                return -1
    return size if sys.implementation.name == "cpython" else -1


_ONE_BYTE_SIZE = _one_byte_size()

_TO_CHECK = _JOIN
"""Starts a kept ASCII listing that holds a marker (no JSON text starts with a NUL): the
render checks it as a caller text (escapes the marker).  A listing that is not ASCII is
checked too (a lone surrogate); any other is not scanned again.  (A mark inside the string,
not a (text, flag) tuple: a kept tuple is one more object for the cyclic garbage collector to
track, which costs a render on new tools about a microsecond.)"""


def _tools_text_kept(holds_marker: Callable[[str], bool]) -> Callable[[list[Any]], str | None]:
    """The tools block's JSON of a request's tools, checked, or None: not plain; an ASCII one
    that the render must still check as a caller text starts with :data:`_TO_CHECK`.

    Checking walks every definition and the block dumps them; a server gets the same tools in
    every request, so each outcome is kept by the tools' content
    (:func:`~pawlette.engine.kept.shared_key`: equal keys are an equal value of the same
    exact built-in types, one that passes the same checks and dumps to the same JSON; a
    subclass, whose methods could say anything, has no key and is checked the long way; a
    value holding itself has one, and the walk, bounded in depth, refuses it).
    """
    kept: Kept[str | None] = Kept(limit=64, longest=1 << 18)
    find = kept.kept.get

    def tools_text(tools: list[Any]) -> str | None:
        # (shared_key and Kept.find inline: a kept block costs the key and one look-up.)
        try:
            key = marshal_dumps(tools, 4)
        except ValueError:  # (a subclass or an object: the general checks, each time)
            return _marked(_tools_text(tools))
        found: str | None = find(key, MISSING)
        if found is MISSING:
            found = _marked(_exact_tools_text(tools))
            kept.keep(key, found)
        return found

    def _marked(text: str | None) -> str | None:
        if text is not None and text.isascii() and holds_marker(text):
            return _TO_CHECK + text
        return text

    return tools_text


def _tools_text(tools: list[Any]) -> str | None:
    """The tools block's JSON of plain function tools, checked, or None: not plain."""
    definitions = []
    for tool in tools:
        definition = plain_tool_definition(tool)
        if definition is None:
            return None
        definitions.append(definition)
    return _dump(definitions)


def _exact_tools_text(tools: list[Any]) -> str | None:
    """:func:`_tools_text` of tools that have a ``marshal`` key (every value in them of an
    exact built-in type; one holding itself is nested deeper than any depth allowed), or
    None: not plain.  The definitions are checked and written in one walk
    (:func:`~pawlette.engine.json_text.checked_compact_json`: ``json_value_problem``'s checks
    but for lone surrogates, which a listing that is not ASCII is checked for with the caller
    texts, as the render does for every such listing)."""
    pieces: list[str] = []
    append = pieces.append
    separator = "["
    for tool in tools:
        if type(tool) is not dict:
            return None
        get = tool.get
        definition = get("function")
        if (
            type(definition) is not dict
            or get("type", "function") != "function"
            or not _TOOL_KEYS.issuperset(tool)
        ):
            return None
        get = definition.get
        name = get("name")
        parameters = get("parameters")
        if (
            type(name) is not str
            or not name
            or (parameters is not None and type(parameters) is not dict)
            or get("returns") is not None
        ):
            return None
        append(separator)
        if not compact_pieces(definition, MAX_JSON_DEPTH, append, _INTEGER_BITS):
            return None
        separator = ","
    append("]" if pieces else "[]")
    return "".join(pieces)


_INTEGER_BITS = math.ceil(MAX_INTEGER_DIGITS * math.log2(10))


def plain_renderer(layout: Layout, plan: _Plan, markers: Collection[str]) -> PlainRender | None:
    """The plain render of a containers layout, or None when the layout is not one it writes
    (it writes a tools block, reasoning and verbatim JSON calls; headers of names and ids)."""
    from .containers import _containers

    calls, block = layout.calls, layout.tools
    if (
        not isinstance(calls, JsonCalls)
        or calls.arguments != "verbatim"
        or block is None
        or layout.reasoning is None
    ):
        return None
    headers = _containers(layout).headers
    # Per role: the header pairs as (key text "k=", the OpenAI key of its value).
    pairs: dict[str, tuple[tuple[str, str], ...]] = {}
    for role in ("system", "user", "assistant", "tool"):
        found = []
        for key, attribute in headers.fields.get(role, {}).items():
            if attribute not in ("name", "tool_call_id"):
                return None
            found.append((f"{key}=", attribute))
        pairs[role] = tuple(found)
    separator = headers.separator.text
    if any(_JOIN in text for text in markers):
        return None
    escape = marker_pattern(markers)  # (the format's escape_pattern)
    holds_marker = marker_scan(escape)
    # The constant texts that are not special (layout text, header keys) hold no marker, so a
    # segment not special that holds one is caller text (the escaping fix-up relies on it).
    raw = [text for spelled in plan.spellings.values() for special, text in spelled if not special]
    raw += [key for found in pairs.values() for key, _ in found]
    if any(holds_marker(text) for text in raw):
        return None
    head, name_key, arguments_key = plan.call_keys
    rows, row_of = plan.rows, plan.row
    tools_text = _tools_text_kept(holds_marker)
    # Per message context: the plan's row; the header pairs as their constant segments
    # ("k=", "[SEP]") and the OpenAI key of the value between them; whether the header writes
    # a name and an id (a name it does not write is refused, an id is checked all the same).
    Context = tuple[dict[str, Any], tuple[tuple[Segment, Segment, str], ...], bool, bool]
    # (Kept per message index, then role: a list and a dict of interned role names is
    # quicker to look up than a (role, index) key built and hashed per message.)
    contexts: list[dict[str, Context]] = [{} for _ in range(MAX_CACHED_INDEX)]

    def context(role: Role, index: int) -> Context:
        found = contexts[index].get(role) if 0 <= index < MAX_CACHED_INDEX else None
        if found is None:
            row = rows.get((role, index)) or row_of(role, index)
            header = tuple(
                (
                    Segment(key_text, False, role, index, "metadata", False),
                    Segment(separator, True, role, index, "metadata", False),
                    attribute,
                )
                for key_text, attribute in pairs[role]
            )
            attributes = [attribute for _, attribute in pairs[role]]
            found = (row, header, "name" in attributes, "tool_call_id" in attributes)
            if 0 <= index < MAX_CACHED_INDEX:
                contexts[index][role] = found
        return found

    def render(data: object, tools: object, prompt: bool) -> Rendering | None:
        try:
            return write(data, tools, prompt)
        except Exception:  # (nothing plain raises: anything unusual is the general path's)
            return None

    def write(data: object, tools: object, prompt: bool) -> Rendering | None:
        if type(data) is dict:
            if "messages" not in data or not REQUEST_KEYS.issuperset(data):
                return None
            items = data["messages"]
            if tools is None:
                tools = data.get("tools")
        else:
            items = data
        if type(items) is not list:
            return None
        listing = ""  # (the tools block's JSON: "" for no tools)
        segments: list[Any] = []
        append, extend = segments.append, segments.extend
        # The caller texts: checked (Unicode, a marker inside, a backslash at the end) once
        # over all of them, at the end.
        texts: list[str] = []
        mark = texts.append
        if tools is not None:
            if type(tools) is not list:
                return None
            if tools:
                found = tools_text(tools)
                if found is None:
                    return None
                listing = found
                if not listing.isascii():
                    mark(listing)  # (a lone surrogate, a marker: checked with the texts)
                elif listing[0] == _TO_CHECK:
                    listing = listing[1:]
                    mark(listing)
        pending = bool(listing)
        if pending:
            first = items[0].get("role") if items and type(items[0]) is dict else None
            if type(first) is not str or _PLAIN_ROLES.get(first) != "system":
                row = context("system", -1)[0]
                extend(row["open"])
                extend(row["tools"])
                append(_new_tuple(Segment, (listing, False, "system", -1, "tools", False)))
                extend(row["tools_close"])
                extend(row["host_close"])
                if items or prompt:
                    extend(row["between"])
                pending = False
        for index, item in enumerate(items):
            if type(item) is not dict:
                return None
            get = item.get
            role_value = get("role")
            role = _PLAIN_ROLES.get(role_value) if type(role_value) is str else None
            if role is None:
                return None
            text = get("content")
            # The common message: a role and a text (two keys, both found), nothing else to
            # read or check.
            simple = type(text) is str and len(item) == 2
            try:
                row, header, names, ids = contexts[index][role]
            except (IndexError, KeyError):
                row, header, names, ids = context(role, index)
            if simple:
                extend(row["lead" if index else "open"])
                if role == "assistant":
                    if text:
                        mark(text)
                        append(_new_tuple(Segment, (text, False, role, index, "content", True)))
                    extend(row["end_close"])
                    continue
            else:
                # When the keys found (not None) are as many as the message has, they are all
                # it has: no other key to refuse, none of another role's to check.
                name = get("name")
                if role == "assistant":
                    reasoning = get("reasoning_content")
                    raw_calls = get("tool_calls")
                    present = (text is not None) + (name is not None) + (reasoning is not None)
                    if len(item) != 1 + present + (raw_calls is not None) and (
                        not _PLAIN_MESSAGE_KEYS.issuperset(item) or get("tool_call_id") is not None
                    ):
                        return None
                    if type(text) is not str:
                        if text is None:
                            if not (raw_calls or reasoning):
                                return None  # content is required (the general reader says so)
                            text = ""
                        else:
                            text = plain_text_parts(text)
                            if text is None:
                                return None
                else:
                    call_id = get("tool_call_id")
                    if len(item) != 2 + (name is not None) + (call_id is not None) and (
                        not _PLAIN_MESSAGE_KEYS.issuperset(item)
                        or get("reasoning_content") is not None
                        or get("tool_calls") is not None
                    ):
                        return None
                    if type(text) is not str:
                        text = plain_text_parts(text)  # (None: content is required)
                        if text is None:
                            return None
                    if call_id is not None:
                        if role != "tool" or type(call_id) is not str:
                            return None
                        if not ids:
                            mark(call_id)  # (not written, but checked as the general reader does)
                if not names and name is not None:  # (a format without names)
                    return None
                extend(row["lead" if index else "open"])
                for key_segment, separator_segment, attribute in header:
                    value = get(attribute)
                    if value is not None:
                        if type(value) is not str:
                            return None
                        append(key_segment)
                        value = string(value)
                        mark(value)
                        append(_new_tuple(Segment, (value, False, role, index, "metadata", False)))
                        append(separator_segment)
                if role == "assistant":
                    if reasoning is not None:
                        if type(reasoning) is not str:
                            return None
                        extend(row["think"])
                        if reasoning:
                            mark(reasoning)
                            append(
                                _new_tuple(
                                    Segment, (reasoning, False, role, index, "reasoning", True)
                                )
                            )
                        extend(row["think_end"])
                    if text:
                        mark(text)
                        append(_new_tuple(Segment, (text, False, role, index, "content", True)))
                    if raw_calls is not None:
                        if type(raw_calls) is not list:
                            return None
                        after_block = bool(text)
                        for raw_call in raw_calls:
                            body = _call_body(raw_call, head, name_key, arguments_key)
                            if body is None:
                                return None
                            extend(row["call_line" if after_block else "call"])
                            mark(body)
                            append(
                                _new_tuple(Segment, (body, False, role, index, "tool_call", True))
                            )
                            extend(row["call_end"])
                            after_block = True
                    extend(row["end_close"])
                    continue
            if text:
                mark(text)
                append(_new_tuple(Segment, (text, False, role, index, "content", False)))
            if pending:  # (only the first message can be the system message that hosts tools)
                extend(row["tools_line" if text else "tools"])
                append(_new_tuple(Segment, (listing, False, role, index, "tools", False)))
                extend(row["tools_close"])
                pending = False
            extend(row["close"])
        if prompt:
            row = context("assistant", len(items))[0]
            extend(row["prompt" if items else "prompt_only"])
        if texts:
            joined = _JOIN.join(texts)
            if not joined.isascii() and getsizeof(joined) - len(joined) != _ONE_BYTE_SIZE:
                try:
                    joined.encode()
                except UnicodeEncodeError:
                    return None  # a lone surrogate: the general reader says where
            # (A backslash is rare: one character's search, a fast one, before the pair's.)
            if "\\" in joined and (joined[-1] == "\\" or _BACKSLASH_END in joined):
                return None  # a text ends with a backslash: the general writer settles it
            if holds_marker(joined):
                # (rare) Escape the caller texts holding one: the segments not special that
                # hold a marker (no constant one does: see above).
                for position, segment in enumerate(segments):
                    if not segment[1] and holds_marker(segment[0]):
                        written = escape_text(segment[0], escape, before_marker=False)
                        segments[position] = segment._replace(text=written)
        rendered = tuple(segments)
        return Rendering("".join(map(_text_of, rendered)), rendered)

    return render


def _call_body(data: object, head: str, name_key: str, arguments_key: str) -> str | None:
    """A plain call's JSON as the writer writes it, or None: not plain."""
    fields = plain_call_fields(data)
    if fields is None or not plain_arguments(fields[2]):
        return None
    call_id, name, arguments = fields
    if call_id is None:
        call_id = ""
    return f"{head}{string(call_id)}{name_key}{string(name)}{arguments_key}{arguments.strip()}}}"
