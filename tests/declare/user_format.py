"""A format declared the way a user outside the package would: public imports only.

It differs from the shipped declarations where the interpreters branch: reasoning kept on
every turn, arguments written verbatim, results one turn each with their own fences, a tools
block before the system text.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager

import pawlette
from pawlette.legacy import Frame, JsonCalls, Layout, Marker, Reasoning, Results, ToolsBlock, fence

END = Marker("<|end|>")


def turn(role: str) -> Frame:
    return Frame(open=fence(Marker(f"<|{role}|>")), end=fence(END), after=fence("\n"))


LAYOUT = Layout(
    name="user-tiny",
    summary="a format a user declares: <|role|> turns, <think>, <call> JSON, <|result|>",
    frames={role: turn(role) for role in ("system", "user", "assistant")},
    tools=ToolsBlock(
        host="system",
        first=True,
        open=fence(Marker("<tools>")),
        item_open=fence("\n"),
        close=fence("\n", Marker("</tools>"), "\n"),
    ),
    reasoning=Reasoning(open=fence(Marker("<think>")), close=fence(Marker("</think>"), "\n")),
    calls=JsonCalls(
        open=fence(Marker("<call>")),
        close=fence(Marker("</call>")),
        separator=fence("\n"),
        arguments="verbatim",
    ),
    results=Results(
        frame=turn("result"), item_open=fence(Marker("<r>")), item_close=fence(Marker("</r>"))
    ),
)


@contextmanager
def registered() -> Iterator[pawlette.Format]:
    """The format registered for the duration (the registry is the process's)."""
    registry = importlib.import_module("pawlette.formats")
    fmt = pawlette.register_format(LAYOUT)
    try:
        yield fmt
    finally:
        registry._REGISTERED.pop(LAYOUT.name, None)
