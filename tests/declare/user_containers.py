"""A second format built on the containers concept (PCML's), declared from outside the package.

It differs from pcml wherever the containers' interpreters read the declaration: other
marker spellings, one newline between containers, two before the tools, a call id key and
envelope keys of its own, header fields only some roles have, a reasoning close without
layout, and an opening fence carrying layout text.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

import pawlette
from pawlette.legacy import (
    Containers,
    Frame,
    Headers,
    JsonCalls,
    Layout,
    Marker,
    Reasoning,
    Results,
    ToolsBlock,
    fence,
)

from . import registering


def box(role: str) -> Frame:
    return Frame(open=fence(Marker(f"<|{role}|>")), end=fence(Marker(f"<|/{role}|>")))


LAYOUT = Layout(
    name="user-boxes",
    summary="a containers format a user declares: <|role|> boxes, who= headers, <act> calls",
    frames={
        "system": box("sys"),
        "user": box("me"),
        "assistant": Frame(
            open=fence(Marker("<|bot|>"), "\n"),
            end=fence(Marker("<|done|>")),
            after=fence(Marker("<|/bot|>")),
        ),
    },
    tools=ToolsBlock(
        host="system",
        open=fence(Marker("<toolbox>")),
        close=fence(Marker("</toolbox>")),
        separator=fence("\n\n"),
        wrap="function",
    ),
    reasoning=Reasoning(open=fence(Marker("<muse>")), close=fence(Marker("</muse>"))),
    calls=JsonCalls(
        open=fence(Marker("<act>")),
        close=fence(Marker("</act>")),
        separator=fence("\n"),
        name_key="tool",
        arguments_key="input",
        arguments="verbatim",
    ),
    results=Results(frame=box("out")),
    containers=Containers(
        headers=Headers(
            separator=Marker("<|;|>"),
            fields={"user": {"who": "name"}, "tool": {"call": "tool_call_id"}},
        ),
        between=fence("\n"),
        call_id="ref",
    ),
)


def registered() -> AbstractContextManager[pawlette.Format]:
    """The format registered for the duration of a block."""
    return registering.registered(LAYOUT)
