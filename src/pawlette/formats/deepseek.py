"""DeepSeek V3.1 and R1: fullwidth-bar special tokens, bare system text, calls named outside
their JSON arguments, thinking switched by an option, as DeepSeek's chat templates write them.

The wire format (``<｜...｜>`` are special tokens of the DeepSeek-V3 tokenizer, ``<think>`` and
``</think>`` added tokens)::

    <｜begin▁of▁sentence｜>You are terse.<｜User｜>Weather in Zürich?<｜Assistant｜><think></think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Zürich"}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜><｜tool▁output▁begin｜>{"temp_c": 3}<｜tool▁output▁end｜>3 °C.<｜end▁of▁sentence｜><｜User｜>Thanks<｜Assistant｜><think></think>

Variants (reference: llama.cpp's ``models/templates``):

- ``v3.1`` (the default) and ``v3.1-thinking``: ``deepseek-ai-DeepSeek-V3.1.jinja``.
- ``r1-llama`` (prompt ``<｜Assistant｜><think>\\n``): ``deepseek-ai-DeepSeek-R1-Distill-Llama-8B``;
  ``r1-no-thinking`` (prompt ``<｜Assistant｜><think>\\n</think>``):
  ``...-R1-Distill-Qwen-32B`` by default (a llama.cpp edit), and ``r1`` the same with its
  ``enable_thinking``; ``r1-llamacpp``: ``llama-cpp-deepseek-r1`` (every user turn ends with
  ``<｜end▁of▁sentence｜>``, and the prompt after an answer or the system text alone is the
  one after a user turn).  Past turns are ``<｜Assistant｜>TEXT<｜end▁of▁sentence｜>``
  with no reasoning (the templates cut it: a recorded loss); a model writes
  ``reasoning\\n</think>\\n\\nanswer`` after the prompt, read as llama.cpp reads it (a doubled
  ``<think>`` or an unopened ``</think>`` stays text, with a warning).  Calls are read as R1
  writes them: ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\nARGS\\n```<｜tool▁call▁end｜>``
  (the closing fence also right after the JSON), joined by newlines.

The R1 distills' templates write calls and results with three flags kept over the whole
conversation, two of them never reset; pawlette writes them as the templates do
(:class:`DistillTurns`), byte for byte, so a model is trained on what it saw::

    <｜User｜>Q<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\\n```json\\n{}\\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜><｜Assistant｜><｜end▁of▁sentence｜><｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>R1<｜tool▁output▁end｜>\\n<｜tool▁output▁begin｜>R2<｜tool▁output▁end｜><｜tool▁outputs▁end｜>A<｜end▁of▁sentence｜>

- Only the conversation's first call has the ``<｜Assistant｜><｜tool▁calls▁begin｜>``
  opener: a later calling turn starts ``\\n<｜tool▁call▁begin｜>`` right after what came
  before (a user turn or results).  Each calling turn ends ``<｜tool▁calls▁end｜><｜end▁of▁sentence｜>``
  and its text follows as a turn of its own, ``<｜Assistant｜>TEXT<｜end▁of▁sentence｜>``
  (empty for a turn of calls alone: the templates read Hugging Face's ``""`` for it).
- Only the conversation's first result has ``<｜tool▁outputs▁begin｜>``; later results start
  ``\\n<｜tool▁output▁begin｜>``.  A batch is closed by ``<｜tool▁outputs▁end｜>`` in place of
  the next answer's ``<｜Assistant｜>``, or at the end of the conversation; a user turn does
  not close it; after results there is no generation prompt (only ``<｜tool▁outputs▁end｜>``).
- The text of a turn opened by ``<｜Assistant｜>`` is cut up to its last ``</think>`` (a
  recorded loss where it holds one); after results it is written whole.
- The Llama distill (``r1-llama``) writes calls only for a ``null`` content and then
  concatenates the arguments as a string, which Hugging Face's object arguments refuse; with
  ``""`` it writes the text alone.  pawlette writes the text alone: the calls are a recorded
  loss (``calls="dropped"``), never a refusal.
- Reading: the turn after ``<｜Assistant｜><think>\\n`` is read as above; a completion after a
  prompt ending with ``<｜tool▁outputs▁end｜>`` is an answer.  Whole renders holding calls or
  results do not parse back into their messages (the calling turn's text is a turn of its
  own, a later call has no opener): the layout is for training and prompting as the models
  were trained.

Also for R1:

- **System messages**: the templates keep only the last one, and so does pawlette (the
  others are a recorded loss).
- llama.cpp's template keeps only the text after the last ``</think>`` of an assistant
  message (with or without calls, after results too), and so does pawlette
  (:class:`~pawlette.declare.TextAfter`): what it drops is a recorded loss of the message's
  content; a text it empties is written empty.
- llama.cpp's template writes an answer with no text and no calls as an empty calls block
  (``<｜tool▁calls▁begin｜><｜tool▁calls▁end｜>``), and so does pawlette; read back, it is an
  empty answer.

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
- **Text holding ``</think>``**: the template keeps only the text after the first
  ``</think>`` of an answer without calls that follows no results (a turn of calls, and an
  answer after results, are written whole), and so does pawlette: what it drops is a
  recorded loss of the message's content.

Remaining differences from the templates:

- R1 (llama.cpp's): under llama.cpp's own Jinja engine the template writes the tools as a
  text preamble before the system text and groups results
  (``<｜tool▁outputs▁begin｜>\\n<｜tool▁output▁begin｜>...``), closed with
  ``<｜tool▁outputs▁end｜><｜end▁of▁sentence｜>``; under Hugging Face's ``tojson`` it cannot
  render tools at all.  pawlette writes calls and results in V3.1's layout with R1's call
  pieces, and the tools never (a recorded loss); this layout says so
  (``template_untested``), so detection compares it without tools.
- A message's ``prefix`` field (DeepSeek's prefix completion) is not read.
"""

# ruff: noqa: E501  (the docstring shows the wire format, fullwidth bars included)

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pawlette.declare import (
    Concept,
    Fence,
    Frame,
    Ignored,
    LastSystemPrompt,
    Layout,
    Marker,
    NamedCalls,
    Reasoning,
    Results,
    Switch,
    SystemPrompt,
    TextAfter,
    declare,
    fence,
)
from pawlette.declare.calls import arguments_json
from pawlette.declare.readers import BetweenCallsReader

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
OUTPUTS, OUTPUTS_END = Marker("<｜tool▁outputs▁begin｜>"), Marker("<｜tool▁outputs▁end｜>")

# The R1 distills' pieces (DistillTurns), kept as constants: the writer caches fences by id.
_OPENER, _OUTPUTS_CLOSE = fence(ASSISTANT), fence(OUTPUTS_END)
_FIRST_CALL = fence(CALLS, CALL, "function", SEPARATOR)
_LATER_CALL = fence("\n", CALL, "function", SEPARATOR)
_ARGUMENTS, _CALL_CLOSE = fence("\n```json\n"), fence("\n```", CALL_END)
_CALLS_CLOSE, _END = fence(CALLS_END, EOS), fence(EOS)
_FIRST_RESULT, _LATER_RESULT = fence(OUTPUTS, OUTPUT), fence("\n", OUTPUT)
_RESULT_CLOSE = fence(OUTPUT_END)


@dataclass(frozen=True)
class EmptyAnswer(Concept):
    """llama.cpp's R1 template: an assistant turn with no text and no calls is written as an
    empty calls block (``<｜tool▁calls▁begin｜><｜tool▁calls▁end｜>``, its branch for a turn
    without text); read back, that block is an empty answer.  ``written``: what is written
    in place of the text (inference declares it for any template that writes such a
    stand-in: :mod:`pawlette.infer.empty_texts`)."""

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
        # After the calls' section where the layout has calls (the block is one read as
        # calls); else a state of its own, where only whitespace follows to the turn's end
        # (an inferred layout that writes no calls: pawlette.infer.empty_texts).
        target = "assistant.after_calls"
        if target not in table.states:
            target = table.state("assistant.empty", BetweenCallsReader, "assistant", ends=True)
        for state in ("assistant.head", "assistant.body"):
            table.on(state, table.text(self.written), target)


@dataclass(frozen=True)
class AnswerAfterResults(Concept):
    """The R1 distills' templates answer tool results with ``<｜tool▁outputs▁end｜>`` + TEXT
    and no ``<｜Assistant｜>``: reading after a prompt that ends so starts in the answer (the
    writer never writes it: see the module docstring)."""

    opener: Fence

    def rows(self, table: Table) -> None:
        table.on("outside", table.text(self.opener), "assistant.body")


@dataclass(frozen=True)
class DistillTurns(Concept):
    """The R1 distills' assistant turns and tool results, written as their templates write
    them (see the module docstring): the templates keep three flags over the whole
    conversation (a call was written, a result was written, the last message was a result)
    and never reset the first two.

    - ``calls``: ``"written"`` (the Qwen distill: calls, then ``<｜tool▁calls▁end｜>`` +
      eos, then the turn's text as a turn of its own) or ``"dropped"`` (the Llama distill
      writes calls only for a ``null`` content, and then refuses the objects Hugging Face
      callers pass as arguments: a recorded loss).
    """

    calls: Literal["written", "dropped"] = "written"
    prompt: Fence = ()

    claims: ClassVar[frozenset[str]] = frozenset({"assistant", "tool"})
    handles: ClassVar[frozenset[str]] = frozenset({"calls", "tool_name"})

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    def check(self, out: Render) -> None:
        out.handles("calls", "tool_name")
        for index, message in enumerate(out.messages):
            if message.role == "tool" and message.name is not None:
                out.lose(f"messages[{index}].name", "not written (the call names the tool)")
            if message.role != "assistant" or not message.tool_calls:
                continue
            if self.calls == "dropped":
                out.lose(
                    f"messages[{index}].tool_calls",
                    "dropped (the template writes calls only beside a null content, where it"
                    " refuses object arguments)",
                )

    def write_message(self, out: Render, index: int) -> None:
        messages = out.messages
        message = messages[index]
        out.role, out.index = message.role, index
        out.at(message.role, index)
        if message.role == "tool":
            first = not any(earlier.role == "tool" for earlier in messages[:index])
            out.fence(_FIRST_RESULT if first else _LATER_RESULT, "header")
            out.text(out.message_text(index), "tool_result")
            out.fence(_RESULT_CLOSE, "tool_result")
            out.previous = "tool"
            return
        after_results = out.previous == "tool"
        if message.tool_calls and self.calls == "written":
            called = any(
                earlier.role == "assistant" and earlier.tool_calls for earlier in messages[:index]
            )
            for number, call in enumerate(message.tool_calls):
                if number == 0 and not called:
                    out.fence(_OPENER, "header")
                    out.fence(_FIRST_CALL, "tool_call", trainable=True)
                else:
                    out.fence(_LATER_CALL, "tool_call", trainable=True)
                out.text(call.name, "tool_call", trainable=True)
                out.fence(_ARGUMENTS, "tool_call", trainable=True)
                arguments = arguments_json(call.arguments, index, number)
                out.text(arguments, "tool_call", trainable=True)
                out.fence(_CALL_CLOSE, "tool_call", trainable=True)
            out.fence(_CALLS_CLOSE, "tool_call", trainable=True)
            after_results = False
        out.fence(_OUTPUTS_CLOSE if after_results else _OPENER, "header")
        text = out.message_text(index)
        if not after_results and "</think>" in text:
            out.lose(f"messages[{index}].content", "the text up to its last </think> dropped")
            text = text.rsplit("</think>", 1)[1]
        out.text(text, "content", trainable=True)
        out.fence(_END, "end", trainable=True)
        out.previous = "assistant"

    def turn_open(self, out: Render, index: int) -> Fence | None:
        # Only the generation prompt's turn reaches here (the concept writes the others).
        return _OUTPUTS_CLOSE if out.previous == "tool" else self.prompt

    def write_finish(self, out: Render) -> None:
        if not out.prompt and out.previous == "tool":
            out.fence(_OUTPUTS_CLOSE, "close")

    def jinja_message(self, out: Template, role: str) -> None:
        if role == "tool":
            seen = out.ns("distill_results", "false")
            out.out(f"{{%- if not {seen} -%}}")
            out.fence(_FIRST_RESULT)
            out.out(f"{{%- set {seen} = true -%}}")
            out.out("{%- else -%}")
            out.fence(_LATER_RESULT)
            out.out("{%- endif -%}")
            out.text()
            out.fence(_RESULT_CLOSE)
            out.out('{%- set ns.previous = "tool" -%}')
            return
        after = out.ns("distill_after", "false")
        out.out(f'{{%- set {after} = ns.previous == "tool" -%}}')
        if self.calls == "written":
            called = out.ns("distill_called", "false")
            out.out("{%- if message.tool_calls is defined and message.tool_calls -%}")
            out.out("{%- for call in message.tool_calls -%}")
            out.out(f"{{%- if not {called} -%}}")
            out.fence(_OPENER)
            out.out("{%- generation -%}")
            out.fence(_FIRST_CALL)
            out.out("{%- endgeneration -%}")
            out.out(f"{{%- set {called} = true -%}}")
            out.out("{%- else -%}")
            out.out("{%- generation -%}")
            out.fence(_LATER_CALL)
            out.out("{%- endgeneration -%}")
            out.out("{%- endif -%}")
            out.out("{%- generation -%}")
            out.out("{{- call.function.name -}}")
            out.fence(_ARGUMENTS)
            out.arguments()
            out.fence(_CALL_CLOSE)
            out.out("{%- endgeneration -%}")
            out.out("{%- endfor -%}")
            out.out("{%- generation -%}")
            out.fence(_CALLS_CLOSE)
            out.out("{%- endgeneration -%}")
            out.out(f"{{%- set {after} = false -%}}")
            out.out("{%- endif -%}")
        out.fence_if(after, _OUTPUTS_CLOSE, _OPENER)
        out.out(f"{{%- set text = text_of(message, index, {out.layout.name!r}) -%}}")
        out.out(f"{{%- if not {after} and '</think>' in text -%}}")
        out.out("{%- set text = text.split('</think>')[-1] -%}")
        out.out("{%- endif -%}")
        out.out("{%- generation -%}")
        out.value("text")
        out.fence(_END)
        out.out("{%- endgeneration -%}")
        out.out('{%- set ns.previous = "assistant" -%}')

    def jinja_open(self, out: Template, role: str) -> bool:
        out.fence_if('ns.previous == "tool"', _OUTPUTS_CLOSE, self.prompt)
        return True

    def jinja_finish(self, out: Template) -> None:
        out.fence_if('not add_generation_prompt and ns.previous == "tool"', _OUTPUTS_CLOSE)


Version = Literal["v3.1", "r1", "r1-llamacpp"]


@dataclass(frozen=True)
class DeepseekOptions:
    """``version``: which template's layout (see the module docstring); ``thinking``: the
    generation prompt opens the reasoning block (V3.1's ``thinking`` variable, the R1
    distills' ``enable_thinking``); ``calls``: the R1 distills' calls, ``"written"`` (the Qwen
    distill) or ``"dropped"`` (the Llama distill; see :class:`DistillTurns`)."""

    version: Version = "v3.1"
    thinking: bool = False
    calls: Literal["written", "dropped"] = "written"


THINKING = DeepseekOptions(thinking=True)
R1 = DeepseekOptions(version="r1", thinking=True)
R1_NO_THINKING = DeepseekOptions(version="r1", thinking=False)
R1_LLAMA = DeepseekOptions(version="r1", thinking=True, calls="dropped")
R1_LLAMACPP = DeepseekOptions(version="r1-llamacpp", thinking=True)
# R1's no-thinking variant comes before r1: detection takes the first variant that renders as
# the template, and the Qwen distill renders as both (its enable_thinking is off by default).
VARIANTS = {
    "v3.1": DeepseekOptions(),
    "v3.1-thinking": THINKING,
    "r1-no-thinking": R1_NO_THINKING,
    "r1-llama": R1_LLAMA,
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
            # The template keeps the text after the first </think> of an answer that
            # follows no results.
            TextAfter(occurrence="first", calls=False, after_results=False),
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
        # The template reads thinking, else enable_thinking.
        switches=(Switch("thinking", "thinking", fallback=("enable_thinking",)),),
    )


def r1_layout(options: DeepseekOptions) -> Layout:
    """DeepSeek-R1 and its distills: past turns hold no reasoning; the prompt opens
    ``<think>\\n`` (closed at once without thinking)."""
    opened = fence(ASSISTANT, THINK, "\n")
    prompt = opened if options.thinking else fence(ASSISTANT, THINK, "\n", THINK_END)
    user_end = fence(EOS) if options.version == "r1-llamacpp" else ()
    # llama.cpp's template prompts after an answer or the system text alone as after a user
    # message; the others open no block there.
    prompted = ("user", "assistant", "system") if options.version == "r1-llamacpp" else ("user",)
    return Layout(
        name="deepseek",
        summary="DeepSeek R1: <｜User｜>/<｜Assistant｜>, bare system, <think> opened by the prompt",
        begin=fence(BOS),
        frames={
            "system": Frame(),
            "user": Frame(open=fence(USER), end=user_end),
            "assistant": Frame(
                open=fence(ASSISTANT),
                end=fence(EOS),
                prompt_after=dict.fromkeys(prompted, prompt),
            ),
            "tool": Frame(open=fence(OUTPUT), end=fence(OUTPUT_END)),
        },
        concepts=(
            LastSystemPrompt(placement="gathered"),
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
            *(
                # llama.cpp's keeps the text after the last </think> (an answer it empties
                # is written empty, not as the empty calls block).
                (Results(), TextAfter(occurrence="last"), EmptyAnswer(fence(CALLS, CALLS_END)))
                if options.version == "r1-llamacpp"
                else (
                    AnswerAfterResults(fence(OUTPUTS_END)),
                    DistillTurns(calls=options.calls, prompt=prompt),
                )
            ),
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        template_variables=_variables,
        # R1-Distill-Qwen's template reads enable_thinking; Llama's and llama.cpp's nothing.
        switches=(
            (Switch("thinking", "enable_thinking"),)
            if options.version == "r1" and options.calls == "written"
            else ()
        ),
        # llama.cpp's template cannot render tools under Hugging Face's tojson.
        template_untested=("tools",) if options.version == "r1-llamacpp" else (),
    )


FORMAT = declare(layout(DeepseekOptions()))
