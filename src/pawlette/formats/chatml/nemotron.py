"""Nemotron 3 Nano's assistant turn: a reasoning block or ``<think></think>`` on every turn,
and text trimmed at its end, with the newlines its template's trimming leaves::

    <think>\\nR\\n</think>\\nTEXT            reasoning and text
    <think>\\nR\\n</think>                  reasoning alone (the trim takes the last newline)
    <think>\\nR\\n</think>\\n<tool_call>...   reasoning then calls
    <think></think>TEXT\\n<tool_call>...   no reasoning: text, a newline, the calls
    <think></think>\\n<tool_call>...       no reasoning, no text: the newline alone
    <think></think>\\nTEXT                truncated reasoning (a turn before the last query)
    TEXT                               a text holding <think> or </think> itself

A text holding the markers without reasoning stands for its own block: the template writes
it as it is (trimmed), and on a turn whose reasoning it truncates, cuts it after its last
``</think>`` (before its first ``<think>``, in a turn of calls without one) behind
``<think></think>``, or keeps a text holding only one of them, with no calls, as it is
(:func:`marked_lead`, :func:`written_text`).

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


OPEN, CLOSE = "<think>", "</think>"
"""The markers the template looks for in a message's content."""


def _truncated(out: Render, index: int, truncate: bool) -> bool:
    return truncate and index < out.last_query


def _given(out: Render, index: int) -> bool:
    """The message has reasoning the template writes as a block (not blank)."""
    return bool((out.messages[index].reasoning or "").strip())


def marked_lead(out: Render, index: int, truncate: bool) -> str | None:
    """What comes before the text of a turn whose content holds the template's markers
    (``"none"``: nothing, the content stands for its own block; ``"absent"``: the
    ``<think></think>`` stand-in alone); None: the turn is written as any other."""
    text = out.message_text(index)
    truncated = _truncated(out, index, truncate)
    if _given(out, index):
        # A dropped block: the template cuts after the content's own last </think>.
        return "absent" if truncated and CLOSE in text else None
    if OPEN not in text and CLOSE not in text:
        return None
    if not truncated:
        return "none"
    if out.messages[index].tool_calls or (OPEN in text and CLOSE in text):
        return "absent"
    return "none"


def written_text(out: Render, index: int, truncate: bool) -> str:
    """An assistant message's text as the template writes it: trimmed, and where the content
    holds the template's markers on a turn whose reasoning it truncates, cut after the last
    ``</think>`` (or, in a turn of calls without one, before the first ``<think>``)."""
    text = out.message_text(index)
    truncated = _truncated(out, index, truncate)
    calls = bool(out.messages[index].tool_calls)
    lead = marked_lead(out, index, truncate)
    if lead == "none":
        return text.strip()
    if lead == "absent":
        text = text.rsplit(CLOSE, 1)[1] if CLOSE in text else text.split(OPEN, 1)[0]
        return text.strip() if calls else text.rstrip()
    if truncated and calls:
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
            lead = marked_lead(out, index, self.truncate)
            if lead == "none":  # the content holds its own markers: no stand-in
                return
            # With thinking off the generation prompt writes it: the model's part follows.
            out.fence(self.absent, "reasoning", trainable=self.prompt != "empty")
            if lead == "absent":
                return
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
        out.out('{%- elif marked.lead != "none" -%}')
        if self.prompt != "empty":  # (else the prompt's, written by jinja_lead)
            out.fence(self.absent)
        dropped = (
            "message.reasoning_content is defined and message.reasoning_content is not none "
            "and message.reasoning_content | trim"
        )
        out.out(
            f"{{%- if not marked.lead and ((message.tool_calls and not ({has_text})) or "
            f"({dropped} and ({has_text}) and not message.tool_calls)) -%}}"
        )
        out.fence(GAP)
        out.out("{%- endif -%}")
        out.out("{%- endif -%}")

    def _jinja_marked(self, out: Template) -> None:
        """``marked.lead`` and ``marked.text``: :func:`marked_lead` and :func:`written_text`
        of the message in scope."""
        given = (
            "message.reasoning_content is defined and message.reasoning_content is not none "
            "and message.reasoning_content | trim"
        )
        truncated = f"index < {out.needs_last_query()}" if self.truncate else "false"
        calls = "(message.tool_calls is defined and message.tool_calls)"
        opening, closing = jinja_string(OPEN), jinja_string(CLOSE)
        out.out(f"{{%- set marked = namespace(text={_jinja_text(out)}, lead='') -%}}")
        out.out(f"{{%- if {given} -%}}")
        out.out(
            f"{{%- if {truncated} and {closing} in marked.text -%}}"
            "{%- set marked.lead = 'absent' -%}{%- endif -%}"
        )
        out.out(f"{{%- elif {opening} in marked.text or {closing} in marked.text -%}}")
        out.out(
            f"{{%- if {truncated} and ({calls} or ({opening} in marked.text and {closing} in "
            "marked.text)) -%}{%- set marked.lead = 'absent' -%}"
            "{%- else -%}{%- set marked.lead = 'none' -%}{%- endif -%}"
        )
        out.out("{%- endif -%}")
        out.out("{%- if marked.lead == 'none' -%}{%- set marked.text = marked.text | trim -%}")
        out.out("{%- elif marked.lead == 'absent' -%}")
        out.out(
            f"{{%- set marked.text = marked.text.split({closing})[-1] if {closing} in marked.text "
            f"else marked.text.split({opening})[0] -%}}"
        )
        out.out(
            f"{{%- set marked.text = marked.text | trim if {calls} else marked.text.rstrip() -%}}"
        )
        out.out(
            f"{{%- elif {truncated} and {calls} -%}}{{%- set marked.text = marked.text | trim -%}}"
        )
        out.out("{%- else -%}{%- set marked.text = marked.text.rstrip() -%}{%- endif -%}")

    def jinja_lead(self, out: Template, role: str) -> None:
        if role == "assistant":
            self._jinja_marked(out)
        if role == "assistant" and self.prompt == "empty":
            out.out(f'{{%- if not ({self._condition(out)}) and marked.lead != "none" -%}}')
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
            if message.role != "assistant":
                continue
            text = out.message_text(index)
            written = written_text(out, index, self.truncate)
            if text == written:
                continue
            if written not in (text.strip(), text.rstrip()):
                out.lose(
                    f"messages[{index}].content",
                    f"cut around its {OPEN} or {CLOSE}, as the template cuts a past turn",
                )
            else:
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
        out.value("marked.text")  # (made by NemotronReasoning's jinja_lead)
        return True
