"""IBM Granite 4.0 and 4.1: Granite's role frame with Hermes-style JSON tool calls.

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

Remaining differences from the templates: the ``documents`` variable (a retrieval block in
the system turn) has no option; a ``developer`` message is written as a system message,
where the templates drop it silently.  Whether Granite's tokenizer holds ``<tool_call>`` and
its kin as single tokens is not checked here: pawlette reads them as markers either way
(from text, a message spelling one is read as that marker, as ChatML does).
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

from dataclasses import dataclass

from pawlette.declare import (
    Frame,
    Ignored,
    JsonCalls,
    Layout,
    Marker,
    Results,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)

START_OF_ROLE, END_OF_ROLE = Marker("<|start_of_role|>"), Marker("<|end_of_role|>")
END_OF_TEXT = Marker("<|end_of_text|>")
TOOL_CALL, TOOL_CALL_END = Marker("<tool_call>"), Marker("</tool_call>")
RESPONSE, RESPONSE_END = Marker("<tool_response>"), Marker("</tool_response>")
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


@dataclass(frozen=True)
class GraniteOptions:
    """``default_system``: the system text written when the conversation has neither a
    system message nor tools (Granite 4.0's; None: no system turn then, Granite 4.1)."""

    default_system: str | None = GRANITE_4_0_SYSTEM


GRANITE_4_1 = GraniteOptions(default_system=None)


def frame(role: str) -> Frame:
    return Frame(
        open=fence(START_OF_ROLE, role, END_OF_ROLE), end=fence(END_OF_TEXT), after=fence("\n")
    )


def layout(options: GraniteOptions) -> Layout:
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
        variants={"4.1": GRANITE_4_1},
    )


FORMAT = declare(layout(GraniteOptions()))
