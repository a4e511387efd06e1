"""Hunyuan 3 (Tencent's Hy3) as its chat template writes it: fullwidth-bar role tokens, no
end after a user turn, calls as one tag pair per argument inside ``<tool_calls>``, every
token spelled with the ``:opensource`` suffix.

The wire format (every ``<...:opensource>`` and ``<｜...｜>`` is a token of Hy3's tokenizer;
the template builds each from its ``HYTK`` suffix variable)::

    <｜hy_begin_of_sentence:opensource｜>You are terse.

    # Tools

    You may call one or more functions to assist with the user query.

    You are provided with function signatures within <tools></tools> XML tags:
    <tools>
    {"type": "function", "function": {"name": "get_weather", ...}}
    </tools>

    For function call returns, you should first print <tool_calls:opensource>
    For each function call, you should return object like:
    <tool_call:opensource>{function-name}<tool_sep:opensource>
    <arg_key:opensource>{arg-key-1}</arg_key:opensource>
    <arg_value:opensource>{arg-value-1}</arg_value:opensource>
    ...
    </tool_call:opensource>
    At the end of function call returns, you should print </tool_calls:opensource><｜reasoning_mode:opensource｜>reasoning_effort:no_think<｜hy_User:opensource｜>Weather in Zürich?<｜hy_Assistant:opensource｜><think:opensource></think:opensource>Checking.<tool_calls:opensource>
    <tool_call:opensource>get_weather<tool_sep:opensource>
    <arg_key:opensource>city</arg_key:opensource>
    <arg_value:opensource>Zürich</arg_value:opensource>
    <arg_key:opensource>days</arg_key:opensource>
    <arg_value:opensource>2</arg_value:opensource>
    </tool_call:opensource>
    </tool_calls:opensource><｜hy_eos:opensource｜><tool_responses:opensource>
    <tool_response:opensource>
    {"temp_c": 3}
    </tool_response:opensource>
    </tool_responses:opensource><｜hy_Assistant:opensource｜><think:opensource>It is cold.</think:opensource>3 °C.

Variants (reference: ``tencent-Hy3.jinja`` in llama.cpp's ``models/templates``; the template
reads its variable ``reasoning_effort``, ``no_think`` unless the caller sets it):

- ``hy3`` (the default, ``reasoning_effort="no_think"``): the generation prompt closes an
  empty block, ``<｜hy_Assistant:opensource｜><think:opensource></think:opensource>``; the
  model writes no block after it, so a completion is read as text and calls (vLLM's ``hy_v3``
  reasoning parser reads it so with ``no_think``).
- ``hy3:low`` and ``hy3:high`` (``reasoning_effort`` ``"low"``/``"high"``): the prompt opens
  the block, ``<｜hy_Assistant:opensource｜><think:opensource>``, and a completion is read
  from inside it.

Decisions:

- **Tokens**: the template sets its own ``bos_token`` and ``eos_token``
  (``<｜hy_begin_of_sentence:opensource｜>``, ``<｜hy_eos:opensource｜>``) and never writes
  the ones it is given.  Hy3's tokenizer is not readable offline here; the suffixed spellings
  are declared as markers, as the template and vLLM's ``hy_v3`` parser (which looks the call
  tags up in the vocabulary) name them.
- **The first turn** is always written: the begin token, every system message's text
  gathered and joined with nothing between, the tools block (after a blank line when there
  is system text), then ``<｜reasoning_mode:opensource｜>reasoning_effort:EFFORT``.
- **No user end**: a user turn ends where the next turn opens.  An assistant turn ends with
  ``<｜hy_eos:opensource｜>`` (the model's stop), except the conversation's last one when it
  has no calls: the template leaves that one open (its ``is_training`` variable, off by
  default, would end it), and so does pawlette, so a render for training does not teach the
  last turn's stop.  A turn without reasoning is trainable from after its empty block (the
  prompt's), a turn with reasoning from its block on.
- **Reasoning** is written on the turns after the last user message that have some
  (``<think:opensource>R</think:opensource>``), and on every turn when the request has tools
  (the template's ``preserved_thinking`` is then on); every other turn writes the empty block,
  read back as no reasoning.  Reasoning before the last user message without tools is dropped
  (a recorded loss).  A call opening inside an unclosed block ends the reasoning.
- **Calls**: ``<tool_calls:opensource>\\n``, then per call ``<tool_call:opensource>NAME
  <tool_sep:opensource>\\n`` and per argument ``<arg_key:opensource>KEY</arg_key:opensource>
  \\n<arg_value:opensource>VALUE</arg_value:opensource>\\n``, then ``</tool_call:opensource>
  \\n``; ``</tool_calls:opensource>`` closes them, right after the turn's text.  A string
  value is written as it is, any other as JSON (``tojson``, non-ASCII kept); reading types
  each value by the tool's schema.  The newlines are optional when read (vLLM's ``hy_v3``
  tests read both layouts).  No ids: results answer calls by position.
- **Results**: consecutive tool messages share one ``<tool_responses:opensource>\\n`` ...
  ``</tool_responses:opensource>`` group, each result ``<tool_response:opensource>\\nR
  \\n</tool_response:opensource>\\n``.  A message's ``name`` and a tool message's ``name`` are
  not written (recorded losses).
- **No generation prompt after an answer**: asked for one after a conversation that ends with
  an assistant message, the template writes none and leaves that turn open, as it does
  without the prompt; so does pawlette.

Remaining differences from the template (none of them in the conversations
``pawlette detect`` and the models page compare, which render identically):

- Its ``is_training``, ``raw_last_assistant``, ``preserved_thinking`` and
  ``fallback_strategy`` variables are not options (their defaults are what pawlette writes).
- The template writes a run of results with no ``<tool_responses:opensource>`` opener when no
  assistant turn with calls came before it since the last such run (its flag is reset only by
  a turn of calls); pawlette opens every run.
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    NoPromptAfter,
    Results,
    Switch,
    SystemPrompt,
    ToolsBlock,
    XmlCalls,
    declare,
    fence,
)

from .concepts import ToolsKeptReasoning, UnendedLastTurn

BOS = Marker("<｜hy_begin_of_sentence:opensource｜>")
EOS = Marker("<｜hy_eos:opensource｜>")
USER = Marker("<｜hy_User:opensource｜>")
ASSISTANT = Marker("<｜hy_Assistant:opensource｜>")
REASONING_MODE = Marker("<｜reasoning_mode:opensource｜>")
THINK, THINK_END = Marker("<think:opensource>"), Marker("</think:opensource>")
TOOL_CALLS, TOOL_CALLS_END = Marker("<tool_calls:opensource>"), Marker("</tool_calls:opensource>")
TOOL_CALL, TOOL_CALL_END = Marker("<tool_call:opensource>"), Marker("</tool_call:opensource>")
TOOL_SEP = Marker("<tool_sep:opensource>")
ARG_KEY, ARG_KEY_END = Marker("<arg_key:opensource>"), Marker("</arg_key:opensource>")
ARG_VALUE, ARG_VALUE_END = Marker("<arg_value:opensource>"), Marker("</arg_value:opensource>")
RESPONSES = Marker("<tool_responses:opensource>")
RESPONSES_END = Marker("</tool_responses:opensource>")
RESPONSE, RESPONSE_END = Marker("<tool_response:opensource>"), Marker("</tool_response:opensource>")

TOOLS_OPEN = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
)

Effort = Literal["no_think", "low", "high"]
PROMPTED = ("start", "system", "user", "assistant", "tool")
"""The turns a generation prompt may follow."""


@dataclass(frozen=True)
class Hy3Options:
    """``reasoning_effort``: the template's variable of that name (``"no_think"``: the
    generation prompt closes an empty block; ``"low"``/``"high"``: it opens one)."""

    reasoning_effort: Effort = "no_think"


VARIANTS = {
    "no_think": Hy3Options(),
    "low": Hy3Options(reasoning_effort="low"),
    "high": Hy3Options(reasoning_effort="high"),
}


def _variables(options: Hy3Options) -> Mapping[str, Any]:
    return {"reasoning_effort": options.reasoning_effort}


TOOLS_CLOSE = fence(
    "</tools>\n\nFor function call returns, you should first print ",
    TOOL_CALLS,
    "\nFor each function call, you should return object like:\n",
    TOOL_CALL,
    "{function-name}",
    TOOL_SEP,
    "\n",
    ARG_KEY,
    "{arg-key-1}",
    ARG_KEY_END,
    "\n",
    ARG_VALUE,
    "{arg-value-1}",
    ARG_VALUE_END,
    "\n",
    ARG_KEY,
    "{arg-key-2}",
    ARG_KEY_END,
    "\n",
    ARG_VALUE,
    "{arg-value-2}",
    ARG_VALUE_END,
    "\n...\n",
    TOOL_CALL_END,
    "\nAt the end of function call returns, you should print ",
    TOOL_CALLS_END,
)


def layout(options: Hy3Options) -> Layout:
    thinking = options.reasoning_effort != "no_think"
    closed = fence(ASSISTANT, THINK, THINK_END)
    return Layout(
        name="hy3",
        summary="Hunyuan 3: <｜hy_User:opensource｜> turns, <tool_calls:opensource> arg_key/arg_value calls",
        frames={
            # The first turn, always written, opens with the begin token.
            "system": Frame(
                open=fence(BOS),
                end=fence(REASONING_MODE, "reasoning_effort:" + options.reasoning_effort),
            ),
            "user": Frame(open=fence(USER)),
            "assistant": Frame(
                open=fence(ASSISTANT),
                end=fence(EOS),
                # Without thinking the prompt closes an empty block: the model writes none.
                prompt_after={} if thinking else {role: closed for role in PROMPTED},
            ),
            "tool": Frame(open=fence(RESPONSES, "\n"), end=fence(RESPONSES_END)),
        },
        concepts=(
            SystemPrompt(always=True, placement="gathered", joiner=""),
            Ignored(("name",)),  # the template writes no message's name
            ToolsBlock(
                place="system",
                open=fence(TOOLS_OPEN),
                item_close=fence("\n"),
                close=TOOLS_CLOSE,
                separator=fence("\n\n"),
                separator_when="text",
            ),
            ToolsKeptReasoning(
                open=fence(THINK),
                close=fence(THINK_END),
                keep="after_last_query",
                absent=fence(THINK, THINK_END),
                prompt="open" if thinking else "closed",
                calls_end=True,
            ),
            XmlCalls(
                open=fence(TOOL_CALL),
                name_close=fence(TOOL_SEP, "\n"),
                key_open=fence(ARG_KEY),
                key_close=fence(ARG_KEY_END, "\n", ARG_VALUE),
                value_close=fence(ARG_VALUE_END, "\n"),
                close=fence(TOOL_CALL_END, "\n"),
                section_open=fence(TOOL_CALLS, "\n"),
                section_close=fence(TOOL_CALLS_END),
            ),
            Results(
                grouped=True,
                item_open=fence(RESPONSE, "\n"),
                item_close=fence("\n", RESPONSE_END, "\n"),
            ),
            UnendedLastTurn(),
            # The template writes no generation prompt after an answer, asked for or not.
            NoPromptAfter(),
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        template_variables=_variables,
        switches=(
            Switch("reasoning_effort", "reasoning_effort", values=("no_think", "low", "high")),
        ),
    )


FORMAT = declare(layout(Hy3Options()))
