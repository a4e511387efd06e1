"""Nemotron 3 Nano's assistant turn: a reasoning block or ``<think></think>`` on every turn,
and text trimmed at its end, with the newlines its template's trimming leaves::

    <think>\\nR\\n</think>\\nTEXT            reasoning and text
    <think>\\nR\\n</think>                  reasoning alone (the trim takes the last newline)
    <think>\\nR\\n</think>\\n<tool_call>...   reasoning then calls
    <think></think>TEXT\\n<tool_call>...   no reasoning: text, a newline, the calls
    <think></think>\\n<tool_call>...       no reasoning, no text: the newline alone
    <think></think>\\nTEXT                truncated reasoning (a turn before the last query)

The template builds ``<think>\\nR\\n</think>\\n`` + text (``<think></think>`` + text without
reasoning) and trims the whole, then writes a newline before calls; these two concepts write
the same bytes: :class:`NemotronReasoning` the block and the newlines around it,
:class:`NemotronText` the text (trimmed at its end; at both ends on a turn of calls whose
reasoning the template truncates).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pawlette.declare import Concept, Reasoning, fence
from pawlette.emit.grammar_ast import Lit
from pawlette.emit.jinja_text import jinja_string

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render

GAP = fence("\n")


def _truncated(out: Render, index: int, truncate: bool) -> bool:
    return truncate and index < out.last_query


def written_text(out: Render, index: int, truncate: bool) -> str:
    """An assistant message's text as the template writes it."""
    text = out.message_text(index)
    if _truncated(out, index, truncate) and out.messages[index].tool_calls:
        return text.strip()
    return text.rstrip()


def _jinja_text(out: Template) -> str:
    return f"text_of(message, index, {jinja_string(out.layout.name)})"


@dataclass(frozen=True)
class NemotronReasoning(Reasoning):
    """:class:`~pawlette.declare.Reasoning` with Nemotron's newlines (module docstring):
    ``close`` ends with the newline the template's trim removes when nothing follows the
    block; ``absent`` (``<think></think>``) is followed by a newline when calls follow it
    directly.  A block is written for non-blank reasoning only.  With ``prompt="empty"``
    (thinking off) the generation prompt writes ``absent``."""

    truncate: bool = True

    def written(self, out: Render, index: int) -> bool:
        message = out.messages[index]
        if self.keep == "none" or (self.keep == "after_last_query" and index <= out.last_query):
            return False
        return bool((message.reasoning or "").strip())

    def write_opening(self, out: Render, index: int) -> None:
        if out.role != "assistant" or index < 0:
            return
        message = out.messages[index]
        text = written_text(out, index, self.truncate)
        calls = bool(message.tool_calls)
        if not self.written(out, index):
            # With thinking off the generation prompt writes it: the model's part follows.
            out.fence(self.absent, "reasoning", trainable=self.prompt != "empty")
            dropped = bool((message.reasoning or "").strip())
            if (calls and not text) or (dropped and text and not calls):
                # A truncated block leaves the newline after its close before the text.
                out.fence(GAP, "reasoning", trainable=True)
            return
        out.fence(self.open, "reasoning", trainable=self.prompt not in ("open", "opened"))
        out.text(message.reasoning or "", "reasoning", trainable=True)
        close = self.close if text or calls else self.close[:-1]
        out.fence(close, "reasoning", trainable=True)

    def write_prompt(self, out: Render) -> None:
        if self.prompt == "empty":
            out.fence(self.absent, "generation_prompt")
        else:
            super().write_prompt(out)

    def _condition(self, out: Template) -> str:
        given = (
            "message.reasoning_content is defined and message.reasoning_content is not none "
            "and message.reasoning_content | trim"
        )
        if self.keep == "all":
            return f"({given})"
        if self.keep == "none":
            return "false"
        return f"index > {out.needs_last_query()} and ({given})"

    def jinja_opening(self, out: Template, role: str) -> None:
        if role != "assistant":
            return
        has_text = f"{_jinja_text(out)} | trim"
        out.out(f"{{%- if {self._condition(out)} -%}}")
        if self.prompt not in ("open", "opened"):
            out.fence(self.open)
        out.value("message.reasoning_content")
        out.fence_if(f"{has_text} or message.tool_calls", self.close, self.close[:-1])
        out.out("{%- else -%}")
        if self.prompt != "empty":  # (else the prompt's, written by jinja_lead)
            out.fence(self.absent)
        dropped = (
            "message.reasoning_content is defined and message.reasoning_content is not none "
            "and message.reasoning_content | trim"
        )
        out.out(
            f"{{%- if (message.tool_calls and not ({has_text})) or ({dropped} and ({has_text}) "
            "and not message.tool_calls) -%}"
        )
        out.fence(GAP)
        out.out("{%- endif -%}")
        out.out("{%- endif -%}")

    def jinja_lead(self, out: Template, role: str) -> None:
        if role == "assistant" and self.prompt == "empty":
            out.out(f"{{%- if not ({self._condition(out)}) -%}}")
            out.fence(self.absent)  # the generation prompt's: not trainable
            out.out("{%- endif -%}")
        else:
            super().jinja_lead(out, role)

    def jinja_prompt(self, out: Template) -> None:
        if self.prompt == "empty":
            out.fence(self.absent)
        else:
            super().jinja_prompt(out)

    def grammar(self, turn: Turn) -> None:
        super().grammar(turn)
        if self.prompt == "empty":
            # The prompt wrote "<think></think>": calls without text follow a newline (the
            # grammar also lets text start with one).
            turn.head = Lit("\n")
            turn.call_lead = "\n"


@dataclass(frozen=True)
class NemotronText(Concept):
    """An assistant turn's text trimmed at its end (at both ends on a turn of calls before
    the last user message, when ``truncate``); a text that changes is a recorded loss."""

    truncate: bool = True

    handles: ClassVar[frozenset[str]] = frozenset()

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    def check(self, out: Render) -> None:
        for index, message in enumerate(out.messages):
            text = out.message_text(index) if message.role == "assistant" else ""
            written = written_text(out, index, self.truncate)
            if text != written and message.role == "assistant":
                # (Only a truncated turn of calls loses its start too: say which ends went.)
                ends = "ends" if text.lstrip() != text and written == text.strip() else "end"
                out.lose(f"messages[{index}].content", f"whitespace at its {ends} trimmed")

    def write_content(self, out: Render, index: int) -> bool:
        if out.role != "assistant" or index < 0:
            return False
        out.text(written_text(out, index, self.truncate), "content", trainable=True)
        return True

    def jinja_content(self, out: Template, role: str) -> bool:
        if role != "assistant":
            return False
        text = _jinja_text(out)
        if self.truncate:
            out.out(
                f"{{%- if index < {out.needs_last_query()} and message.tool_calls -%}}"
                f"{{{{- {text} | trim -}}}}{{%- else -%}}{{{{- {text}.rstrip() -}}}}"
                "{%- endif -%}"
            )
        else:
            out.out(f"{{{{- {text}.rstrip() -}}}}")
        return True
