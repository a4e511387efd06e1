"""ChatML as Qwen2.5 and Qwen3 write it, with Hermes-style tool calls and Qwen3's reasoning.

The wire format (``<|im_start|>``, ``<|im_end|>``, ``<tool_call>``, ``</tool_call>``,
``<tool_response>``, ``</tool_response>``, ``<think>``, ``</think>`` are special tokens)::

    <|im_start|>system
    You are helpful.

    # Tools

    You may call one or more functions to assist with the user query.

    You are provided with function signatures within <tools></tools> XML tags:
    <tools>
    {"type": "function", "function": {"name": "get_weather", ...}}
    </tools>

    For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
    <tool_call>
    {"name": <function-name>, "arguments": <args-json-object>}
    </tool_call><|im_end|>
    <|im_start|>user
    Weather in Paris?<|im_end|>
    <|im_start|>assistant
    <think>
    The user wants the weather.
    </think>

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call><|im_end|>
    <|im_start|>user
    <tool_response>
    18°C
    </tool_response><|im_end|>
    <|im_start|>assistant
    <think>
    ...

Decisions (reference: Qwen's own templates, ``Qwen-Qwen2.5-7B-Instruct.jinja`` and
``Qwen-Qwen3-0.6B.jinja`` in llama.cpp's ``models/templates``):

- **Qwen3 is the default** (``qwen3()``); ``qwen25()`` is the same layout with Qwen2.5's
  default system prompt ("You are Qwen, created by Alibaba Cloud...") written when the
  conversation has none, and no reasoning block.  The two templates agree on everything
  else (calls, results, tools), which the tests check against both.
- **Tools** are written at the end of the system turn, after the system text and a blank
  line, one ``tojson`` per line (the whole OpenAI tool object, as the template receives it).
- **Calls** are ``<tool_call>\\n{"name": NAME, "arguments": ARGS}\\n</tool_call>``, a newline
  before each one that follows text or another call.  Arguments are written as Jinja's
  ``tojson`` writes the parsed object (``", "``/``": "`` separators, non-ASCII kept): that is
  what the real templates do with the object Hugging Face callers pass.  Call names are
  JSON strings (the templates paste them raw; identical for every name without ``"``/``\\``).
- **Results** are matched to calls by position (the format writes no ids): consecutive tool
  messages become one user turn of ``<tool_response>`` blocks.
- **Reasoning and the prefix rule.**  Qwen3 writes ``<think>\\nR\\n</think>\\n\\n`` only on
  assistant turns *after the last user message*, and on the final assistant turn even when
  it has no reasoning (an empty block); earlier turns lose their reasoning.  So a training
  render and a prompt render are prefixes of each other *within one user query*: for every
  assistant turn after the last user message, rendering the conversation up to that turn
  with ``add_generation_prompt=True`` gives a prefix of the training render (tested).  A turn
  before the last user message is rendered as Qwen3 renders it at inference (no reasoning):
  train on it through a conversation that ends with its own query if its reasoning matters.
- **Verbatim text.**  pawlette never strips: Qwen3 strips newlines around reasoning and
  before the content that follows it; pawlette writes them as given (lossless; the real
  template differs only when reasoning starts or ends with a newline or such content starts
  with one).  Content holding ``</think>`` without ``reasoning_content`` is split by the real
  template; pawlette keeps it as content.  A user message that itself starts with
  ``<tool_response>`` and ends with ``</tool_response>`` is not a query to Qwen3's template.
- **Parsing**: an empty reasoning block is no reasoning (Qwen3 writes one for a final turn
  without reasoning, so the two cannot be told apart); a system turn equal to the default
  prompt, or one that only holds the tools, parses to no message.  ChatML does not escape: from token ids
  markers are exact; from text, message text spelling a marker is read as that marker.
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

from dataclasses import dataclass

from pawlette.declare import (
    Frame,
    JsonCalls,
    Layout,
    Marker,
    Reasoning,
    Results,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)

IM_START, IM_END = Marker("<|im_start|>"), Marker("<|im_end|>")
TOOL_CALL, TOOL_CALL_END = Marker("<tool_call>"), Marker("</tool_call>")
RESPONSE, RESPONSE_END = Marker("<tool_response>"), Marker("</tool_response>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
QWEN25_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

TOOLS_INTRO = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_OUTRO = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within "
)


def frame(role: str) -> Frame:
    return Frame(open=fence(IM_START, f"{role}\n"), end=fence(IM_END), after=fence("\n"))


@dataclass(frozen=True)
class ChatmlOptions:
    """``default_system``: the system text written when there is none (Qwen2.5's)."""

    default_system: str | None = None
    reasoning: bool = True


QWEN3 = ChatmlOptions()
QWEN25 = ChatmlOptions(default_system=QWEN25_SYSTEM, reasoning=False)

REASONING = Reasoning(
    open=fence(THINK, "\n"),
    close=fence("\n", THINK_END, "\n\n"),
    keep="after_last_query",
    empty_on_last=True,
)


def layout(options: ChatmlOptions) -> Layout:
    return Layout(
        name="chatml",
        summary="ChatML (Qwen2.5/Qwen3): <|im_start|>role, <tool_call> JSON, <think>",
        frames={
            **{role: frame(role) for role in ("system", "user", "assistant")},
            "tool": Frame(open=fence(IM_START, "user"), end=fence(IM_END), after=fence("\n")),
        },
        concepts=(
            SystemPrompt(default=options.default_system),
            ToolsBlock(
                place="system",
                open=fence(TOOLS_INTRO),
                item_open=fence("\n"),
                # <tool_call> is a token even inside this text: Qwen's tokenizer matches it there.
                close=fence(
                    TOOLS_OUTRO,
                    TOOL_CALL,
                    TOOL_CALL_END,
                    " XML tags:\n",
                    TOOL_CALL,
                    '\n{"name": <function-name>, "arguments": <args-json-object>}\n',
                    TOOL_CALL_END,
                ),
                separator=fence("\n\n"),
            ),
            *((REASONING,) if options.reasoning else ()),
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
        variants={"qwen2.5": QWEN25},
    )


FORMAT = declare(layout(QWEN3))
