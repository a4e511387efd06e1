"""A format a user declares with decision tokens and Python calls (public imports only).

Breeze's shape under other markers: the last assistant turn of a request with tools opens
with ``<|use_tool|>`` or ``<|answer|>``; earlier calls open with ``<|python_tag|>`` and end
with ``<|eom|>``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager

import pawlette
from pawlette.declare import (
    Decision,
    Frame,
    Layout,
    Marker,
    PythonCalls,
    Results,
    ToolsBlock,
    fence,
)

END, END_OF_MESSAGE = Marker("<|end|>"), Marker("<|eom|>")


def turn(role: str) -> Frame:
    also = (fence(END_OF_MESSAGE),) if role == "assistant" else ()
    return Frame(
        open=fence(Marker(f"<|{role}|>")), end=fence(END), after=fence("\n"), also_end=also
    )


LAYOUT = Layout(
    name="user-decide",
    summary="a format a user declares: decision tokens before Python call lists",
    frames={role: turn(role) for role in ("system", "user", "assistant")},
    tools=ToolsBlock(host="system", open=fence(Marker("<tools>")), separator=fence("\n")),
    calls=PythonCalls(open=fence(Marker("<|python_tag|>")), quote="repr", with_content=False),
    decision=Decision(
        call=fence(Marker("<|use_tool|>")),
        answer=fence(Marker("<|answer|>")),
        undecided_end=fence(END_OF_MESSAGE),
    ),
    results=Results(frame=turn("result")),
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
