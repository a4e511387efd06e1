"""The learned stop: the model ends its turn by writing the next role marker.

Turns have no end marker, so the marker that opens the turn after an assistant message is
what the model wrote to end it: ``<|user|>`` after text, ``<|observation|>`` after calls.  That
marker is learned (trainable), and a training render that ends with an assistant message ends
with the one the model writes there at inference, learned too: without it single-turn
training data would never teach the model to stop.  (ChatGLM3's own fine-tuning script
appends ``</s>`` instead; the role marker keeps one stop per situation, the one pawlette's
server stops on, and keeps every render a prefix of the render of the conversation
continued.)  Both markers are the format's stop set (:meth:`stops`); parsing reads a role
marker with nothing after it, at the end of a conversation, as that stop, not as an empty turn
(:mod:`.metadata`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from ...declare import Concept, Fence, Marker
from ...emit.jinja_text import jinja_string

if TYPE_CHECKING:
    from ...declare.jinja import Template
    from ...declare.write import Render


@dataclass(frozen=True)
class LearnedStop(Concept):
    """``after_text`` / ``after_calls``: the markers that end an assistant turn of text and
    one of calls (the openers of the user and the result turns)."""

    after_text: Marker
    after_calls: Marker

    @cached_property
    def fences(self) -> tuple[Fence, Fence]:
        return (self.after_text,), (self.after_calls,)

    def stops(self) -> tuple[Fence, ...]:
        return self.fences

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"user", "tool"})

    # ------------------------------------------------------------------ the writer

    def hook_is_local(self, hook: str, role: str) -> bool:
        return hook == "write_before"  # (the turn before and this one's role)

    def write_before(self, out: Render, index: int) -> None:
        # The frame writes no opener after an assistant turn (``open_after``): it is here,
        # learned, in the message it opens.
        if out.previous == "assistant" and out.role in ("user", "tool"):
            out.fence(self.fences[out.role == "tool"], "header", trainable=True)

    def write_finish(self, out: Render) -> None:
        if out.prompt or out.previous != "assistant":
            return
        called = bool(out.messages[-1].tool_calls)
        out.fence(self.fences[called], "end", trainable=True)

    # ------------------------------------------------------------------ the Jinja template

    def jinja_before(self, out: Template, role: str) -> None:
        marker = self.after_calls if role == "tool" else self.after_text
        out.out('{%- if ns.previous == "assistant" -%}{%- generation -%}')
        out.out(f"{{{{- {jinja_string(marker.text)} -}}}}")
        out.out("{%- endgeneration -%}{%- endif -%}")

    def jinja_finish(self, out: Template) -> None:
        out.out('{%- if not add_generation_prompt and ns.previous == "assistant" -%}')
        out.out("{%- generation -%}")
        out.out(
            "{{- "
            + jinja_string(self.after_calls.text)
            + " if messages[-1].tool_calls is defined and messages[-1].tool_calls else "
            + jinja_string(self.after_text.text)
            + " -}}"
        )
        out.out("{%- endgeneration -%}{%- endif -%}")
