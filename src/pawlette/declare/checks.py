"""Checks a template makes of the conversation's shape, as a concept: render refuses what the
reference refuses, with the same reason."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..emit.jinja_text import jinja_string
from ..errors import RequestError
from .concept import Concept

if TYPE_CHECKING:
    from .concept import Render, Template


@dataclass(frozen=True)
class Alternation(Concept):
    """After the first system message, user and assistant messages alternate, starting with
    a user message; a request that breaks the alternation is refused, naming the message.

    - ``calls_count``: False (the default), tool messages and assistant messages holding
      calls are not counted; True, an assistant message with calls takes an assistant's
      place (tool messages are never counted).
    - ``system_counts``: False (the default), system messages after the first are skipped;
      True, a later system message breaks the alternation, so it is refused."""

    calls_count: bool = False
    system_counts: bool = False

    def check(self, out: Render) -> None:
        expected = "user"
        messages = out.messages
        start = 1 if messages and messages[0].role == "system" else 0
        system_counts, calls_count = self.system_counts, self.calls_count
        for index in range(start, len(messages)):
            message = messages[index]
            role = message.role
            # (_counted inlined: a test per message)
            if role == "tool" or (role == "system" and not system_counts):
                continue
            if role != "system" and message.tool_calls and not calls_count:
                continue
            if role != expected:
                after = " after the first system message" if start else ", from a user message"
                raise RequestError(
                    f"messages[{index}].role",
                    repr(message.role),
                    f"{expected!r}: {out.layout.name} needs user and assistant messages to "
                    f"alternate{after}",
                )
            expected = "assistant" if expected == "user" else "user"

    def jinja_setup(self, out: Template) -> None:
        skipped = ["message.role == 'tool'"]
        if not self.system_counts:
            skipped.append("(message.role in ['system', 'developer'] and loop.index0 > 0)")
        if not self.calls_count:
            skipped.append("(message.tool_calls is defined and message.tool_calls)")
        message = jinja_string(f"{out.layout.name} needs user and assistant messages to alternate")
        out.macro(
            "alternation",
            "{%- set alternation = namespace(count=0) -%}"
            "{%- for message in messages -%}"
            "{%- if not (loop.index0 == 0 and message.role in ['system', 'developer']) and not ("
            + " or ".join(skipped)
            + ") -%}"
            "{%- if (message.role == 'user') != (alternation.count % 2 == 0) -%}"
            "{{- raise_exception(" + message + ") -}}{%- endif -%}"
            "{%- set alternation.count = alternation.count + 1 -%}"
            "{%- endif -%}{%- endfor -%}",
        )
