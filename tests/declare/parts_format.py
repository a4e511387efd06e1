"""A format a user declares with content parts (public imports only).

Breeze's images and boxes under other markers, on top of the decision-token format: images
(a run of ``<t>`` with a line break after it) in user turns, boxes in user and assistant turns,
the tools block (before the system text; a default system text, read back as none after it
too) and a run of tool results each written as one Python list.
"""

from __future__ import annotations

import dataclasses
from contextlib import AbstractContextManager

import pawlette
from pawlette.legacy import (
    Boxes,
    ContentParts,
    PlaceholderImages,
    PythonResults,
    PythonToolsBlock,
    SystemTurn,
    fence,
)

from . import decision_format, registering

LAYOUT = dataclasses.replace(
    decision_format.LAYOUT,
    name="user-parts",
    summary="a format a user declares: decision tokens, Python calls, images and boxes",
    parts=ContentParts(
        images=PlaceholderImages("<img>", "<t>", "</img>", after="\n"),
        boxes=Boxes("<box>", "</box>"),
    ),
    system=SystemTurn(default="You help.", always=True),
    tools=PythonToolsBlock(
        host="system", first=True, open=fence("Functions: "), close=fence("\n---\n")
    ),
    results=PythonResults(frame=decision_format.turn("result")),
)


def registered() -> AbstractContextManager[pawlette.Format]:
    """The format registered for the duration of a block."""
    return registering.registered(LAYOUT)
