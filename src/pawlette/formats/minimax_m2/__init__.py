"""MiniMax-M2: ``]~b]ROLE`` turns ended by ``[e~[``, the tools in the system turn, calls as
``<invoke name="NAME">`` with one ``<parameter name="KEY">`` tag per argument inside
``<minimax:tool_call>``, reasoning in ``<think>`` kept after the last user message.

The wire format (``]~!b[``, ``]~b]``, ``[e~[``, ``<think>``, ``</think>``,
``<minimax:tool_call>`` and ``</minimax:tool_call>`` are special tokens of MiniMax-M2's
tokenizer; the rest is text)::

    ]~!b[]~b]system
    You are terse.

    # Tools
    You may call one or more tools to assist with the user query.
    Here are the tools available in JSONSchema format:

    <tools>
    <tool>{"name": "get_weather", "parameters": {...}}</tool>
    </tools>

    When making tool calls, use XML format to invoke tools and pass parameters:
    ...
    </minimax:tool_call>[e~[
    ]~b]user
    Weather in Zürich?[e~[
    ]~b]ai
    <think>
    The user wants the weather.
    </think>

    Let me look.
    <minimax:tool_call>
    <invoke name="get_weather">
    <parameter name="city">Zürich</parameter>
    <parameter name="days">2</parameter>
    </invoke>
    </minimax:tool_call>[e~[
    ]~b]tool
    <response>{"temp_c": 3}</response>[e~[
    ]~b]ai
    <think>

A family of its own, not a variant of ``minimax`` (MiniMax-M1): the two templates share no
marker, no turn head, no tools block and no call syntax (M1 writes ``<beginning_of_sentence>``
turns and JSON lines in ``<tool_calls>``), only the vendor.

Decisions (reference: ``MiniMax-M2.jinja`` in llama.cpp's ``models/templates``):

- **The system turn** is always written: the first system message's text, or ``You are a
  helpful assistant.`` without one; a first system message with empty text is written as
  that default (the template tests the text; a recorded loss).  Later system messages are
  dropped, as the template skips them (a recorded loss).  The tools follow the system text
  inside the same turn, each tool's ``function`` object as ``tojson`` writes it (non-ASCII
  kept) in ``<tool>`` tags, then the template's instructions and its example call.
- **Calls**: after the turn's text, ``\\n<minimax:tool_call>\\n``, then per call ``<invoke
  name="NAME">\\n``, per argument ``<parameter name="KEY">VALUE</parameter>\\n``, then
  ``</invoke>\\n``, and ``</minimax:tool_call>``.  A string value is written as it is, any
  other as JSON (``tojson``).  No ids: results answer calls by position.
- **Reading a value** types it by the tool's schema (:class:`~pawlette.declare.XmlCalls`): a
  string parameter keeps its text, any other is read as JSON, a value that is no JSON stays
  text where the schema allows a string.  vLLM's ``minimax_m2`` parser types values by the
  schema too; where it differs: a parameter the schema does not declare is read as JSON
  when it is JSON (``5`` is 5; vLLM keeps ``"5"``), as the template writes every non-string
  value as JSON; the words vLLM also takes for a boolean (``yes``, ``on``, ``1``) or null
  (``None``, ``nil``) are not JSON, so such a value of a non-string parameter makes the call
  malformed (it stays content, with a warning), where vLLM converts it: the template never
  writes them.  A string value keeps the whitespace at its ends, as the template writes the
  text as it is (vLLM strips it).
- **Reading the calls**: text before ``<minimax:tool_call>`` is content; the tags are also
  read without the newlines the template writes between them (vLLM's cases write none).
  The name must be written in double quotes, as the template writes it (vLLM also strips
  single quotes or none: such a call is malformed here, content with a warning).  A call
  whose ``</invoke>`` is written is read even when the list is never closed (the output
  ended there), where vLLM's reader wants ``</minimax:tool_call>``; a call cut before its
  ``</invoke>`` is content with a warning.
- **From token ids** the output is read as the text the ids decode to, markers by their
  spelling (``markers_in_text``): ``<invoke name="`` and ``</invoke>``, which separate the
  calls inside one ``<minimax:tool_call>``, are plain text the tokenizer spells in pieces.
- **Results**: consecutive tool messages share one ``]~b]tool`` turn, each result
  ``\\n<response>TEXT</response>``.  A tool message's ``name`` is not written (a recorded
  loss).
- **Reasoning** is written as ``<think>\\nR\\n</think>\\n\\n`` before the text, only on the
  turns after the last user message; reasoning before it is dropped (a recorded loss).  The
  generation prompt opens the block (``]~b]ai\\n<think>\\n``), so a completion starts
  inside it: ``R\\n</think>\\n\\nanswer``; the block's newlines are also read when left out
  (``R</think>answer``), as vLLM's and llama.cpp's reasoning parsers read them.  A call
  opening inside an unclosed block ends the reasoning.

Remaining differences from the template:

- A past assistant message whose content holds ``</think>`` (and no ``reasoning_content``)
  is split by the template into reasoning and content; pawlette writes the content as given.
- A turn without reasoning after the prompt's ``<think>\\n``: past turns without reasoning
  are ``]~b]ai\\nTEXT`` while the prompt is ``]~b]ai\\n<think>\\n`` (the template's own shape:
  no training render of such a turn extends the prompt render).
- A tool message whose content is a list of parts: the template writes each part as a
  result of its own, with a newline before its ``</response>``; pawlette writes the text
  parts as one result, as a text content.
- The template also reads ``current_date``, ``current_location`` and ``model_identity``, which
  no OpenAI request carries; pawlette writes none of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    Reasoning,
    Results,
    ToolsBlock,
    XmlCalls,
    declare,
    fence,
)

from .system import EmptySystemDefault

DOCUMENT = Marker("]~!b[")
BEGIN = Marker("]~b]")
END = Marker("[e~[")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
CALLS, CALLS_END = Marker("<minimax:tool_call>"), Marker("</minimax:tool_call>")

DEFAULT_SYSTEM = "You are a helpful assistant."
TOOLS_OPEN = (
    "\n\n# Tools\nYou may call one or more tools to assist with the user query.\n"
    "Here are the tools available in JSONSchema format:\n\n<tools>\n"
)
TOOLS_CLOSE = (
    "</tools>\n\nWhen making tool calls, use XML format to invoke tools and pass parameters:\n\n"
)
EXAMPLE_CALL = (
    '\n<invoke name="tool-name-1">\n<parameter name="param-key-1">param-value-1</parameter>\n'
    '<parameter name="param-key-2">param-value-2</parameter>\n...\n</invoke>\n'
)


@dataclass(frozen=True)
class MinimaxM2Options:
    """MiniMax-M2 has no options: its template reads no switch (``model_identity``,
    ``current_date`` and ``current_location`` are not written, see the module)."""


def turn(head: str) -> Frame:
    """A turn: ``]~b]`` + its head, its text, ``[e~[`` and a newline."""
    return Frame(open=fence(BEGIN, head), end=fence(END), after=fence("\n"))


def layout(options: MinimaxM2Options) -> Layout:
    return Layout(
        name="minimax_m2",
        summary="MiniMax-M2: ]~b] turns, <invoke name=...> calls in <minimax:tool_call>",
        begin=fence(DOCUMENT),
        frames={
            "system": turn("system\n"),
            "user": turn("user\n"),
            "assistant": turn("ai\n"),
            "tool": Frame(open=fence(BEGIN, "tool"), end=fence(END), after=fence("\n")),
        },
        concepts=(
            EmptySystemDefault(default=DEFAULT_SYSTEM, placement="first_kept"),
            ToolsBlock(
                place="system",
                open=fence(TOOLS_OPEN),
                close=fence(TOOLS_CLOSE, CALLS, EXAMPLE_CALL, CALLS_END),
                item_open=fence("<tool>"),
                item_close=fence("</tool>\n"),
                wrap="function",
            ),
            Reasoning(
                open=fence(THINK, "\n"),
                close=fence("\n", THINK_END, "\n\n"),
                keep="after_last_query",
                prompt="open",
                calls_end=True,
            ),
            XmlCalls(
                open=fence('<invoke name="'),
                name_close=fence('">\n'),
                key_open=fence('<parameter name="'),
                key_close=fence('">'),
                value_close=fence("</parameter>\n"),
                close=fence("</invoke>\n"),
                section_open=fence("\n", CALLS, "\n"),
                section_close=fence(CALLS_END),
            ),
            Results(grouped=True, item_open=fence("\n<response>"), item_close=fence("</response>")),
            Ignored(("name",)),
        ),
        options=options,
        from_options=layout,
        # <invoke name="...> is text between the special tokens: the model's ids are read as
        # the text they decode to, markers by their spelling.
        markers_in_text=True,
    )


FORMAT = declare(layout(MinimaxM2Options()))
