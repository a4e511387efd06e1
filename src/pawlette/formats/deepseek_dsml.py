"""DeepSeek V3.2 and V4: DeepSeek's special tokens with DSML tool calls, the tools in the
system text, thinking switched by an option; V3.2 writes results in one
``<function_results>`` block, V4 in the user's turn.

The wire format (``<｜...｜>`` are special tokens of the DeepSeek-V3 tokenizer; the DSML tags
``<｜DSML｜...>`` are plain text, and ``<think>`` / ``</think>`` are added tokens that
are not special, read as text)::

    <｜begin▁of▁sentence｜>You are terse.

    ## Tools ... <functions>
    {"name": "get_weather", "parameters": {...}}
    </functions>
    <｜User｜>Weather in Zürich?<｜Assistant｜></think>

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="get_weather">
    <｜DSML｜parameter name="city" string="true">Zürich</｜DSML｜parameter>
    <｜DSML｜parameter name="days" string="false">2</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls><｜end▁of▁sentence｜>

    <function_results>
    <result>{"temp_c": 3}</result>
    </function_results>

    </think>3 °C.<｜end▁of▁sentence｜><｜User｜>Thanks<｜Assistant｜><think></think>

Variants (reference: llama.cpp's ``models/templates``, ``deepseek-ai-DeepSeek-V3.2``,
``deepseek-ai-DeepSeek-V4`` and ``deepseek-ai-DeepSeek-V4-Flash-0731``): ``v3.2`` (the
default: the template's ``thinking`` off), ``v3.2-thinking``, ``v4`` (both V4 templates,
``thinking`` off) and ``v4-thinking``.

Decisions:

- **System messages** are gathered, joined by a blank line, and written bare right after
  the bos token (the template gathers every system message wherever it stands).
- **Tools**: the template's instructions, then each tool's ``function`` object as JSON on a
  line of its own, inside ``<functions>``, after the system text and a blank line.
- **Calls**: after the turn's text, a ``<｜DSML｜function_calls>`` block with one
  ``invoke`` per call and one ``parameter`` per argument: a string is written as it is,
  with ``string="true"``; any other value as JSON, with ``string="false"``.  Reading follows
  the attribute, as vLLM's, SGLang's and llama.cpp's DeepSeek-V3.2 parsers do:
  ``string="true"`` is the text as written, ``string="false"`` JSON (text that is not JSON
  stays a string where the tool's schema allows one, else the call is malformed).  No call
  ids (results answer calls by position).
- **Results**: consecutive tool messages are one ``\\n\\n<function_results>`` block, each
  ``\\n<result>TEXT</result>``; the answer after results opens with a blank line instead of
  ``<｜Assistant｜>``.
- **Reasoning**: with thinking off, every past answer opens with ``</think>`` and holds no
  reasoning (``reasoning_content`` is dropped: a recorded loss); the generation prompt is
  ``<｜Assistant｜><think></think>`` (``\\n\\n<think></think>`` after results).  With
  ``thinking``, the answers after the last user message keep their reasoning,
  ``<think>REASONING</think>``, the earlier ones ``</think>`` alone, and the prompt opens
  ``<think>``: the model writes ``reasoning</think>answer``, read as llama.cpp and vLLM read
  it (text before ``</think>`` is reasoning; text without it all reasoning).
- **An answer right after another answer** is written straight after the first one's
  end, with no opener, no block and no ``</think>`` (its reasoning is dropped: a recorded
  loss), and there is no generation prompt after an answer, as the template has it.  Read
  back, such a turn begins as text: ``</think>`` there is the answer's text.
- **Names** are never written (a recorded loss).

DeepSeek V4 (the ``v4`` variants), where it differs from V3.2::

    <｜begin▁of▁sentence｜>You are terse.

    ## Tools ... ### Available Tool Schemas

    {"name": "get_weather", "parameters": {...}}

    You MUST strictly follow the above defined tool name and parameter schemas ...
    <｜User｜>Weather in Zürich?<｜Assistant｜></think>

    <｜DSML｜tool_calls>
    <｜DSML｜invoke name="get_weather">
    <｜DSML｜parameter name="city" string="true">Zürich</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜tool_calls><｜end▁of▁sentence｜><｜User｜><tool_result>{"temp_c": 3}</tool_result>

    Thanks<｜Assistant｜></think>3 °C.<｜end▁of▁sentence｜>

- **Calls** in a ``<｜DSML｜tool_calls>`` block; a call without arguments holds a blank
  line (written, and read as layout).
- **Results** are the user's: ``<｜User｜><tool_result>TEXT</tool_result>``; a result or
  user text right after a result or user text is joined to it by a blank line, with no
  second ``<｜User｜>``.
- **Every answer** opens ``<｜Assistant｜>``, with thinking off ``<｜Assistant｜></think>``,
  the generation prompt too (no stand-in to cut: the prompt begins every past turn).
- **Thinking** (``v4-thinking``): every answer keeps its reasoning,
  ``<think>REASONING</think>`` (``<think></think>`` without), the template with
  ``drop_thinking`` false, or its default when the request has tools or results; the prompt
  opens ``<think>``, read as V3.2-thinking's.
- The Flash template differs from V4's only in the texts a ``reasoning_effort`` variable
  adds with thinking on; both are ``v4``.

Remaining differences from the templates:

- V3.2: an answer with no user message or results before it is written as the template
  writes it, bare after the system text, which has no end: it does not read back.
- V4 with thinking and ``drop_thinking`` left at its default, in a conversation without
  tools or results: the template drops the reasoning of answers before the last user
  message; ``v4-thinking`` keeps it (the rule depends on the request's tools, which a
  variant cannot; the kept reasoning is what the model wrote).
- V4's ``reasoning_effort`` texts and ``response_format`` schema (template variables a
  caller passes) are not written.
- V4, reading a conversation back: the blank line that joins user texts and results is the
  only mark between them, so a blank line in system or user text reads as the start of
  another user message (the template writes both alike).
- A ``developer`` message is a system message to pawlette (OpenAI's meaning), gathered into
  the system text; the templates write it as a user turn.
- ``<think>`` and ``</think>`` are text: reasoning or content holding them is written as the
  template writes it, and reads back cut at them.
"""

# ruff: noqa: E501  (the docstring shows the wire format, fullwidth bars included)

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pawlette.declare import (
    Frame,
    GapAfterResults,
    Ignored,
    Layout,
    Reasoning,
    Results,
    Switch,
    SystemPrompt,
    ToolsBlock,
    XmlCalls,
    declare,
    fence,
)

from .deepseek import ASSISTANT, BOS, EOS, USER

if TYPE_CHECKING:
    pass

THINK, THINK_END = "<think>", "</think>"
"""Text: the tokenizer's added tokens for them are not special (its tools instructions
spell them in a sentence)."""
DSML = "｜DSML｜"
"""The tags' prefix, plain text (the DeepSeek-V3 tokenizer has no token for it)."""

_V3_2_TOOLS = (
    "## Tools\n\nYou have access to a set of tools you can use to answer the user's question.\n"
    f'You can invoke functions by writing a "<{DSML}function_calls>" block like the following'
    f" as part of your reply to the user:\n<{DSML}function_calls>\n"
    f'<{DSML}invoke name="$FUNCTION_NAME">\n'
    f'<{DSML}parameter name="$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE</{DSML}parameter>\n'
    f'...\n</{DSML}invoke>\n<{DSML}invoke name="$FUNCTION_NAME2">\n...\n</{DSML}invoke>\n'
    f"</{DSML}function_calls>\n\n"
    "String and scalar parameters should be specified as is without any escaping or quotes,"
    ' while lists and objects should use JSON format. The "string" attribute should be set'
    ' to "true" for string type parameters and "false" for other types (numbers, booleans,'
    " arrays, objects).\n\nIf the thinking_mode is enabled, then after function results you"
    " should strongly consider outputting a thinking block. Here is an example:\n\n"
    f"<{DSML}function_calls>\n...\n</{DSML}function_calls>\n\n<function_results>\n...\n"
    "</function_results>\n\n<think>...thinking about results</think>\n\n"
    "Here are the functions available in JSONSchema format:\n<functions>\n"
)

_V4_TOOLS = (
    "## Tools\n\nYou have access to a set of tools to help answer the user's question. You can"
    f' invoke tools by writing a "<{DSML}tool_calls>" block like the following:\n\n'
    f'<{DSML}tool_calls>\n<{DSML}invoke name="$TOOL_NAME">\n'
    f'<{DSML}parameter name="$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE</{DSML}parameter>\n'
    f'...\n</{DSML}invoke>\n<{DSML}invoke name="$TOOL_NAME2">\n...\n</{DSML}invoke>\n'
    f"</{DSML}tool_calls>\n\n"
    'String parameters should be specified as is and set `string="true"`. For all other types'
    " (numbers, booleans, arrays, objects), pass the value in JSON format and set"
    ' `string="false"`.\n\nIf thinking_mode is enabled (triggered by <think>), you MUST output'
    " your complete reasoning inside <think>...</think> BEFORE any tool calls or final"
    " response.\n\nOtherwise, output directly after </think> with tool calls or final"
    " response.\n\n### Available Tool Schemas\n"
)
_V4_TOOLS_END = (
    "\n\nYou MUST strictly follow the above defined tool name and parameter schemas to invoke"
    " tool calls.\n"
)

Version = Literal["v3.2", "v4"]


@dataclass(frozen=True)
class DsmlOptions:
    """``version``: which template's layout (see the module docstring); ``thinking``: the
    template's ``thinking`` variable (reasoning kept after the last user message, the
    generation prompt opens ``<think>``)."""

    version: Version = "v3.2"
    thinking: bool = False


VARIANTS = {
    "v3.2": DsmlOptions(),
    "v3.2-thinking": DsmlOptions(thinking=True),
    "v4": DsmlOptions(version="v4"),
    "v4-thinking": DsmlOptions(version="v4", thinking=True),
}


_GAP = fence("\n\n")


THINKING = Switch("thinking", "thinking", fallback=("enable_thinking",))
"""The templates read ``thinking``, else ``enable_thinking``."""


def _variables(options: DsmlOptions) -> Mapping[str, Any]:
    if options.version == "v4":  # every past turn keeps its reasoning (see the docstring)
        return {"thinking": options.thinking, "drop_thinking": False}
    return {"thinking": options.thinking}


def dsml_calls(section: str, no_arguments: str = "") -> XmlCalls:
    """DSML calls in a ``<｜DSML｜SECTION>`` block, each parameter typed by its attribute
    (``no_arguments``: what a call without arguments holds)."""
    return XmlCalls(
        no_arguments=fence(no_arguments) if no_arguments else (),
        section_open=fence(f"\n\n<{DSML}{section}>\n"),
        open=fence(f'<{DSML}invoke name="'),
        name_close=fence('">\n'),
        key_open=fence(f'<{DSML}parameter name="'),
        key_close=fence('" string="true">'),
        key_close_other=fence('" string="false">'),
        value_close=fence(f"</{DSML}parameter>\n"),
        close=fence(f"</{DSML}invoke>\n"),
        section_close=fence(f"</{DSML}{section}>"),
    )


def layout(options: DsmlOptions) -> Layout:
    if options.version == "v4":
        return v4_layout(options)
    prompt = {"user": fence(ASSISTANT, THINK), "tool": fence(THINK)} if options.thinking else {}
    return Layout(
        name="deepseek_dsml",
        summary="DeepSeek V3.2: DSML calls, tools in the system text, thinking option",
        begin=fence(BOS),
        frames={
            "system": Frame(),
            "user": Frame(open=fence(USER)),
            "assistant": Frame(
                # An answer right after another answer has no opener (the template writes it
                # straight after the first one's end), and no reasoning block (below).
                open_after={"user": fence(ASSISTANT), "assistant": ()},
                end=fence(EOS),
                prompt_after=prompt,
            ),
            "tool": Frame(open=fence("\n\n<function_results>"), end=fence("\n</function_results>")),
        },
        concepts=(
            SystemPrompt(placement="gathered", joiner="\n\n"),
            ToolsBlock(
                place="system",
                open=fence(_V3_2_TOOLS),
                close=fence("</functions>\n"),
                item_close=fence("\n"),
                separator=fence("\n\n"),
                wrap="function",
            ),
            Ignored(("name",)),
            GapAfterResults(_GAP),
            Reasoning(
                open=fence(THINK),
                close=fence(THINK_END),
                absent=fence(THINK_END),
                keep="after_last_query" if options.thinking else "none",
                empty_after_last_query=options.thinking,
                prompt="opened" if options.thinking else "empty",
                # The block, its stand-in and the prompt's are written only in a turn the
                # template opens: after a user message (its opener) or results (its gap).
                after=("user", "tool"),
            ),
            dsml_calls("function_calls"),
            Results(grouped=True, item_open=fence("\n<result>"), item_close=fence("</result>")),
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        template_variables=_variables,
        switches=(THINKING,),
        markers_in_text=True,  # the calls and the reasoning are plain text: DSML is no token
    )


def v4_layout(options: DsmlOptions) -> Layout:
    """DeepSeek V4: results in the user's turn, every answer opened by ``<｜Assistant｜>``."""
    results_open = fence("\n\n<tool_result>")
    # With thinking off every answer opens "<｜Assistant｜></think>", the prompt too: the
    # opener, as in V3.1's format (no block is ever written).
    opener = fence(ASSISTANT) if options.thinking else fence(ASSISTANT, THINK_END)
    return Layout(
        name="deepseek_dsml",
        summary="DeepSeek V4: DSML calls, results in the user's turn, thinking option",
        begin=fence(BOS),
        frames={
            "system": Frame(),
            "user": Frame(open=fence(USER), open_after=dict.fromkeys(("user", "tool"), _GAP)),
            "assistant": Frame(open=opener, end=fence(EOS)),
            "tool": Frame(
                open=fence(USER, "<tool_result>"),
                open_after=dict.fromkeys(("user", "tool"), results_open),
                end=fence("</tool_result>"),
            ),
        },
        concepts=(
            SystemPrompt(placement="gathered", joiner="\n\n"),
            ToolsBlock(
                place="system",
                open=fence(_V4_TOOLS),
                close=fence(_V4_TOOLS_END),
                # Each tool's line is written "\n" + JSON (the template: JSON + "\n"), so
                # that the block's close holds the blank line before its text: a blank line
                # is a marker in V4 (user text after results opens with it), and the lexer
                # would take it before a close that began one character later.
                item_open=fence("\n"),
                separator=fence("\n\n"),
                wrap="function",
            ),
            Ignored(("name",)),
            Reasoning(
                open=fence(THINK),
                close=fence(THINK_END),
                absent=fence(THINK, THINK_END) if options.thinking else (),
                keep="all" if options.thinking else "none",
                prompt="open" if options.thinking else "",
            ),
            dsml_calls("tool_calls", no_arguments="\n"),
            Results(),
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        template_variables=_variables,
        switches=(THINKING,),
        markers_in_text=True,  # the calls and the reasoning are plain text: DSML is no token
    )


FORMAT = declare(layout(DsmlOptions()))
