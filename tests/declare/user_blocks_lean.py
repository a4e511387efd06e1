"""A block-turns format that leaves the optional blocks out, declared from outside the package.

Only what the concept requires: turns, tool definitions (functions only) and calls whose
results are written inside the turn, with structured thinking and nothing else (no actions,
voice, image requests or images: parts of those kinds are refused).
"""

from __future__ import annotations

from contextlib import AbstractContextManager

import pawlette
from pawlette.legacy import Frame, Layout, Marker, fence
from pawlette.legacy.blocks import BlockTurns, InlineCall, JsonBlock, StructuredThinking

from . import registering


def turn(name: str, *also_end: str) -> Frame:
    return Frame(
        open=fence(Marker(f"<|{name}|>")),
        end=fence(Marker(f"<|/{name}|>")),
        also_end=tuple(fence(Marker(text)) for text in also_end),
    )


M = Marker
LAYOUT = Layout(
    name="user-blocks-lean",
    summary="a format a user declares: results inside the turn, structured thinking",
    frames={"system": turn("s"), "user": turn("u"), "assistant": turn("a", "<|wait|>")},
    blocks=BlockTurns(
        end=M("<|done|>"),
        definitions={"function": JsonBlock(M("<|tool|>"), M("<|/tool|>"))},
        calls=InlineCall("function", M("<|call|>"), M("<|with|>"), M("<|wait|>"), M("<|got|>")),
        thinking=StructuredThinking(M("<|t|>"), M("<|step|>"), M("<|r|>"), M("<|c|>"), M("<|/t|>")),
    ),
)


def registered() -> AbstractContextManager[pawlette.Format]:
    """The format registered for the duration of a block."""
    return registering.registered(LAYOUT)
