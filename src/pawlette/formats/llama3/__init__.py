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
  the 3.1 template's own default and variable).  Llama 3.2's template reads
  ``strftime_now("%d %b %Y")`` when no ``date_string`` is given: the ``3.2`` variant
  (``llama3:3.2``) writes its ``date`` option (a :class:`datetime.date`) so, and
  ``Layout.today`` names it for comparisons and detection.
- **Text is trimmed** as Meta's templates ``| trim`` every system, user and assistant text
  (a recorded loss when the ends held whitespace).
- **Tools** go into the first user message (``tools_in_user_message``, Meta's default), each
  as ``tojson(indent=4)`` of the whole OpenAI tool and a blank line; the system turn says
  ``Environment: ipython``.  As in Meta's templates, the host is the message right after
  the first system message whatever its role (``place="user_after_system"``): a second
  system message or an answer without calls there is written as that user turn, its text
  trimmed (its role a recorded loss; a greeting there is not trained, as the model writes
  none of that turn); an answer with calls (the templates write its text
  alone) or a tool message is refused; with ``tools_in_user_message=False`` the tools go
  into the system turn with the templates' other instruction.
- **Calls**: one call per assistant turn, written as the whole turn:
  ``{"name": NAME, "parameters": ARGS}`` (arguments as ``tojson`` of the object), then
  ``<|eot_id|>``.  Text beside a call is not written (Meta's templates drop it: a recorded
  loss); several calls in a turn are refused, as the templates refuse them.
- **Reading calls** as vLLM, SGLang and llama.cpp read them: a call may start with
  ``<|python_tag|>`` and the turn may end with ``<|eom_id|>`` (both end tokens are in the
  stop set); ``"arguments"`` as well as ``"parameters"`` (vLLM's llama3_json reads both) and
  an added ``"type": "function"`` (llama.cpp); several calls joined by ``;`` or whitespace
  (vLLM, SGLang); a call without arguments has ``{}`` (SGLang; vLLM reads it as text).  A
  turn whose text starts with ``{"name"`` is held until that is decided.  Stricter than
  the peers, each with a warning: a call after text, or followed by text, stays content as
  written (vLLM drops the text, SGLang keeps it as content: they disagree, and a model
  following Meta's instruction writes the call as the whole turn); calls joined by a
  repeated ``<|python_tag|>`` (SGLang) and a JSON list of calls are content.
- **Results** are ``ipython`` turns, one per tool message, matched to calls by position,
  written as Meta's templates write them: ``tojson`` of the text (a string is iterable in
  Jinja), so ``18°C`` is written ``"18°C"``; reading decodes it back.
- Names and ``reasoning_content`` are not written (recorded losses); call ids are not
  written (results answer calls by position).
- The system turn is always written; parsing a system turn with no text gives no message.

Remaining differences from the templates: the 3.1 template's ``builtin_tools`` variable
(``Tools: brave_search, ...`` and ``<|python_tag|>NAME.call(...)`` calls ending in
``<|eom_id|>``) has no option: such calls read as content with a warning.  A tool result
given as content parts is written as its text, where the templates write the parts' JSON.
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
    Results,
    SystemPrompt,
    ToolsBlock,
    Trimmed,
    declare,
    fence,
)

from .calls import Llama3Calls

BEGIN = Marker("<|begin_of_text|>")
HEADER, HEADER_END = Marker("<|start_header_id|>"), Marker("<|end_header_id|>")
END_OF_TURN, END_OF_MESSAGE = Marker("<|eot_id|>"), Marker("<|eom_id|>")
PYTHON_TAG = Marker("<|python_tag|>")

ANSWER_FORMAT = (
    'Respond in the format {"name": function name, "parameters": dictionary of argument name '
    "and its value}.Do not use variables.\n\n"
)
TOOLS_INTRO = (
    "Given the following functions, please respond with a JSON for a function call with its "
    "proper arguments that best answers the given prompt.\n\n" + ANSWER_FORMAT
)
SYSTEM_TOOLS_INTRO = (
    "You have access to the following functions. To call a function, please respond with JSON "
    "for a function call." + ANSWER_FORMAT
)
DATE_FORMAT = "%d %b %Y"


DEFAULT_DATE_STRING = "26 Jul 2024"


@dataclass(frozen=True)
class Llama3Options:
    """``date_string``: the ``Today Date`` header (Meta's templates' default and variable).
    ``date``: the date Llama 3.2's template reads from its clock (``strftime_now("%d %b
    %Y")``) when no ``date_string`` is given; set, it writes the header instead of
    ``date_string`` (the ``3.2`` variant).  ``tools_in_user_message``: the tools go into the
    first user message (Meta's default), else into the system turn (the templates' variable
    of that name)."""

    date_string: str = DEFAULT_DATE_STRING
    date: datetime.date | None = None
    tools_in_user_message: bool = True


def header(role: str) -> Frame:
    also = (fence(END_OF_MESSAGE),) if role == "assistant" else ()
    return Frame(
        open=fence(HEADER, role, HEADER_END, "\n\n"), end=fence(END_OF_TURN), also_end=also
    )


def template_variables(options: Llama3Options) -> Mapping[str, Any]:
    variables: dict[str, Any] = {}
    # The 3.1 template's own default date is written without the variable: given only when
    # it differs, so a template that reads its clock instead (3.2) is told apart.
    if options.date is None and options.date_string != DEFAULT_DATE_STRING:
        variables["date_string"] = options.date_string
    if not options.tools_in_user_message:
        variables["tools_in_user_message"] = False
    return variables


def layout(options: Llama3Options) -> Layout:
    date = Option("date_string") if options.date is None else Option("date", DATE_FORMAT)
    in_user = options.tools_in_user_message
    tools = ToolsBlock(
        place="user_after_system" if in_user else "system",
        first=True,
        open=fence(TOOLS_INTRO if in_user else SYSTEM_TOOLS_INTRO),
        item_close=fence("\n\n"),
        indent=4,
    )
    return Layout(
        name="llama3",
        summary="Llama 3.1/3.2/3.3: header ids, JSON calls, ipython results, date as an option",
        begin=fence(BEGIN),
        frames={
            **{role: header(role) for role in ("system", "user", "assistant")},
            "tool": header("ipython"),
        },
        concepts=(
            SystemPrompt(
                always=True,
                preamble_with_tools=fence("Environment: ipython\n"),
                preamble=fence("Cutting Knowledge Date: December 2023\nToday Date: ", date, "\n\n"),
            ),
            tools,
            Llama3Calls(
                open=None,
                also_open=(fence(PYTHON_TAG),),
                arguments_key="parameters",  # what Meta's templates write
                also_arguments_keys=("arguments",),  # what models write as well
                # Models given Meta's JSON instruction also write the OpenAI wrapper's key
                # (llama.cpp's common/chat-diff-analyzer.cpp reads it for these templates).
                ignored_members=(("type", "function"),),
                # What vLLM and SGLang read: several calls joined by ";", a call without
                # arguments ({}); the writer and grammars keep Meta's one call per turn.
                joined_by=(";", ""),
                arguments_optional=True,
                parallel=False,
                with_content=False,
                drops_content=True,  # Meta's templates write the call alone
            ),
            Trimmed(roles=("system", "user", "assistant")),
            Results(json_text=True),
            Ignored(("name", "reasoning")),
        ),
        options=options,
        from_options=layout,
        variants={"3.2": Llama3Options(date=datetime.date(2024, 7, 26))},
        template_variables=template_variables,
        today=None if options.date is None else "date",
    )


FORMAT = declare(layout(Llama3Options()))
