"""LFM2 and LFM2.5 (Liquid AI): ChatML turns, the tools as one JSON list in the system turn,
calls as one Python list of calls.

The wire format of the default, LFM2.5-8B-A1B (every ``<|...|>`` is a special token;
``<think>`` and ``</think>`` too)::

    <|startoftext|><|im_start|>system
    You are terse.
    List of tools: [{"type": "function", "function": {"name": "get_weather", ...}}]<|im_end|>
    <|im_start|>user
    Weather in Paris?<|im_end|>
    <|im_start|>assistant
    <think>The user wants the weather.</think><|tool_call_start|>[get_weather(city='Paris')]<|tool_call_end|><|im_end|>
    <|im_start|>tool
    18°C<|im_end|>
    <|im_start|>assistant

LFM2 writes the list as ``List of tools: <|tool_list_start|>[...]<|tool_list_end|>`` and a
result as ``<|tool_response_start|>18°C<|tool_response_end|>``.

Decisions (references: ``LFM2-8B-A1B.jinja``, ``LFM2.5-Instruct.jinja`` and
``LFM2.5-8B-A1B.jinja`` in llama.cpp's ``models/templates``):

- **Variants**: the default is LFM2.5-8B-A1B's template, the one that writes a past
  turn's calls and reasoning; ``lfm2:lfm2-8b-a1b`` (LFM2) wraps the tool list in
  ``<|tool_list_start|>``/``<|tool_list_end|>`` and each result in
  ``<|tool_response_start|>``/``<|tool_response_end|>`` and writes neither calls nor
  reasoning; ``lfm2:lfm2.5-instruct`` writes the tools and results bare, as the default
  does, and neither calls nor reasoning.
- **System turn**: the first system message's text, then (with tools) a newline when that
  text is not empty and ``List of tools: [...]``: the OpenAI tool objects as one JSON list
  (``tojson``, ``", "`` between them).  No system text and no tools: no system turn (an
  empty first system message is no turn).  Later system messages are turns of their own.
- **Calls**: ``<|tool_call_start|>[f(a='x', n=1), g()]<|tool_call_end|>`` right after the
  turn's text (:class:`.calls.Lfm2Calls`: Breeze's Python call lists).  LFM2's and
  LFM2.5-Instruct's templates read only a turn's ``content``: they never write
  ``tool_calls``, so those variants drop a past turn's calls (a recorded loss); the model's
  calls are read and constrained all the same.  No ids: results answer calls by position.
- **Arguments** (the default) are spelt as LFM2.5-8B-A1B's template spells them, by the
  writer, the reader, the grammar and the exported template alike: a string raw between
  single quotes, with no escape (``origin='O'Hare'``, ``path='C:\\temp'``, a newline as
  it is); an object as ``tojson`` writes it (``{"k": true, "n": null}``); anything else as
  Python's ``str()`` (a list as the ``repr`` of its items, ``['C:\\\\temp', "O'Hare",
  {'minutes': 57}]``; ``True``, ``None``, ``1e-05``).  Nothing in a raw string says where
  it ends, so the reader ends it at the first ``'`` after which the call goes on: ``)``, or
  ``,`` then a name and ``=`` (``a='x', b c', d=1`` gives ``x', b c``).  The writer
  refuses, with an error naming the argument, a string in which a ``'`` is followed by
  ``'``, ``)`` or ``,``, or comes last (``print('x')``, ``'a', 'b'``, ``it''s``): the
  template writes it, but the reader would end ``print('x')`` early, and the grammar,
  which must accept every turn the writer writes, cannot allow the others: llguidance's
  lexer is greedy, so a string's ``'`` must tell by the next character alone whether it
  ends the string.  LFM2's and LFM2.5-Instruct's
  variants (``template_arguments=False``) read and constrain every argument as a Python
  literal, ``repr``'s spelling.
- **Results**: each tool message a ``tool`` turn of its own.
- **Ends**: ``<|im_end|>`` ends the assistant's turn; ``<|endoftext|>`` ends it too when a
  model writes it (an end-of-generation token, on which llama.cpp stops).
- **Reasoning**: the model writes ``<think>...</think>`` before its answer, read as the
  reasoning (llama.cpp's LFM2 handlers read it so).  LFM2.5-8B-A1B's template writes
  ``<think>R</think>`` on the assistant turns after the last user message (from the
  ``thinking`` field transformers fills from ``reasoning_content``; an empty text gets an
  empty block, read back as none; its ``preserve_thinking`` keeps every turn's, which
  pawlette does not offer); earlier turns lose it.  LFM2's and LFM2.5-Instruct's templates
  never write it (a recorded loss).  Names are not written (a recorded loss).  A past
  answer's content holding ``</think>`` is written from after its last ``</think>``,
  trimmed, on a turn up to the last user message (LFM2.5-8B-A1B) or on every assistant turn
  but the conversation's last (LFM2.5-Instruct), as those templates cut it; the reasoning
  before it is not written (``Reasoning(in_content="always", in_content_turns=...)``; a
  recorded loss).
- **Reading** follows llama.cpp's LFM2 handlers and vLLM's ``pythonic`` tool parser (its
  cases): text before the call list is content, the list holds one or more calls, each
  argument a keyword whose value is a Python literal (``True``/``None``, JSON's
  ``true``/``null`` and double quotes read too), and several lists one after the other are
  one turn's calls.  Where the template's spelling differs from Python's, the template's
  is read: a single-quoted argument is raw (``'Martha\\'s'`` keeps its backslash, where
  vLLM's parser reads an escape); a double-quoted one, and strings inside a list or an
  object, are read as Python reads them.  A list that is no call (a positional argument, a nested call, an
  expression) stays content with a warning.  Where pawlette is stricter: a list
  without ``<|tool_call_start|>`` (llama.cpp's LFM2.5 handler takes a bare ``[f(a=1)]``
  too) stays content, since the templates always write the marker and a bare list cannot be
  told from text; text after the list is kept as content with a warning.

Remaining differences from the templates (LFM2.5-8B-A1B's, the only one writing calls): a
string argument in which a ``'`` is followed by ``'``, ``)`` or ``,``, or comes last, is
refused (see **Arguments**); a string inside a list holding a private-use, unassigned or
astral character that Python's ``repr`` escapes is written as it is (as every Python literal
pawlette writes: the exported template cannot list those characters); the grammar does not
hold a string argument to ``minLength``/``maxLength`` (a note says so).  Content given as a list
of text parts is written as their joined text (as LFM2.5's templates write it), where
LFM2's template writes the list's JSON.
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    Reasoning,
    Results,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)

from .calls import Lfm2Calls

START_OF_TEXT, END_OF_TEXT = Marker("<|startoftext|>"), Marker("<|endoftext|>")
IM_START, IM_END = Marker("<|im_start|>"), Marker("<|im_end|>")
TOOL_LIST_START, TOOL_LIST_END = Marker("<|tool_list_start|>"), Marker("<|tool_list_end|>")
TOOL_CALL_START, TOOL_CALL_END = Marker("<|tool_call_start|>"), Marker("<|tool_call_end|>")
RESPONSE_START = Marker("<|tool_response_start|>")
RESPONSE_END = Marker("<|tool_response_end|>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")

SPECIAL = (
    "<|startoftext|>",
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|tool_list_start|>",
    "<|tool_list_end|>",
    "<|tool_call_start|>",
    "<|tool_call_end|>",
    "<|tool_response_start|>",
    "<|tool_response_end|>",
)


@dataclass(frozen=True)
class Lfm2Options:
    """The options of the LFM2 family.

    - ``markers``: the tool list and each result between their special tokens (LFM2);
      False: bare (LFM2.5).
    - ``write_calls``: past turns' calls are written (LFM2.5-8B-A1B's template writes
      ``tool_calls``; LFM2's and LFM2.5-Instruct's drop them).
    - ``write_reasoning``: the reasoning of the assistant turns after the last user message
      is written, ``<think>R</think>`` (LFM2.5-8B-A1B's template, from the ``thinking``
      field transformers fills from ``reasoning_content``); the others drop it.
    - ``template_arguments``: call arguments as LFM2.5-8B-A1B's template spells them (a
      string raw between single quotes, an object as JSON, the rest as Python's ``str()``),
      written, read and constrained so; False: every argument a Python literal, as
      Python's ``repr`` writes it (the variants whose templates write no calls).
    """

    markers: bool = False
    write_calls: bool = True
    write_reasoning: bool = True
    template_arguments: bool = True


LFM25_8B_A1B = Lfm2Options()
LFM2_8B_A1B = Lfm2Options(
    markers=True, write_calls=False, write_reasoning=False, template_arguments=False
)
LFM25_INSTRUCT = Lfm2Options(write_calls=False, write_reasoning=False, template_arguments=False)
VARIANTS = {"lfm2-8b-a1b": LFM2_8B_A1B, "lfm2.5-instruct": LFM25_INSTRUCT}


WHITESPACE = "".join(chr(code) for code in range(0x3001) if chr(code).isspace())
"""What Jinja's ``trim`` takes off under transformers (Python's ``str.strip()``)."""

CUT_PAST_ANSWERS: dict[bool, dict[str, Any]] = {
    # By write_reasoning: LFM2.5-8B-A1B's template cuts a past answer's content after its last
    # </think> in the turns up to the last user message (those whose reasoning it drops),
    # LFM2.5-Instruct's in every answer but the last; both trim what is left.
    write: {
        "in_content": "always",
        "in_content_turns": "before_last_query" if write else "past",
        "in_content_trim": (WHITESPACE, WHITESPACE),
    }
    for write in (True, False)
}


def frame(role: str) -> Frame:
    # <|endoftext|> ends a turn too, as llama.cpp stops on it (an end-of-generation token).
    also_end = (fence(END_OF_TEXT),) if role == "assistant" else ()
    return Frame(
        open=fence(IM_START, f"{role}\n"), end=fence(IM_END), after=fence("\n"), also_end=also_end
    )


def layout(options: Lfm2Options) -> Layout:
    # The tools are one JSON list (``array``): its brackets are the list's own.
    list_open = (
        fence("List of tools: ", TOOL_LIST_START) if options.markers else fence("List of tools: ")
    )
    list_close = fence(TOOL_LIST_END) if options.markers else ()
    return Layout(
        name="lfm2",
        summary="LFM2/LFM2.5: ChatML turns, List of tools: [...], Python call lists",
        begin=fence(START_OF_TEXT),
        frames={role: frame(role) for role in ("system", "user", "assistant", "tool")},
        concepts=(
            SystemPrompt(empty_first="absent"),
            ToolsBlock(
                place="system",
                open=list_open,
                close=list_close,
                array=True,
                separator=fence("\n"),
                separator_when="text",
            ),
            Reasoning(
                open=fence(THINK),
                close=fence(THINK_END),
                keep="after_last_query" if options.write_reasoning else "none",
                empty_given=True if options.write_reasoning else None,
                # A past answer's content is cut after its last </think> and trimmed: up to
                # the last user message (LFM2.5), or all but the last answer (LFM2.5-Instruct).
                **({} if options.markers else CUT_PAST_ANSWERS[options.write_reasoning]),
            ),
            Lfm2Calls(
                open=fence(TOOL_CALL_START),
                close=fence(TOOL_CALL_END),
                between=", ",
                quote="repr",
                spelling="template" if options.template_arguments else "literal",
                written=options.write_calls,
            ),
            Results(
                item_open=fence(RESPONSE_START) if options.markers else (),
                item_close=fence(RESPONSE_END) if options.markers else (),
            ),
            Ignored(("name", "calls") if not options.write_calls else ("name",)),
        ),
        extra_special=SPECIAL,
        options=options,
        from_options=layout,
        variants=VARIANTS,
    )


FORMAT = declare(layout(LFM25_8B_A1B))
