"""Cohere's Command R+ tool-use template: the variant ``cohere:command-r-plus``.

The wire format (every ``<|…|>`` is a special token), shown on several lines (the format
writes no newline between turns)::

    <BOS_TOKEN><|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|># Safety Preamble
    ... (fixed)
    # User Preamble
    You are terse.

    ## Available Tools
    Here is a list of tools that you have available to you:

    ```python
    def get_weather(city: str) -> List[Dict]:
        \"\"\"Weather.

        Args:
            city (str): The city.
        \"\"\"
        pass
    ```<|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|USER_TOKEN|>Weather in Zürich?<|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Checking.
    Action:
    ```json
    [
        {
            "tool_name": "get_weather",
            "parameters": {
                "city": "Zürich"
            }
        }
    ]```
    <|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|><results>
    3 °C</results><|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>3 °C.<|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>Write 'Action:' followed by ... ]```<|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>

Shared with Command R7B (:mod:`pawlette.formats.cohere`): the turn tokens and the
``<BOS_TOKEN>``.  Its own:

- **First turn**: always a system turn: the fixed safety and system preamble, then the first
  system message's text as given (untrimmed), or the template's default task and style
  guide without one, then the ``## Available Tools`` heading and the tools as Python stubs
  (:mod:`.stubs`; nothing after the heading without tools).  Reading drops the fixed texts
  and the default, and gives the tools back as far as their stubs say them
  (:mod:`.stub_reading`: names, descriptions, parameters' types, required and descriptions;
  not ``items``, ``enum`` or an object's ``properties``).
- **Turns**: user messages, later system messages and answers are written trimmed (the
  template's ``| trim``: a recorded loss); reasoning and names are not written.
- **Calls**: the turn's trimmed text, then ``\\nAction:\\n```json\\n``, the calls as a JSON
  array indented by four (``{"tool_name": N, "parameters": A}`` each, as the template's
  ``tojson(indent=4) | indent(8)`` writes them) and ``````\\n``.  The template writes no
  end-of-turn token after a call turn: the next turn opens right after it; reading ends
  the turn there, or at the ``<|END_OF_TURN_TOKEN|>`` a model writes.  The block's
  closing fence is no marker (a code block in an answer stays text, which the grammars
  allow): the block is read up to the turn's end, its calls given there.  The grammars
  write each action in the template's layout.
- **Results**: each tool message is a system turn of its own, ``<results>\\n`` + its
  trimmed text + ``</results>``, paired with the calls by position.
- **Instruction**: every render ends with a fixed system turn asking for an ``Action:``
  list; the generation prompt is that turn and ``<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>``.
  A past turn therefore never follows the instruction: a render with the prompt is not a
  prefix of the render with the model's turn (as the template's are not).
- **Reading** what the model writes (llama.cpp's Command R+ cases): text, or
  ``Action:`` and a JSON block of ``{"tool_name", "parameters"}`` objects (the newline
  before ``Action:`` and around the fences optional, ``Action: ```json`` on one line as
  Ollama's template writes it, the block's close read after the array or on a line of its
  own); the turn ends at ``<|END_OF_TURN_TOKEN|>``.  A ``directly-answer`` action (the
  instruction's way to answer without tools) is no call: reading drops it, unless the
  request (or, reading a whole conversation, its stubs) declares a tool of that name.  A
  list naming a tool the request does not declare is kept as text, with a warning.

Remaining differences from the template: the template refuses a request without tools
(it iterates ``tools``: its callers, Cohere's ``apply_tool_use_template``, always pass a
list), a parameter without a description and an object without ``additionalProperties``;
the format writes them (:mod:`.stubs` says how).  Old-style tools
(``parameter_definitions``) are not written as such.  A tool name that JSON escapes is
written escaped in a call (the template writes it raw).  A call turn whose ``content`` is
``None`` writes no text (the template's ``trim`` prints ``None``; Hugging Face callers
pass ``""``).  The first system message's text is written as given (the template does not
trim it), later ones trimmed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pawlette.declare import (
    CallTurnEnd,
    Concept,
    Frame,
    Ignored,
    JsonCallList,
    Layout,
    Marker,
    Results,
    SystemPrompt,
    Trimmed,
    fence,
)
from pawlette.declare.call_list import CallListReader, CallListSet
from pawlette.declare.readers import schema_tools
from pawlette.declare.table import end
from pawlette.emit.grammar_ast import Lit as GrammarLit
from pawlette.emit.grammar_ast import Node, Rules

from .stubs import PlusTools
from .texts import PLUS_DEFAULT, PLUS_INSTRUCTION, PLUS_PREAMBLE, PLUS_TOOLS

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render

    from . import CohereOptions

DIRECTLY_ANSWER = "directly-answer"
"""The action the instruction turn asks for when no tool is needed."""
ACTION_OPEN = "\nAction:\n```json\n"
FENCE = "```"
SPACED_OPENS = ("\nAction: ```json\n", "\nAction: ```json", "Action: ```json\n", "Action: ```json")
RESULTS_OPEN, RESULTS_CLOSE = "<results>\n", "</results>"
ITEM_INDENT = "\n    "


class PlusCallListReader(CallListReader):
    """The action list up to the turn's end, read as :class:`CallListReader` reads it once
    the block's closing fence is cut off, without the ``directly-answer`` actions (unless
    the request declares a tool of that name).  (The fence is no marker: a code block in an
    answer stays text the grammars allow.)"""

    __slots__ = ()

    def _read(self, text: str, calls: list[tuple[str, str | None, str]]) -> str | None:
        text = text.rstrip()
        if text.endswith(FENCE):  # the block's close, after the array or on a line of its own
            text = text[: -len(FENCE)]
        # (The caller's tools, else those the conversation's stubs declare.)
        declared = {tool.name for tool in schema_tools(self._parser)}
        if DIRECTLY_ANSWER in declared:
            return super()._read(text, calls)
        try:
            value = json.loads(text.strip() or "null")
        except ValueError:
            return super()._read(text, calls)
        name_key = self._keys["name"]
        if not isinstance(value, list) or not value:
            return super()._read(text, calls)
        kept = [
            item
            for item in value
            if not (isinstance(item, dict) and item.get(name_key) == DIRECTLY_ANSWER)
        ]
        if not kept:
            return None  # only the answer action: no call
        if len(kept) == len(value):
            return super()._read(text, calls)
        return super()._read(json.dumps(kept, ensure_ascii=False), calls)


@dataclass(frozen=True)
class PlusCalls(JsonCallList):
    """The action list as Command R+'s template writes it: the array as ``json.dumps(...,
    indent=4)`` writes it (the template's ``tojson(indent=4) | indent(8)`` of each call's
    arguments within its four-space items); read as :class:`PlusCallListReader` reads it."""

    def item(self, name: str, call_id: str, arguments: str) -> str:
        value = {"tool_name": name, "parameters": json.loads(arguments)}
        return json.dumps(value, indent=4, ensure_ascii=False).replace("\n", ITEM_INDENT)

    def rows(self, table: Table) -> None:
        super().rows(table)
        # ``Action:`` and the fence on one line, as Ollama's Command R+ template writes it.
        table.calls_open(SPACED_OPENS, "call.list")
        keys = {role: key for role, key in self.keys}
        table.reader(
            "call.list", lambda parser: PlusCallListReader(parser, keys, False, concept=self)
        )

    def grammar(self, turn: Turn) -> None:
        turn.calls = PlusCallSet(self, turn)

    def jinja_item(self, out: Template) -> None:
        out.out(
            '{{- {"tool_name": call.function.name, "parameters": call.function.arguments}'
            " | tojson(indent=4) | indent(4) -}}"
        )


ITEM_HEAD = "{" + ITEM_INDENT + '    "tool_name": '
ITEM_ARGUMENTS = "," + ITEM_INDENT + '    "parameters": '
ITEM_CLOSE = ITEM_INDENT + "}"


class PlusCallSet(CallListSet):
    """The grammar of the action list: each item in the template's layout (its arguments
    with JSON's bounded whitespace, which holds the template's indentation)."""

    def items(self, turn: Turn, rules: Rules, number: int) -> list[Node]:
        from pawlette.emit.turn_rules import json_arguments

        tool = turn.tools[number]
        return [
            GrammarLit(ITEM_HEAD + json.dumps(tool.name, ensure_ascii=False) + ITEM_ARGUMENTS),
            json_arguments(rules, number, tool),
            GrammarLit(ITEM_CLOSE),
        ]

    def prefix(self, name: str | None) -> str:
        if name is None:
            return self.lead
        return self.lead + ITEM_HEAD + json.dumps(name, ensure_ascii=False)


@dataclass(frozen=True)
class PlusSystem(SystemPrompt):
    """The system turn: without tools, a turn without a message holds the default text and an
    empty message's turn holds none, so reading tells the two apart (no loss)."""

    def empty_read_as_none(self, out: Render) -> bool:
        return bool(out.tools) and super().empty_read_as_none(out)


@dataclass(frozen=True)
class LaterSystemTrimmed(Trimmed):
    """Trimmed text in user and assistant turns and in system turns after the first (the
    first system message's text is written as given)."""

    def trims(self, out: Render, index: int) -> bool:
        role = out.messages[index].role
        return role in self.roles and not (role == "system" and index == 0)

    def write_content(self, out: Render, index: int) -> bool:
        if index < 0 or not self.trims(out, index):
            return False
        return super().write_content(out, index)

    def jinja_content(self, out: Template, role: str) -> bool:
        if role != "system":
            return super().jinja_content(out, role)
        text = f"text_of(message, index, {out.layout.name!r})"
        out.out(f"{{%- if index == 0 -%}}{{{{- {text} -}}}}")
        out.out(f"{{%- else -%}}{{{{- {text} | trim -}}}}{{%- endif -%}}")
        return True


@dataclass(frozen=True)
class Instruction(Concept):
    """The fixed system turn (``turn``) every render ends with: written after the last
    message without the generation prompt (the prompt holds it, before the assistant's
    opener).  Reading a conversation, it is no message; a call turn, which has no end of
    its own, ends where it or any other turn opens."""

    turn: tuple[Any, ...]

    def write_finish(self, out: Render) -> None:
        if not out.prompt:
            out.at(None, len(out.messages))
            out.fence(self.turn, "close")

    def jinja_finish(self, out: Template) -> None:
        out.fence_if("not add_generation_prompt", self.turn)

    def rows(self, table: Table) -> None:
        table.on("outside", table.text(self.turn), "outside")
        # The action list runs to the turn's end, which the template does not write: what
        # opens a turn (or the instruction) ends it first.
        begin = table.text(table.layout.begin)
        for (state, marker), (target, actions) in list(table.steps.items()):
            after = ("call.list", marker)
            if state == "outside" and marker != begin and after not in table.steps:
                table.on(*after, target, end, *actions)


def plus_layout(options: CohereOptions, variants: dict[str, Any], variables: Any) -> Layout:
    from . import BEGIN, CHATBOT, END, START, SYSTEM, USER, layout

    def turn(role: Marker) -> Frame:
        return Frame(open=fence(START, role), end=fence(END))

    instruction = fence(START, SYSTEM, PLUS_INSTRUCTION, END)
    prompt = (*instruction, START, CHATBOT)
    return Layout(
        name="cohere",
        summary="Cohere Command R+: Python tool stubs, Action: JSON lists, <results> turns",
        begin=fence(BEGIN),
        frames={
            "system": turn(SYSTEM),
            "user": turn(USER),
            "assistant": Frame(
                open=fence(START, CHATBOT),
                end=fence(END),
                prompt_after=dict.fromkeys(
                    ("start", "system", "user", "assistant", "tool"), prompt
                ),
            ),
            "tool": Frame(open=fence(START, SYSTEM, RESULTS_OPEN), end=fence(RESULTS_CLOSE, END)),
        },
        concepts=(
            PlusSystem(always=True, default=PLUS_DEFAULT, preamble=fence(PLUS_PREAMBLE)),
            PlusTools(place="system", always=True, open=fence(PLUS_TOOLS)),
            LaterSystemTrimmed(roles=("system", "user", "assistant")),
            Ignored(("name", "reasoning")),
            PlusCalls(
                open=fence(ACTION_OPEN),
                keys=(("name", "tool_name"), ("arguments", "parameters")),
                list_open="[" + ITEM_INDENT,
                list_close="\n]" + FENCE + "\n",
                item_separator="," + ITEM_INDENT,
            ),
            CallTurnEnd(end=()),
            Results(trim=True),
            Instruction(instruction),
        ),
        options=options,
        from_options=layout,
        variants=variants,
        template_variables=variables,
        # The template iterates ``tools``: its callers pass a list, empty without tools.
        tools_variables=lambda options, tools: {"tools": [dict(tool) for tool in tools]},
        template_untested=("tools",),
        markers_in_text=True,  # the action list's fences are plain text, no special token
    )
