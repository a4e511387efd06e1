"""MiniMax-M2 and MiniMax-M3: ``]~b]ROLE`` turns ended by ``[e~[``, the tools in the first
system turn, calls as ``<invoke name="NAME">`` (M2: one ``<parameter name="KEY">`` tag per
argument inside ``<minimax:tool_call>``; M3: one tag named by each key, objects and arrays
nested), reasoning in a think block.

The wire format of MiniMax-M2 (``]~!b[``, ``]~b]``, ``[e~[``, ``<think>``, ``</think>``,
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

MiniMax-M3 (``minimax_m2:m3``) opens with a fixed ``system`` turn (the model's identity and
its thinking instructions), writes the caller's system text and the tools in a
``developer`` turn, reasoning as ``<mm:think>R</mm:think>`` on every turn (``</mm:think>``
alone where a turn has none), and every call tag after the namespace marker
``]<]minimax[>[`` (``NS`` here; the calls are one line, broken here for the page)::

    ]~!b[]~b]system
    Your model version is MiniMax-M3, ...
    </thinking_instructions>[e~[
    ]~b]developer
    You are terse.

    # Tools
    ...
    NS</tool_call>[e~[
    ]~b]user
    Weather in Zürich?[e~[
    ]~b]ai
    <mm:think>The user wants the weather.</mm:think>Let me look.NS<tool_call>
    NS<invoke name="get_weather">NS<city>ZürichNS</city>NS<days>2NS</days>
    NS<when>NS<item>todayNS</item>NS</when>NS</invoke>
    NS</tool_call>[e~[
    ]~b]tool
    <response>{"temp_c": 3}</response>[e~[
    ]~b]ai

Variants (reference: llama.cpp's ``models/templates``): ``minimax_m2`` (the default,
``MiniMax-M2.jinja``) and ``minimax_m2:m3`` (``MiniMax-M3.jinja``, its default adaptive
thinking), ``minimax_m2:m3-thinking`` and ``minimax_m2:m3-no-thinking`` (the template's
``thinking_mode`` ``enabled`` and ``disabled``: the system turn says so, and the generation
prompt opens ``<mm:think>`` or writes ``</mm:think>``).

A family of its own, not a variant of ``minimax`` (MiniMax-M1): the templates share no
marker, no turn head, no tools block and no call syntax with M1's (M1 writes
``<beginning_of_sentence>`` turns and JSON lines in ``<tool_calls>``), only the vendor; M3
keeps M2's turns, system text, tools list and results.

Decisions (MiniMax-M2; MiniMax-M3's after them):

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

MiniMax-M3's decisions (the turns, the system text's default, the dropped later system
messages, the tools list and the results are M2's):

- **The first turn** is the template's fixed ``system`` text, its thinking line the
  variant's (``Current thinking mode: adaptive`` where ``thinking_mode`` is not given).  The
  caller's
  first system message is the ``developer`` turn after it (``You are a helpful
  assistant.`` without one), the tools after its text, then the template's instructions
  and its example call.
- **Calls** (:mod:`.tags`): after the turn's text, ``NS<tool_call>\\n``, per call
  ``NS<invoke name="NAME">``, per argument ``NS<KEY>VALUENS</KEY>``, ``NS</invoke>\\n``, then
  ``NS</tool_call>``.  A value is written as the template's ``to_xml`` writes it: an object
  as nested tags, a list as ``<item>`` tags, a boolean as ``true``/``false``, a number as
  Python's ``str``, a string as it is; a null is not written (a recorded loss).  Reading
  types each leaf by the tool's schema, as M2's values; a key given twice collects its
  values into an array, as vLLM's ``minimax_m3`` parser does.  Where vLLM reads otherwise:
  a value of a number or boolean parameter that is no JSON (``018956``, ``yes``) makes the
  call malformed (content, with a warning), where vLLM converts it: the template never
  writes one.  The grammars write the declared parameters only (see :mod:`.tags`).
- **Reasoning** is written on every turn that has some, ``<mm:think>R</mm:think>`` right
  before the text, with no newline; a turn without reasoning writes ``</mm:think>``, read
  back as none.  The generation prompt of ``m3`` is ``]~b]ai\\n`` (adaptive thinking): the
  model opens the block or writes ``</mm:think>`` itself, and text without either is
  content.  ``m3-thinking``'s prompt opens the block, so a completion starts inside it
  (``R</mm:think>answer``); ``m3-no-thinking``'s writes ``</mm:think>``, so a completion is
  the answer.

A MiniMax-M2 assistant message without ``reasoning_content`` whose content holds
``</think>`` is written as the template writes it: the text before the first ``</think>``
(after its ``<think>``) as its reasoning, the text after the last one, without newlines at
its ends, as its content (``Reasoning(in_content="unset", in_content_trim=("\\n",
"\\n"))``; text the split drops is a recorded loss).

Remaining differences from the templates:

- A turn without reasoning after the prompt's ``<think>\\n``: past turns without reasoning
  are ``]~b]ai\\nTEXT`` while the prompt is ``]~b]ai\\n<think>\\n`` (the template's own shape:
  no training render of such a turn extends the prompt render).
- A tool message whose content is a list of parts: the template writes each part as a
  result of its own, with a newline before its ``</response>``; pawlette writes the text
  parts as one result, as a text content.
- The template also reads ``current_date``, ``current_location`` and ``model_identity``, which
  no OpenAI request carries; pawlette writes none of them.
- MiniMax-M3: a past assistant message whose content holds ``</mm:think>`` (and no
  ``reasoning_content``) is split by the template into reasoning and content; pawlette
  writes the content as given.  ``m3-thinking``: a past turn without reasoning is
  ``]~b]ai\\n</mm:think>TEXT`` while the prompt is ``]~b]ai\\n<mm:think>``, and
  ``m3-no-thinking``: a past turn with reasoning is ``]~b]ai\\n<mm:think>R...`` while the
  prompt is ``]~b]ai\\n</mm:think>`` (the template's own shapes: no training render of such
  a turn extends the prompt render).  Its ``model_identity`` is not written, and a first
  message of the role
  ``root`` (which takes the system turn's place) is no OpenAI role.  An image or video part
  is not written (the template writes its placeholder token).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pawlette.declare import (
    Concept,
    Frame,
    Ignored,
    Layout,
    Marker,
    Reasoning,
    Results,
    Switch,
    SystemPrompt,
    ToolsBlock,
    XmlCalls,
    declare,
    fence,
)
from pawlette.declare.pieces import Fence

from .tags import TagCalls

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


M3_SYSTEM = (
    "Your model version is MiniMax-M3, developed by MiniMax. Knowledge cutoff: January 2026. "
    "Founded in early 2022, MiniMax is a global AI foundation model company committed to "
    "advancing the frontiers of AI towards AGI."
)
M3_THINKING = (
    "\n\n<thinking_instructions>\nYou have a thinking capability that allows you to reason step "
    "by step before responding. When thinking is enabled, wrap your reasoning in <mm:think>"
    "</mm:think> tags before your response. When thinking is disabled, begin your response "
    "directly after the </mm:think> prefix. When thinking is adaptive, decide on your own "
    "whether to think for the current turn.\n"
)
M3_MODES = {
    "adaptive": (
        "Current thinking mode: adaptive. You are encouraged to think for complex "
        "decision-making, multi-step reasoning, or when analyzing function/tool results.\n"
    ),
    "enabled": (
        "Current thinking mode: enabled. You MUST think step by step before every response, "
        "including after receiving function/tool results.\n"
    ),
    "disabled": "Current thinking mode: disabled. Do not output any thinking process.\n",
}
"""The system turn's line for each ``thinking_mode`` (the template's; ``adaptive`` also where
the variable is not given)."""
NS = Marker("]<]minimax[>[")
MM_THINK, MM_THINK_END = Marker("<mm:think>"), Marker("</mm:think>")
M3_TOOLS_OPEN = (
    "\n\n# Tools\nYou may call one or more tools to assist with the user query.\n"
    "Here are the tools available in JSONSchema format:\n\n<tools>\n"
)
M3_TOOLS_CLOSE = fence(
    "</tools>\n\nTo call tools, wrap all invocations in a single ",
    NS,
    "<tool_call>",
    NS,
    "</tool_call> block. Parameter values containing nested objects or arrays are recursively "
    "expanded into XML elements. Example:\n\n",
    NS,
    "<tool_call>\n",
    NS,
    '<invoke name="tool-name-1">',
    NS,
    "<param-1>value-1",
    NS,
    "</param-1>",
    NS,
    "<param-2>",
    NS,
    "<item>",
    NS,
    "<key-a>val-a",
    NS,
    "</key-a>",
    NS,
    "<key-b>val-b",
    NS,
    "</key-b>",
    NS,
    "</item>",
    NS,
    "</param-2>",
    NS,
    "</invoke>\n",
    NS,
    '<invoke name="tool-name-2">',
    NS,
    "<param-1>value-1",
    NS,
    "</param-1>",
    NS,
    "</invoke>\n",
    NS,
    "</tool_call>",
)

Version = Literal["m2", "m3"]
ThinkingMode = Literal["adaptive", "enabled", "disabled"]


@dataclass(frozen=True)
class MinimaxM2Options:
    """``version``: which template (``"m2"``: MiniMax-M2's, ``"m3"``: MiniMax-M3's);
    ``thinking_mode``: MiniMax-M3's variable of that name (``"adaptive"``, its default: the
    prompt opens nothing; ``"enabled"``: the prompt opens ``<mm:think>``; ``"disabled"``: it
    writes ``</mm:think>``).  ``model_identity``, ``current_date`` and ``current_location``
    are not written (see the module)."""

    version: Version = "m2"
    thinking_mode: ThinkingMode = "adaptive"


VARIANTS = {
    "m3": MinimaxM2Options(version="m3"),
    "m3-thinking": MinimaxM2Options(version="m3", thinking_mode="enabled"),
    "m3-no-thinking": MinimaxM2Options(version="m3", thinking_mode="disabled"),
}


def _variables(options: MinimaxM2Options) -> Mapping[str, Any]:
    if options.version != "m3" or options.thinking_mode == "adaptive":
        return {}  # (M3's template writes the adaptive mode where the variable is not given)
    return {"thinking_mode": options.thinking_mode}


def turn(head: str) -> Frame:
    """A turn: ``]~b]`` + its head, its text, ``[e~[`` and a newline."""
    return Frame(open=fence(BEGIN, head), end=fence(END), after=fence("\n"))


def _m2_concepts() -> tuple[Concept, ...]:
    return (
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
            in_content="unset",
            in_content_trim=("\n", "\n"),
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
    )


M3_PROMPTS: Mapping[ThinkingMode, Literal["", "open", "closed"]] = {
    "adaptive": "",  # the model opens the block or closes it itself
    "enabled": "open",
    "disabled": "closed",  # the assistant frame's prompt writes the stand-in </mm:think>
}


def key_tag_calls(section_open: Fence, section_close: Fence) -> TagCalls:
    """MiniMax-M3's calls (``<invoke name="NAME">`` and a tag named by each key) inside
    ``section_open`` and ``section_close`` (inference takes it with the fences it finds)."""
    return TagCalls(
        open=fence(NS, '<invoke name="'),
        name_close=fence('">'),
        key_open=fence(NS, "<"),
        key_close=fence(">"),
        value_close=fence(NS, "</"),
        close=fence(NS, "</invoke>\n"),
        section_open=section_open,
        section_close=section_close,
        tag=fence(NS),
    )


def _m3_concepts(mode: ThinkingMode) -> tuple[Concept, ...]:
    return (
        ToolsBlock(
            place="system",
            open=fence(M3_TOOLS_OPEN),
            close=M3_TOOLS_CLOSE,
            item_open=fence("<tool>"),
            item_close=fence("</tool>\n"),
            wrap="function",
        ),
        Reasoning(
            open=fence(MM_THINK),
            close=fence(MM_THINK_END),
            keep="all",
            absent=fence(MM_THINK_END),
            prompt=M3_PROMPTS[mode],
            calls_end=True,
        ),
        key_tag_calls(fence(NS, "<tool_call>\n"), fence(NS, "</tool_call>")),
    )


def layout(options: MinimaxM2Options) -> Layout:
    m3 = options.version == "m3"
    system = "system\n" + M3_SYSTEM + M3_THINKING + M3_MODES[options.thinking_mode]
    begin = fence(DOCUMENT, BEGIN, system + "</thinking_instructions>", END, "\n")
    tools, reasoning, calls = _m3_concepts(options.thinking_mode) if m3 else _m2_concepts()
    assistant = turn("ai\n")
    if m3 and options.thinking_mode == "disabled":  # the prompt writes the stand-in close
        closed = fence(BEGIN, "ai\n", MM_THINK_END)
        roles = ("start", "system", "user", "assistant", "tool")
        assistant = Frame(
            open=assistant.open,
            end=assistant.end,
            after=assistant.after,
            prompt_after={role: closed for role in roles},
        )
    return Layout(
        name="minimax_m2",
        summary="MiniMax-M2/M3: ]~b] turns, <invoke name=...> calls",
        begin=begin if m3 else fence(DOCUMENT),
        frames={
            "system": turn("developer\n" if m3 else "system\n"),
            "user": turn("user\n"),
            "assistant": assistant,
            "tool": Frame(open=fence(BEGIN, "tool"), end=fence(END), after=fence("\n")),
        },
        concepts=(
            SystemPrompt(default=DEFAULT_SYSTEM, placement="first_kept", empty_first="absent"),
            tools,
            reasoning,
            calls,
            Results(grouped=True, item_open=fence("\n<response>"), item_close=fence("</response>")),
            Ignored(("name",)),
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        template_variables=_variables,
        # MiniMax-M3's template reads thinking_mode; M2's nothing.
        switches=(
            (Switch("thinking_mode", "thinking_mode", values=("adaptive", "enabled", "disabled")),)
            if m3
            else ()
        ),
        # <invoke name="...> is text between the special tokens: the model's ids are read as
        # the text they decode to, markers by their spelling.
        markers_in_text=True,
    )


FORMAT = declare(layout(MinimaxM2Options()))
