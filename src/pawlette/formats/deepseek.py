"""DeepSeek V3.1: fullwidth-bar special tokens, bare system text, calls named outside their
JSON arguments, hybrid thinking switched by an option, as DeepSeek's chat template writes it.

The wire format (``<｜...｜>`` are special tokens of the DeepSeek-V3 tokenizer, ``<think>`` and
``</think>`` added tokens)::

    <｜begin▁of▁sentence｜>You are terse.<｜User｜>Weather in Zürich?<｜Assistant｜><think></think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Zürich"}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜><｜tool▁output▁begin｜>{"temp_c": 3}<｜tool▁output▁end｜>3 °C.<｜end▁of▁sentence｜><｜User｜>Thanks<｜Assistant｜><think></think>

Decisions (reference: ``deepseek-ai-DeepSeek-V3.1.jinja`` in llama.cpp's
``models/templates``):

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

Remaining differences from the template:

- The template keeps only the text after the first ``</think>`` of a past assistant
  message's content; pawlette writes content as given (identical for content without
  ``</think>``).
- A message's ``prefix`` field (DeepSeek's prefix completion) is not read.
"""

# ruff: noqa: E501  (the docstring shows the wire format, fullwidth bars included)

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pawlette.declare import (
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

BOS, EOS = Marker("<｜begin▁of▁sentence｜>"), Marker("<｜end▁of▁sentence｜>")
USER, ASSISTANT = Marker("<｜User｜>"), Marker("<｜Assistant｜>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
CALLS, CALLS_END = Marker("<｜tool▁calls▁begin｜>"), Marker("<｜tool▁calls▁end｜>")
CALL, CALL_END = Marker("<｜tool▁call▁begin｜>"), Marker("<｜tool▁call▁end｜>")
SEPARATOR = Marker("<｜tool▁sep｜>")
OUTPUT, OUTPUT_END = Marker("<｜tool▁output▁begin｜>"), Marker("<｜tool▁output▁end｜>")


@dataclass(frozen=True)
class DeepseekOptions:
    """``thinking``: the generation prompt opens the reasoning block (the template's
    ``thinking`` variable)."""

    thinking: bool = False


THINKING = DeepseekOptions(thinking=True)


def _variables(options: DeepseekOptions) -> Mapping[str, Any]:
    return {"thinking": options.thinking}


def layout(options: DeepseekOptions) -> Layout:
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
        variants={"v3.1": DeepseekOptions(), "v3.1-thinking": THINKING},
        template_variables=_variables,
    )


FORMAT = declare(layout(DeepseekOptions()))
