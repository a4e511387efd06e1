"""A format a user declares with decision tokens and Python calls (public imports only).

Breeze's shape under other markers: the last assistant turn of a request with tools opens
with ``<|use_tool|>`` or ``<|answer|>``; earlier calls open with ``<|python_tag|>`` and end
with ``<|eom|>``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

import pawlette
from pawlette.legacy import (
    Decision,
    Frame,
    Layout,
    Marker,
    PythonCalls,
    Results,
    ToolsBlock,
    fence,
)

from . import registering

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


def registered() -> AbstractContextManager[pawlette.Format]:
    """The format registered for the duration of a block."""
    return registering.registered(LAYOUT)
