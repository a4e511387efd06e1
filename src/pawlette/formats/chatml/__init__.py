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
  In a conversation without a user message no turn writes a block, not even the final
  turn's empty one: the template takes the last message as the last query
  (``Reasoning(no_query="dropped")``); the reasoning is a recorded loss.
- **Trimmed text.**  Qwen3 writes a turn's reasoning without the newlines at its ends and
  the content after the block without the newlines at its start; pawlette writes them as
  Qwen3 does and reports the change as a loss (``Reasoning(trim="\\n")``).  An assistant
  message without ``reasoning_content`` whose content holds ``</think>`` is written as the
  template writes it: the text before the first ``</think>`` (after its ``<think>``) is the
  reasoning, the text after the last one the content (``Reasoning(in_content="unset")``; text
  the split drops is a recorded loss).  A user message that itself starts with ``<tool_response>`` and ends with
  ``</tool_response>`` (results a client sends as a user message) is not taken as the last
  query, as Qwen3's template takes none such (``Reasoning(not_query=...)``).
- **QwQ** (``chatml:qwq``): no default system text; with tools the system turn starts with
  a blank line even without system text; no turn writes reasoning (a documented loss); the
  generation prompt opens ``<think>\\n`` (``thinking=False``: ``<think>\\n</think>``, the
  template's ``enable_thinking``), so a completion is read as ``reasoning</think>answer``.
  A past assistant turn's content (any but the conversation's last message) is written from
  after its last ``</think>``, without newlines at its start, as QwQ's template cuts it
  (``TextAfter(last=False, strip="\\n")``; a recorded loss).  A training render does not extend the prompt render (the prompt opens a block
  no past turn holds): that is the template's own shape.
- **MiMo-VL** (``chatml:mimo-vl``): Qwen2.5's template with MiMo's default system text
  ("You are MiMo, an AI assistant developed by Xiaomi.").
- **Qwen3-Coder** (``chatml:qwen3-coder``, declared in :mod:`.xml`): calls as XML tags,
  ``<tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nVALUE\\n</parameter>\\n</function>\\n</tool_call>``
  (``XmlCalls``): a string value as it is, an object or array as JSON, any other value as
  Python writes it (``True``, ``None``: the template's ``| string``); reading types each
  value by the tool's schema (``True`` and ``true`` both read as a boolean).  Calls follow
  each other after a newline, and text before them after a blank line; that text is
  trimmed (a recorded loss), the text of other turns is written as given.  The tools are
  described as XML tags (``<function>\\n<name>...``, :mod:`.xml_tools`) after the system
  text and a blank line; with tools and no system message the system text is "You are
  Qwen, a helpful AI assistant that can interact with a computer to solve tasks.".  Results
  are ``<tool_response>\\nRESULT\\n</tool_response>\\n`` in one user turn.  No reasoning
  (a recorded loss).  ``<tools>`` is written as text, as for Qwen3 (Qwen's tokenizer here
  has no such token).  A call the model writes without its ``<tool_call>`` opener stays
  text, with a warning (llama.cpp takes the first such call: pawlette reads what the
  template writes and its grammar allows).
- **Qwen3.5** (``chatml:qwen3.5``, declared in :mod:`.xml`): Qwen3-Coder's calls, with the
  tools as JSON lines (``<tools>\\n{...}\\n</tools>`` and Qwen3.5's instructions) first in the
  system turn, then a blank line and the system text when there is one.  A system message
  is only first: a later one is refused, as the template refuses it.  Every text is
  trimmed (system, user, assistant, reasoning, tool results: recorded losses).  Every
  assistant turn after the last user message writes ``<think>\\nR\\n</think>\\n\\n``, empty
  when it has no reasoning (``Reasoning(empty_after_last_query=True)``); earlier turns lose
  their reasoning.  A conversation without a user message is refused, as the template
  refuses it (``Reasoning(no_query="refused")``); a user message whose trimmed text starts
  with ``<tool_response>`` and ends with ``</tool_response>`` is no user query to it
  (``Reasoning(not_query_trimmed=True)``).  The prompt opens ``<think>\\n``, so a completion is read from inside the
  block (``thinking=False``, the template's ``enable_thinking``: ``<think>\\n\\n</think>\\n\\n``).
  A call opening inside the block ends it; one newline between text and a call reads as
  the template's blank line.  Image and video parts are refused (the template writes its
  vision tokens for them).  Content holding ``</think>`` without ``reasoning_content`` is
  split into reasoning and content as the template splits it (``in_content="unset"``).
  Differences that remain: a conversation whose
  only user messages are ``<tool_response>...</tool_response>`` texts is rendered (the
  template refuses it); a system message of
  whitespace alone still gets the blank line after the tools.
- **Nemotron 3 Nano** (``chatml:nemotron-3-nano``, declared in :mod:`.xml`): Qwen3-Coder's
  calls, each followed by a newline, and its XML tools block with ``enum`` and
  ``required`` placed as Nemotron's template places them, after the system text and a
  blank line.  A system turn is always written (empty without a system message and
  tools).  Every assistant turn writes ``<think>\\nR\\n</think>\\n`` before its text, or
  ``<think></think>`` without reasoning (and on turns before the last user message, whose
  reasoning is dropped: ``truncate_history_thinking``, the template's variable, False
  keeps it); the text is trimmed at its end, with the newlines the template's trimming
  leaves (:mod:`.nemotron`).  The prompt opens ``<think>\\n`` (``thinking=False``:
  ``<think></think>``).  With thinking on, a turn without reasoning does not extend the
  prompt (``<think></think>`` where the prompt opened ``<think>\\n``): the template's own
  shape.  Content holding ``<think>`` or ``</think>`` without ``reasoning_content`` is
  written as the template writes it: as it is, trimmed, without ``<think></think>``; on a
  turn before the last user message the template cuts it (after its last ``</think>``, or
  in a turn of calls without one before its first ``<think>``) behind ``<think></think>``
  (a recorded loss).  Reasoning of whitespace alone is written as no reasoning, as the
  template does, and reads back as none.
- **Step 3.5 Flash** (``chatml:stepfun3.5``, declared in :mod:`.xml`; reference:
  ``StepFun3.5-Flash.jinja``): Qwen3-Coder's calls, written right after the turn's text and
  right after each other (no newline between them), the text as given.  The tools are JSON
  lines (``<tools>\\n{...}\\n</tools>``, "in JSONSchema format", and Step's shorter
  instructions) after the system text and a blank line; no default system text.  Results
  are ``<tool_response>RESULT</tool_response>``, side by side, in one ``tool_response`` turn.
  Every assistant turn after the last user message writes ``<think>\\nR\\n</think>\\n``,
  empty when it has no reasoning (the reasoning as given, not trimmed); earlier turns lose
  their reasoning, and so do all turns of a conversation without a user message (no block:
  ``Reasoning(no_query="dropped")``; a user message of results, ``<tool_response>...
  </tool_response>``, is no query to it).  The prompt always opens ``<think>\\n`` (the template has no switch, so
  ``thinking`` changes nothing), so a completion is read from inside the block; a call
  opening inside the block ends it.  Reading types each value by
  the tool's schema; calls separated by a newline read as the same calls; a bare
  ``<function=...>`` block without ``<tool_call>`` stays text (vLLM reads it as a call:
  pawlette reads what the template writes and its grammar allows).  Differences that
  remain: the template writes ``bos_token`` first, whose value is not known (Step's
  ``tokenizer_config.json`` was not found), so the format writes nothing there; a later system message named ``observation`` is written as ``system`` (the template
  writes the role ``observation``: a message's ``name`` is a recorded loss here as in every
  ChatML variant); image parts are refused (the template writes ``<im_patch>`` for them).
- **Thinking off** (``thinking=False``, ``enable_thinking=false``): Qwen3's prompt writes an
  empty block.
- **Dropped fields**: neither template writes a message's ``name`` and Qwen2.5's writes no
  reasoning: both are reported losses (``Ignored``), never refusals.
- **Parsing**: an empty reasoning block is no reasoning (Qwen3 writes one for a final turn
  without reasoning, so the two cannot be told apart); a system turn equal to the default
  prompt, or one that only holds the tools, parses to no message.  ChatML does not escape: from token ids
  markers are exact; from text, message text spelling a marker is read as that marker.
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from pawlette.declare import (
    Frame,
    Ignored,
    JsonCalls,
    Layout,
    Marker,
    Reasoning,
    Results,
    SystemPrompt,
    TextAfter,
    ToolsBlock,
    declare,
    fence,
)
from pawlette.errors import FormatError

from .xml import THINKING, TOOL_RESPONSE_TEXT

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
    """The options of the ChatML family.

    - ``default_system``: the system text written when there is none (Qwen2.5's).
    - ``reasoning``: Qwen3's reasoning blocks on the turns after the last query.
    - ``think_prompt``: QwQ's: the generation prompt opens ``<think>`` and no past turn
      writes its reasoning.
    - ``thinking``: the template's ``enable_thinking``; False closes the block in the
      generation prompt (Qwen3: an empty block; QwQ: ``<think>\\n</think>``).
    - ``xml``: the template whose calls are Qwen3-Coder's XML this option set follows
      (``"qwen3-coder"``, ``"qwen3.5"``, ``"nemotron-3-nano"``, ``"stepfun3.5"``; ``""``: the JSON calls
      above).
    - ``truncate_history_thinking``: Nemotron 3's template variable: turns before the last
      user message lose their reasoning (False: every turn keeps it).
    """

    default_system: str | None = None
    reasoning: bool = True
    think_prompt: bool = False
    thinking: bool = True
    xml: Literal["", "qwen3-coder", "qwen3.5", "nemotron-3-nano", "stepfun3.5"] = ""
    truncate_history_thinking: bool = True


QWEN3 = ChatmlOptions()
QWEN25 = ChatmlOptions(default_system=QWEN25_SYSTEM, reasoning=False)
QWQ = ChatmlOptions(reasoning=False, think_prompt=True)
MIMO_SYSTEM = "You are MiMo, an AI assistant developed by Xiaomi."
MIMO_VL = ChatmlOptions(default_system=MIMO_SYSTEM, reasoning=False)
QWEN3_CODER = ChatmlOptions(reasoning=False, xml="qwen3-coder")
QWEN35 = ChatmlOptions(xml="qwen3.5")
NEMOTRON3_NANO = ChatmlOptions(xml="nemotron-3-nano")
STEPFUN35 = ChatmlOptions(xml="stepfun3.5")
VARIANTS = {
    "qwen2.5": QWEN25,
    "qwq": QWQ,
    "mimo-vl": MIMO_VL,
    "qwen3-coder": QWEN3_CODER,
    "qwen3.5": QWEN35,
    "nemotron-3-nano": NEMOTRON3_NANO,
    "stepfun3.5": STEPFUN35,
}

REASONING = Reasoning(
    open=fence(THINK, "\n"),
    close=fence("\n", THINK_END, "\n\n"),
    keep="after_last_query",
    no_query="dropped",
    not_query=TOOL_RESPONSE_TEXT,
    empty_on_last=True,
    trim="\n",
    in_content="unset",
)


def reasoning(options: ChatmlOptions) -> tuple[Reasoning, ...]:
    if options.think_prompt:
        # QwQ: the prompt opens the block (the model writes ``reasoning\\n</think>\\n\\n``);
        # with thinking off it closes it at once, ``<think>\\n</think>``.
        if options.thinking:
            return (
                Reasoning(
                    open=fence(THINK, "\n"),
                    close=fence("\n", THINK_END, "\n\n"),
                    keep="none",
                    prompt="open",
                ),
            )
        return (
            Reasoning(open=fence(THINK, "\n"), close=fence(THINK_END), keep="none", prompt="empty"),
        )
    if not options.reasoning:
        return ()
    return (REASONING if options.thinking else replace(REASONING, prompt="empty"),)


def variant_layout(options: ChatmlOptions) -> Layout:
    """The layout of any option set: the XML-call templates are declared in :mod:`.xml`."""
    if options.xml:
        from .xml import XML_LAYOUTS

        if options.xml not in XML_LAYOUTS:
            raise FormatError(
                f"chatml: options.xml: {options.xml!r}; expected '' or one of "
                + ", ".join(XML_LAYOUTS)
            )
        return XML_LAYOUTS[options.xml](options)
    return layout(options)


def layout(options: ChatmlOptions) -> Layout:
    if options.xml:
        return variant_layout(options)
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
                # QwQ writes the blank line before the tools even without system text.
                open=fence("\n\n", TOOLS_INTRO) if options.think_prompt else fence(TOOLS_INTRO),
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
                separator=() if options.think_prompt else fence("\n\n"),
            ),
            *reasoning(options),
            # QwQ's template writes a past turn's text after its last </think>, without the
            # newlines at its start (not the conversation's last message).
            *((TextAfter(last=False, strip="\n"),) if options.think_prompt else ()),
            # No template writes a message's name; Qwen2.5's never writes reasoning.
            Ignored(
                ("name",) if options.reasoning or options.think_prompt else ("name", "reasoning")
            ),
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
        from_options=variant_layout,
        variants=VARIANTS,
        template_variables=lambda options: {"enable_thinking": options.thinking},
        # Qwen3's and QwQ's templates read enable_thinking; Qwen2.5's and MiMo-VL's nothing.
        switches=(THINKING,) if options.reasoning or options.think_prompt else (),
    )


FORMAT = declare(layout(QWEN3))
