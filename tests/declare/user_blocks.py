"""A second format built on the block-turns concept (omni's), declared from outside the package.

Every block concept of :mod:`pawlette.legacy.blocks` with markers of its own: in-turn
results (a call stops at ``<ret>``; its result is written before ``</fn>`` and the turn
resumes), structured thinking, JSON blocks (definitions, image requests), voice, and image
tiling with four references, 3 tokens an image by default, and no options (the tiling's
default is read without them).  Two tool kinds are defined, functions and actions.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

import pawlette
from pawlette.legacy import Frame, Layout, Marker, fence
from pawlette.legacy.blocks import (
    BlockTurns,
    HeadedText,
    ImageTiling,
    InlineCall,
    JsonBlock,
    StructuredThinking,
)

from . import registering


def turn(name: str, *also_end: str) -> Frame:
    return Frame(
        open=fence(Marker(f"<{name}>")),
        end=fence(Marker(f"</{name}>")),
        also_end=tuple(fence(Marker(text)) for text in also_end),
    )


M = Marker
LAYOUT = Layout(
    name="user-blocks",
    summary="a format a user declares: blocks on their own lines, results inside the turn",
    begin=fence(M("<bos>")),
    frames={"system": turn("sys"), "user": turn("usr"), "assistant": turn("bot", "<ret>")},
    blocks=BlockTurns(
        end=M("<eos>"),
        definitions={
            "function": JsonBlock(M("<def>"), M("</def>")),
            "action": JsonBlock(M("<adef>"), M("</adef>")),
        },
        calls=InlineCall("function", M("<fn>"), M("<args>"), M("<ret>"), M("</fn>")),
        actions=InlineCall("action", M("<act>"), M("<aargs>"), M("</act>")),
        thinking=StructuredThinking(
            M("<think>"), M("<step>"), M("<why>"), M("<so>"), M("</think>")
        ),
        voice=HeadedText(M("<say>"), M("<words>"), M("</say>")),
        image_requests=JsonBlock(M("<draw>"), M("</draw>")),
        tiling=ImageTiling(
            references=tuple(M(f"<img{k}>") for k in range(1, 5)),
            start=M("<tiles>"),
            token=M("<tile>"),
            end=M("</tiles>"),
            output=M("<paint>"),
            default_tokens=3,
        ),
    ),
)


def registered() -> AbstractContextManager[pawlette.Format]:
    """The format registered for the duration of a block."""
    return registering.registered(LAYOUT)
