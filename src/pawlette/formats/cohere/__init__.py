"""Cohere's Command R7B: ``<|START_OF_TURN_TOKEN|>`` turns, answers between response
markers, calls as one JSON action list numbered by position, results as one JSON list.

The wire format (every ``<|…|>`` is a special token of the Command R7B tokenizer), shown on
several lines (the format writes no newline between turns)::

    <BOS_TOKEN><|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|># System Preamble
    You are in contextual safety mode. ...
    (with tools: the tool-use instructions and the listing)
    ```json
    [
        {"name": "get_weather", "description": "Weather.", "parameters": {...}, "responses": null}
    ]
    ```

    # Default Preamble
    ...

    # Developer Preamble
    The following instructions take precedence ...
    You are terse.<|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|USER_TOKEN|>Weather in Zürich?<|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_THINKING|><|END_THINKING|><|START_ACTION|>[
        {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Zürich"}}
    ]<|END_ACTION|><|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|><|START_TOOL_RESULT|>[
        {
            "tool_call_id": "0",
            "results": {
                "0": "3 °C"
            },
            "is_error": null
        }
    ]<|END_TOOL_RESULT|><|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_RESPONSE|>3 °C.<|END_RESPONSE|><|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_THINKING|><|END_THINKING|>

Reference: ``CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja`` (llama.cpp's
``models/templates``); what models write, as llama.cpp's ``command_r7b`` handler reads it.

Decisions:

- **System**: one system turn, always written: the fixed system preamble, the tool-use
  instructions and the tools listing (with tools), the fixed default preamble, then, when
  the first message is a system message with text, the developer preamble heading and that
  text.  Later system messages are turns of their own.  Reading drops the fixed texts.
- **Tools**: each tool's ``{"name": "N", "description": "D", "parameters": P,
  "responses": null}`` on a line, joined by ``,\\n``; the name and description are written
  between quotes as given (the template does not escape them).
- **Answers**: ``<|START_RESPONSE|>`` + text + ``<|END_RESPONSE|>``; the template drops an
  answer's reasoning (a recorded loss).
- **Calls**: ``<|START_THINKING|>`` + reasoning + ``<|END_THINKING|><|START_ACTION|>`` + a
  JSON array, one call a line ``{"tool_call_id": "K", "tool_name": N, "parameters": A}`` +
  ``<|END_ACTION|>``.  The block of reasoning is always there (empty without reasoning);
  the turn's text is dropped (a recorded loss).  ``K`` is the call's position among all the
  conversation's calls: the template renumbers ids, so a given id that differs is a
  recorded loss, and reading gives the ids the model wrote.
- **Results**: consecutive tool messages share one turn, a JSON array of ``{"tool_call_id":
  "K", "results": {"0": TEXT}, "is_error": null}`` objects, the text as a JSON string, ``K``
  the position of the call the result answers.
- **Generation prompt**: ``<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_THINKING|>
  <|END_THINKING|>`` (thinking off; the variant ``cohere:thinking``, the template's
  ``enable_thinking``, writes only the opener, and the model may write its reasoning
  first).  The template writes it after every render, ``add_generation_prompt`` or not
  (:class:`~pawlette.declare.PromptAlways`): reading a conversation, that prompt at its end
  gives no message.  With thinking off, a past call turn's empty block is the prompt's (not
  trainable); an answer writes none, so its model text follows the opener.
- **Reading** what models write (llama.cpp's ``command_r7b`` handler): an optional
  ``<|START_THINKING|>…<|END_THINKING|>`` block, then ``<|START_RESPONSE|>…<|END_RESPONSE|>``
  or ``<|START_ACTION|>[…]<|END_ACTION|>``; the turn ends at ``<|END_OF_TURN_TOKEN|>``.

A first system message with empty text is, as the template writes it, a system turn of its
own after the generated one (``SystemPrompt(empty_first="own_turn")``).

Remaining differences from the template: ``reasoning_content`` of ``None`` in a call turn is
written empty (the template prints ``None``); call arguments given as a JSON string (OpenAI's
form) are written as the object they hold (the template's ``tojson`` would quote the string:
callers such as transformers' pass objects); ``documents`` and ``enable_citations`` are not
options of the format (the template's defaults, none, are what it writes); a tool message
whose ``tool_call_id`` is that of a result after the first of an earlier group of results is
written (the template skips it, taking it for one already written).

**Command R+** (``cohere:command-r-plus``, the ``CohereForAI-c4ai-command-r-plus-tool_use``
template, declared in :mod:`.plus`): the same turn tokens, with its own first turn (a fixed
safety and system preamble around the system text or its default, then the tools as Python
function stubs, :mod:`.stubs`), trimmed turns, calls as ``Action:`` and a JSON block of
``tool_name``/``parameters`` objects with no end-of-turn token after them, each result a
``<results>`` system turn, and a fixed instruction turn before the generation prompt.  Its
template fails without tools and on parameters without a description; its callers always
pass a list of tools, and the format writes such parameters (the module says how).

**Command A MoE** (``cohere:cohere2moe``, the ``Cohere2MoE`` template, declared in
:mod:`.moe`): the same turn tokens, tools listing, calls and results, with its own first
turn (fixed platform instructions and the tools listing, always), every system and user
text between ``<|START_TEXT|>`` and ``<|END_TEXT|>``, answers there too, reasoning written
on every turn that has it, a result's text as ``{"content": TEXT}``, and the generation
prompt opening ``<|START_THINKING|>`` (the template's ``reasoning``, on by default).
"""

# ruff: noqa: E501  (the docstring shows the wire format)

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pawlette.declare import (
    Frame,
    Ignored,
    JsonCallList,
    Layout,
    Marker,
    PromptAlways,
    Reasoning,
    Results,
    Switch,
    SystemPrompt,
    declare,
    fence,
)
from pawlette.declare.pieces import spelled

from .concepts import CohereTools, DefaultPreamble, Response
from .texts import DEFAULT_PREAMBLE, DEVELOPER_HEADING, SYSTEM_PREAMBLE, TOOL_USE

BEGIN = Marker("<BOS_TOKEN>")
START, END = Marker("<|START_OF_TURN_TOKEN|>"), Marker("<|END_OF_TURN_TOKEN|>")
SYSTEM, USER, CHATBOT = (
    Marker("<|SYSTEM_TOKEN|>"),
    Marker("<|USER_TOKEN|>"),
    Marker("<|CHATBOT_TOKEN|>"),
)
THINKING, THINKING_END = Marker("<|START_THINKING|>"), Marker("<|END_THINKING|>")
ACTION, ACTION_END = Marker("<|START_ACTION|>"), Marker("<|END_ACTION|>")
RESPONSE, RESPONSE_END = Marker("<|START_RESPONSE|>"), Marker("<|END_RESPONSE|>")
RESULT, RESULT_END = Marker("<|START_TOOL_RESULT|>"), Marker("<|END_TOOL_RESULT|>")

TOOLS_CLOSE = "\n]\n```\n\n"
RESULT_OPEN = '[\n    {\n        "tool_call_id": "'
RESULT_ID_CLOSE = '",\n        "results": {\n            "0": '
RESULT_CLOSE = '\n        },\n        "is_error": null\n    }'
RESULT_GAP = ',\n    {\n        "tool_call_id": "'

CALLS = JsonCallList(
    open=fence(ACTION),
    close=fence(ACTION_END),
    keys=(("id", "tool_call_id"), ("name", "tool_name"), ("arguments", "parameters")),
    content="dropped",
    list_open="[\n    ",
    list_close="\n]",
    item_separator=",\n    ",
    ids="positional",
)
"""The numbered JSON call list of Command R7B and Command A MoE alike."""


def command_results(id_close: str, close: str) -> Results:
    """Results as Command's templates write them: a JSON list of result objects, each
    result's id, ``id_close``, its text as JSON and ``close`` (the two templates differ only
    there), paired with the calls by position."""
    return Results(
        grouped=True,
        id_close=fence(id_close),
        json_text=True,
        item_close=fence(close),
        item_gap=fence(RESULT_GAP),
        gap_ends_group=False,
        ids="positional",
    )


_SPECIAL = re.compile(r"(<\|[A-Z_]+\|>)")


@dataclass(frozen=True)
class CohereOptions:
    """``thinking``: the template's ``enable_thinking`` (Command A MoE's: ``reasoning``):
    the generation prompt leaves the reasoning block to the model instead of writing it
    empty.  ``moe``: Command A MoE's template (:mod:`.moe`).  ``plus``: Command R+'s
    tool-use template (:mod:`.plus`)."""

    thinking: bool = False
    moe: bool = False
    plus: bool = False


def _variables(options: CohereOptions) -> Mapping[str, Any]:
    if options.plus:
        return {}  # (the template reads no option)
    if options.moe:
        return {"reasoning": options.thinking}
    return {"enable_thinking": options.thinking}


VARIANTS = {
    "thinking": CohereOptions(thinking=True),
    "cohere2moe": CohereOptions(thinking=True, moe=True),
    "command-r-plus": CohereOptions(plus=True),
}


def layout(options: CohereOptions) -> Layout:
    if options.plus:
        from .plus import plus_layout

        return plus_layout(options, VARIANTS, _variables)
    if options.moe:
        from .moe import moe_layout

        return moe_layout(options, VARIANTS, _variables)

    def turn(role: Marker) -> Frame:
        return Frame(open=fence(START, role), end=fence(END))

    return Layout(
        name="cohere",
        summary="Cohere Command R7B: response and action markers, calls numbered by position",
        begin=fence(BEGIN),
        frames={
            "system": turn(SYSTEM),
            "user": turn(USER),
            "assistant": turn(CHATBOT),
            "tool": Frame(
                open=fence(START, SYSTEM, RESULT, RESULT_OPEN),
                end=fence("\n]", RESULT_END, END),
            ),
        },
        concepts=(
            SystemPrompt(always=True, preamble=fence(SYSTEM_PREAMBLE), empty_first="own_turn"),
            CohereTools(
                place="system",
                first=True,
                open=spelled(TOOL_USE, _SPECIAL),
                close=fence(TOOLS_CLOSE),
            ),
            DefaultPreamble(default=fence(DEFAULT_PREAMBLE), heading=fence(DEVELOPER_HEADING)),
            Reasoning(
                open=fence(THINKING),
                close=fence(THINKING_END),
                keep="calls",
                prompt="" if options.thinking else "empty",
            ),
            Response(open=fence(RESPONSE), close=fence(RESPONSE_END)),
            CALLS,
            command_results(RESULT_ID_CLOSE, RESULT_CLOSE),
            Ignored(("name",)),
            PromptAlways(),
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        template_variables=_variables,
        switches=(Switch("thinking", "enable_thinking"),),
    )


FORMAT = declare(layout(CohereOptions()))
