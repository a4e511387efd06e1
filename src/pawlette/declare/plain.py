"""The plain render of a declared layout: OpenAI dicts to segments in one pass.

Rendering is on the serving path.  The generic writer (:mod:`.write`, the reference) reads
the request into core values, then walks its skeleton asking every concept at every hook.
This render is that skeleton specialised once per layout, for layouts made of the common
concepts (:class:`~.system.SystemPrompt`, :class:`~.tools.ToolsBlock`,
:class:`~.reasoning.Reasoning`, :class:`~.json_calls.JsonCalls`, :class:`~.results.Results`)
in the configurations it knows: each fence's segments are built once per message context
(role and index) and the plain shape of a request (what :func:`pawlette.openai._plain_message`
reads) is checked and written message by message, without core values.

It never raises and never decides an error: for anything else (another shape, a value the
generic writer refuses or words an error for) it returns None and
:meth:`pawlette.Format.render` takes the generic path from the start.  For every input it
renders, its rendering equals the generic writer's, segment for segment and loss for loss
(tested in tests/declare/test_plain.py).
"""

from __future__ import annotations

import dataclasses
import json
import json.scanner
import re
from collections.abc import Callable
from json.encoder import encode_basestring_ascii as ascii_string
from marshal import dumps as marshal_dumps
from operator import itemgetter
from typing import Any

from ..engine.json_text import c_encoder, json_string
from ..engine.kept import MISSING, Kept
from ..engine.writer import MAX_CACHED_INDEX
from ..json_values import surrogate_problem
from ..openai import (
    PLAIN_MESSAGE_KEYS,
    PLAIN_ROLES,
    REQUEST_KEYS,
    plain_arguments,
    plain_call_fields,
    plain_text_parts,
    plain_tool_definition,
)
from ..types import Rendering, Segment
from .json_calls import JsonCalls
from .layout import Layout
from .pieces import Fence, Marker, piece_text
from .reasoning import Reasoning
from .results import Results
from .system import SystemPrompt
from .tools import ToolsBlock

PlainRender = Callable[[object, object, bool], "Rendering | None"]
"""``(messages, tools, add_generation_prompt) -> Rendering``, or None: take the generic path."""

_new_tuple = tuple.__new__
_text_of = itemgetter(0)
Segments = tuple[Segment, ...]


_object_json = c_encoder(json_string, (", ", ": "), allow_nan=True)
"""``json_string`` of a value ``json`` decoded (acyclic, JSON types only), through the C
encoder made once."""
_DECODER: Any = json.JSONDecoder()
_scan: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(_DECODER)
"""``json``'s C scanner called directly (``json.loads`` of a stripped object's text)."""


def _unicode(text: str) -> bool:
    """Whether ``text`` is valid Unicode (no lone surrogate), nearly always one O(1) check."""
    return text.isascii() or surrogate_problem(text) is None


class _Row:
    """A message context's fences as segments (role and index fixed), built once."""

    __slots__ = (
        "block",
        "calls",
        "close",
        "default",
        "index",
        "opens",
        "preamble",
        "prompt_reasoning",
        "prompts",
        "reasoning",
        "results",
        "role",
    )

    def __init__(self, role: str, index: int) -> None:
        self.role = role
        self.index = index
        self.opens: dict[str | None, Segments] = {}
        self.prompts: dict[str | None, Segments] = {}
        self.close: Segments = ()
        self.preamble: tuple[Segments, Segments] = ((), ())
        self.default: Segments = ()
        self.block: tuple[Segments, Segments, Segments, Segments, Segments] = ((),) * 5
        self.reasoning: tuple[Segments, Segments, Segments] = ((), (), ())
        self.prompt_reasoning: Segments = ()
        self.calls: tuple[Segments, Segments, Segments] = ((), (), ())
        self.results: tuple[Segments, Segments, Segments] = ((), (), ())


_NO_CALLS: list[tuple[str, str, str, str]] = []
"""(Never changed: the calls of a message that has none.)"""

_PREVIOUS = (None, "system", "user", "assistant", "tool")
"""The roles a turn may follow (None: none, the start)."""


_WRITTEN_HERE: dict[type, frozenset[str]] = {
    SystemPrompt: frozenset(
        {"default", "default_when", "always", "preamble", "preamble_with_tools"}
        | {"preamble_without_tools"}
        | {"placement"}
    ),
    ToolsBlock: frozenset(
        {"place", "open", "close", "item_open", "item_close", "first", "separator", "indent"}
        | {"wrap", "array", "separators"}
    ),
    Reasoning: frozenset(
        {"open", "close", "keep", "empty_on_last", "prompt", "absent", "loose", "calls_end"}
    ),
    JsonCalls: frozenset(
        {"open", "close", "separator", "name_key", "arguments_key", "id_key", "arguments"}
        | {"parallel", "with_content", "loose", "also_open", "also_arguments_keys"}
        | {"ignored_members", "joined_by", "arguments_optional"}
    ),
    Results: frozenset({"grouped", "item_open", "item_close", "id_close", "id_pattern"}),
}
"""Per concept, the fields this render writes as the generic writer does (or that only
parsing reads); any other field set away from its default leaves the layout to the generic
writer, so an option added to a concept can never be silently ignored here."""


def _unwritten_field(concept: Any) -> bool:
    known = _WRITTEN_HERE[type(concept)]
    return any(
        field.name not in known and getattr(concept, field.name) != _default(field)
        for field in dataclasses.fields(concept)
    )


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def plain_renderer(layout: Layout) -> PlainRender | None:
    """The plain render of ``layout``, or None when the layout has a concept or a
    configuration this render does not write (the generic writer then renders it all)."""
    kinds = (SystemPrompt, ToolsBlock, Reasoning, JsonCalls, Results)
    found: dict[type, Any] = {}
    for concept in layout.concepts:
        kind = type(concept)
        if kind not in kinds or kind in found:
            return None
        found[kind] = concept
    if any(_unwritten_field(concept) for concept in found.values()):
        return None
    system: SystemPrompt | None = found.get(SystemPrompt)
    block: ToolsBlock | None = found.get(ToolsBlock)
    reasoning: Reasoning | None = found.get(Reasoning)
    calls: JsonCalls | None = found.get(JsonCalls)
    results: Results | None = found.get(Results)
    if system is not None and system.placement not in ("in_place", "first_only"):
        return None
    if block is not None and block.place not in ("system", "first_user", "last_user"):
        return None
    if reasoning is not None and reasoning.absent:
        # A stand-in split with the prompt's open fence, or one for empty reasoning kept on
        # every turn: the generic writer's.
        if reasoning.absent_rest() is not None or reasoning.keep == "all":
            return None
    frames = layout.frames
    options = layout.options
    # Within the system turn's opening, the system prompt's preamble and a tools block
    # written first come in the layout's order.
    preamble_first = (
        system is None
        or block is None
        or layout.concepts.index(system) < layout.concepts.index(block)
    )
    # Concepts whose losses the rendering records, in the layout's order (their checks').
    loss_order = [
        concept for concept in layout.concepts if isinstance(concept, (Reasoning, Results))
    ]
    id_pattern = (
        None if results is None or results.id_pattern is None else re.compile(results.id_pattern)
    )
    try:
        # Every fence's text (an option read here): a layout whose options do not give one
        # is refused by the generic writer, which words the error.
        pairs_of: dict[int, tuple[Fence, tuple[tuple[bool, str], ...]]] = {}

        def resolve(pieces: Fence) -> int:
            key = id(pieces)
            if key not in pairs_of:
                pairs_of[key] = (
                    pieces,
                    tuple(
                        (isinstance(piece, Marker), piece_text(piece, options, layout.name))
                        for piece in pieces
                    ),
                )
            return key

        for frame in frames.values():
            for pieces in (frame.open, frame.end, frame.after, *frame.open_after.values()):
                resolve(pieces)
            for pieces in frame.prompt_after.values():
                resolve(pieces)
        resolve(layout.begin)
        if system is not None:
            for pieces in (
                system.preamble,
                system.preamble_with_tools,
                system.preamble_without_tools,
                system.default_fence,
            ):
                resolve(pieces)
        if block is not None:
            for pieces in (
                block.open,
                block.close,
                block.item_open,
                block.item_close,
                block.separator,
            ):
                resolve(pieces)
        if reasoning is not None:
            for pieces in (reasoning.open, reasoning.close, reasoning.absent):
                resolve(pieces)
        if calls is not None:
            for pieces in (calls.open or (), calls.close, calls.separator):
                resolve(pieces)
        if results is not None:
            for pieces in (results.item_open, results.item_close, results.id_close or ()):
                resolve(pieces)
    except Exception:
        return None

    default_applies = system is not None and (
        system._default_applies(True),
        system._default_applies(False),
    )
    place = None if block is None else block.place
    reasoning_keep = None if reasoning is None else reasoning.keep
    empty_on_last = reasoning is not None and reasoning.empty_on_last
    verbatim = calls is not None and calls.arguments == "verbatim"
    calls_parallel = calls is None or calls.parallel
    calls_with_content = calls is None or calls.with_content
    block_first = block is not None and block.first
    block_array = block is not None and block.array
    grouped = results is not None and results.grouped
    ids_written = results is not None and results.id_close is not None

    def segments_of(
        pieces: Fence, role: str | None, index: int, kind: str, trainable: bool
    ) -> Segments:
        known = pairs_of.get(id(pieces))
        pairs = (
            known[1]
            if known is not None and known[0] is pieces
            else tuple(
                (isinstance(piece, Marker), piece_text(piece, options, layout.name))
                for piece in pieces
            )
        )
        return tuple(
            _new_tuple(Segment, (text, special, role, index, kind, trainable))
            for special, text in pairs
            if special or text
        )

    def make_row(role: str, index: int) -> _Row:
        row = _Row(role, index)
        frame = frames[role]
        assistant = role == "assistant"

        def of(pieces: Fence, kind: str, trainable: bool = False) -> Segments:
            return segments_of(pieces, role, index, kind, trainable)

        row.opens = {previous: of(frame.opener(previous), "header") for previous in _PREVIOUS}
        row.close = of(frame.end, "end" if assistant else "close", assistant) + of(
            frame.after, "separator"
        )
        if assistant:
            row.prompts = {
                previous: of(frame.prompt(previous), "generation_prompt") for previous in _PREVIOUS
            }
        if system is not None and role == "system":
            preamble = of(system.preamble, "header")
            row.preamble = (
                of(system.preamble_without_tools, "header") + preamble,
                of(system.preamble_with_tools, "header") + preamble,
            )
            row.default = of(system.default_fence, "content")
        if block is not None:
            row.block = (
                of(block.open, "tools"),
                of(block.item_open, "tools"),
                of(block.item_close, "tools"),
                of(block.close, "tools"),
                of(block.separator, "tools"),
            )
        if reasoning is not None and assistant:
            row.reasoning = (
                of(reasoning.open, "reasoning", reasoning.prompt not in ("open", "opened")),
                of(reasoning.close, "reasoning", True),
                of(reasoning.absent, "reasoning", not reasoning.prompt_writes_absent()),
            )
            prompt_fences: Segments = ()
            if reasoning.prompt in ("open", "empty"):
                prompt_fences = of(reasoning.open, "generation_prompt")
            if reasoning.prompt == "empty":
                prompt_fences += of(reasoning.close, "generation_prompt")
            row.prompt_reasoning = prompt_fences
        if calls is not None and assistant:
            row.calls = (
                of(calls.separator, "tool_call", True),
                of(calls.open or (), "tool_call", True),
                of(calls.close, "tool_call", True),
            )
        if results is not None and role == "tool":
            row.results = (
                of(results.id_close or (), "tool_result"),
                of(results.item_open, "tool_result"),
                of(results.item_close, "tool_result"),
            )
        return row

    # Rows by role, then index + 1 (index -1: the system turn that holds no message).
    rows: dict[str, list[_Row | None]] = {role: [None] * (MAX_CACHED_INDEX + 1) for role in frames}

    def row_of(role: str, index: int) -> _Row:
        if index < MAX_CACHED_INDEX:
            kept = rows[role]
            found = kept[index + 1]
            if found is None:
                found = kept[index + 1] = make_row(role, index)
            return found
        return make_row(role, index)

    begin = segments_of(layout.begin, None, -1, "begin", False)
    head_id = None if calls is None or calls.id_key is None else f"{ascii_string(calls.id_key)}: "
    name_key = "" if calls is None else f"{ascii_string(calls.name_key)}: "
    arguments_key = "" if calls is None else f", {ascii_string(calls.arguments_key)}: "
    tools_kept: Kept[tuple[str, ...] | None] = Kept(limit=64, longest=1 << 18)

    def tools_texts(tools: list[Any]) -> tuple[str, ...] | None:
        """The tools block's JSON texts (one per tool, or one array), or None: not plain."""
        assert block is not None
        try:
            key = marshal_dumps(tools, 4)
        except ValueError:
            return None
        kept = tools_kept.kept.get(key, MISSING)
        if kept is not MISSING:
            return kept  # type: ignore[no-any-return]
        values = []
        for tool in tools:
            definition = plain_tool_definition(tool)
            if definition is None:
                return None
            definition = dict(definition)
            values.append(
                {"type": "function", "function": definition}
                if block.wrap == "openai"
                else definition
            )
        texts = (block.dump(values),) if block.array else tuple(map(block.dump, values))
        if not all(map(_unicode, texts)):
            return None
        tools_kept.keep(key, texts)
        return texts

    def write_block(row: _Row, texts: tuple[str, ...], segments: list[Segment]) -> None:
        opening, item_open, item_close, closing, _ = row.block
        role, index = row.role, row.index
        segments += opening
        if block_array:
            segments.append(_new_tuple(Segment, (texts[0], False, role, index, "tools", False)))
        else:
            for text in texts:
                segments += item_open
                segments.append(_new_tuple(Segment, (text, False, role, index, "tools", False)))
                segments += item_close
        segments += closing

    def render(data: object, tools: object, prompt: bool) -> Rendering | None:
        try:
            return write(data, tools, prompt)
        except Exception:  # (nothing plain raises: anything unusual is the generic path's)
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
        texts: tuple[str, ...] = ()
        if tools is not None:
            if type(tools) is not list:
                return None
            if tools:
                if block is None:
                    return None  # (refused: no tools block)
                found_texts = tools_texts(tools)
                if found_texts is None:
                    return None
                texts = found_texts
        has_tools = bool(texts)
        # Every message read and checked before anything is written (the generic writer
        # refuses before it writes).
        messages: list[Read] = []
        last_query = -1
        first_user = -1
        has_thoughts = False
        has_names = False
        for index, item in enumerate(items):
            # The common message, a role and a text (two keys, both found), read inline.
            if type(item) is dict and len(item) == 2:
                text = item.get("content")
                role: str | None = PLAIN_ROLES.get(item.get("role"))  # type: ignore[arg-type]
                if (
                    type(text) is str
                    and role is not None
                    and (text.isascii() or surrogate_problem(text) is None)
                ):
                    read: Read = (role, text, None, None, _NO_CALLS, None)
                    if role == "user":
                        last_query = index
                        if first_user < 0:
                            first_user = index
                    elif (
                        role == "system"
                        and (system is None or (index and system.placement == "first_only"))
                    ) or (role == "tool" and (results is None or ids_written)):
                        return None
                    messages.append(read)
                    continue
            found_read = _read(item)
            if found_read is None:
                return None
            read = found_read
            role = read[0]
            if role == "user":
                last_query = index
                if first_user < 0:
                    first_user = index
                if read[2] is not None:
                    return None  # (names: no concept here writes them)
            elif role == "assistant":
                if read[2] is not None:
                    return None
                if read[3] is not None:
                    if reasoning is None:
                        return None
                    has_thoughts = True
                found = read[4]
                if found:
                    if calls is None:
                        return None
                    if (not calls_with_content and read[1]) or (
                        len(found) > 1 and not calls_parallel
                    ):
                        return None
            elif role == "tool":
                if results is None:
                    return None
                if read[2] is not None:
                    has_names = True
                if ids_written:
                    call_id = read[5]
                    if not call_id or (
                        id_pattern is not None and not id_pattern.fullmatch(call_id)
                    ):
                        return None
            else:  # system
                if system is None or read[2] is not None:
                    return None
                if index and system.placement == "first_only":
                    return None
            messages.append(read)
        count = len(messages)
        # The turn that holds the tools block: (role, index), 0 standing for -1 too (the
        # system turn written when the conversation has none).
        host_role = ""
        host_index = -2
        if has_tools:
            if place == "system":
                host_role, host_index = "system", 0
            else:
                host_role = "user"
                host_index = first_user if place == "first_user" else last_query
                if host_index < 0:
                    return None  # (refused: no user message to hold the tools)

        def _written(index: int, thought: str | None) -> bool:
            if reasoning_keep == "all":
                return thought is not None
            if reasoning_keep == "none" or index <= last_query:
                return False
            return bool(thought) or (index == count - 1 and empty_on_last)

        losses: list[str] | None = None
        if has_thoughts or has_names:
            losses = []
            for concept in loss_order:
                if concept is reasoning:
                    for index, message in enumerate(messages):
                        if (
                            message[0] == "assistant"
                            and message[3]
                            and not _written(index, message[3])
                        ):
                            losses.append(f"messages[{index}].reasoning_content: dropped ({why})")
                else:
                    for index, message in enumerate(messages):
                        if message[0] == "tool" and message[2] is not None:
                            losses.append(
                                f"messages[{index}].name: not written (the call names the tool)"
                            )

        segments: list[Segment] = list(begin)
        append = segments.append
        previous: str | None = None
        if system is not None and not (messages and messages[0][0] == "system"):
            applies = default_applies and default_applies[not has_tools]
            if system.always or applies or (has_tools and place == "system"):
                # The system turn that holds no message.
                row = row_of("system", -1)
                segments += row.opens[None]
                hosts = host_role == "system"
                if preamble_first:
                    segments += row.preamble[has_tools]
                if hosts and block_first:
                    write_block(row, texts, segments)
                if not preamble_first:
                    segments += row.preamble[has_tools]
                if applies:
                    segments += row.default
                if hosts and not block_first:
                    if applies:
                        segments += row.block[4]
                    write_block(row, texts, segments)
                segments += row.close
                previous = "system"
        for index, (role, text, _, thought, found, call_id) in enumerate(messages):
            if role == "assistant":
                row = row_of("assistant", index)
                segments += row.opens[previous]
                if reasoning is not None:
                    opening, closing, absent = row.reasoning
                    if _written(index, thought):
                        segments += opening
                        if thought:
                            append(
                                _new_tuple(
                                    Segment, (thought, False, role, index, "reasoning", True)
                                )
                            )
                        segments += closing
                    else:
                        segments += absent
                if text:
                    append(_new_tuple(Segment, (text, False, role, index, "content", True)))
                if found:
                    separator, opening, closing = row.calls
                    after_text = bool(text)
                    for call_id, called, stripped, tojson in found:
                        if after_text:
                            segments += separator
                        after_text = True
                        segments += opening
                        written = stripped if verbatim else tojson
                        head = (
                            "{" if head_id is None else "{" + head_id + json_string(call_id) + ", "
                        )
                        append(
                            _new_tuple(
                                Segment,
                                (
                                    head
                                    + name_key
                                    + json_string(called)
                                    + arguments_key
                                    + written
                                    + "}",
                                    False,
                                    role,
                                    index,
                                    "tool_call",
                                    True,
                                ),
                            )
                        )
                        segments += closing
                segments += row.close
                previous = role
            elif role == "user":
                row = row_of("user", index)
                segments += row.opens[previous]
                hosts = index == host_index and host_role == "user"
                if hosts and block_first:
                    write_block(row, texts, segments)
                if text:
                    append(_new_tuple(Segment, (text, False, role, index, "content", False)))
                if hosts and not block_first:
                    segments += row.block[4]
                    write_block(row, texts, segments)
                segments += row.close
                previous = role
            elif role == "tool":
                row = row_of("tool", index)
                id_close, item_open, item_close = row.results
                if not grouped or index == 0 or messages[index - 1][0] != "tool":
                    segments += row.opens[previous]
                if ids_written:
                    if call_id:
                        append(
                            _new_tuple(
                                Segment, (call_id, False, "tool", index, "tool_result", False)
                            )
                        )
                    segments += id_close
                segments += item_open
                if text:
                    append(_new_tuple(Segment, (text, False, "tool", index, "tool_result", False)))
                segments += item_close
                if not grouped or index == count - 1 or messages[index + 1][0] != "tool":
                    segments += row.close
                    previous = "tool"
            else:  # system
                row = row_of("system", index)
                segments += row.opens[previous]
                hosts = index == 0 and host_role == "system"
                if index == 0:
                    if preamble_first:
                        segments += row.preamble[has_tools]
                    if hosts and block_first:
                        write_block(row, texts, segments)
                    if not preamble_first:
                        segments += row.preamble[has_tools]
                if text:
                    append(_new_tuple(Segment, (text, False, role, index, "content", False)))
                if hosts and not block_first:
                    segments += row.block[4]
                    write_block(row, texts, segments)
                segments += row.close
                previous = role
        if prompt:
            row = row_of("assistant", count)
            segments += row.prompts[previous]
            if reasoning is not None:
                segments += row.prompt_reasoning
        rendered = tuple(segments)
        text = "".join(map(_text_of, rendered))
        if losses:
            return Rendering(text, rendered, tuple(losses))
        return Rendering(text, rendered)

    why = (
        "never written"
        if reasoning is not None and reasoning.keep == "none"
        else "before the last user message"
    )
    return render


Call = tuple[str, str, str, str]
"""A plain call: ``(id, name, arguments stripped, arguments as Jinja's tojson writes them)``."""
Read = tuple[str, str, Any, Any, list[Call], Any]
"""A plain message: ``(role, text, name, reasoning, calls, tool_call_id)``."""

_KEPT_ARGUMENTS: dict[str, tuple[str, str]] = {}
"""Plain call arguments as read (stripped, and as ``tojson`` writes them), by their text: a
conversation's earlier calls come again with every later request (at most
:data:`_KEPT_LIMIT` texts of at most :data:`_LONGEST_KEPT` characters; a text not kept is
checked and written each time)."""
_KEPT_LIMIT = 1024
_LONGEST_KEPT = 4096


def _read(item: object) -> Read | None:
    """A plain message as ``(role, text, name, reasoning, calls, tool_call_id)`` (calls as
    ``(id, name, arguments)``, the arguments stripped), or None: not plain (as
    :func:`pawlette.openai._plain_message` reads it, without building a message)."""
    if type(item) is not dict:
        return None
    get = item.get
    role_value = get("role")
    role = PLAIN_ROLES.get(role_value) if type(role_value) is str else None
    if role is None:
        return None
    text = get("content")
    if type(text) is str and len(item) == 2:
        if not _unicode(text):
            return None
        return role, text, None, None, [], None
    if not PLAIN_MESSAGE_KEYS.issuperset(item):
        return None
    if type(text) is str:
        if not _unicode(text):
            return None
    elif text is None:
        if role != "assistant" or not (get("tool_calls") or get("reasoning_content")):
            return None
        text = ""
    else:
        text = plain_text_parts(text)
        if text is None or not _unicode(text):
            return None
    name = get("name")
    if name is not None and (type(name) is not str or not _unicode(name)):
        return None
    found: list[Call] = []
    if role == "tool":  # (the usual result: an id and a text)
        call_id = get("tool_call_id")
        if (
            len(item) == 3
            and type(call_id) is str
            and type(text) is str
            and (call_id.isascii() or surrogate_problem(call_id) is None)
        ):
            return role, text, None, None, found, call_id
    if role == "assistant":
        if get("tool_call_id") is not None:
            return None
        thought = get("reasoning_content")
        if thought is not None and (type(thought) is not str or not _unicode(thought)):
            return None
        raw_calls = get("tool_calls")
        if raw_calls is not None:
            if type(raw_calls) is not list:
                return None
            for raw_call in raw_calls:
                fields = plain_call_fields(raw_call)
                if fields is None:
                    return None
                call_id, call_name, arguments = fields
                written = _KEPT_ARGUMENTS.get(arguments)
                if written is None:
                    if not plain_arguments(arguments):
                        return None
                    stripped = arguments.strip()
                    written = (stripped, _object_json(_scan(stripped, 0)[0]))
                    if len(arguments) <= _LONGEST_KEPT:
                        if len(_KEPT_ARGUMENTS) >= _KEPT_LIMIT:
                            _KEPT_ARGUMENTS.clear()
                        _KEPT_ARGUMENTS[arguments] = written
                if not _unicode(call_name) or (call_id is not None and not _unicode(call_id)):
                    return None
                found.append(("" if call_id is None else call_id, call_name, *written))
        return role, text, name, thought, found, None
    if get("reasoning_content") is not None or get("tool_calls") is not None:
        return None
    call_id = get("tool_call_id")
    if call_id is not None and (
        role != "tool" or type(call_id) is not str or not _unicode(call_id)
    ):
        return None
    return role, text, name, None, found, call_id
