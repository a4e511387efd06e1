"""SmolLM3's texts: the reasoning-mode flags in the system text, and assistant text written
without the newlines at its start."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import Fence, Trimmed
from pawlette.emit.jinja_text import jinja_string
from pawlette.errors import RequestError
from pawlette.types import TextPart

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render

THINK_FLAG, NO_THINK_FLAG = "/think", "/no_think"


def flag_mode(text: str) -> bool | None:
    """The reasoning mode a system text asks for (None: no flag), as the template reads it:
    ``/no_think`` first."""
    if NO_THINK_FLAG in text:
        return False
    if THINK_FLAG in text:
        return True
    return None


def instructions(text: str) -> str:
    """The system text as the template writes it: the flags removed, the end stripped."""
    return text.replace(NO_THINK_FLAG, "").replace(THINK_FLAG, "").rstrip()


def _without_leading_newlines(text: str) -> str:
    return text.lstrip("\n")


@dataclass(frozen=True)
class SmolTexts(Trimmed):
    """The first system message is written as the template's custom instructions (flags
    removed, right-stripped; empty: ``default`` in its place), and assistant text without
    the newlines at its start; each change is a recorded loss.  A flag that asks for the
    other mode than ``thinking`` is refused: the mode is the format's option.  A kind of
    :class:`~pawlette.declare.Trimmed` (text is written trimmed, at one end)."""

    roles: tuple[str, ...] = ("system", "assistant")
    thinking: bool = True
    default: Fence = ()

    def check(self, out: Render) -> None:
        for index, message in enumerate(out.messages):
            role = message.role
            if role == "assistant":  # (the common case first, its text read inline)
                content = message.content
                if not content:
                    continue  # no text: no newline to remove
                if len(content) == 1 and type(content[0]) is TextPart:
                    text = content[0].text
                else:
                    text = out.message_text(index)
                if text.startswith("\n"):
                    out.lose(f"messages[{index}].content", "newlines at its start removed")
            elif index == 0 and role == "system":
                content = message.content
                if content and len(content) == 1 and type(content[0]) is TextPart:
                    text = content[0].text
                else:
                    text = out.message_text(index)
                if THINK_FLAG not in text and NO_THINK_FLAG not in text:
                    # (no flag: flag_mode's None and instructions' text, without their calls)
                    if not text or text[-1].isspace():
                        self._cleaned(out, text, text.rstrip())
                    continue
                mode = flag_mode(text)
                if mode is not None and mode != self.thinking:
                    flag = THINK_FLAG if mode else NO_THINK_FLAG
                    variant = "smollm3" if mode else "smollm3:no-think"
                    raise RequestError(
                        "messages[0].content",
                        f"the flag {flag} with thinking={self.thinking}",
                        f"the mode as the format's option: use {variant}",
                    )
                self._cleaned(out, text, instructions(text))

    @staticmethod
    def _cleaned(out: Render, text: str, cleaned: str) -> None:
        """The losses of a system text written as ``cleaned``."""
        if not cleaned:
            out.lose("messages[0].content", "empty instructions: the default written")
        elif cleaned != text:
            out.lose("messages[0].content", "mode flags and trailing space removed")

    def write_content(self, out: Render, index: int) -> bool:
        if index < 0:
            return False
        text = out.message_text(index)
        if out.role == "system":
            if index != 0:
                return False
            cleaned = instructions(text)
            if cleaned:
                out.text(cleaned, "content")
            else:
                out.fence(self.default, "content")
            out.has_content = True
            return True
        out.text(text.lstrip("\n"), "content", trainable=True)
        return True

    def hook_is_local(self, hook: str, role: str) -> bool:
        # (write_content above: the message's own text cleaned, or the default text)
        return hook == "write_content" and type(self).write_content is SmolTexts.write_content

    def content_text(self, role: str) -> Callable[[str], str] | None:
        # (write_content above, in an assistant's turn: its text without leading newlines)
        own = type(self).write_content is SmolTexts.write_content
        return _without_leading_newlines if own and role == "assistant" else None

    def jinja_setup(self, out: Template) -> None:
        first = "text_of(messages[0], 0, '')"
        if self.thinking:  # /no_think anywhere asks for the other mode
            other, condition = NO_THINK_FLAG, f"{jinja_string(NO_THINK_FLAG)} in {first}"
        else:  # /think, unless /no_think is there too
            other = THINK_FLAG
            condition = (
                f"{jinja_string(THINK_FLAG)} in {first} and not "
                f"{jinja_string(NO_THINK_FLAG)} in {first}"
            )
        out.macro(
            "smollm3_mode",
            '{%- if messages and messages[0].role == "system" and ('
            + condition
            + ") -%}{{- raise_exception("
            + jinja_string(f"messages[0].content: the flag {other}; the mode is the format's")
            + ") -}}{%- endif -%}",
        )

    def jinja_content(self, out: Template, role: str) -> bool:
        name = jinja_string(out.layout.name)
        if role == "system":
            out.out("{%- if index == 0 -%}")
            out.out(
                f"{{%- set cleaned = (text_of(message, index, {name}) | replace("
                f"{jinja_string(NO_THINK_FLAG)}, '') | replace({jinja_string(THINK_FLAG)}, ''))"
                ".rstrip() -%}"
            )
            out.out("{%- if cleaned -%}")
            out.value("cleaned")
            out.out("{%- else -%}")
            out.fence(self.default)
            out.out("{%- endif -%}")
            if "content" in out.namespace:
                out.out("{%- set ns.content = true -%}")
            out.out("{%- else -%}")
            out.text()
            out.out("{%- endif -%}")
            return True
        if role == "assistant":
            out.value(f"text_of(message, index, {name}).lstrip({jinja_string(chr(10))})")
            return True
        return False
