"""SmolLM3 (Hugging Face) as Unsloth's simplified template writes it: ChatML turns, a
metadata system turn that names the reasoning mode, ``/think`` and ``/no_think``.

The wire format (``<|im_start|>``, ``<|im_end|>``, ``<think>``, ``</think>`` are markers)::

    <|im_start|>system
    ## Metadata

    Knowledge Cutoff Date: June 2025
    Reasoning Mode: /think

    ## Custom Instructions

    You are terse.

    <|im_end|>
    <|im_start|>user
    Hi<|im_end|>
    <|im_start|>assistant
    Hello.<|im_end|>

and with thinking off (``smollm3:no-think``, the template's ``enable_thinking=false``) the
mode is ``/no_think`` and every assistant turn, the generation prompt included, opens with an
empty block ``<think>\\n\\n</think>\\n``.

Decisions (reference: ``HuggingFaceTB-SmolLM3-3B.jinja`` in llama.cpp's
``models/templates``, Unsloth's edit of SmolLM3's template without its tool sections):

- **Its own module, on ChatML's turns**: the frame is ChatML's, but its system turn, results
  and reasoning have nothing of Qwen's (:mod:`.chatml`).
- **The system turn is always written**: the metadata header with the mode, then the first
  system message as "custom instructions" (the template removes ``/think`` and
  ``/no_think`` from it and strips its end: recorded losses), or, without one (or with
  nothing left of it), the mode's default text ("You are a helpful AI assistant named
  SmolLM, trained by Hugging Face." and, in ``/think`` mode, its long instructions to
  think).  Parsing that default gives no message.  Later system messages are not written
  (the template skips them: recorded losses).
- **The mode is an option** (``thinking``, the template's ``enable_thinking``).  The
  template also lets a flag in the system text switch it; pawlette refuses a flag that asks
  for the other mode than its option (the declaration's turns depend on the mode), naming
  the variant to use.
- **Reasoning** is never written (the template drops ``reasoning_content``: a recorded
  loss); in ``/no_think`` mode every assistant turn has the empty block.  A completion's
  ``<think>...</think>`` is read as reasoning.
- **Assistant text** is written without the newlines at its start (the template's
  ``lstrip("\\n")``: a recorded loss when it changes anything).
- **Tools, calls and results**: the template ignores the tools and drops calls (recorded
  losses); a tool result is written as a user turn (and reads back as one).

Remaining differences from the template: message content given as parts is written as its
text, where the template writes nothing for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    Reasoning,
    ResultsAsUser,
    Switch,
    SystemPrompt,
    declare,
    fence,
)

from .texts import SmolTexts

IM_START, IM_END = Marker("<|im_start|>"), Marker("<|im_end|>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
IDENTITY = "You are a helpful AI assistant named SmolLM, trained by Hugging Face."
THINKING_TEXT = (
    " Your role as an assistant involves thoroughly exploring questions through a systematic "
    "thinking process before providing the final precise and accurate solutions. This requires "
    "engaging in a comprehensive cycle of analysis, summarizing, exploration, reassessment, "
    "reflection, backtracking, and iteration to develop well-considered thinking process. "
    "Please structure your response into two main sections: Thought and Solution using the "
    "specified format: "
)
THINKING_END = (
    " Solution section. In the Thought section, detail your reasoning process in steps. Each "
    "step should include detailed considerations such as analysing questions, summarizing "
    "relevant findings, brainstorming new ideas, verifying the accuracy of the current steps, "
    "refining any errors, and revisiting previous steps. In the Solution section, based on "
    "various attempts, explorations, and reflections from the Thought section, systematically "
    "present the final solution that you deem correct. The Solution section should be logical, "
    "accurate, and concise and detail necessary steps needed to reach the conclusion."
)


@dataclass(frozen=True)
class SmolOptions:
    """``thinking``: the reasoning mode (``/think``; False: ``/no_think``), the template's
    ``enable_thinking``."""

    thinking: bool = True


NO_THINK = SmolOptions(thinking=False)


def frame(role: str, end: tuple[Any, ...] = ()) -> Frame:
    return Frame(open=fence(IM_START, f"{role}\n"), end=(*end, IM_END), after=fence("\n"))


def template_variables(options: SmolOptions) -> Mapping[str, Any]:
    return {"enable_thinking": options.thinking}


def layout(options: SmolOptions) -> Layout:
    mode = "/think" if options.thinking else "/no_think"
    default = (
        # <think> and </think> spelled in the text: markers the system text holds.
        fence(IDENTITY + THINKING_TEXT, THINK, " Thought section ", THINK_END, THINKING_END)
        if options.thinking
        else fence(IDENTITY)
    )
    empty_block = fence(THINK, "\n\n", THINK_END, "\n")
    return Layout(
        name="smollm3",
        summary="SmolLM3: ChatML turns, a metadata system turn, /think and /no_think",
        frames={
            "system": frame("system", fence("\n\n")),
            "user": frame("user"),
            "assistant": frame("assistant"),
        },
        concepts=(
            SystemPrompt(
                default=default,
                always=True,
                placement="first_kept",
                preamble=fence(
                    "## Metadata\n\nKnowledge Cutoff Date: June 2025\nReasoning Mode: ",
                    mode,
                    "\n\n## Custom Instructions\n\n",
                ),
            ),
            Reasoning(
                open=fence(THINK, "\n"),
                close=fence("\n", THINK_END, "\n"),
                keep="none",
                absent=() if options.thinking else empty_block,
                prompt="" if options.thinking else "empty",
            ),
            SmolTexts(thinking=options.thinking, default=default),
            Ignored(("name", "tools", "calls")),
            ResultsAsUser(),
        ),
        options=options,
        from_options=layout,
        variants={"no-think": NO_THINK},
        template_variables=template_variables,
        switches=(Switch("thinking", "enable_thinking"),),
    )


FORMAT = declare(layout(SmolOptions()))
