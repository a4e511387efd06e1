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
from pawlette.declare import SystemPrompt, fence
from pawlette.formats.breeze.media import Boxes, PlaceholderImages
from pawlette.formats.breeze.parts import ContentParts
from pawlette.formats.breeze.python_results import PythonResults
from pawlette.formats.breeze.python_tools import PythonTools

from . import decision_format, registering

LAYOUT = dataclasses.replace(
    decision_format.LAYOUT,
    name="user-parts",
    summary="a format a user declares: decision tokens, Python calls, images and boxes",
    concepts=(
        SystemPrompt(default="You help.", always=True),
        PythonTools(place="system", first=True, open=fence("Functions: "), close=fence("\n---\n")),
        decision_format.CALLS,
        PythonResults(),
        ContentParts(
            images=PlaceholderImages("<img>", "<t>", "</img>", after="\n"),
            boxes=Boxes("<box>", "</box>"),
        ),
    ),
)


def registered() -> AbstractContextManager[pawlette.Format]:
    """The format registered for the duration of a block."""
    return registering.registered(LAYOUT)
