"""MiniCPM 5 (OpenBMB) as its chat template writes it: ChatML turns, Qwen3's reasoning,
tools as JSON lines, calls as ``<function name="NAME"><param name="KEY">VALUE</param>...
</function>`` tags after the text, results in ``<tool_response>`` in a user turn.

The wire format (``<|im_start|>``, ``<|im_end|>``, ``<think>``, ``</think>``,
``<tool_response>``, ``</tool_response>`` are markers; the calls are plain text)::

    <|im_start|>system
    You are terse.

    # Tools

    You are provided with function signatures within <tools></tools> XML tags:
    <tools>
    {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city", ...}}
    </tools>

    Tool usage guidelines:
    - You may call zero or more functions. If no function calls are needed, just answer normally and do not include any <function ... </function>.
    - When calling a function, return an XML object within <function ... </function> using:
    <function name="function-name"><param name="param-name">param-value</param></function>
    - param-value may be multi-line. If it contains <, & or newline characters, wrap it in a CDATA block: <param name="param-name"><![CDATA[...multi-line value...]]></param><|im_end|>
    <|im_start|>user
    Weather in Paris and Zürich?<|im_end|>
    <|im_start|>assistant
    <think>
    Two cities.
    </think>

    Checking.
    <function name="get_weather"><param name="city">Paris</param><param name="days">2</param></function>
    <function name="get_weather"><param name="city"><![CDATA[Zürich
    (CH)]]></param></function><|im_end|>
    <|im_start|>user
    <tool_response>
    18°C
    </tool_response>
    <tool_response>
    12°C
    </tool_response><|im_end|>
    <|im_start|>assistant

Decisions (reference: ``openbmb-MiniCPM5-1B.jinja`` in llama.cpp's ``models/templates``).  The
template writes ``bos_token`` first; the model's ``tokenizer_config.json`` could not be read
here (none of the PyPI packages named for MiniCPM ships it: ``minicpm-o5-sdk`` 0.0.6 holds
MiniCPM-o 5's tokenizers, not this model's, and the template names neither token's value),
so its ``bos_token`` and ``eos_token`` are unknown and the format writes nothing before the
first turn.  Which fences are special tokens is not known either: the
ChatML and ``<think>``/``<tool_response>`` fences are declared markers, as in Qwen3's
tokenizer, and the calls plain text, as the template's instructions spell them (read from
token ids by their spelling).

- **Its own family**: Qwen3's ChatML layout (:mod:`pawlette.formats.chatml`) with calls
  of its own: the call syntax and its values are what no ChatML variant writes.
- **System turn**: the first system message's text, then, with tools, a blank line and the
  tools block (each tool as ``tojson`` writes it, non-ASCII kept); with tools and no system
  message the tools block alone; without tools and without a system message no system
  turn.  A later system message is a system turn where it stands.
- **Reasoning** is written only on assistant turns after the last user message, as
  ``<think>\\nR\\n</think>\\n\\n`` before the text, with the newlines at the reasoning's
  ends and at the text's start removed (a recorded loss); a turn without reasoning (or
  with the empty text) writes no block; earlier turns lose their reasoning (a recorded
  loss).  In a conversation without a user message no turn writes a block (the template
  takes the last message as the last query; ``Reasoning(no_query="dropped")``), and the
  reasoning is a recorded loss.  A user message whose text starts with ``<tool_response>``
  and ends with ``</tool_response>`` (results sent as a user message) is not taken as the
  last query, as the template takes none such.  An empty block reads back as no reasoning.
- **The generation prompt** is ``<|im_start|>assistant\\n``; the option ``thinking`` is the
  template's ``enable_thinking``: unset by default (nothing more), True opens the block
  (``<think>\\n``: a completion is read from inside it), False writes an empty one.
- **Calls** follow the text after a newline (none without text), one per line:
  ``<function name="NAME">`` then ``<param name="KEY">VALUE</param>`` per argument, then
  ``</function>``.  A string value is written as it is, in a CDATA block
  (``<![CDATA[...]]>``, :mod:`.calls`) when it holds ``<``, ``&`` or a newline; any other
  value as Python's ``str`` writes it (``True``, ``None``, ``{'k': [1, 2]}``), as the
  template pastes the value.  No ids: results answer calls by position.
- **Results**: a run of tool messages is one user turn of ``\\n<tool_response>\\nR
  \\n</tool_response>`` items.
- **Dropped fields**: a message's ``name`` (the template writes none: a recorded loss).
- **Reading**, as SGLang's ``minicpm4_xml`` detector reads these tags: text before the calls
  is content; a CDATA block is the text inside it; each value is typed by the tool's schema
  (a string parameter keeps its text; any other is read as JSON, or as a Python literal:
  ``True``, ``{'a': None}``); whitespace between the tags is allowed.  A call naming no
  tool of the request, a parameter without its name or given twice, or a call never closed
  keeps the call as content, with a warning.  Where pawlette reads otherwise: text after
  the calls is kept as content with a warning (the template writes the calls last), and a
  parameter the tool does not declare is read (JSON Schema's default; the strict grammar
  refuses it), where SGLang drops the call.
- **Grammars**: a string value is any text up to ``</param>`` (a CDATA block included);
  free text, the newline after it and the first call's opener are one lexeme, so
  llguidance's greedy lexer does not take the opener's first characters as text
  (:func:`pawlette.declare.grammar.text_then`).

An assistant message without ``reasoning_content`` whose content holds ``</think>`` is
written as the template writes it: the text before the first ``</think>`` (after its
``<think>``) as its reasoning, the text after the last one as its content
(``Reasoning(in_content="unset")``; text the split drops is a recorded loss).

Remaining differences from the template, all on input no generated conversation of the
family's tests holds:

- content given as a list of parts: the template writes no text for it (it reads only a
  string), and a tool result given so as its JSON; pawlette writes the parts' text;
- a conversation whose only user messages are ``<tool_response>...</tool_response>``
  texts: the template then writes no reasoning at all; pawlette keeps the reasoning of the
  turns after the last of those user messages;
- ``<tool_def_sep>`` in the first system message (the template puts the tools block
  there) and ``<tool_sep>`` in the text of a turn with calls (the template drops the text
  after it): pawlette writes both as text.
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    Reasoning,
    Results,
    Switch,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)

from .calls import CdataXmlCalls

IM_START, IM_END = Marker("<|im_start|>"), Marker("<|im_end|>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
RESPONSE, RESPONSE_END = Marker("<tool_response>"), Marker("</tool_response>")

TOOLS_OPEN = (
    "# Tools\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_CLOSE = (
    "\n</tools>\n\nTool usage guidelines:\n"
    "- You may call zero or more functions. If no function calls are needed, just answer "
    "normally and do not include any <function ... </function>.\n"
    "- When calling a function, return an XML object within <function ... </function> using:\n"
    '<function name="function-name"><param name="param-name">param-value</param></function>\n'
    "- param-value may be multi-line. If it contains <, & or newline characters, wrap it in a "
    'CDATA block: <param name="param-name"><![CDATA[...multi-line value...]]></param>'
)


@dataclass(frozen=True)
class MinicpmOptions:
    """``thinking``: the template's ``enable_thinking``: None (the default) leaves it
    unset, and the generation prompt is ``<|im_start|>assistant\\n`` alone; True opens a
    reasoning block after it (``<think>\\n``); False writes an empty one
    (``<think>\\n\\n</think>\\n\\n``)."""

    thinking: bool | None = None


def frame(role: str) -> Frame:
    return Frame(open=fence(IM_START, f"{role}\n"), end=fence(IM_END), after=fence("\n"))


def layout(options: MinicpmOptions) -> Layout:
    prompt: Literal["", "open", "empty"] = (
        "" if options.thinking is None else "open" if options.thinking else "empty"
    )
    return Layout(
        name="minicpm",
        summary='MiniCPM 5: ChatML turns, <think>, <function name="..."><param ...> calls',
        frames={
            **{role: frame(role) for role in ("system", "user", "assistant")},
            "tool": Frame(open=fence(IM_START, "user"), end=fence(IM_END), after=fence("\n")),
        },
        concepts=(
            SystemPrompt(),
            ToolsBlock(
                place="system",
                open=fence(TOOLS_OPEN),
                item_open=fence("\n"),
                close=fence(TOOLS_CLOSE),
                separator=fence("\n\n"),
            ),
            Reasoning(
                open=fence(THINK, "\n"),
                close=fence("\n", THINK_END, "\n\n"),
                keep="after_last_query",
                no_query="dropped",
                # (results sent as a user message are not a query, as the template reads)
                not_query=("<tool_response>", "</tool_response>"),
                trim="\n",
                prompt=prompt,
                in_content="unset",
            ),
            Ignored(("name",)),
            CdataXmlCalls(
                open=fence('<function name="'),
                name_close=fence('">'),
                key_open=fence('<param name="'),
                key_close=fence('">'),
                value_close=fence("</param>"),
                close=fence("</function>"),
                separator=fence("\n"),
                text_separator=fence("\n"),
                values="literal",
            ),
            Results(
                grouped=True,
                item_open=fence("\n", RESPONSE, "\n"),
                item_close=fence("\n", RESPONSE_END),
            ),
        ),
        options=options,
        from_options=layout,
        # The calls are plain text (no special token): from token ids they are read by their
        # spelling.
        markers_in_text=True,
        template_variables=lambda options: (
            {} if options.thinking is None else {"enable_thinking": options.thinking}
        ),
        switches=(Switch("thinking", "enable_thinking", values=(None, True, False)),),
    )


FORMAT = declare(layout(MinicpmOptions()))
