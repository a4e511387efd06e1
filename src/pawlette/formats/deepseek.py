"""DeepSeek V3.1 and R1: fullwidth-bar special tokens, bare system text, calls named outside
their JSON arguments, thinking switched by an option, as DeepSeek's chat templates write them.

The wire format (``<｜...｜>`` are special tokens of the DeepSeek-V3 tokenizer, ``<think>`` and
``</think>`` added tokens)::

    <｜begin▁of▁sentence｜>You are terse.<｜User｜>Weather in Zürich?<｜Assistant｜><think></think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Zürich"}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜><｜tool▁output▁begin｜>{"temp_c": 3}<｜tool▁output▁end｜>3 °C.<｜end▁of▁sentence｜><｜User｜>Thanks<｜Assistant｜><think></think>

Variants (reference: llama.cpp's ``models/templates``):

- ``v3.1`` (the default) and ``v3.1-thinking``: ``deepseek-ai-DeepSeek-V3.1.jinja``.
- ``r1`` (prompt ``<｜Assistant｜><think>\n``): ``deepseek-ai-DeepSeek-R1-Distill-Llama-8B``
  and ``...-R1-Distill-Qwen-32B`` with ``enable_thinking``; ``r1-no-thinking`` (prompt
  ``<｜Assistant｜><think>\n</think>``): the Qwen distill's default (a llama.cpp edit);
  ``r1-llamacpp``: ``llama-cpp-deepseek-r1`` (every user turn ends with
  ``<｜end▁of▁sentence｜>``).  Past turns are ``<｜Assistant｜>TEXT<｜end▁of▁sentence｜>``
  with no reasoning (the templates cut it: a recorded loss); a model writes
  ``reasoning\n</think>\n\nanswer`` after the prompt, read as llama.cpp reads it (a doubled
  ``<think>`` or an unopened ``</think>`` stays text, with a warning).  Calls are read as R1
  writes them: ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\nARGS\n```<｜tool▁call▁end｜>``
  (the closing fence also right after the JSON), joined by newlines.

Decisions for V3.1:

- **Thinking** is an option (``thinking``, the template's variable of the same name; off by
  default, as the template's).  The generation prompt after a user turn is
  ``<｜Assistant｜><think></think>`` (off) or ``<｜Assistant｜><think>`` (on: the model writes
  ``reasoning</think>answer``).  Past turns after a user turn always hold an empty
  ``<think></think>``: the template never writes ``reasoning_content`` (a recorded loss).
  Reading follows the prompt: under ``thinking`` a completion starts inside the block (text
  before ``</think>`` is reasoning, text without it all reasoning, as vLLM's and llama.cpp's
  DeepSeek V3.1 readers take it).
- **System messages** are gathered, joined by a blank line, and written bare right after the
  bos token (the template gathers every system message wherever it stands).
- **Tools**: the template never writes the request's tools (DeepSeek's model card has the
  caller describe them in the system prompt): a recorded loss, never a refusal.
- **Calls**: ``<｜tool▁calls▁begin｜>`` + per call ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGUMENTS<｜tool▁call▁end｜>``
  + ``<｜tool▁calls▁end｜>``, after the turn's text; no ids (results answer calls by
  position).
- **Results**: each tool message ``<｜tool▁output▁begin｜>TEXT<｜tool▁output▁end｜>``; the
  assistant's answer after results has no opener (it follows the last result directly).
- **Names** are never written (a recorded loss).

Remaining differences from the templates:

- R1: only conversations without tools render as the templates do.  Their call and result
  layouts are broken (Llama-8B's first-call flag is never reset and a single call is never
  closed; results open a batch that a user message never closes; llama.cpp's template
  cannot render tools under Hugging Face's ``tojson``): pawlette writes calls and results in
  the layout above, and the tools never (a recorded loss, as the distills never write them).
  The R1 layouts say so (``template_untested``), so detection compares them without tools.
- R1: the templates keep only the last system message, and so does pawlette (the others
  are a recorded loss).
- R1 (llama.cpp's): under llama.cpp's own Jinja engine the template writes the tools as a
  text preamble before the system text; pawlette does not.
- R1 (llama.cpp's): an answer with no text and no calls is written as an empty calls block
  (``<｜tool▁calls▁begin｜><｜tool▁calls▁end｜>``), as the template writes it, and read back
  as an empty answer.
- R1 (the distills): the text after tool results opens with ``<｜tool▁outputs▁end｜>`` there;
  pawlette reads a completion after a prompt ending so as an answer.

- The template keeps only the text after the first ``</think>`` of a past assistant
  message's content; pawlette writes content as given (identical for content without
  ``</think>``).
- A message's ``prefix`` field (DeepSeek's prefix completion) is not read.
"""

# ruff: noqa: E501  (the docstring shows the wire format, fullwidth bars included)

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pawlette.declare import (
    Concept,
    Fence,
    Frame,
    Ignored,
    Layout,
    Marker,
    NamedCalls,
    Reasoning,
    Results,
    SystemPrompt,
    declare,
    fence,
)

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render

BOS, EOS = Marker("<｜begin▁of▁sentence｜>"), Marker("<｜end▁of▁sentence｜>")
USER, ASSISTANT = Marker("<｜User｜>"), Marker("<｜Assistant｜>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
CALLS, CALLS_END = Marker("<｜tool▁calls▁begin｜>"), Marker("<｜tool▁calls▁end｜>")
CALL, CALL_END = Marker("<｜tool▁call▁begin｜>"), Marker("<｜tool▁call▁end｜>")
SEPARATOR = Marker("<｜tool▁sep｜>")
OUTPUT, OUTPUT_END = Marker("<｜tool▁output▁begin｜>"), Marker("<｜tool▁output▁end｜>")
OUTPUTS_END = Marker("<｜tool▁outputs▁end｜>")


@dataclass(frozen=True)
class EmptyAnswer(Concept):
    """llama.cpp's R1 template: an assistant turn with no text and no calls is written as an
    empty calls block (``<｜tool▁calls▁begin｜><｜tool▁calls▁end｜>``, its branch for a turn
    without text); read back, that block is an empty answer."""

    written: Fence

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    def write_content(self, out: Render, index: int) -> bool:
        if index >= len(out.messages) or out.messages[index].tool_calls:
            return False
        if out.message_text(index):
            return False
        out.fence(self.written, "content", trainable=True)
        return True

    def jinja_content(self, out: Template, role: str) -> bool:
        if role != "assistant":
            return False
        out.out(
            f"{{%- if not message.tool_calls and not text_of(message, index, {out.layout.name!r}) -%}}"
        )
        out.fence(self.written)
        out.out("{%- else -%}")
        out.text()
        out.out("{%- endif -%}")
        return True

    def rows(self, table: Table) -> None:
        for state in ("assistant.head", "assistant.body"):
            table.on(state, table.text(self.written), "assistant.after_calls")


@dataclass(frozen=True)
class AnswerAfterResults(Concept):
    """The R1 distills' templates answer tool results with ``<｜tool▁outputs▁end｜>`` + TEXT
    and no ``<｜Assistant｜>``: reading after a prompt that ends so starts in the answer (the
    writer never writes it: see the module docstring)."""

    opener: Fence

    def rows(self, table: Table) -> None:
        table.on("outside", table.text(self.opener), "assistant.body")


Version = Literal["v3.1", "r1", "r1-llamacpp"]


@dataclass(frozen=True)
class DeepseekOptions:
    """``version``: which template's layout (see the module docstring); ``thinking``: the
    generation prompt opens the reasoning block (V3.1's ``thinking`` variable, the R1
    distills' ``enable_thinking``)."""

    version: Version = "v3.1"
    thinking: bool = False


THINKING = DeepseekOptions(thinking=True)
R1 = DeepseekOptions(version="r1", thinking=True)
R1_NO_THINKING = DeepseekOptions(version="r1", thinking=False)
R1_LLAMACPP = DeepseekOptions(version="r1-llamacpp", thinking=True)
# R1's no-thinking variant comes before r1: detection takes the first variant that renders as
# the template, and the Qwen distill renders as both (its enable_thinking is off by default).
VARIANTS = {
    "v3.1": DeepseekOptions(),
    "v3.1-thinking": THINKING,
    "r1-no-thinking": R1_NO_THINKING,
    "r1": R1,
    "r1-llamacpp": R1_LLAMACPP,
}


def _variables(options: DeepseekOptions) -> Mapping[str, Any]:
    return {"thinking": options.thinking, "enable_thinking": options.thinking}


def layout(options: DeepseekOptions) -> Layout:
    if options.version != "v3.1":
        return r1_layout(options)
    prompt = {"user": fence(ASSISTANT, THINK)} if options.thinking else {}
    return Layout(
        name="deepseek",
        summary="DeepSeek V3.1: <｜User｜>/<｜Assistant｜>, bare system, hybrid thinking option",
        begin=fence(BOS),
        frames={
            "system": Frame(),
            "user": Frame(open=fence(USER)),
            "assistant": Frame(
                open_after={"user": fence(ASSISTANT, THINK, THINK_END)},
                end=fence(EOS),
                prompt_after=prompt,
            ),
            "tool": Frame(open=fence(OUTPUT), end=fence(OUTPUT_END)),
        },
        concepts=(
            SystemPrompt(placement="gathered", joiner="\n\n"),
            Ignored(("tools", "name")),
            Reasoning(
                open=fence(THINK),
                close=fence(THINK_END),
                keep="none",
                prompt="opened" if options.thinking else "",
            ),
            NamedCalls(
                section_open=fence(CALLS),
                section_close=fence(CALLS_END),
                open=fence(CALL),
                arguments_open=fence(SEPARATOR),
                close=fence(CALL_END),
            ),
            Results(),
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        template_variables=_variables,
    )


def r1_layout(options: DeepseekOptions) -> Layout:
    """DeepSeek-R1 and its distills: past turns hold no reasoning; the prompt opens
    ``<think>\n`` (closed at once without thinking)."""
    opened = fence(ASSISTANT, THINK, "\n")
    prompt = opened if options.thinking else fence(ASSISTANT, THINK, "\n", THINK_END)
    user_end = fence(EOS) if options.version == "r1-llamacpp" else ()
    return Layout(
        name="deepseek",
        summary="DeepSeek R1: <｜User｜>/<｜Assistant｜>, bare system, <think> opened by the prompt",
        begin=fence(BOS),
        frames={
            "system": Frame(),
            "user": Frame(open=fence(USER), end=user_end),
            "assistant": Frame(
                open=fence(ASSISTANT), end=fence(EOS), prompt_after={"user": prompt}
            ),
            "tool": Frame(open=fence(OUTPUT), end=fence(OUTPUT_END)),
        },
        concepts=(
            SystemPrompt(placement="gathered", gathered_keep="last"),
            Ignored(("tools", "name")),
            Reasoning(
                open=fence(THINK, "\n"),
                close=fence("\n", THINK_END, "\n\n"),
                keep="none",
                prompt="opened" if options.thinking else "",
            ),
            NamedCalls(
                section_open=fence(CALLS),
                section_close=fence(CALLS_END),
                open=fence(CALL, "function", SEPARATOR),
                arguments_open=fence("\n```json\n"),
                close=fence("\n```", CALL_END),
                separator=fence("\n"),
            ),
            Results(),
            EmptyAnswer(fence(CALLS, CALLS_END))
            if options.version == "r1-llamacpp"
            else AnswerAfterResults(fence(OUTPUTS_END)),
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        template_variables=_variables,
        template_untested=("tools",),
    )


FORMAT = declare(layout(DeepseekOptions()))
