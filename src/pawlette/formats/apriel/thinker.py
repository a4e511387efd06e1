"""Apriel 1.6's layout (``apriel:1.6``): ``<|begin_ROLE|>`` openers, no end marker but the
assistant's ``<|end|>``, ``<s>`` before every system turn, the reasoning instructions in each
system turn, and the reasoning written only in the conversation's last message, before
``[BEGIN FINAL RESPONSE]`` (see the package's docstring for the decisions).

Only the assistant's turn has an end, ``\\n<|end|>`` and a newline, which the template writes
only when another message follows.  A system or tool turn has none: the whitespace the
template writes after its text is in the opener of the turn that follows (``open_after``),
read only after a turn of that role (see :mod:`.final_response`)."""

# ruff: noqa: E501  (the template's texts as it writes them)

from __future__ import annotations

from typing import TYPE_CHECKING

from pawlette.declare import Fence, Frame, Ignored, Layout, Marker, NoPromptAfter, Results, fence

from .calls import IdsBeforeLast
from .final_response import FinalResponse, LastTurnOpen
from .led_system import LedSystem
from .tools import ConcatenatedReprTools

if TYPE_CHECKING:
    from . import AprielOptions

BEGIN = Marker("<s>")
END = Marker("<|end|>")
BEGIN_SYSTEM = Marker("<|begin_system|>")
BEGIN_USER = Marker("<|begin_user|>")
BEGIN_ASSISTANT = Marker("<|begin_assistant|>")
BEGIN_TOOL_RESULT = Marker("<|begin_tool_result|>")

REASONING_PROMPT = (
    "You are a thoughtful, systematic AI assistant from ServiceNow Language Models (SLAM) lab.\n"
    "    Analyze each question carefully, present your reasoning step-by-step, then provide the final\n"
    "    response after the marker [BEGIN FINAL RESPONSE]."
)
REASONING_STEPS = "Here are my reasoning steps:\n"
"""What the generation prompt writes after the opener: the model goes on with its reasoning."""
FINAL_RESPONSE = "\n[BEGIN FINAL RESPONSE]\n"
"""What ends the reasoning: the answer follows."""
TOOLS_OPEN = (
    "\nYou are provided with function signatures within <available_tools></available_tools> XML tags.\n"
    "        You may call one or more functions to assist with the user query.\n"
    "        Don't make assumptions about the arguments. You should infer the argument values from previous\n"
    "        user responses and the system message.\n"
    "        Here are the available tools: \n"
    "        <available_tools>\n"
)
TOOLS_CLOSE = (
    "        \n"
    "        </available_tools>.\n"
    "\n"
    "        Return all function calls as a list of JSON objects within <tool_calls></tool_calls> XML tags.\n"
    "        Each JSON object should contain a function name and arguments as follows:\n"
    "        <tool_calls>[\n"
    '            {"name": <function-name-1>, "arguments": <args-dict-1>},\n'
    '            {"name": <function-name-2>, "arguments": <args-dict-2>},\n'
    "            ...\n"
    "        ]</tool_calls>"
)

SYSTEM_AFTER = "\n"
"""What a system turn writes after its text (and its tools)."""
TOOL_AFTER = "\n\n\n"
"""What a tool result's turn writes after its text (its newline and the template's two blank
lines of layout)."""
TRAILS = {"system": SYSTEM_AFTER, "tool": TOOL_AFTER}


def _opened(*pieces: str | Marker) -> dict[str, Fence]:
    """A turn's openers after a system or tool turn: what that turn writes after its text,
    then ``pieces``."""
    return {role: fence(trail, *pieces) for role, trail in TRAILS.items()}


def layout(options: AprielOptions, variants: dict[str, AprielOptions]) -> Layout:
    from . import layout as family_layout

    system_open = (BEGIN, BEGIN_SYSTEM, "\n" + REASONING_PROMPT)
    user_open = (BEGIN_USER, "\n")
    tool_open = (BEGIN_TOOL_RESULT, "\n")
    assistant_open = ("\n", BEGIN_ASSISTANT, "\n")
    prompt = (*assistant_open, REASONING_STEPS)
    return Layout(
        name="apriel",
        summary="ServiceNow Apriel 1.5/1.6: JSON call lists in <tool_calls>, repr'd tools",
        frames={
            "system": Frame(open=fence(*system_open), open_after=_opened(*system_open)),
            "user": Frame(open=fence(*user_open), open_after=_opened(*user_open)),
            "assistant": Frame(
                open=fence(*assistant_open),
                # The model ends its turn with <|end|> (the template's past turns end so);
                # the template writes no end on the conversation's last message.
                end=fence("\n", END),
                also_end=(fence(END),),
                open_after=_opened(*assistant_open),
                prompt_after={
                    "start": fence(*prompt),
                    "user": fence(*prompt),
                    "system": fence(SYSTEM_AFTER, *prompt),
                    "tool": fence(TOOL_AFTER, *prompt),
                },
            ),
            "tool": Frame(open=fence(*tool_open), open_after=_opened(*tool_open)),
        },
        concepts=(
            LedSystem(always=True, lead=fence("\n"), trail=fence(SYSTEM_AFTER)),
            ConcatenatedReprTools(
                place="system",
                open=fence(TOOLS_OPEN),
                close=fence(TOOLS_CLOSE),
                close_alone=fence(TOOLS_CLOSE),
            ),
            FinalResponse(
                open=fence(REASONING_STEPS), close=fence(FINAL_RESPONSE), prompt="opened"
            ),
            IdsBeforeLast(
                open=fence("\n<tool_calls>"),
                close=fence("</tool_calls>"),
                keys=(("name", "name"), ("arguments", "arguments"), ("id", "id")),
            ),
            Results(),
            LastTurnOpen(after=fence("\n"), trails=TRAILS),
            Ignored(("name",)),
            # The template writes no generation prompt after an answer, asked for or not.
            NoPromptAfter(),
        ),
        options=options,
        from_options=family_layout,
        variants=variants,
        markers_in_text=True,  # <tool_calls> and [BEGIN FINAL RESPONSE] are text
    )
