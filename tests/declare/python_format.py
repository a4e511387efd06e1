"""A format a user declares with Python-literal calls (public imports only).

It reuses the Python-calls building block breeze is declared with, under other markers: calls
closed by their own fence (breeze's run to the end of the turn), text allowed before them,
strings quoted as Python's ``repr`` picks (breeze's choice), results one turn each.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

import pawlette
from pawlette.legacy import Frame, Layout, Marker, PythonCalls, Results, ToolsBlock, fence

from . import registering

END = Marker("<|end|>")


def turn(role: str) -> Frame:
    return Frame(open=fence(Marker(f"<|{role}|>")), end=fence(END), after=fence("\n"))


LAYOUT = Layout(
    name="user-python",
    summary="a format a user declares: <|role|> turns, Python call lists in <calls>",
    frames={role: turn(role) for role in ("system", "user", "assistant")},
    tools=ToolsBlock(host="system", open=fence(Marker("<tools>")), separator=fence("\n")),
    calls=PythonCalls(
        open=fence(Marker("<calls>")),
        close=fence(Marker("</calls>")),
        separator=fence("\n"),
        quote="repr",
    ),
    results=Results(frame=turn("result")),
)


def registered() -> AbstractContextManager[pawlette.Format]:
    """The format registered for the duration of a block."""
    return registering.registered(LAYOUT)
