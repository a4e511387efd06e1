"""Upstage's Solar Open (100B): ``<|begin|>ROLE<|content|>…<|end|>`` turns, reasoning as an
assistant message of its own, ``<|tool_call:begin|>ID<|tool_call:name|>NAME`` calls.

The wire format (every ``<|…|>`` is a special token of the Solar Open tokenizer; role words
are text), shown on several lines (the format writes no newline between turns)::

    <|begin|>system<|content|>## Provider System Prompt

    You are Solar Open 100B, ... The current date is 2026-01-15.

    ## System Prompt

    You are terse.

    ## Tools
    ...
    <|tools:begin|><|tool:begin|>{"name": "get_weather", ...}<|tool:end|><|tools:end|>
    ...<|end|>
    <|begin|>user<|content|>Weather in Zürich?<|end|>
    <|begin|>assistant<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>get_weather<|tool_call:args|>{"location": "Zürich"}<|tool_call:end|><|calls|>
    <|begin|>tool<|tool_response|><|tool_response:begin|>a1b2c3d4e5<|tool_response:name|>get_weather<|tool_response:result|>{"temp_c": 3}<|tool_response:end|><|end|>
    <|begin|>assistant<|content|>3 °C.<|end|>
    <|begin|>assistant

Reference: ``upstage-Solar-Open-100B.jinja`` (llama.cpp's ``models/templates``).

Decisions:

- **System**: one system turn, always written: the provider text with the date (the option
  ``today``, a ``datetime.date``; the template reads ``strftime_now``, never read here),
  then, when there are system messages, ``\\n\\n## System Prompt\\n\\n`` and all of them
  (from anywhere in the conversation) joined by blank lines, then the tools block.  Reading
  gives the gathered texts back as one system message.
- **Tools**: ``## Tools`` with the template's instructions, each tool's ``function``
  object as JSON between ``<|tool:begin|>`` and ``<|tool:end|>``, inside
  ``<|tools:begin|>…<|tools:end|>``, then the call and result format instructions.
- **Turns**: an answer is ``<|begin|>assistant<|content|>`` + text + ``<|end|>``; a turn with
  calls is ``<|begin|>assistant<|tool_calls|>`` + per call ``<|tool_call:begin|>ID
  <|tool_call:name|>NAME<|tool_call:args|>JSON<|tool_call:end|>`` + ``<|calls|>``, which ends
  the turn (no ``<|end|>``).  The text of a turn with calls is dropped (a recorded loss: the
  template does not write it).  Ids are the caller's (the model is told to write 10
  lowercase letters and digits); a call read without one gets a generated id.
- **Results**: consecutive tool messages share one ``<|begin|>tool<|tool_response|>`` turn,
  each ``<|tool_response:begin|>ID<|tool_response:name|>NAME<|tool_response:result|>TEXT
  <|tool_response:end|>``, the name looked up from the call the id answers.
- **Reasoning**: the template writes it only from a message's ``reasoning`` field, which
  OpenAI-style callers (and Hugging Face's ``reasoning_content``) never fill, so past turns'
  reasoning is dropped (a recorded loss).  The model writes it as a message of its own
  before its answer: ``<|think|>REASONING<|end|><|begin|>assistant<|content|>…``; reading
  takes it as the turn's reasoning.
- **Generation prompt**: ``<|begin|>assistant``; the model then writes ``<|think|>``,
  ``<|content|>`` or ``<|tool_calls|>``.
- **Ends and stops**: the model ends an answer with ``<|flush|>`` and a turn with calls with
  ``<|calls|>``; with ``<|endoftext|>`` these are the stop set, what the model's engines
  stop on: its ``generation_config.json`` lists them as its end-of-sequence tokens, and
  llama.cpp makes them its end-of-generation tokens for this vocabulary (it takes
  ``<|end|>`` out of them when ``<|flush|>`` and ``<|calls|>`` are in the vocabulary).
  ``<|end|>`` is none: the model writes it after its reasoning and goes on
  (``<|think|>…<|end|><|begin|>assistant<|content|>ANSWER<|flush|>``).  The template writes
  ``<|calls|>`` after calls, but ends every answer it writes, the conversation's last one
  too, with ``<|end|>``, and never writes ``<|flush|>``; no variable of it changes that.
  A render is the template's text, so an answer ends with ``<|end|>`` there, and that
  ``<|end|>`` is not trainable (:class:`~pawlette.formats.solar.turn_ends.TurnEnds`): a
  model taught to end an answer with it would write on past it, its engines not stopping
  there.  The loss: a training render teaches no end of an answer (the learned part of an
  answer's turn is ``<|content|>`` and the text; the model's ``<|flush|>`` is in no text the
  template writes); a turn with calls is learned through its ``<|calls|>``.  The turn
  grammars end where the engines stop: after the answer or the calls, an ``<|end|>`` there
  refused.  Reading takes ``<|end|>``, ``<|flush|>``, ``<|calls|>`` and ``<|endoftext|>`` as
  the end of an assistant turn (a model that writes ``<|end|>`` after its answer is read as
  the template's past answers are).

Remaining differences from the template: ``default_system_prompt=false`` (no provider
text), ``reasoning_effort`` ``low``/``minimal`` (an empty thought before the prompt),
``think_render_option`` and ``response_format`` are not options of the format (the template's
defaults are what it writes); string ``arguments`` are written as the JSON object they hold
(the template writes a string as given).
"""

# ruff: noqa: E501  (the docstring shows the wire format)

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pawlette.declare import (
    Concept,
    Frame,
    Ignored,
    Layout,
    Marker,
    Reasoning,
    Results,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)
from pawlette.declare.pieces import Fence, Option, spelled

from .concepts import IdFirstCalls
from .turn_ends import TurnEnds

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render

BEGIN, CONTENT, END = Marker("<|begin|>"), Marker("<|content|>"), Marker("<|end|>")
THINK = Marker("<|think|>")
FLUSH, END_OF_TEXT = Marker("<|flush|>"), Marker("<|endoftext|>")
TOOL_CALLS, CALLS = Marker("<|tool_calls|>"), Marker("<|calls|>")
CALL_BEGIN, CALL_NAME = Marker("<|tool_call:begin|>"), Marker("<|tool_call:name|>")
CALL_ARGUMENTS, CALL_END = Marker("<|tool_call:args|>"), Marker("<|tool_call:end|>")
RESPONSE = Marker("<|tool_response|>")
RESPONSE_BEGIN, RESPONSE_NAME = Marker("<|tool_response:begin|>"), Marker("<|tool_response:name|>")
RESPONSE_RESULT, RESPONSE_END = (
    Marker("<|tool_response:result|>"),
    Marker("<|tool_response:end|>"),
)
TOOLS_BEGIN, TOOLS_END = Marker("<|tools:begin|>"), Marker("<|tools:end|>")
TOOL_BEGIN, TOOL_END = Marker("<|tool:begin|>"), Marker("<|tool:end|>")

PROVIDER = (
    "## Provider System Prompt\n\nYou are Solar Open 100B, a large language model trained by "
    "Upstage AI, a Korean startup. Your knowledge cutoff is 2025-07. The current date is "
)
DATE_FORMAT = "%Y-%m-%d"
TOOLS_INTRO = (
    "\n\n## Tools\n\n### Tool Call Instruction\nYou may invoke one or more tools to assist with "
    "the user's query. Available tools are provided in JSON Schema format: <|tools:begin|>"
    "<|tool:begin|><tools-json-object><|tool:end|>...<|tools:end|>\n\n### Available Tools\n"
)
TOOLS_OUTRO = (
    "\n\n### Tool Call Format\nFor each tool call, return a JSON object with the following "
    "structure, enclosed within <|tool_call:begin|> and <|tool_call:end|> tags: \n"
    "<|tool_call:begin|><tool-call-id><|tool_call:name|><tool-name><|tool_call:args|>"
    "<args-json-object><|tool_call:end|>\n- The <tool-call-id> must be a randomly generated "
    "string consisting of 10 lowercase letters (a-z) and/or digits (0-9) (e.g., a1b2c3d4e5)\n"
    "\n### Tool Response Format\nEach tool is responded by `tool` with the following "
    "structure:\n<|tool_response:id|><tool-call-id><|tool_response:name|><tool-name>"
    "<|tool_response:result|><results><|tool_response:end|>\n- Ensure the <tool-call-id> "
    "matches the corresponding tool call"
)
RESPONSE_ID = "<|tool_response:id|>"  # the tokenizer's, named in the instructions only

_SPECIAL = re.compile(r"(<\|[a-z_:]+\|>)")


@dataclass(frozen=True)
class AnswerLead(Concept):
    """An assistant turn without calls starts with ``lead`` (``<|content|>``), after any
    reasoning; reading drops it where the turn's text begins."""

    lead: Fence

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    def write_opening(self, out: Render, index: int) -> None:
        if 0 <= index < len(out.messages) and not out.messages[index].tool_calls:
            out.fence(self.lead, "content", trainable=True)

    def rows(self, table: Table) -> None:
        lead = table.text(self.lead)
        for state in ("assistant.head", "assistant.body"):
            table.on(state, lead, "assistant.body")
        self._joined_rows(table)

    @staticmethod
    def _joined_rows(table: Table) -> None:
        """The reasoning's close (``<|end|><|begin|>assistant``) is also a turn's end (the
        frame's, or the end the template writes after an answer) and the next assistant
        turn's opener, and the lexer reads the longest spelling: where a turn ends, that
        spelling ends it and opens an assistant turn."""
        from pawlette.declare.table import end

        layout = table.layout
        reasoning = layout.concept(Reasoning)
        opener = table.text(layout.frames["assistant"].open)
        opening = table.steps.get(("outside", opener))
        if reasoning is None or opening is None:
            return
        joined = table.text(reasoning.close)
        written = layout.concept(TurnEnds)
        for role, frame in layout.frames.items():
            ends = [frame.end]
            if role == "assistant" and written is not None:
                ends.append(written.written_end)
            if joined not in (table.text(pieces) + opener for pieces in ends):
                continue
            for state in table.states_of(role):
                if (state, joined) not in table.steps:
                    table.on(state, joined, opening[0], end, *opening[1])

    def jinja_opening(self, out: Template, role: str) -> None:
        out.fence_if("not (message.tool_calls is defined and message.tool_calls)", self.lead)

    def grammar(self, turn: Turn) -> None:
        from pawlette.emit.grammar_ast import seq

        turn.content = seq(*turn.nodes(self.lead), turn.content)


@dataclass(frozen=True)
class SolarOptions:
    """``today``: the date the system turn states (the template reads its clock)."""

    today: datetime.date = datetime.date(2026, 1, 15)


def _variables(options: SolarOptions) -> Mapping[str, Any]:
    return {}


def layout(options: SolarOptions) -> Layout:
    return Layout(
        name="solar",
        summary="Upstage Solar Open: <|begin|>ROLE<|content|> turns, id-first tool calls",
        frames={
            "system": Frame(open=fence(BEGIN, "system", CONTENT), end=fence(END)),
            "user": Frame(open=fence(BEGIN, "user", CONTENT), end=fence(END)),
            # The model ends its turn with <|flush|>, <|calls|> or <|endoftext|>, its
            # engines' stops; the template ends a written answer with <|end|> (TurnEnds).
            "assistant": Frame(
                open=fence(BEGIN, "assistant"),
                end=fence(FLUSH),
                also_end=(fence(CALLS), fence(END_OF_TEXT)),
            ),
            "tool": Frame(open=fence(BEGIN, "tool", RESPONSE, RESPONSE_BEGIN), end=fence(END)),
        },
        concepts=(
            SystemPrompt(
                always=True,
                placement="gathered",
                preamble=fence(PROVIDER, Option("today", DATE_FORMAT), "."),
                heading=fence("\n\n## System Prompt\n\n"),
            ),
            ToolsBlock(
                place="system",
                open=spelled(TOOLS_INTRO, _SPECIAL) + fence(TOOLS_BEGIN),
                close=fence(TOOLS_END) + spelled(TOOLS_OUTRO, _SPECIAL),
                item_open=fence(TOOL_BEGIN),
                item_close=fence(TOOL_END),
                wrap="function",
            ),
            Reasoning(open=fence(THINK), close=fence(END, BEGIN, "assistant"), keep="none"),
            IdFirstCalls(
                section_open=fence(TOOL_CALLS),
                open=fence(CALL_BEGIN),
                name_open=fence(CALL_NAME),
                arguments_open=fence(CALL_ARGUMENTS),
                close=fence(CALL_END),
                content="dropped",
            ),
            TurnEnds(end=fence(CALLS), written_end=fence(END)),
            Results(
                grouped=True,
                id_close=fence(RESPONSE_NAME),
                name_close=fence(RESPONSE_RESULT),
                item_close=fence(RESPONSE_END),
                item_gap=fence(RESPONSE_BEGIN),
                gap_ends_group=False,
            ),
            AnswerLead(lead=fence(CONTENT)),  # after the concepts whose states its rows end
            Ignored(("name",)),
        ),
        options=options,
        from_options=layout,
        extra_special=(RESPONSE_ID,),
        template_variables=_variables,
        today="today",
    )


FORMAT = declare(layout(SolarOptions()))
