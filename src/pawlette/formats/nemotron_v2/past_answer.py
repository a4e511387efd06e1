"""A past assistant turn's text, as Nemotron Nano 2's template writes it: from ``</think>`` on.

The template writes a past assistant message's text so (its loop over the messages before
the last)::

    {%- if content and '</think>' in content -%}
      {%- set content = (content.split('</think>')[1] | default('', true)).strip() %}
    {%- endif -%}

so a text that holds its reasoning (``reasoning</think>answer``, as a model writes its turn
after the prompt's ``<think>\\n``) is written as its answer alone, trimmed, as the model saw
its past turns in training; a text holding a second ``</think>`` loses what follows it too.
The turn a conversation ends on (rendered without the generation prompt) is written whole
(:mod:`.final_turn`): the template takes that one out of its loop before the cut.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pawlette.declare import Trimmed

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render

CLOSE = "</think>"
FINAL = "index == (messages | length) - 1 and not add_generation_prompt"
"""Jinja: the message is the one the conversation ends on, rendered without the prompt."""
CUT = f"the text up to its first {CLOSE} (and from a second one on) dropped, as the template does"


def is_final(out: Render, index: int) -> bool:
    """Whether ``messages[index]`` is an assistant message the conversation ends on,
    rendered without the generation prompt."""
    messages = out.messages
    return (
        not out.prompt
        and index == len(messages) - 1
        and index >= 0
        and messages[index].role == "assistant"
    )


def answer(text: str) -> str:
    """What the template keeps of a past assistant text: between its first ``</think>``
    and the next, when it holds one."""
    return text.split(CLOSE)[1] if CLOSE in text else text


def written_text(out: Render, index: int) -> str:
    """The text of ``messages[index]``, an assistant's, as the template tests and writes it:
    cut at ``</think>`` unless it is the turn the conversation ends on; trimmed."""
    text = out.message_text(index)
    return (text if is_final(out, index) else answer(text)).strip()


def jinja_written_text(layout_name: str) -> str:
    """The Jinja expression of :func:`written_text` (the message and ``index`` in scope)."""
    text = f"text_of(message, index, {layout_name!r})"
    cut = f"{text}.split({CLOSE!r})[1]"
    return f"(({cut} if {CLOSE!r} in {text} and not ({FINAL}) else {text}) | trim)"


class PastAnswerTrimmed(Trimmed):
    """:class:`~pawlette.declare.Trimmed`, and a past assistant text cut at ``</think>``
    (see the module); a text that loses more than its ends' whitespace so is a recorded
    loss."""

    def check(self, out: Render) -> None:
        super().check(out)
        for index, message in enumerate(out.messages):
            if message.role == "assistant" and not is_final(out, index):
                text = out.message_text(index)
                if CLOSE in text and answer(text).strip() != text.strip():
                    out.lose(f"messages[{index}].content", CUT)

    def write_content(self, out: Render, index: int) -> bool:
        if index < 0 or out.role != "assistant" or "assistant" not in self.roles:
            return super().write_content(out, index)
        out.writer.text(written_text(out, index), "content", trainable=True)
        return True

    def content_text(self, role: str) -> Callable[[str], str] | None:
        # (an assistant's text depends on its place: the writer's hook writes it)
        return None if role == "assistant" else super().content_text(role)

    def jinja_content(self, out: Template, role: str) -> bool:
        if role != "assistant" or role not in self.roles:
            return super().jinja_content(out, role)
        out.out(f"{{{{- {jinja_written_text(out.layout.name)} -}}}}")
        return True
