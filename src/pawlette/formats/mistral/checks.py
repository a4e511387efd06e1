"""A check Ministral 3's template makes: an assistant message holds text or calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import Concept
from pawlette.errors import RequestError

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render


@dataclass(frozen=True)
class AnswerRequired(Concept):
    """An assistant message with no text and no calls is refused (Ministral 3's template
    raises on it; writing ``</s>`` alone would teach the model an empty answer)."""

    def check(self, out: Render) -> None:
        for index, message in enumerate(out.messages):
            empty = not message.tool_calls and not out.message_text(index)
            if message.role == "assistant" and empty:
                raise RequestError(
                    f"messages[{index}].content",
                    "no text and no tool calls",
                    f"text or tool calls: {out.layout.name} writes no empty answer",
                )

    def jinja_setup(self, out: Template) -> None:
        out.macro(
            "answer_required",
            "{%- for message in messages -%}"
            "{%- if message.role == 'assistant' and not message.content"
            " and not (message.tool_calls is defined and message.tool_calls) -%}"
            "{{- raise_exception('an assistant message needs text or tool calls') -}}"
            "{%- endif -%}{%- endfor -%}",
        )
