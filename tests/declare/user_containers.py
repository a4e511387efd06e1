"""A second format built on PCML's concepts (headers, containers, escaped text), declared from
outside the package.

It differs from pcml wherever those concepts read the declaration: other marker spellings,
one newline between containers, two before the tools, a call id key and envelope keys of its
own, header fields only some roles have, a reasoning close without layout, and an opening
fence carrying layout text.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

import pawlette
from pawlette.declare import (
    Frame,
    JsonCalls,
    Layout,
    Marker,
    Reasoning,
    Results,
    SystemPrompt,
    ToolsBlock,
    fence,
)
from pawlette.formats.pcml.containers import Containers
from pawlette.formats.pcml.escaping import EscapedText
from pawlette.formats.pcml.headers import Headers

from . import registering


def box(role: str) -> Frame:
    return Frame(open=fence(Marker(f"<|{role}|>")), end=fence(Marker(f"<|/{role}|>")))


LAYOUT = Layout(
    name="user-boxes",
    summary="a containers format a user declares: <|role|> boxes, who= headers, <act> calls",
    frames={
        "system": box("sys"),
        "user": box("me"),
        "assistant": Frame(open=fence(Marker("<|bot|>"), "\n"), end=fence(Marker("<|done|>"))),
        "tool": box("out"),
    },
    concepts=(
        SystemPrompt(),
        Results(),
        Headers(
            separator=Marker("<|;|>"),
            fields={"user": {"who": "name"}, "tool": {"call": "tool_call_id"}},
        ),
        ToolsBlock(
            place="system",
            open=fence(Marker("<toolbox>")),
            close=fence(Marker("</toolbox>")),
            separator=fence("\n\n"),
            separator_when="text",
            wrap="function",
            array=True,
            separators=(",", ":"),
        ),
        Reasoning(open=fence(Marker("<muse>")), close=fence(Marker("</muse>"))),
        JsonCalls(
            open=fence(Marker("<act>")),
            close=fence(Marker("</act>")),
            separator=fence("\n"),
            name_key="tool",
            arguments_key="input",
            id_key="ref",
            arguments="verbatim",
            text_after=True,
        ),
        Containers(between=fence("\n"), close={"assistant": fence(Marker("<|/bot|>"))}),
        EscapedText(),
    ),
)


def registered() -> AbstractContextManager[pawlette.Format]:
    """The format registered for the duration of a block."""
    return registering.registered(LAYOUT)
