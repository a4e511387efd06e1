"""Apertus (Swiss AI) as its chat template writes it: ``<|role_start|>`` ... ``<|role_end|>``
turns, a developer block after the system turn, the tools as TypeScript-like types, calls as
one JSON array of ``{NAME: ARGUMENTS}`` objects, and the results inside the assistant's turn.

The wire format (every ``<|...|>`` is a special token)::

    <s><|system_start|>You are terse.<|system_end|><|developer_start|>Deliberation: disabled
    Tool Capabilities:
    // Get the current weather for a city.
    type get_weather = (_: {
    // The city name.
    city: string,
    unit?: "celsius" | "fahrenheit"
    }) => any;<|developer_end|><|user_start|>Weather in Paris and Zürich?<|user_end|><|assistant_start|>Checking.<|tools_prefix|>[{"get_weather": {"city": "Paris"}}, {"get_weather": {"city": "Zürich"}}]<|tools_suffix|>[18°C, {"temp": 12}]It is 18°C in Paris.<|assistant_end|><|user_start|>Thanks!<|user_end|><|assistant_start|>

Decisions (reference: ``Apertus-8B-Instruct.jinja`` in llama.cpp's ``models/templates``,
which reads ``bos_token`` only: ``<s>`` as recalled from
``swiss-ai/Apertus-8B-Instruct-2509``'s ``tokenizer_config.json``, which cannot be read here,
so its ``eos_token`` stays uncertain; the turn's end, ``<|assistant_end|>``, is the end
token llama.cpp's tests give the template):

- **The system turn** is always written: the first message's text when it is a system
  message (an empty one is an empty turn), else the template's default text, ``You are
  Apertus, a helpful assistant created by the SwissAI initiative.\\nKnowledge cutoff:
  2024-04\\nCurrent date: `` and the date the template reads from its clock
  (``strftime_now("%Y-%m-%d")``: the option ``today``).  A system message anywhere but first
  is refused, as the template refuses it (``Invalid message role``).
- **The developer block** follows the system turn in every conversation:
  ``<|developer_start|>Deliberation: disabled\\nTool Capabilities:`` then `` disabled``
  without tools, or a newline and the tools as the template's TypeScript-like types
  (:mod:`.typescript`), then ``<|developer_end|>``.  The option ``thinking`` (the
  template's ``enable_thinking``) writes ``Deliberation: enabled``.  The block is not read
  back into tools.
- **The assistant's turn** spans its calls' results (:mod:`.turns`): its text, then its calls
  ``<|tools_prefix|>[{"NAME": ARGUMENTS}, ...]<|tools_suffix|>`` (:mod:`.calls`), where a
  turn with calls ends: the model stops at ``<|tools_suffix|>`` for the results.  The results
  follow as ``[`` + their texts joined by ``, `` + ``]`` (no ids: they answer the calls by
  position), then the answer with no opener.  A turn ends with ``<|assistant_end|>`` before a
  user turn (after results too), and with nothing when it is the conversation's last (the
  template writes no end there, so a render for training has no end to learn on its last
  turn).  The generation prompt is ``<|assistant_start|>``, after results too (as the
  template writes it, though it keeps the turn open).  Reading a conversation, that
  ``<|assistant_start|>`` right after a last answer ends the answer and opens the prompt's
  turn; in a model's completion it stays out of place (a warning, kept as its text).
- **An assistant message right after another** goes on in the same turn, as the template
  writes it: no end before it, no opener, its text straight after the other's, or after the
  other's calls (``<|tools_suffix|>two``).  Read back, the two texts are one message, and a
  text after calls with no results between is not read (recorded losses, never silent).
- **Reasoning** is never written (the template writes ``reasoning_content`` nowhere: a
  recorded loss); the model's ``<|inner_prefix|>...<|inner_suffix|>`` at the start of its
  turn is read as reasoning, as llama.cpp's ``apertus`` handler reads it.
- **Reading** follows llama.cpp's and vLLM's ``apertus`` parsers: text before the calls is
  content; each item of the array is an object with one key, the function's name, whose
  value is the arguments; the close may be missing (an engine cuts the stop).  Where
  pawlette is stricter, it warns: a list that is not one (no array, an item with several
  keys, which vLLM skips, arguments that are not an object) stays content; text after
  ``<|tools_suffix|>``, which llama.cpp reads as content, is content after the turn's end
  (the template writes the results there, never the model's text); an ``<|assistant_end|>``
  there is layout (llama.cpp's grammar ends the turn with it).  Reading a whole
  conversation, a group of results is cut into one result per call it answers at ``, ``
  where every piece holding ``, `` or ``]`` is a whole JSON value (otherwise it is one
  result, with a warning), and what follows its ``]`` up to the next marker is the answer.
  A message's ``name`` is not written (a recorded loss).

Remaining differences from the template (``python -m bench.models``: every render the
template makes is identical):

- **A calls-only message after results, given without content**: the template closes the
  results' ``]`` only before a message's text, so it leaves the group open and writes the
  next round's results into it (``[R1<|tools_prefix|>[...]<|tools_suffix|>, R2]``); the
  format writes the message as with empty content (``[R1]<|tools_prefix|>...``), as the
  template writes it when given ``"content": ""``.
- **A tool without a description**: the template fails; the format writes an empty one
  (``// ``).
- **A call's name** is written as a JSON string; the template pastes it between quotes as it
  is (identical for every name without ``"``, ``\\`` or a control character).
- **A tool message that follows no assistant message**, which the template refuses, is
  written.
- **Content**: the template takes a mapping of ``parts`` or ``blocks`` (its own message
  shape, which OpenAI requests do not have) and refuses a list of content parts, which the
  format writes as their joined text.
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    Option,
    Reasoning,
    Switch,
    SystemPrompt,
    declare,
    fence,
)

from .calls import NameKeyedCalls
from .turns import BracketedResults, TurnEnds
from .typescript import DeveloperBlock

BOS = Marker("<s>")
SYSTEM, SYSTEM_END = Marker("<|system_start|>"), Marker("<|system_end|>")
DEVELOPER, DEVELOPER_END = Marker("<|developer_start|>"), Marker("<|developer_end|>")
USER, USER_END = Marker("<|user_start|>"), Marker("<|user_end|>")
ASSISTANT, ASSISTANT_END = Marker("<|assistant_start|>"), Marker("<|assistant_end|>")
INNER, INNER_END = Marker("<|inner_prefix|>"), Marker("<|inner_suffix|>")
CALLS, CALLS_END = Marker("<|tools_prefix|>"), Marker("<|tools_suffix|>")

DEFAULT_SYSTEM = (
    "You are Apertus, a helpful assistant created by the SwissAI initiative.\n"
    "Knowledge cutoff: 2024-04\nCurrent date: "
)


@dataclass(frozen=True)
class ApertusOptions:
    """The options of Apertus' template.

    - ``thinking``: the template's ``enable_thinking`` (``Deliberation: enabled`` in the
      developer block; off unless the caller sets it).
    - ``today``: the date of the default system text, which the template reads from its
      clock (``strftime_now("%Y-%m-%d")``).
    """

    thinking: bool = False
    today: datetime.date = datetime.date(2024, 7, 26)


def template_variables(options: ApertusOptions) -> Mapping[str, Any]:
    return {"enable_thinking": True} if options.thinking else {}


def layout(options: ApertusOptions) -> Layout:
    deliberation = "enabled" if options.thinking else "disabled"
    return Layout(
        name="apertus",
        summary="Apertus (Swiss AI): <|role_start|> turns, TypeScript tools, {NAME: ARGS} call lists",
        begin=fence(BOS),
        frames={
            "system": Frame(open=fence(SYSTEM), end=fence(SYSTEM_END)),
            "user": Frame(
                open=fence(USER),
                end=fence(USER_END),
                open_after={"tool": fence(ASSISTANT_END, USER)},
            ),
            "assistant": Frame(
                open=fence(ASSISTANT),
                end=fence(ASSISTANT_END),
                also_end=(fence(CALLS_END),),
                open_after={"tool": ()},
                prompt_after={"tool": fence(ASSISTANT)},
            ),
            "tool": Frame(open=fence("[")),
        },
        concepts=(
            SystemPrompt(
                default=fence(DEFAULT_SYSTEM, Option("today", "%Y-%m-%d")),
                placement="first_only",
            ),
            DeveloperBlock(
                open=fence(DEVELOPER, f"Deliberation: {deliberation}\nTool Capabilities:"),
                close=fence(DEVELOPER_END),
            ),
            Reasoning(open=fence(INNER), close=fence(INNER_END), keep="none"),
            NameKeyedCalls(open=fence(CALLS)),
            BracketedResults(calls_end=fence(CALLS_END), calls_open=fence(CALLS)),
            TurnEnds(end=fence(CALLS_END), user_open=fence(ASSISTANT_END, USER)),
            Ignored(("name",)),
        ),
        options=options,
        from_options=layout,
        template_variables=template_variables,
        switches=(Switch("thinking", "enable_thinking"),),
        today="today",
    )


FORMAT = declare(layout(ApertusOptions()))
