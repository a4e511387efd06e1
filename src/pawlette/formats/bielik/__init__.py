"""Bielik 11B v3 (SpeakLeash) as its chat template writes it: ChatML turns after ``<s>``,
the tools as a JSON array in the system turn, Hermes-like JSON calls in ``<tool_call>``,
results after ``<|function_output|>`` in a user turn.

The wire format (``<s>``, ``<|im_start|>``, ``<|im_end|>``, ``<tool_call>``,
``</tool_call>``, ``<|function_output|>``, ``<think>``, ``</think>`` are markers;
``<|function_list|>`` is text of the tools block)::

    <s><|im_start|>system
    Jesteś pomocny.

    Masz dostęp do następujących narzędzi. Definicje narzędzi znajdują się poniżej wewnątrz znaczników <|function_list|>:
    <|function_list|>
    [{"type": "function", "function": {"name": "get_weather", ...}},
    {"type": "function", "function": {"name": "get_time", ...}}]
    <|function_list|>

    Aby wywołać narzędzie, użyj formatu <tool_call>{"name": "nazwa_narzędzia", "arguments": {"argument": "wartość"}}</tool_call>. Wyniki działania narzędzi zostaną przekazane z markerem <|function_output|>.
    <|im_end|>
    <|im_start|>user
    Pogoda w Paryżu?<|im_end|>
    <|im_start|>assistant
    <think>
    Sprawdzę pogodę.
    </think>

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call><|im_end|>
    <|im_start|>user
    <|function_output|>18°C<|im_end|>
    <|im_start|>assistant
    W Paryżu jest 18°C.<|im_end|>

Decisions (reference: ``Bielik-11B-v3.0-Instruct.jinja`` in llama.cpp's ``models/templates``;
the model's tokenizer declares ``<s>`` as ``bos_token`` and ``<|im_end|>`` as ``eos_token``):

- **Its own family, on ChatML's frame**: the turns are ChatML's, but the begin token, the
  tools block, the calls' layout, the results and the reasoning all differ from Qwen's
  (:mod:`.chatml`) and from Hermes' (:mod:`.hermes`).
- **System turn**: the first message's text when it is a system message, then the tools
  block when the request has tools.  Without either there is no system turn (an empty
  first system message is none).  The block starts with a blank line even when there is
  no system text.  A system message anywhere but first is dropped (a recorded loss: the
  template skips every later one).
- **Tools**: one JSON array between two ``<|function_list|>``, the whole OpenAI tool
  objects as ``tojson`` writes them, separated by ``,\\n``; reading gives the tools back.
- **Calls**: each call is ``\\n<tool_call>\\n{"name": NAME, "arguments": ARGS}\\n</tool_call>``
  (a newline before each, also the first of a turn without text), after the turn's text.
  Arguments as Jinja's ``tojson`` of the parsed object; names as JSON strings (the template
  pastes them raw: identical for every name without ``"`` or ``\\``).  No ids: results
  answer calls by position.
- **Results**: a run of tool messages is one user turn, each result after
  ``<|function_output|>`` with nothing between them.
- **Reasoning** is written on every assistant turn that has it (none is dropped),
  ``<think>\\nR\\n</think>\\n`` before the text, the reasoning without the whitespace at its
  ends.  The assistant text is written without the whitespace at its start (the
  template's ``lstrip()``; a recorded loss), with or without reasoning.
- **Thinking**: the format writes the template with ``enable_thinking`` off, its default.
  Switched on, the template adds Polish instructions to the system turn (when it writes
  one) and opens ``<think>\\n`` in the generation prompt; no option of this format writes
  that.
- **Dropped fields** (recorded losses, never refusals): a message's ``name``, a tool
  message's ``name``.
- **Reading**, as vLLM's ``hermes`` parser and llama.cpp's Hermes handler read
  ``<tool_call>`` JSON: the newlines inside and between calls are optional, text before the
  calls is content, ``<think>X</think>`` without its newlines is reasoning, and a last call
  whose ``</tool_call>`` never comes is a call when its object is whole (an engine may cut
  the close as a stop string).  A call that is not one JSON object with ``name`` and
  ``arguments`` keeps the turn's calls as content, with a warning (vLLM's parser then
  returns the whole output as content).

Remaining differences from the template:

- **A first system message beside results** (a bug of the template's, not a layout): the
  template loops over ``messages[loop_start_index:]`` (from 1 after a system message) but
  looks a result's neighbours up in the whole list by the loop's position,
  ``messages[loop.index0 - 1]`` and ``messages[loop.index0 + 1]``, one place off.  With a
  first system message, the result at ``messages[i]`` opens ``<|im_start|>user\\n`` unless
  ``messages[i - 2]`` is a result (not unless the message before it is), and closes with
  ``<|im_end|>\\n`` only when it is the last message (the neighbour it looks at is itself):
  three results after a turn of calls come as ``<|function_output|>A<|im_start|>user\\n
  <|function_output|>B<|function_output|>C<|im_start|>assistant``, and a lone result after a
  turn that follows results as ``</tool_call><|im_end|>\\n<|function_output|>D``, in no turn.
  Without a system message the same loop writes one closed user turn per run of results,
  and so does pawlette, with or without one (a layout that changes with the presence of a
  system message, and leaves results in no turn, is no format a model is taught): these
  are the only generated conversations it renders differently.
- **Content holding ``<think>`` and ``</think>``** without ``reasoning_content`` is kept as
  content; the template splits it into reasoning (``{%- if not reasoning_content and
  '<think>' in content and '</think>' in content %}``: the reasoning is what lies between
  the last ``<think>`` before the first ``</think>`` and it, the content what follows that
  ``</think>``; text before ``<think>`` is dropped) and writes the reasoning block from it.
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
    declare,
    fence,
)

from .content import LeadTrimmed
from .reasoning import GivenReasoning
from .tools import LinedToolArray

BEGIN = Marker("<s>")
IM_START, IM_END = Marker("<|im_start|>"), Marker("<|im_end|>")
# Text, not a marker: it only ever stands inside the tools block's fences, where a lone
# special token would split the fence it belongs to.
FUNCTION_LIST = "<|function_list|>"
FUNCTION_OUTPUT = Marker("<|function_output|>")
TOOL_CALL, TOOL_CALL_END = Marker("<tool_call>"), Marker("</tool_call>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")

# What Python's ``str.strip()`` removes, as Reasoning.trim spells it.
WHITESPACE = "".join(character for character in map(chr, range(0x3001)) if character.isspace())

TOOLS_OPEN = fence(
    "\n\nMasz dostęp do następujących narzędzi. Definicje narzędzi znajdują się poniżej "
    "wewnątrz znaczników ",
    FUNCTION_LIST,
    ":\n",
    FUNCTION_LIST,
    "\n",
)
TOOLS_CLOSE = fence(
    "\n",
    FUNCTION_LIST,
    "\n\nAby wywołać narzędzie, użyj formatu ",
    TOOL_CALL,
    '{"name": "nazwa_narzędzia", "arguments": {"argument": "wartość"}}',
    TOOL_CALL_END,
    ". Wyniki działania narzędzi zostaną przekazane z markerem ",
    FUNCTION_OUTPUT,
    ".\n",
)


@dataclass(frozen=True)
class BielikOptions:
    """Bielik's template reads ``enable_thinking`` (off unless the caller sets it); the
    declared format writes the template with it off."""


def frame(role: str) -> Frame:
    return Frame(open=fence(IM_START, f"{role}\n"), end=fence(IM_END), after=fence("\n"))


def layout(options: BielikOptions) -> Layout:
    return Layout(
        name="bielik",
        summary="Bielik 11B v3: ChatML after <s>, <|function_list|> tools, <tool_call> JSON",
        begin=fence(BEGIN),
        frames={
            **{role: frame(role) for role in ("system", "user", "assistant")},
            "tool": Frame(open=fence(IM_START, "user\n"), end=fence(IM_END), after=fence("\n")),
        },
        concepts=(
            SystemPrompt(placement="first_kept", empty_first="absent"),
            LinedToolArray(place="system", open=TOOLS_OPEN, close=TOOLS_CLOSE),
            GivenReasoning(
                open=fence(THINK, "\n"),
                close=fence("\n", THINK_END, "\n"),
                keep="all",
                trim=WHITESPACE,
            ),
            LeadTrimmed(roles=("assistant",)),
            Ignored(("name",)),
            # vLLM's hermes parser reads a last call whose close never comes (Hermes' concept).
            JsonCalls(
                open=fence("\n", TOOL_CALL, "\n"),
                close=fence("\n", TOOL_CALL_END),
                close_optional=True,
            ),
            Results(grouped=True, item_open=fence(FUNCTION_OUTPUT)),
        ),
        options=options,
        from_options=layout,
    )


FORMAT = declare(layout(BielikOptions()))
