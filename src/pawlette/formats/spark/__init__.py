"""Spark2.5: DeepSeek-style sentence markers around every turn, calls as one tag pair per
argument (GLM-4.7's compact layout), reasoning kept on every turn, as Spark2.5's chat template
writes them.

The wire format (``<｜start▁of▁sentence｜>``, ``<｜end▁of▁sentence｜>``, ``<|System|>``,
``<|User|>``, ``<|Bot|>``, ``<|Tool|>``, ``<think>``, ``</think>``, ``<tool_call>``,
``</tool_call>``, ``<arg_key>``, ``</arg_key>``, ``<arg_value>``, ``</arg_value>``,
``<tool_response>`` and ``</tool_response>`` are written as markers)::

    <｜start▁of▁sentence｜><|System|>
    you are a helpful assistant.## Tools
    You have access to the following functions:
    <tools>
    {"name": "get_weather", "description": ..., "parameters": {...}}
    </tools>

    You are terse.<｜end▁of▁sentence｜><｜start▁of▁sentence｜><|User|>Weather in Zürich?<｜end▁of▁sentence｜><｜start▁of▁sentence｜><|Bot|></think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Zürich</arg_value></tool_call><｜end▁of▁sentence｜><｜start▁of▁sentence｜><|Tool|><tool_response>{"temp_c": 3}</tool_response><｜end▁of▁sentence｜><｜start▁of▁sentence｜><|Bot|><think>

Variants (reference: llama.cpp's ``models/templates/Spark2.5.jinja``): ``spark`` (the
default, the template's ``enable_thinking=true``: the generation prompt opens ``<think>``)
and ``spark:no-thinking`` (``enable_thinking=false``: the prompt closes the block,
``<|Bot|></think>``).

Decisions:

- **Every turn** is ``<｜start▁of▁sentence｜><|Role|>`` ... ``<｜end▁of▁sentence｜>``; the
  model ends its turn with ``<｜end▁of▁sentence｜>`` (the format's stop).
- **The system turn** is always written: the default text ``you are a helpful assistant.``,
  the tools block right after it (no separator, as the template writes it), then the first
  system message's text after a blank line.  Later system messages are turns of their own.
- **Tools**: each tool's ``function`` object, one ``tojson`` line each (``", "``/``": "``,
  non-ASCII kept) inside ``<tools>`` ... ``</tools>``.
- **Calls**: GLM-4.7's layout, ``<tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE
  </arg_value>...</tool_call>`` right after the turn's text; a string value as it is, any
  other as JSON.  Reading types each value by the tool's schema (as llama.cpp's Spark2.5
  parser tests read them), and takes GLM-4.6's layout with newlines too.  A call without
  arguments is ``<tool_call>NAME</tool_call>``, read as ``{}``.  No ids: results answer
  calls by position.  Call arguments that are not a JSON object are refused (the template
  raises).
- **Results**: consecutive tool messages share one ``<|Tool|>`` turn, each in
  ``<tool_response>`` tags, their text as it is.  A tool message's ``name`` is not written
  (a recorded loss).
- **Reasoning** is kept on every turn (``<think>R</think>``, written as given); a turn
  without reasoning, or with an empty one, writes a lone ``</think>``, read back as no
  reasoning.  A call opening inside an unclosed block ends the reasoning.
- **Reading follows the prompt**: after the ``<think>`` prompt the completion starts inside
  the block (``R</think>answer``); after the no-thinking prompt's ``</think>`` it is content
  and calls.

Remaining differences from the template:

- A tool message whose content is a list of parts: the template writes the list's Python
  ``repr``; pawlette writes the text parts as one result.
- A user or system message with a part that is not text: the template raises; pawlette
  refuses it too, with its path, as for every format without images.
- A later system message whose text begins with a blank line: reading drops that blank line
  (it is where the first system turn's text begins).
- With thinking on, a past turn without reasoning is ``<|Bot|></think>...`` while the prompt
  is ``<|Bot|><think>``: the template's own shape (no training render of such a turn extends
  the prompt render).
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is)

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pawlette.declare import (
    FirstSystemText,
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

START, END = Marker("<｜start▁of▁sentence｜>"), Marker("<｜end▁of▁sentence｜>")
SYSTEM, USER = Marker("<|System|>"), Marker("<|User|>")
BOT, TOOL = Marker("<|Bot|>"), Marker("<|Tool|>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
TOOL_CALL, TOOL_CALL_END = Marker("<tool_call>"), Marker("</tool_call>")
ARG_KEY, ARG_KEY_END = Marker("<arg_key>"), Marker("</arg_key>")
ARG_VALUE, ARG_VALUE_END = Marker("<arg_value>"), Marker("</arg_value>")
RESPONSE, RESPONSE_END = Marker("<tool_response>"), Marker("</tool_response>")

DEFAULT_SYSTEM = "you are a helpful assistant."


@dataclass(frozen=True)
class SparkOptions:
    """``thinking``: the template's ``enable_thinking`` (False: the generation prompt closes
    the block, ``<|Bot|></think>``)."""

    thinking: bool = True


VARIANTS = {"thinking": SparkOptions(), "no-thinking": SparkOptions(thinking=False)}


def _variables(options: SparkOptions) -> Mapping[str, Any]:
    return {"enable_thinking": options.thinking}


def layout(options: SparkOptions) -> Layout:
    assistant = Frame(open=fence(START, BOT), end=fence(END))
    if not options.thinking:
        closed = fence(START, BOT, THINK_END)
        assistant = Frame(
            open=fence(START, BOT),
            end=fence(END),
            prompt_after={
                role: closed for role in ("start", "system", "user", "assistant", "tool")
            },
        )
    return Layout(
        name="spark",
        summary="Spark2.5: <｜start▁of▁sentence｜><|Role|> turns, <tool_call>NAME<arg_key>...",
        frames={
            "system": Frame(open=fence(START, SYSTEM, "\n"), end=fence(END)),
            "user": Frame(open=fence(START, USER), end=fence(END)),
            "assistant": assistant,
            "tool": Frame(open=fence(START, TOOL), end=fence(END)),
        },
        concepts=(
            SystemPrompt(always=True, preamble=fence(DEFAULT_SYSTEM)),
            ToolsBlock(
                place="system",
                first=True,
                open=fence("## Tools\nYou have access to the following functions:\n<tools>"),
                item_open=fence("\n"),
                close=fence("\n</tools>"),
                wrap="function",
            ),
            FirstSystemText(lead=fence("\n\n")),
            Ignored(("name",)),  # the template writes no message's name
            Reasoning(
                open=fence(THINK),
                close=fence(THINK_END),
                keep="all",
                absent=fence(THINK_END),
                prompt="open" if options.thinking else "",
                calls_end=True,
            ),
            XmlCalls(
                open=fence(TOOL_CALL),
                name_close=fence(),
                key_open=fence(ARG_KEY),
                key_close=fence(ARG_KEY_END, ARG_VALUE),
                value_close=fence(ARG_VALUE_END),
                close=fence(TOOL_CALL_END),
            ),
            Results(grouped=True, item_open=fence(RESPONSE), item_close=fence(RESPONSE_END)),
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        template_variables=_variables,
        switches=(Switch("thinking", "enable_thinking"),),
    )


FORMAT = declare(layout(SparkOptions()))
