"""IBM Granite 4.0, 4.1 and 3.3: Granite's role frame; 4.x with Hermes-style JSON tool calls.

The wire format (``<|start_of_role|>``, ``<|end_of_role|>``, ``<|end_of_text|>``,
``<tool_call>``, ``</tool_call>``, ``<tool_response>``, ``</tool_response>`` are markers)::

    <|start_of_role|>system<|end_of_role|>You are terse.

    You are a helpful assistant with access to the following tools. You may call one or more tools to assist with the user query.

    You are provided with function signatures within <tools></tools> XML tags:
    <tools>
    {"type": "function", "function": {"name": "get_weather", ...}}
    </tools>

    For each tool call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
    <tool_call>
    {"name": <function-name>, "arguments": <args-json-object>}
    </tool_call>. If a tool does not exist in the provided list of tools, notify the user that you do not have the ability to fulfill the request.<|end_of_text|>
    <|start_of_role|>user<|end_of_role|>Weather in Paris?<|end_of_text|>
    <|start_of_role|>assistant<|end_of_role|><tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call><|end_of_text|>
    <|start_of_role|>user<|end_of_role|>
    <tool_response>
    18°C
    </tool_response><|end_of_text|>
    <|start_of_role|>assistant<|end_of_role|>

Decisions (reference: ``ibm-granite-granite-4.0.jinja`` and ``ibm-granite-granite-4.1.jinja``
in llama.cpp's ``models/templates``; the two differ only in the default system text):

- **Granite 4.0 is the default** (``granite``): when the conversation has neither a system
  message nor tools, its template writes the system turn "You are a helpful assistant.
  Please ensure responses are professional, accurate, and safe."; parsing that turn gives no
  message.  **Granite 4.1** (``granite:4.1``) writes no system turn then.
- **Tools** are written at the end of the first system turn, after its text and a blank line
  (alone when there is no system message), one ``tojson`` of the whole OpenAI tool per line,
  between IBM's instructions.  The template's ``available_tools`` variable (which replaces
  ``tools``) is the same as passing the tools.
- **Calls** are ``<tool_call>\\n{"name": NAME, "arguments": ARGS}\\n</tool_call>`` after the
  turn's text, a newline before each one that follows text or another call; arguments as
  Jinja's ``tojson`` of the parsed object (what Hugging Face callers pass), names as JSON
  strings (the template pastes them raw: the same for every name without ``"`` or ``\\``).
  No call ids: results answer calls by position.
- **Results**: a run of tool messages is one user turn of ``\\n<tool_response>\\n...
  \\n</tool_response>`` items.
- **Dropped fields** (recorded losses, never refusals): ``reasoning_content`` and a message's
  ``name``; a tool message's ``name``.
- **Reading** what the models write as llama.cpp and vLLM read Hermes calls: the newlines
  inside ``<tool_call>`` are optional, several calls may follow one another with or without
  whitespace between them, and text before the calls is content.

- **An empty first system message** is written as none, as the templates do (4.0 writes
  its default text in its place, 4.1 no turn: a recorded loss), unless the tools are
  written into that turn (then its empty text, a blank line and the tools).

**Granite 3.3** (``granite:3.3``, reference ``ibm-granite-granite-3.3-2B-Instruct.jinja``):

- Without a system message, its template writes "Knowledge Cutoff Date: April 2024. Today's
  Date: DATE. You are Granite, developed by IBM." and " You are a helpful AI assistant."
  (with tools: its tool instructions; with the ``thinking`` variable: its instructions to
  think in ``<think>`` and answer in ``<response>``).  The date is the ``date`` option,
  written as its clock would (``strftime_now("%B %d, %Y")``; ``Layout.today``), and
  ``thinking`` is the option of that name.  Either default reads back as no message.
- The tools are a turn of their own after the system turn: ``<|start_of_role|>
  available_tools<|end_of_role|>`` and the tools as one JSON array (``tojson(indent=4)``).
- The generation prompt is written inside the template's message loop, which skips a
  leading system message: after the system message alone none is written, asked for or not.
  The model then writes its turn's opener itself, and reading a completion takes an opener
  it begins with as layout.
- Calls are not written (the template writes an assistant turn's text only: a recorded
  loss); results are ``tool`` turns, one per message.  Reasoning is not written; a
  completion's ``<think>...</think>`` is read as reasoning (llama.cpp reads it so).
- Remaining differences: an assistant message without ``content`` (calls only) is written
  with empty text where the template raises (it joins ``None`` to a string); the
  ``documents`` and ``controls`` variables have no option; ``<|tool_call|>[...]``, which
  Granite 3 models write and vLLM's ``granite`` parser reads, is content here (the template
  writes no calls to read back).

Remaining differences from the 4.x templates: the ``documents`` variable (a retrieval block in
the system turn) has no option; a ``developer`` message is written as a system message,
where the templates drop it silently.  Whether Granite's tokenizer holds ``<tool_call>`` and
its kin as single tokens is not checked here: pawlette reads them as markers either way
(from text, a message spelling one is read as that marker, as ChatML does).
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
    JsonCalls,
    Layout,
    Marker,
    NoPromptAfter,
    Option,
    Reasoning,
    Results,
    Switch,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)

START_OF_ROLE, END_OF_ROLE = Marker("<|start_of_role|>"), Marker("<|end_of_role|>")
END_OF_TEXT = Marker("<|end_of_text|>")
TOOL_CALL, TOOL_CALL_END = Marker("<tool_call>"), Marker("</tool_call>")
RESPONSE, RESPONSE_END = Marker("<tool_response>"), Marker("</tool_response>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
GRANITE_4_0_SYSTEM = (
    "You are a helpful assistant. Please ensure responses are professional, accurate, and safe."
)

TOOLS_INTRO = (
    "You are a helpful assistant with access to the following tools. You may call one or more "
    "tools to assist with the user query.\n\nYou are provided with function signatures within "
    "<tools></tools> XML tags:\n<tools>"
)
TOOLS_OUTRO = (
    "\n</tools>\n\nFor each tool call, return a json object with function name and arguments "
    "within "
)
TOOLS_LAST = (
    ". If a tool does not exist in the provided list of tools, notify the user that you do not "
    "have the ability to fulfill the request."
)


GRANITE_3_KNOWLEDGE = "Knowledge Cutoff Date: April 2024. Today's Date: "
GRANITE_3_IDENTITY = ". You are Granite, developed by IBM."
GRANITE_3_PLAIN = " You are a helpful AI assistant."
GRANITE_3_TOOLS = (
    " You are a helpful assistant with access to the following tools. When a tool is required "
    "to answer the user's query, respond only with <|tool_call|> followed by a JSON list of "
    "tools used. If a tool does not exist in the provided list of tools, notify the user that "
    "you do not have the ability to fulfill the request."
)
GRANITE_3_THINKING = (
    " You are a helpful AI assistant.\nRespond to every user query in a comprehensive and "
    "detailed way. You can write down your thoughts and reasoning process before responding. "
    "In the thought process, engage in a comprehensive cycle of analysis, summarization, "
    "exploration, reassessment, reflection, backtracing, and iteration to develop "
    "well-considered thinking process. In the response section, based on various attempts, "
    "explorations, and reflections from the thoughts section, systematically present the "
    "final solution that you deem correct. The response should summarize the thought process. "
    "Write your thoughts between "
)
GRANITE_3_THINKING_END = (
    " and write your response between <response></response> for each user query."
)
DATE_FORMAT = "%B %d, %Y"


@dataclass(frozen=True)
class GraniteOptions:
    """The options of the Granite family.

    - ``default_system``: the system text written when the conversation has neither a
      system message nor tools (Granite 4.0's; None: no system turn then, Granite 4.1).
    - ``version``: ``"4"`` (Granite 4.0/4.1) or ``"3.3"`` (Granite 3.3's layout: a dated
      default system text, the tools in a turn of their own, calls not written).
    - ``date``: Granite 3.3's ``Today's Date``, which its template reads from the clock
      (``strftime_now("%B %d, %Y")``).
    - ``thinking``: Granite 3.3's ``thinking`` variable (its default system text asks for
      ``<think>`` and ``<response>``).
    """

    default_system: str | None = GRANITE_4_0_SYSTEM
    version: str = "4"
    date: datetime.date = datetime.date(2024, 7, 26)
    thinking: bool = False


GRANITE_4_1 = GraniteOptions(default_system=None)
GRANITE_3_3 = GraniteOptions(default_system=None, version="3.3")


def frame(role: str) -> Frame:
    return Frame(
        open=fence(START_OF_ROLE, role, END_OF_ROLE), end=fence(END_OF_TEXT), after=fence("\n")
    )


def granite_3_3(options: GraniteOptions) -> Layout:
    """Granite 3.3: the dated default system text (its tools and thinking versions), the
    tools as a turn of their own, results in ``tool`` turns, calls not written."""
    head = fence(GRANITE_3_KNOWLEDGE, Option("date", DATE_FORMAT), GRANITE_3_IDENTITY)
    return Layout(
        name="granite",
        summary="IBM Granite 3.3: <|start_of_role|>role<|end_of_role|>, a dated default",
        frames={role: frame(role) for role in ("system", "user", "assistant", "tool")},
        concepts=(
            SystemPrompt(
                default=head
                + (
                    # <think> and </think> spelled in the text: markers the system text holds.
                    fence(GRANITE_3_THINKING, THINK, THINK_END, GRANITE_3_THINKING_END)
                    if options.thinking
                    else fence(GRANITE_3_PLAIN)
                ),
                default_with_tools=head + fence(GRANITE_3_TOOLS),
            ),
            ToolsBlock(
                place="after_system",
                open=fence(START_OF_ROLE, "available_tools", END_OF_ROLE),
                close=fence(END_OF_TEXT, "\n"),
                array=True,
                indent=4,
            ),
            # Read only: the template writes no reasoning, a model asked to think writes it.
            Reasoning(open=fence(THINK), close=fence(THINK_END), keep="none"),
            Ignored(("name", "calls")),
            Results(),
            # The template's loop writes the prompt, and skips the system message: none
            # after the system message alone.
            NoPromptAfter(roles=(), system_alone=True),
        ),
        options=options,
        from_options=layout,
        variants={"4.1": GRANITE_4_1, "3.3": GRANITE_3_3},
        template_variables=template_variables,
        switches=(Switch("thinking", "thinking"),),  # Granite 3.3's; 4.x's templates have none
        today="date",
    )


def template_variables(options: GraniteOptions) -> Mapping[str, Any]:
    return {"thinking": True} if options.version == "3.3" and options.thinking else {}


def layout(options: GraniteOptions) -> Layout:
    if options.version == "3.3":
        return granite_3_3(options)
    return Layout(
        name="granite",
        summary="IBM Granite 4.0/4.1: <|start_of_role|>role<|end_of_role|>, <tool_call> JSON",
        frames={
            **{role: frame(role) for role in ("system", "user", "assistant")},
            "tool": frame("user"),
        },
        concepts=(
            SystemPrompt(
                default=options.default_system, default_when="without_tools", empty_first="absent"
            ),
            ToolsBlock(
                place="system",
                open=fence(TOOLS_INTRO),
                item_open=fence("\n"),
                close=fence(
                    TOOLS_OUTRO,
                    TOOL_CALL,
                    TOOL_CALL_END,
                    " XML tags:\n",
                    TOOL_CALL,
                    '\n{"name": <function-name>, "arguments": <args-json-object>}\n',
                    TOOL_CALL_END,
                    TOOLS_LAST,
                ),
                separator=fence("\n\n"),
            ),
            Ignored(("name", "reasoning")),
            JsonCalls(
                open=fence(TOOL_CALL, "\n"),
                close=fence("\n", TOOL_CALL_END),
                separator=fence("\n"),
            ),
            Results(
                grouped=True,
                item_open=fence("\n", RESPONSE, "\n"),
                item_close=fence("\n", RESPONSE_END),
            ),
        ),
        options=options,
        from_options=layout,
        variants={"4.1": GRANITE_4_1, "3.3": GRANITE_3_3},
        template_variables=template_variables,
    )


FORMAT = declare(layout(GraniteOptions()))
