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

Declared with the public API: the containers, headers, escaping and call ids are
:mod:`pawlette.legacy.containers`; the writer, parse table, Jinja template and grammars
are derived from this one value.
"""

from __future__ import annotations

from pawlette.legacy import (
    Containers,
    Frame,
    Headers,
    JsonCalls,
    Layout,
    Marker,
    Reasoning,
    Results,
    ToolsBlock,
    declare,
    fence,
)

SYSTEM, SYSTEM_END = Marker("[SYS]"), Marker("[/SYS]")
USER, USER_END = Marker("[USR]"), Marker("[/USR]")
ASSISTANT, ASSISTANT_END = Marker("[AST]"), Marker("[/AST]")
OBSERVATION, OBSERVATION_END = Marker("[OBS]"), Marker("[/OBS]")
SEPARATOR = Marker("[SEP]")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
TOOLS, TOOLS_END = Marker("<tools>"), Marker("</tools>")
CALL, CALL_END = Marker("<call>"), Marker("</call>")
END = Marker("<end>")

NAME = {"name": "name"}

LAYOUT = Layout(
    name="pcml",
    summary="Pawlette Chat Markup Language: [SYS]/[USR]/[AST]/[OBS] turns, <think>, <call>, <end>",
    frames={
        "system": Frame(open=fence(SYSTEM), end=fence(SYSTEM_END)),
        "user": Frame(open=fence(USER), end=fence(USER_END)),
        # The model writes <end>; the system closes the container with [/AST].
        "assistant": Frame(open=fence(ASSISTANT), end=fence(END), after=fence(ASSISTANT_END)),
    },
    tools=ToolsBlock(
        host="system",
        open=fence(TOOLS),
        close=fence(TOOLS_END),
        separator=fence("\n"),
        wrap="function",
    ),
    reasoning=Reasoning(open=fence(THINK), close=fence(THINK_END, "\n")),
    calls=JsonCalls(
        open=fence(CALL), close=fence(CALL_END), separator=fence("\n"), arguments="verbatim"
    ),
    results=Results(frame=Frame(open=fence(OBSERVATION), end=fence(OBSERVATION_END))),
    containers=Containers(
        between=fence("\n\n"),
        headers=Headers(
            separator=SEPARATOR,
            fields={
                "system": NAME,
                "user": NAME,
                "assistant": NAME,
                "tool": {"name": "name", "id": "tool_call_id"},
            },
        ),
        call_id="id",
    ),
)

FORMAT = declare(LAYOUT)
