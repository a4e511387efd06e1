"""RWKV World (llama.cpp's own template for RWKV models): ``User: `` / ``Assistant: `` text
turns, each ended by a blank line; no tools, calls or results.

The wire format (``<s>`` is a special token; the rest is text)::

    <s>System: You are terse.

    User: Weather in Paris?

    Assistant: Sunny, 18°C.

    User: And tomorrow?

    Assistant:

Variants: ``rwkv`` (the template without ``enable_thinking``: the prompt is ``Assistant:``),
``rwkv:thinking`` (``enable_thinking=true``: the prompt is ``Assistant: <think>``, the model
reasons, writes ``</think>`` and answers) and ``rwkv:no-thinking`` (``enable_thinking=false``:
the prompt is ``Assistant: <think>\\n</think>``, an empty block, and the model answers).

Decisions (reference: ``llama-cpp-rwkv-world.jinja`` in llama.cpp's ``models/templates``,
which llama.cpp's converter writes into the RWKV World GGUFs it makes; the begin token is
that GGUF's: the converter makes token 0, ``<s>``, both ``bos`` and ``eos``, and the
two-newline token the end of a turn):

- **Its own family**: turns are ``System: ``, ``User: `` and ``Assistant: `` text ended by
  ``\\n\\n`` (the model's end-of-turn token); ``<s>`` begins the text.
- **The system turn** is the last system message's text, written first, as given (not
  trimmed), and only when it is not empty.  The other system messages are dropped, and so
  is an empty last one (recorded losses): the template keeps only the last system text.
- **User and assistant text is trimmed** (a recorded loss where it changes), as the template
  ``| trim`` s it.
- **``</think>`` in an assistant's text**: the template writes the text from after its last
  ``</think>`` (and never writes ``reasoning_content``); pawlette writes the same, the part
  before it a recorded loss.
- **The generation prompt** is ``Assistant:`` without the space past turns have after it:
  the model writes the space, read as layout, not text.  In a past turn the space is
  trainable, the first thing the model writes.  With thinking on or off the prompt holds
  the space and the ``<think>`` block's start (or the empty block); past turns are alike in
  every variant (the template writes no reasoning), so reasoning is a recorded loss there.
- **Not written**, as the template ignores them (recorded losses): the request's tools, an
  assistant message's calls (its text is written, an empty turn for calls only), tool
  messages, names and ``reasoning_content``.
- With no call syntax, a model's turn is read as its text; a forced ``tool_choice``
  (``required`` or a named function) is refused naming ``tool_choice`` (the server answers
  400), and under ``auto`` and ``none`` the tools are dropped as above.
- **Reading**: the blank line that ends a turn is plain text a turn may hold too (a
  paragraph break), so reading ends a turn at a blank line only where another turn's opener
  follows (``User: ``, ``Assistant:``, ``System: ``) or where the input ends.  An answer
  holding a blank line and then such an opener cannot be read back whole.  ``<s>``, the
  model's end-of-sequence token, ends a turn too (llama.cpp stops on both; a prepared
  tokenizer's ``eos_token``).  A turn grammar's text holds no blank line: the engine ends
  the turn there (llama.cpp, at the model's end-of-turn token).

Remaining differences from the template: an assistant message whose content is ``null``
beside its calls gets no turn from the template, and one whose content is ``""`` an empty
turn; pawlette reads both alike and writes the empty turn.  A ``developer`` message is a
system message to pawlette; the template skips it.  A message whose content is a list of
parts is written by the template as the list's Python spelling (a system one fails it);
pawlette writes its text parts joined.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pawlette.declare import (
    Concept,
    Frame,
    Ignored,
    LastSystemPrompt,
    Layout,
    Marker,
    PromptRest,
    Reasoning,
    Switch,
    UnwrittenResults,
    declare,
    fence,
)

from .content import ThinkTrimmed
from .reading import BlankLineEnds

BEGIN = Marker("<s>")
OPENER = "Assistant: "
PROMPT = "Assistant:"
THINK, THINK_END = "<think>", "</think>"
ROLES = ("start", "system", "user", "assistant", "tool")


@dataclass(frozen=True)
class RwkvOptions:
    """``thinking``: the template's ``enable_thinking``; None (the default): not given, the
    generation prompt is ``Assistant:``; True: ``Assistant: <think>`` (the model reasons
    first); False: ``Assistant: <think>\\n</think>`` (an empty block: no reasoning)."""

    thinking: bool | None = None


VARIANTS = {"thinking": RwkvOptions(thinking=True), "no-thinking": RwkvOptions(thinking=False)}


def template_variables(options: RwkvOptions) -> Mapping[str, Any]:
    return {} if options.thinking is None else {"enable_thinking": options.thinking}


def turn(word: str) -> Frame:
    return Frame(open=fence(word + ": "), end=fence("\n\n"))


def layout(options: RwkvOptions) -> Layout:
    thinking: tuple[Concept, ...]
    if options.thinking is None:
        prompt = fence(PROMPT)
        ignored: tuple[str, ...] = ("tools", "calls", "name", "reasoning")
        # The model writes the opener's space after the prompt; a past turn's is its own.
        thinking = (PromptRest(prompt=PROMPT, rest=" ", trainable=True),)
    elif options.thinking:
        prompt = fence(OPENER + THINK)
        ignored = ("tools", "calls", "name")
        thinking = (
            Reasoning(open=fence(THINK), close=fence(THINK_END), keep="none", prompt="opened"),
        )
    else:
        prompt = fence(OPENER + THINK + "\n" + THINK_END)
        ignored = ("tools", "calls", "name", "reasoning")
        thinking = ()
    return Layout(
        name="rwkv",
        summary="RWKV World: User:/Assistant: text turns ended by a blank line, no tools or calls",
        begin=fence(BEGIN),
        frames={
            "system": turn("System"),
            "user": turn("User"),
            "assistant": Frame(
                open=fence(OPENER),
                end=fence("\n\n"),
                # Its end-of-sequence token ends a turn too (llama.cpp stops on both).
                also_end=(fence(BEGIN),),
                prompt_after={role: prompt for role in ROLES},
            ),
        },
        concepts=(
            LastSystemPrompt(placement="gathered", empty_first="absent"),
            UnwrittenResults(),
            ThinkTrimmed(roles=("user", "assistant"), space_first=True),
            Ignored(ignored),
            *thinking,  # PromptRest copies the others' rows
            BlankLineEnds(),  # after the openers' rows: it copies them
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        template_variables=template_variables,
        switches=(Switch("thinking", "enable_thinking", values=(None, True, False)),),
        markers_in_text=True,  # the turns' openers and ends are plain text: no special token
    )


FORMAT = declare(layout(RwkvOptions()))
