"""LFM2 and LFM2.5 (``pawlette.formats.lfm2``) against Liquid AI's templates: every kind of
conversation; no template writes reasoning or names, and LFM2's and LFM2.5-Instruct's drop
the calls (documented losses); their own assistant turns parse back to the message as they
keep it."""

from __future__ import annotations

import pawlette

from ...support.template_compare import without_reasoning
from . import FamilyCase

# LFM2.5-8B-A1B's template writes a string argument raw between single quotes: pawlette writes
# it so, and refuses one in which a ' could be taken for its end (the docstring says why),
# which the text it compares never holds.
RAW_ENDS = ("')", "',", "''")


def without_calls(message: dict[str, object]) -> dict[str, object]:
    """What LFM2's and LFM2.5-Instruct's templates keep of a turn: its text alone."""
    result = without_reasoning(message)
    result.pop("tool_calls", None)
    return result


def empty_reasoning_dropped(message: dict[str, object]) -> dict[str, object]:
    """An empty reasoning block reads back as no reasoning."""
    result = dict(message)
    if result.get("reasoning_content") == "":
        result.pop("reasoning_content")
    return result


CASES = [
    FamilyCase("LFM2-8B-A1B", "lfm2:lfm2-8b-a1b", normalise=without_calls, empty_content=True),
    FamilyCase(
        "LFM2.5-Instruct", "lfm2:lfm2.5-instruct", normalise=without_calls, empty_content=True
    ),
    FamilyCase(
        "LFM2.5-8B-A1B",
        "lfm2",
        switches={
            "avoid": (*pawlette.get_format("lfm2").special_markers, *RAW_ENDS),
        },
        normalise=empty_reasoning_dropped,
        empty_content=True,
    ),
]
