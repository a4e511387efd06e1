"""Llama 3.1 / 3.2 / 3.3 with JSON tool calls, as Meta's chat templates write them.

The wire format (``<|...|>`` are special tokens)::

    <|begin_of_text|><|start_header_id|>system<|end_header_id|>

    Environment: ipython
    Cutting Knowledge Date: December 2023
    Today Date: 26 Jul 2024

    You are helpful.<|eot_id|><|start_header_id|>user<|end_header_id|>

    Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.

    Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.

    {
        "type": "function",
        "function": {...}
    }

    Weather in Paris?<|eot_id|><|start_header_id|>assistant<|end_header_id|>

    {"name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|><|start_header_id|>ipython<|end_header_id|>

    18°C<|eot_id|><|start_header_id|>assistant<|end_header_id|>

Decisions (reference: ``meta-llama-Llama-3.1-8B-Instruct.jinja``, ``...-3.2-3B-...``,
``...-3.3-70B-...`` in llama.cpp's ``models/templates``; 3.1 and 3.3 are identical, 3.2
differs only in reading the clock and in built-in tools):

- **The date header is an option, never a clock**: ``date_string`` (default ``26 Jul 2024``,
  the 3.1 template's own default).  The exported template uses a ``date_string`` variable
  when the caller passes one, as Meta's do; Llama 3.2's template calls ``strftime_now``
  otherwise, so the comparison passes ``date_string`` explicitly.
- **Tools** go into the first user message (Meta's default ``tools_in_user_message``), each
  as ``tojson(indent=4)`` of the whole OpenAI tool and a blank line; the system turn says
  ``Environment: ipython``.  A conversation with tools needs a user message right after the
  system message (Meta's template silently takes whatever message is there).
- **Calls**: one call per assistant turn, written as the whole turn:
  ``{"name": NAME, "parameters": ARGS}`` (arguments as ``tojson`` of the object), then
  ``<|eot_id|>``.  Text alongside a call and parallel calls are refused (Meta's template
  drops the text and raises on several calls).  In model output a call may also start with
  ``<|python_tag|>`` and the turn may end with ``<|eom_id|>``: both are read, and both end
  tokens are in the stop set.  A turn whose text starts with ``{"name"`` is read as a call
  (its text is held until that is decided).  Models write ``"arguments"`` as often as
  ``"parameters"`` (vLLM's llama3_json parser reads both) and add ``"type": "function"``
  (llama.cpp reads it for these templates): both are read, never written; a turn that is a
  JSON list of calls, or several calls joined by ``;``, is content with a warning.
- **Results** are ``ipython`` turns, one per tool message, matched to calls by position.
  Their text is written as given.  Meta's template writes ``message.content | tojson`` for
  any string (a string is iterable in Jinja), so it double-quotes every text result:
  ``18°C`` becomes ``"18°C"``.  pawlette writes the text (what Meta's ``llama-models``
  reference formatter writes); the comparison test checks that this is the only difference.
- **Verbatim text**: Meta's template trims every message's text; pawlette never does
  (identical for text without leading or trailing whitespace).
- The system turn is always written; parsing a system turn with no text gives no message.
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

from dataclasses import dataclass

from pawlette.declare import (
    Frame,
    JsonCalls,
    Layout,
    Marker,
    Option,
    Results,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)

BEGIN = Marker("<|begin_of_text|>")
HEADER, HEADER_END = Marker("<|start_header_id|>"), Marker("<|end_header_id|>")
END_OF_TURN, END_OF_MESSAGE = Marker("<|eot_id|>"), Marker("<|eom_id|>")
PYTHON_TAG = Marker("<|python_tag|>")

TOOLS_INTRO = (
    "Given the following functions, please respond with a JSON for a function call with its "
    "proper arguments that best answers the given prompt.\n\n"
    'Respond in the format {"name": function name, "parameters": dictionary of argument name '
    "and its value}.Do not use variables.\n\n"
)


@dataclass(frozen=True)
class Llama3Options:
    """``date_string``: the ``Today Date`` header (Meta's templates' default)."""

    date_string: str = "26 Jul 2024"


def header(role: str) -> Frame:
    also = (fence(END_OF_MESSAGE),) if role == "assistant" else ()
    return Frame(
        open=fence(HEADER, role, HEADER_END, "\n\n"), end=fence(END_OF_TURN), also_end=also
    )


def layout(options: Llama3Options) -> Layout:
    return Layout(
        name="llama3",
        summary="Llama 3.1/3.2: header ids, JSON calls, ipython results, date as an option",
        begin=fence(BEGIN),
        frames={
            **{role: header(role) for role in ("system", "user", "assistant")},
            "tool": header("ipython"),
        },
        concepts=(
            SystemPrompt(
                always=True,
                preamble_with_tools=fence("Environment: ipython\n"),
                preamble=fence(
                    "Cutting Knowledge Date: December 2023\nToday Date: ",
                    Option("date_string"),
                    "\n\n",
                ),
            ),
            ToolsBlock(
                place="first_user",
                first=True,
                open=fence(TOOLS_INTRO),
                item_close=fence("\n\n"),
                indent=4,
            ),
            JsonCalls(
                open=None,
                also_open=(fence(PYTHON_TAG),),
                arguments_key="parameters",  # what Meta's templates write
                also_arguments_keys=("arguments",),  # what models write as well
                # Models given Meta's JSON instruction also write the OpenAI wrapper's key
                # (llama.cpp's common/chat-diff-analyzer.cpp reads it for these templates).
                ignored_members=(("type", "function"),),
                # What vLLM and SGLang read: several calls joined by ";", a call without
                # arguments ({}); the writer and grammars keep Meta's one call per turn.
                joined_by=(";",),
                arguments_optional=True,
                parallel=False,
                with_content=False,
            ),
            Results(),
        ),
        options=options,
        from_options=layout,
    )


FORMAT = declare(layout(Llama3Options()))
