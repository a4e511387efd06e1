"""Reka Edge (Reka AI) as its chat template writes it: ``human:`` / ``assistant:`` turns
ended by ``<sep>``, Qwen's tools block, Hermes-like JSON calls in ``<tool_call>``, results
in ``<tool_response>`` in a ``human:`` turn.

The wire format (``<sep>``, ``<tool_call>``, ``</tool_call>``, ``<tool_response>``,
``</tool_response>`` are markers)::

    system: You are terse.

    # Tools

    You may call one or more functions to assist with the user query.

    You are provided with function signatures within <tools></tools> XML tags:
    <tools>
    {"type": "function", "function": {"name": "get_weather", "description": "Pogoda w mie\\u015bcie", ...}}
    </tools>

    For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
    <tool_call>
    {"name": <function-name>, "arguments": <args-json-object>}
    </tool_call>

    <sep>human: Weather in Paris?<sep>assistant: Checking.
    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call><tool_call>
    {"name": "get_weather", "arguments": {"city": "Z\\u00fcrich"}}
    </tool_call>

    <sep>human: <tool_response>
    18°C
    </tool_response><tool_response>
    12°C
    </tool_response><sep>assistant: It is 18°C in Paris.

    <sep>

Decisions (reference: ``Reka-Edge.jinja`` in llama.cpp's ``models/templates``; the template
reads no ``bos_token`` or ``eos_token``, and the model's tokenizer is not known here: the
fences above are declared as markers, as the template's instructions name them):

- **Its own family**: the turns are ``system: ``, ``human: `` and ``assistant: `` texts ended
  by ``<sep>`` (``\\n\\n<sep>`` for the system and assistant turns), no ChatML.
- **System turn**: the first message's text when it is a system message, then, after a
  blank line when there is text, Qwen's tools block (:mod:`.chatml`'s words) with each tool
  as ``tojson(ensure_ascii=True)`` writes it.  Without either there is no system turn (an
  empty first system message is none); a system message anywhere but first is dropped (a
  recorded loss: the template skips it).
- **The generation prompt** is ``assistant:`` without the space past turns have after it
  (``PromptRest``): the model writes the space, read as layout, not text.  In a past turn
  the space is trainable, the first thing the model writes (a tokenizer joins it to the
  text after it, as the model produces it after the prompt).
  After an answer the template writes no prompt, asked for or not, nor does pawlette.
- **The end** is ``\\n\\n<sep>`` as written; reading also ends the turn at a ``<sep>``
  right after the text or the calls (``<sep>`` ends every other turn), so a grammar that
  lets the model stop after free text (whose newlines it may have written) reads back.
- **Calls**: ``<tool_call>\\n{"name": NAME, "arguments": ARGS}\\n</tool_call>``, one after
  another with nothing between, after the text and a newline when the text does not
  already end with one (a text that does reads back without it: a recorded loss).
  Arguments as ``tojson(ensure_ascii=True)`` of the parsed object; names as JSON strings
  (the template pastes them raw: identical for every name without ``"`` or ``\\``).  No ids:
  results answer calls by position.
- **Results**: a run of tool messages is one ``human: `` turn of ``<tool_response>\\nR
  \\n</tool_response>`` items with nothing between, ended by ``<sep>``.
- **Reasoning**: the template writes it only with ``enable_thinking`` (off unless the caller
  sets it); the declared format writes the template with it off, so reasoning is dropped (a
  recorded loss), as are a message's ``name`` and a tool message's ``name``.
- **Reading**, as vLLM's ``hermes`` parser reads ``<tool_call>`` JSON: the newlines inside a
  call are optional, several calls may follow one another with or without whitespace, text
  before the calls is content, and a last call whose ``</tool_call>`` never comes is a call
  when its object is whole (an engine may cut the close as a stop string).  A call that is
  not one JSON object with ``name`` and ``arguments`` keeps the turn's calls as content,
  with a warning (vLLM's parser then returns the whole output as content).
- **``</think>`` in a text**: where a message gives no reasoning, the template takes its
  text up to the first ``</think>`` as reasoning (dropped with thinking off) and writes the
  rest without its leading newlines; pawlette writes the same, the dropped part a recorded
  loss.

Remaining differences from the template: the template takes a first ``developer`` message
as the system message and renders image and video parts as its vision tokens; pawlette
refuses both.  The template joins a message's non-empty text parts with a space; pawlette
joins them as they are, as every declared format does (a text given as one string is
written alike).
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

from dataclasses import dataclass

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    NoPromptAfter,
    PromptRest,
    Results,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)

from .calls import RunOnCalls
from .content import ThinkSplit

SEP = Marker("<sep>")
TOOL_CALL, TOOL_CALL_END = Marker("<tool_call>"), Marker("</tool_call>")
RESPONSE, RESPONSE_END = Marker("<tool_response>"), Marker("</tool_response>")

TOOLS_OPEN = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_CLOSE = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within "
)
PROMPT = "assistant:"


@dataclass(frozen=True)
class RekaOptions:
    """Reka Edge's template reads ``enable_thinking`` (off unless the caller sets it); the
    declared format writes the template with it off."""


def layout(options: RekaOptions) -> Layout:
    prompt = fence(PROMPT)
    return Layout(
        name="reka",
        summary="Reka Edge: human:/assistant: turns ended by <sep>, <tool_call> JSON",
        frames={
            "system": Frame(open=fence("system: "), end=fence("\n\n", SEP)),
            "user": Frame(open=fence("human: "), end=fence(SEP)),
            "assistant": Frame(
                open=fence(PROMPT + " "),
                end=fence("\n\n", SEP),
                also_end=(fence(SEP),),
                prompt_after={role: prompt for role in ("system", "user", "tool")},
            ),
            "tool": Frame(open=fence("human: "), end=fence(SEP)),
        },
        concepts=(
            SystemPrompt(placement="first_kept", empty_first="absent"),
            ToolsBlock(
                place="system",
                open=fence(TOOLS_OPEN),
                item_open=fence("\n"),
                close=fence(
                    TOOLS_CLOSE,
                    TOOL_CALL,
                    TOOL_CALL_END,
                    " XML tags:\n",
                    TOOL_CALL,
                    '\n{"name": <function-name>, "arguments": <args-json-object>}\n',
                    TOOL_CALL_END,
                ),
                separator=fence("\n\n"),
                separator_when="text",
                ascii=True,
            ),
            Ignored(("name", "reasoning")),
            ThinkSplit(),
            RunOnCalls(
                open=fence(TOOL_CALL, "\n"),
                close=fence("\n", TOOL_CALL_END),
                separator=fence("\n"),
                ascii=True,
            ),
            Results(
                grouped=True,
                item_open=fence(RESPONSE, "\n"),
                item_close=fence("\n", RESPONSE_END),
            ),
            # The template writes no generation prompt after an answer, asked for or not.
            NoPromptAfter(),
            PromptRest(prompt=PROMPT, rest=" ", trainable=True),  # last: it copies the others' rows
        ),
        options=options,
        from_options=layout,
    )


FORMAT = declare(layout(RekaOptions()))
