"""A format a user declares with Python-literal calls (public imports only).

It uses the Python-calls concept breeze is declared with (it lives beside breeze), under
other markers: calls closed by their own fence (breeze's run to the end of the turn), text
allowed before them, strings quoted as Python's ``repr`` picks (breeze's choice), results one
turn each.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

import pawlette
from pawlette.declare import (
    Frame,
    Layout,
    Marker,
    PythonCalls,
    Results,
    SystemPrompt,
    ToolsBlock,
    fence,
)

from . import registering

END = Marker("<|end|>")


def turn(role: str) -> Frame:
    return Frame(open=fence(Marker(f"<|{role}|>")), end=fence(END), after=fence("\n"))


LAYOUT = Layout(
    name="user-python",
    summary="a format a user declares: <|role|> turns, Python call lists in <calls>",
    frames={
        **{role: turn(role) for role in ("system", "user", "assistant")},
        "tool": turn("result"),
    },
    concepts=(
        SystemPrompt(),
        ToolsBlock(place="system", open=fence(Marker("<tools>")), separator=fence("\n")),
        PythonCalls(
            open=fence(Marker("<calls>")),
            close=fence(Marker("</calls>")),
            separator=fence("\n"),
            quote="repr",
        ),
        Results(),
    ),
)


def registered() -> AbstractContextManager[pawlette.Format]:
    """The format registered for the duration of a block."""
    return registering.registered(LAYOUT)
