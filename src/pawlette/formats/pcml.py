"""PCML, the Pawlette Chat Markup Language: pawlette's native format (seed 001).

The wire format, as rendered (markers are control tokens)::

    [SYS]You are helpful.
    <tools>[{"name":"get_weather","parameters":{...}}]</tools>[/SYS]

    [USR]name="Alice"[SEP]What's the weather in Beijing?[/USR]

    [AST]<think>I should call the tool.</think>
    <call>{"id": "c1", "name": "get_weather", "arguments": {"city": "Beijing"}}</call><end>[/AST]

    [OBS]id="c1"[SEP]25°C, Sunny[/OBS]

    [AST]It is 25°C and sunny.<end>[/AST]

Decisions (the seed leaves these open):

- **Between turns** the renderer writes ``\\n\\n``; the parser accepts any whitespace there.
- **Inside a turn** blocks are separated by one ``\\n``, which belongs to the marker: the
  separator spellings ``\\n<tools>``, ``</think>\\n`` and ``\\n<call>`` are markers of their
  own, so content never gains or loses a newline.  ``\\n<tools>`` is written only after
  system text, ``\\n<call>`` only after content or another call.
- **Headers**: each ``key="value"`` pair is followed by ``[SEP]``; the value is a JSON string
  (so quotes and backslashes are JSON-escaped).  ``name`` is the message's ``name``; on
  ``[OBS]``, ``id`` is the ``tool_call_id``; every other key is ``metadata``.  Fields come
  first, then metadata, in order.
- **Markers inside text** (content, reasoning, header values, call JSON) are escaped with a
  backslash: ``\\[SYS]`` is the literal text ``[SYS]``; a run of ``k`` backslashes before a
  marker stands for ``k // 2`` backslashes (so ``a\\`` before a marker is written ``a\\\\``).
  Backslashes anywhere else are untouched.  With token ids this never matters: markers are
  special tokens and text is encoded with special tokens off.
- **Tools** are the ``function`` objects of the request, compact JSON in their key order, at
  the end of the first system message.  With tools and no system message, an empty
  ``[SYS]<tools>...</tools>[/SYS]`` is written first; parsing drops a system message that
  is empty and exists only to hold tools.
- **Calls**: ``{"id": ..., "name": ..., "arguments": ...}`` with the arguments JSON written
  verbatim (as the caller's string, surrounding whitespace stripped), so the round trip is
  exact.  A call without an ``id`` in model output gets a generated one.
- **End**: a past assistant turn is ``...<end>[/AST]`` (``<end>`` is learned, ``[/AST]`` is
  written by the system); a completion stops at ``<end>``.  ``[/AST]`` without ``<end>`` is
  also accepted.
- Reasoning comes first in a turn, then content, then calls.  Only text content, and no
  structured thinking steps: anything else is :class:`~pawlette.errors.UnsupportedFeature`.
"""

from __future__ import annotations

import re

from ..engine.json_text import compact_json, json_string
from ..engine.machine import Action, GrammarBuilder, Parser
from ..engine.readers import (
    CallEnvelope,
    ContentReader,
    JsonToolsReader,
    ReasoningReader,
    ScaffoldReader,
    header_reader,
    json_call_reader,
)
from ..engine.writer import Writer
from ..errors import RequestError, UnsupportedFeature
from ..format import Format
from ..types import Message, Role, TextPart, Tool

SYSTEM, SYSTEM_END = "[SYS]", "[/SYS]"
USER, USER_END = "[USR]", "[/USR]"
ASSISTANT, ASSISTANT_END = "[AST]", "[/AST]"
OBSERVATION, OBSERVATION_END = "[OBS]", "[/OBS]"
SEPARATOR = "[SEP]"
THINK, THINK_END, THINK_END_LINE = "<think>", "</think>", "</think>\n"
TOOLS, TOOLS_LINE, TOOLS_END = "<tools>", "\n<tools>", "</tools>"
CALL, CALL_LINE, CALL_END = "<call>", "\n<call>", "</call>"
END = "<end>"

TURNS: dict[Role, tuple[str, str]] = {
    "system": (SYSTEM, SYSTEM_END),
    "user": (USER, USER_END),
    "assistant": (ASSISTANT, ASSISTANT_END),
    "tool": (OBSERVATION, OBSERVATION_END),
}
FIELDS: dict[Role, dict[str, str]] = {
    "system": {"name": "name"},
    "user": {"name": "name"},
    "assistant": {"name": "name"},
    "tool": {"id": "tool_call_id", "name": "name"},
}
SPECIAL = (
    SYSTEM,
    SYSTEM_END,
    USER,
    USER_END,
    ASSISTANT,
    ASSISTANT_END,
    OBSERVATION,
    OBSERVATION_END,
    SEPARATOR,
    THINK,
    THINK_END,
    TOOLS,
    TOOLS_END,
    CALL,
    CALL_END,
    END,
)
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")


# ------------------------------------------------------------------ parse table


def _begin(role: Role) -> Action:
    def action(parser: Parser, offset: int) -> None:
        parser.begin_message(role)

    return action


def _end(parser: Parser, offset: int) -> None:
    parser.end_message()


def _grammar() -> GrammarBuilder:
    table = GrammarBuilder()
    table.fields.update(FIELDS)
    table.state("outside", ScaffoldReader)
    for role, (open_marker, close_marker) in TURNS.items():
        head = table.state(f"{role}.head", header_reader(SEPARATOR), role)
        table.on("outside", open_marker, head, _begin(role))
        table.on(head, SEPARATOR, head)
        table.on(head, close_marker, "outside", _end)
    table.state("system.tools", JsonToolsReader, "system")
    table.state("system.after_tools", ContentReader, "system")
    for marker in (TOOLS, TOOLS_LINE):
        table.on("system.head", marker, "system.tools")
    table.on("system.tools", TOOLS_END, "system.after_tools")
    table.on("system.after_tools", SYSTEM_END, "outside", _end)

    table.state("assistant.body", ContentReader, "assistant")
    table.state("assistant.reasoning", ReasoningReader, "assistant")
    table.state("assistant.call", json_call_reader(CallEnvelope(), CALL_END), "assistant")
    table.state("assistant.ended", ScaffoldReader, "assistant")
    table.on("assistant.head", THINK, "assistant.reasoning")
    for marker in (THINK_END, THINK_END_LINE):
        table.on("assistant.reasoning", marker, "assistant.body")
    for state in ("assistant.head", "assistant.body"):
        for marker in (CALL, CALL_LINE):
            table.on(state, marker, "assistant.call")
        table.on(state, END, "assistant.ended", _end)
    table.on("assistant.body", ASSISTANT_END, "outside", _end)
    table.on("assistant.call", CALL_END, "assistant.body")
    table.on("assistant.ended", ASSISTANT_END, "outside")
    return table


# ------------------------------------------------------------------ render


def _write_text_content(writer: Writer, message: Message, index: int, trainable: bool) -> bool:
    """Write the text parts; True when any text was written."""
    written = False
    for number, part in enumerate(message.content or ()):
        if not isinstance(part, TextPart):
            raise UnsupportedFeature(
                f"messages[{index}].content[{number}]",
                f"a {type(part).__name__}",
                "text parts only: PCML has no markup for other content",
            )
        if part.text:
            writer.text(part.text, "content", trainable=trainable)
            written = True
    return written


def _write_header(writer: Writer, message: Message, index: int) -> None:
    pairs: list[tuple[str, str]] = []
    if message.name is not None:
        pairs.append(("name", message.name))
    if message.role == "tool" and message.tool_call_id is not None:
        pairs.append(("id", message.tool_call_id))
    taken = set(FIELDS[message.role])
    for key, value in message.metadata:
        if key in taken or not _KEY.match(key):
            raise RequestError(
                f"messages[{index}].metadata.{key}",
                "a key PCML cannot write" if key not in taken else "a key that is a field",
                "an identifier other than " + ", ".join(sorted(taken)),
            )
        pairs.append((key, value))
    for key, value in pairs:
        writer.raw(f"{key}=", "metadata")
        writer.text(json_string(value), "metadata")
        writer.marker(SEPARATOR, "metadata")


def _write_assistant(writer: Writer, message: Message, index: int) -> None:
    if message.reasoning_steps is not None:
        raise UnsupportedFeature(
            f"messages[{index}].reasoning_steps", "structured thinking", "reasoning_content"
        )
    if message.reasoning is not None:
        writer.marker(THINK, "reasoning", trainable=True)
        writer.text(message.reasoning, "reasoning", trainable=True)
        writer.marker(THINK_END_LINE, "reasoning", trainable=True)
    after_block = _write_text_content(writer, message, index, trainable=True)
    for call in message.tool_calls:
        writer.marker(CALL_LINE if after_block else CALL, "tool_call", trainable=True)
        body = (
            f'{{"id": {json_string(call.id)}, '
            f'"name": {json_string(call.name)}, '
            f'"arguments": {call.arguments.strip()}}}'
        )
        writer.text(body, "tool_call", trainable=True)
        writer.marker(CALL_END, "tool_call", trainable=True)
        after_block = True
    writer.marker(END, "end", trainable=True)


def _write_tools(writer: Writer, tools: tuple[Tool, ...], after_text: bool) -> None:
    for number, tool in enumerate(tools):
        if tool.kind != "function":
            raise UnsupportedFeature(f"tools[{number}].type", f"{tool.kind!r}", "'function'")
    writer.marker(TOOLS_LINE if after_text else TOOLS, "tools")
    listing = [dict(tool.definition) for tool in tools]
    writer.text(compact_json(listing), "tools")
    writer.marker(TOOLS_END, "tools")


def write(
    writer: Writer, messages: tuple[Message, ...], tools: tuple[Tool, ...], prompt: bool
) -> None:
    tools_pending = bool(tools)
    if tools_pending and (not messages or messages[0].role != "system"):
        writer.at("system", -1)
        writer.marker(SYSTEM, "header")
        _write_tools(writer, tools, after_text=False)
        writer.marker(SYSTEM_END, "header")
        tools_pending = False
        if messages or prompt:
            writer.raw("\n\n", "separator")
    for index, message in enumerate(messages):
        role = message.role
        writer.at(role, index)
        if index:
            writer.raw("\n\n", "separator")
        open_marker, close_marker = TURNS[role]
        writer.marker(open_marker, "header")
        if message.name is not None or message.metadata or message.tool_call_id is not None:
            _write_header(writer, message, index)  # (most messages have no header)
        if role == "assistant":
            _write_assistant(writer, message, index)
        else:
            wrote_text = _write_text_content(writer, message, index, trainable=False)
            if role == "system" and tools_pending:
                _write_tools(writer, tools, after_text=wrote_text)
                tools_pending = False
        writer.marker(close_marker, "close")
    if prompt:
        writer.at("assistant", len(messages))
        if messages:
            writer.raw("\n\n", "separator")
        writer.marker(ASSISTANT, "generation_prompt")


_MARKERS = (*SPECIAL, THINK_END_LINE, TOOLS_LINE, CALL_LINE)

FORMAT = Format(
    name="pcml",
    summary="Pawlette Chat Markup Language: [SYS]/[USR]/[AST]/[OBS] turns, <think>, <call>, <end>",
    grammar=_grammar().build(
        escape=True, conversation_start="outside", completion_start="assistant.head"
    ),
    write=write,
    stop=(END,),
    special_markers=SPECIAL,
    escape_pattern=Format.escaping(_MARKERS),
)
