"""The metadata line: the first line of every turn, ``<|role|>{metadata}\\n``.

A system or user message's ``name`` is written there (and read back from it); a result's
line is empty when written (the call it answers names it) and read as its ``name``; an
assistant turn's metadata names its call (:mod:`.calls`).  Turns have no end marker: each runs
to the next role marker (empty :attr:`pawlette.declare.Frame.end`), and a role marker that
ends the text opens no turn (the stop the model wrote: see :mod:`.stop`).

The reference (``build_chat_input``) encodes ``{metadata}\\n`` and the content with separate
tokenizer calls: :meth:`encode_cuts` says so (:attr:`pawlette.Format.encode_cuts`).
"""

# ruff: noqa: E501  (Jinja source: one tag per line reads better than wrapped tags)

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ...declare import Concept
from ...emit.jinja_text import jinja_string
from ...engine.machine import Action, Parser
from ...engine.readers import ScaffoldReader
from ...errors import UnsupportedFeature
from ...types import Role, TextPart
from .readers import headed_text_reader

if TYPE_CHECKING:
    from ...declare.jinja import Template
    from ...declare.table import Table
    from ...declare.write import Render


@dataclass(frozen=True)
class MetadataLine(Concept):
    """The metadata line of system, user and result turns, and the checks every message
    passes (``title``: the format's name in messages)."""

    title: str = "ChatGLM3"

    handles: ClassVar[frozenset[str]] = frozenset({"name", "reasoning"})

    def encode_cuts(self) -> frozenset[str]:
        return frozenset({"metadata"})

    # ------------------------------------------------------------------ the writer

    def check(self, out: Render) -> None:
        out.handles("name", "reasoning")  # (refused here, with ChatGLM3's reasons)
        for index, message in enumerate(out.messages):
            if message.reasoning is not None or message.reasoning_steps is not None:
                raise UnsupportedFeature(
                    f"messages[{index}].reasoning_content",
                    "reasoning",
                    f"none: {self.title} has no reasoning block",
                )
            if message.metadata:
                raise UnsupportedFeature(
                    f"messages[{index}].metadata",
                    "metadata pairs",
                    "none: the metadata line holds the name",
                )
            name = message.name or ""
            if name and message.role == "assistant":
                raise UnsupportedFeature(
                    f"messages[{index}].name",
                    "a name on an assistant message",
                    "none: its metadata line names its call",
                )
            if "\n" in name:
                raise UnsupportedFeature(
                    f"messages[{index}].name", f"{name!r}", "a name on one line"
                )
            for number, part in enumerate(message.content or ()):
                if not isinstance(part, TextPart):
                    raise UnsupportedFeature(
                        f"messages[{index}].content[{number}]",
                        f"a {type(part).__name__}",
                        "text parts only",
                    )

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"system", "user", "tool"})

    def hook_is_local(self, hook: str, role: str) -> bool:
        return hook == "write_opening"  # (the message's own name)

    def write_opening(self, out: Render, index: int) -> None:
        message = out.messages[index] if index >= 0 else None
        if message is not None and message.name and message.role != "tool":
            out.text(message.name, "metadata")
        out.raw("\n", "metadata")

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        table.fields.update(
            {
                "system": {"name": "name"},
                "user": {"name": "name"},
                "tool": {"name": "name"},
            }
        )
        table.reader("system.body", headed_text_reader())
        table.reader("user.body", headed_text_reader())
        table.reader("tool.item", headed_text_reader())
        # A role marker that ends the text opens no turn (the stop after a final assistant
        # turn): the message is pending until its turn reads something.  A completion ends
        # at the next role marker.
        table.state("ended", ScaffoldReader)
        firsts: dict[str, Role] = {
            "system.body": "system",
            "user.body": "user",
            "tool.item": "tool",
        }
        for (state, marker), (target, _) in list(table.steps.items()):
            role = firsts.get(target)
            if state == "outside" and role is not None:
                table.steps[(state, marker)] = (target, (_turn(role),))

    # ------------------------------------------------------------------ the Jinja template

    def jinja_setup(self, out: Template) -> None:
        out.macro("check", _CHECK_MACRO.replace("@TITLE@", jinja_string(self.title)))

    def jinja_before(self, out: Template, role: str) -> None:
        out.out("{%- if message is not none -%}{{- check(message, index, role) -}}{%- endif -%}")

    def jinja_opening(self, out: Template, role: str) -> None:
        out.out(
            "{%- if message is not none and message.name is defined and message.name is not none"
            " and role != 'tool' -%}{{- message.name -}}{%- endif -%}{{- '\\n' -}}"
        )


def _turn(role: Role) -> Action:
    """Begin a turn of ``role`` (not the assistant's) in a conversation, pending; in a
    completion, the completion is over."""

    def action(parser: Parser, offset: int) -> None:
        if parser.conversation:
            parser.begin_message(role, pending=True)
        else:
            parser.goto("ended")

    action.__name__ = f"begin {role} (pending)"
    return action


_CHECK_MACRO = r"""{%- macro check(message, index, role) -%}
{%- if (message.reasoning_content is defined and message.reasoning_content is not none) or (message.reasoning_steps is defined and message.reasoning_steps is not none) -%}
{{- raise_exception('messages[' ~ index ~ '].reasoning_content: reasoning; expected none: ' ~ @TITLE@ ~ ' has no reasoning block') -}}
{%- endif -%}
{%- if message.metadata is defined and message.metadata -%}
{{- raise_exception('messages[' ~ index ~ '].metadata: metadata pairs; expected none: the metadata line holds the name') -}}
{%- endif -%}
{%- if message.name is defined and message.name is not none and message.name -%}
{%- if role == 'assistant' -%}
{{- raise_exception('messages[' ~ index ~ '].name: a name on an assistant message; expected none: its metadata line names its call') -}}
{%- endif -%}
{%- if '\n' in message.name -%}
{{- raise_exception('messages[' ~ index ~ '].name: a name with a newline; expected a name on one line') -}}
{%- endif -%}
{%- endif -%}
{%- endmacro -%}"""
