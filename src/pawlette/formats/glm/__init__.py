"""GLM-4.5, GLM-4.6 and GLM-4.7: per-role tokens with no end marker, calls as one tag pair per
argument, reasoning kept after the last user message, as Z.ai's chat templates write them.

The wire format of GLM-4.6 (``[gMASK]``, ``<sop>``, ``<|system|>``, ``<|user|>``,
``<|assistant|>``, ``<|observation|>``, ``<think>``, ``</think>``, ``<tool_call>``,
``</tool_call>``, ``<arg_key>``, ``</arg_key>``, ``<arg_value>``, ``</arg_value>``,
``<tool_response>``, ``</tool_response>`` and ``/nothink`` are special tokens of GLM's
tokenizer)::

    [gMASK]<sop><|system|>
    # Tools

    You may call one or more functions to assist with the user query.

    You are provided with function signatures within <tools></tools> XML tags:
    <tools>
    {"type": "function", "function": {"name": "get_weather", ...}}
    </tools>

    For each function call, output the function name and arguments within the following XML format:
    <tool_call>{function-name}
    <arg_key>{arg-key-1}</arg_key>
    ...
    </tool_call><|system|>
    You are terse.<|user|>
    Weather in Zürich?<|assistant|>
    <think></think>
    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Zürich</arg_value>
    <arg_key>days</arg_key>
    <arg_value>2</arg_value>
    </tool_call><|observation|>
    <tool_response>
    {"temp_c": 3}
    </tool_response><|assistant|>
    <think>It is cold.</think>
    3 °C.

GLM-4.7 (``glm:4.7``) writes the same turns with no newline after the role tokens, around the
reasoning block, inside calls and around results, and a lone ``</think>`` where a turn keeps
no reasoning; its generation prompt opens ``<think>``::

    [gMASK]<sop><|system|>You are terse.<|user|>Weather in Zürich?<|assistant|></think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Zürich</arg_value></tool_call><|observation|><tool_response>{"temp_c": 3}</tool_response><|assistant|><think>

Variants (reference: llama.cpp's ``models/templates``, ``GLM-4.6.jinja`` and
``GLM-4.7-Flash.jinja``):

- ``glm`` (the default, GLM-4.5/4.6), ``glm:4.6-no-thinking`` (the template's
  ``enable_thinking=false``: ``/nothink`` after every user message's text, and the
  generation prompt closes an empty block, ``<|assistant|>\\n<think></think>``).
- ``glm:4.7`` (generation prompt ``<|assistant|><think>``), ``glm:4.7-no-thinking``
  (``<|assistant|></think>``), ``glm:4.7-kept-thinking`` (the template's
  ``clear_thinking=false``: every turn keeps its reasoning, not only those after the last
  user message).

Decisions:

- **No end markers.**  A turn ends where the next one opens.  The model ends its turn by
  writing the next turn's opener, ``<|user|>`` or ``<|observation|>``, or ``<|endoftext|>``
  (the ``eos_token_id`` list of GLM's generation config): the three are the format's stop
  set, and never written (the template writes none; training data that ends with an
  assistant message teaches no stop, as the template's own).
- **Tools** are a system turn of their own before every message (a caller's system message
  follows as another ``<|system|>`` turn), one ``tojson`` line per tool (the whole OpenAI
  tool object).  The instructions' ``<tool_call>``, ``<arg_key>``... are written as the
  tokens they are in GLM's tokenizer.
- **Calls**: ``<tool_call>NAME`` then per argument ``<arg_key>KEY</arg_key><arg_value>VALUE
  </arg_value>`` then ``</tool_call>`` (GLM-4.6: a newline before the call, after the name and
  after each tag pair), after the turn's text.  A string value is written as it is, any other
  as JSON (``tojson``: ``", "``/``": "``, non-ASCII kept); reading types each value by the
  tool's schema (a string parameter keeps its text, ``123 Main St`` included; an integer
  ``42`` is read as JSON).  A call without arguments is ``<tool_call>NAME</tool_call>``, read
  as ``{}``.  No ids: results answer calls by position.  Both layouts (with and without the
  newlines) are read by every variant: GLM models write both (peers' tests).
- **Results**: consecutive tool messages share one ``<|observation|>`` turn, each in
  ``<tool_response>`` tags.  A tool message's ``name`` is not written (a recorded loss).
- **Reasoning** is written on the turns after the last user message that have some
  (``<think>R</think>``); every other turn writes the empty stand-in (GLM-4.6
  ``\\n<think></think>``, GLM-4.7 ``</think>``), read back as no reasoning.  Reasoning
  before the last user message is dropped (a recorded loss).  The template ``strip()``s the
  reasoning and the text after it: pawlette writes them so, and reports a text that changes
  as a loss (``Trimmed``, ``Reasoning(trim=...)``); GLM-4.6's newline before the text is
  written only when the text is not empty, and read as layout.  A call opening inside an
  unclosed block ends the reasoning (SGLang's ``glm45`` reader and llama.cpp read it so).
- **Reading follows the prompt**: after GLM-4.7's ``<think>`` prompt the completion starts
  inside the block (``R</think>answer``); after GLM-4.6's bare ``<|assistant|>`` text
  without ``<think>`` is content (vLLM's ``glm45`` reader, llama.cpp).
- **Refusals**: call arguments that are not a JSON object are refused (GLM-4.6's template
  raises, GLM-4.7's fails on them), with their path.

A past assistant message without ``reasoning_content`` whose content holds ``</think>`` is
written as the templates write it: the text before the first ``</think>`` (after its
``<think>``) as its reasoning, the text after the last one as its content
(``Reasoning(in_content="unset")``; text the split drops is a recorded loss).

Remaining differences from the templates:

- A tool message whose content is a list of parts: the template writes a second
  ``<|observation|>`` and each part's Python ``repr``; pawlette writes the text parts as one
  result.
- GLM-4.7 thinking on: a past turn without reasoning is ``<|assistant|></think>...`` while
  the prompt is ``<|assistant|><think>``: the template's own shape (no training render of
  such a turn extends the prompt render).
- ``/nothink`` ends a user's text only if the template appends it; a user text that itself
  ends with ``/nothink`` is written as text (from text, parsing reads it as the switch).
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pawlette.declare import (
    Fence,
    Frame,
    Ignored,
    Layout,
    Marker,
    Reasoning,
    Results,
    Switch,
    SystemPrompt,
    ToolsBlock,
    Trimmed,
    XmlCalls,
    declare,
    fence,
)

from .concepts import NextTurnStop, NoThink

GMASK, SOP = Marker("[gMASK]"), Marker("<sop>")
SYSTEM, USER = Marker("<|system|>"), Marker("<|user|>")
ASSISTANT, OBSERVATION = Marker("<|assistant|>"), Marker("<|observation|>")
ENDOFTEXT = Marker("<|endoftext|>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
TOOL_CALL, TOOL_CALL_END = Marker("<tool_call>"), Marker("</tool_call>")
ARG_KEY, ARG_KEY_END = Marker("<arg_key>"), Marker("</arg_key>")
ARG_VALUE, ARG_VALUE_END = Marker("<arg_value>"), Marker("</arg_value>")
RESPONSE, RESPONSE_END = Marker("<tool_response>"), Marker("</tool_response>")
NOTHINK = Marker("/nothink")

WHITESPACE = "".join(chr(code) for code in range(0x3001) if chr(code).isspace())
"""What Python's ``str.strip()`` (the templates' ``.strip()``) removes."""

TOOLS_INTRO = (
    "\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
)
TOOLS_OUTRO = (
    "</tools>\n\nFor each function call, output the function name and arguments within the "
    "following XML format:\n"
)

Version = Literal["4.6", "4.7"]


@dataclass(frozen=True)
class GlmOptions:
    """``version``: which template's layout (``"4.6"``: GLM-4.5 and 4.6, ``"4.7"``);
    ``thinking``: the template's ``enable_thinking`` (False: the prompt closes an empty
    block; GLM-4.6 also appends ``/nothink`` to user text); ``clear_thinking``: GLM-4.7's
    variable of that name (False: every turn keeps its reasoning)."""

    version: Version = "4.6"
    thinking: bool = True
    clear_thinking: bool = True


VARIANTS = {
    "4.6": GlmOptions(),
    "4.6-no-thinking": GlmOptions(thinking=False),
    "4.7": GlmOptions(version="4.7"),
    "4.7-no-thinking": GlmOptions(version="4.7", thinking=False),
    "4.7-kept-thinking": GlmOptions(version="4.7", clear_thinking=False),
}


def _variables(options: GlmOptions) -> Mapping[str, Any]:
    return {"enable_thinking": options.thinking, "clear_thinking": options.clear_thinking}


def _fence(*pieces: Marker | str) -> Fence:
    """A fence without its empty text (GLM-4.7 leaves out GLM-4.6's newlines)."""
    return fence(*(piece for piece in pieces if piece != ""))


def _tools_outro(newlines: bool) -> Fence:
    line = "\n" if newlines else ""
    return _fence(
        TOOLS_OUTRO,
        TOOL_CALL,
        "{function-name}" + line,
        ARG_KEY,
        "{arg-key-1}",
        ARG_KEY_END,
        line,
        ARG_VALUE,
        "{arg-value-1}",
        ARG_VALUE_END,
        line,
        ARG_KEY,
        "{arg-key-2}",
        ARG_KEY_END,
        line,
        ARG_VALUE,
        "{arg-value-2}",
        ARG_VALUE_END,
        line + "..." + line,
        TOOL_CALL_END,
    )


def layout(options: GlmOptions) -> Layout:
    newlines = options.version == "4.6"
    line = "\n" if newlines else ""
    if newlines:
        block = Reasoning(
            open=_fence("\n", THINK),
            close=_fence(THINK_END),
            keep="after_last_query",
            absent=_fence("\n", THINK, THINK_END),
            prompt="" if options.thinking else "empty",
            calls_end=True,
            trim=WHITESPACE,
            in_content="unset",
        )
    else:
        block = Reasoning(
            open=_fence(THINK),
            close=_fence(THINK_END),
            keep="after_last_query" if options.clear_thinking else "all",
            absent=_fence(THINK_END),
            prompt="open" if options.thinking else "",
            calls_end=True,
            trim=WHITESPACE,
            in_content="unset",
        )
    assistant = Frame(open=_fence(ASSISTANT))
    if not newlines and not options.thinking:
        closed = _fence(ASSISTANT, THINK_END)
        assistant = Frame(
            open=_fence(ASSISTANT),
            prompt_after={
                role: closed for role in ("start", "system", "user", "assistant", "tool")
            },
        )
    return Layout(
        name="glm",
        summary="GLM-4.5/4.6/4.7: [gMASK]<sop>, <|role|> turns, <tool_call>NAME<arg_key>...",
        begin=_fence(GMASK, SOP),
        frames={
            "system": Frame(open=_fence(SYSTEM, line)),
            "user": Frame(open=_fence(USER, line)),
            "assistant": assistant,
            "tool": Frame(open=_fence(OBSERVATION)),
        },
        concepts=(
            SystemPrompt(),
            Ignored(("name",)),  # the templates write no message's name
            ToolsBlock(
                place="own_turn",
                open=_fence(SYSTEM, TOOLS_INTRO),
                item_close=_fence("\n"),
                close=_tools_outro(newlines),
            ),
            *((NoThink(NOTHINK),) if newlines and not options.thinking else ()),
            # The text after the block is strip()ped; GLM-4.6 writes a newline before it.
            Trimmed(roles=("assistant",), lead=_fence(line)),
            block,
            XmlCalls(
                open=_fence(line, TOOL_CALL),
                name_close=_fence(line),
                key_open=_fence(ARG_KEY),
                key_close=_fence(ARG_KEY_END, line, ARG_VALUE),
                value_close=_fence(ARG_VALUE_END, line),
                close=_fence(TOOL_CALL_END),
            ),
            Results(
                grouped=True,
                item_open=_fence(line, RESPONSE, line),
                item_close=_fence(line, RESPONSE_END),
            ),
            NextTurnStop((USER, OBSERVATION, ENDOFTEXT)),
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        template_variables=_variables,
        switches=_switches(options),
    )


def _switches(options: GlmOptions) -> tuple[Switch, ...]:
    """What the template reads: ``enable_thinking`` (GLM-4.6 and 4.7), ``clear_thinking``
    (GLM-4.7 only)."""
    thinking = Switch("thinking", "enable_thinking")
    if options.version == "4.7":
        return (thinking, Switch("clear_thinking", "clear_thinking"))
    return (thinking,)


FORMAT = declare(layout(GlmOptions()))
