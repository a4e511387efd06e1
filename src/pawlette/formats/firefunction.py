"""Fireworks' Firefunction v2 (Llama 3 based): `` functools[...]`` JSON call lists.

The wire format (``<|...|>`` are Llama 3's special tokens; ``functools`` is plain text)::

    <|begin_of_text|><|start_header_id|>system<|end_header_id|>

    You are terse.
    In addition to plain text responses, you can chose to call one or more of the provided functions.

    Use the following rule to decide when to call a function:
      ...

    Available functions as JSON spec:
    [
      {
        "type": "function",
        "function": {
          "name": "get_weather",
          ...
        }
      }
    ]
    Today is Jul 26 2024 00:00:00 GMT.<|eot_id|><|start_header_id|>user<|end_header_id|>

    Weather in Paris?<|eot_id|><|start_header_id|>assistant<|end_header_id|>

     functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|eot_id|><|start_header_id|>tool<|end_header_id|>

    18°C<|eot_id|><|start_header_id|>assistant<|end_header_id|>

Decisions (reference: ``fireworks-ai-llama-3-firefunction-v2.jinja`` in llama.cpp's
``models/templates``; its caller, llama.cpp's ``common/chat.cpp``, for the variables it needs):

- **The template reads no** ``tools``: its callers pass ``functions``, a string written into
  the system turn, and ``datetime``.  The format writes what llama.cpp passes: the request's
  OpenAI tools as JSON indented by 2 (nothing without tools), and the date option ``today``
  written ``%b %d %Y %H:%M:%S GMT`` (a :class:`datetime.date` or ``datetime``, default
  2024-07-26; a string is written as given).  ``Layout.tools_variables`` and
  ``template_variables`` give the template the same, so detection and the comparisons
  render it as the format does.  The date is an option, never the clock.
- **The system turn** is always written: the first system message's text (or ``You are a
  helpful assistant with access to functions.``), then the template's function-calling
  instructions, the functions and the date, written with or without tools.  Later system
  messages are turns of their own; reading a system turn gives back its message and the
  tools.
- **Calls**: after the turn's text, `` functools[`` + the calls as JSON objects
  ``{"name": NAME, "arguments": ARGS}`` joined by ``, `` + ``]``, the leading space written
  even when the turn has no text.  No ids (results answer calls by position).
- **Reading** follows llama.cpp (the only peer with a reader): text before
  `` functools[`` is content, then one JSON list of calls to the end of the turn; a list
  that is not one (no name, arguments that are not an object, a key written twice) stays
  content with a warning.  ``functools`` is read without the space before it as well.
  Stricter than llama.cpp: text that spells `` functools`` without a list after it (prose
  about Python's module) stays text as written, with a warning, where llama.cpp reads it
  silently (``functools`` is no special token, so the reader cannot tell the two apart
  before the list).
- **Results** are ``tool`` turns, one per tool message, their text as given.
- **Text is trimmed** in every turn as the template ``| trim`` s it (a recorded loss when
  the ends held whitespace).  Names and ``reasoning_content`` are not written (recorded
  losses).
- **The generation prompt is always written**, as the template ignores
  ``add_generation_prompt``: a conversation ending with an assistant turn is followed by
  an opened assistant turn too.  Reading a conversation, that opener at the end gives no
  message; after a completion's turn it is layout, as an end marker is.

The calls are plain text, so the layout sets ``markers_in_text``: output read from token ids
is read as the text it decodes to.

Remaining differences from the template: a call name is written as a JSON string (the
template writes it between quotes unescaped, so a name holding ``"`` breaks its JSON); an
empty conversation renders the system turn and the prompt (the template refuses it).
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pawlette.declare import (
    Frame,
    Ignored,
    JsonCallList,
    Layout,
    Marker,
    Option,
    PromptAlways,
    Results,
    SystemPrompt,
    ToolsBlock,
    Trimmed,
    declare,
    fence,
)

BEGIN = Marker("<|begin_of_text|>")
HEADER, HEADER_END = Marker("<|start_header_id|>"), Marker("<|end_header_id|>")
END_OF_TURN = Marker("<|eot_id|>")

DEFAULT_SYSTEM = "You are a helpful assistant with access to functions."
INSTRUCTIONS = (
    "In addition to plain text responses, you can chose to call one or more of the provided "
    "functions.\n\nUse the following rule to decide when to call a function:\n  * if the "
    "response can be generated from your internal knowledge (e.g., as in the case of queries "
    'like "What is the capital of Poland?"), do so\n  * if you need external information '
    "that can be obtained by calling one or more of the provided functions, generate a "
    "function calls\n\nIf you decide to call functions:\n  * prefix function calls with "
    "functools marker (no closing marker required)\n  * all function calls should be "
    'generated in a single JSON list formatted as functools[{"name": [function name], '
    '"arguments": [function arguments as JSON]}, ...]\n  * follow the provided JSON schema. '
    "Do not hallucinate arguments or values. Do to blindly copy values from the provided "
    "samples\n  * respect the argument type formatting. E.g., if the type if number and "
    "format is float, write value 7 as 7.0\n  * make sure you pick the right functions that "
    "match the user intent\n\nAvailable functions as JSON spec:"
)
DATE_FORMAT = "%b %d %Y %H:%M:%S GMT"  # llama.cpp's common/chat.cpp passes the time so
TOOLS_INDENT = 2  # llama.cpp passes the tools as tools.dump(2)


@dataclass(frozen=True)
class FirefunctionOptions:
    """``today``: the template's ``datetime`` variable, a date written ``%b %d %Y %H:%M:%S
    GMT`` as llama.cpp writes it, or a string written as given."""

    today: datetime.date | str = datetime.date(2024, 7, 26)


def datetime_text(options: FirefunctionOptions) -> str:
    today = options.today
    return today if isinstance(today, str) else today.strftime(DATE_FORMAT)


def header(role: str) -> Frame:
    return Frame(open=fence(HEADER, role, HEADER_END, "\n\n"), end=fence(END_OF_TURN))


def tools_variables(
    options: FirefunctionOptions, tools: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any]:
    functions = [dict(tool) for tool in tools]
    text = json.dumps(functions, indent=TOOLS_INDENT, ensure_ascii=False) if functions else ""
    return {"functions": text}


def layout(options: FirefunctionOptions) -> Layout:
    return Layout(
        name="firefunction",
        summary="Fireworks Firefunction v2: Llama 3 header ids, ' functools[...]' JSON call lists",
        begin=fence(BEGIN),
        frames={
            **{role: header(role) for role in ("system", "user", "assistant")},
            "tool": header("tool"),
        },
        concepts=(
            SystemPrompt(default=DEFAULT_SYSTEM, always=True),
            ToolsBlock(
                place="system",
                open=fence("\n" + INSTRUCTIONS + "\n"),
                close=fence("\nToday is ", Option("today", DATE_FORMAT), "."),
                array=True,
                indent=TOOLS_INDENT,
                always=True,
            ),
            JsonCallList(open=fence(" functools")),
            Results(trim=True),
            Trimmed(roles=("system", "user", "assistant")),
            Ignored(("name", "reasoning")),
            PromptAlways(),
        ),
        options=options,
        from_options=layout,
        markers_in_text=True,  # the calls are plain text: functools is no special token
        template_variables=lambda options: {"datetime": datetime_text(options)},
        tools_variables=tools_variables,
    )


FORMAT = declare(layout(FirefunctionOptions()))
