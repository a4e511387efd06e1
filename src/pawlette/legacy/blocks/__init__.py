"""Block turns: turns whose bodies are text and blocks on their own lines (omni, seed 000).

A whole-format concept, like :mod:`..containers` and :mod:`..headed`: the layout's frames
give the turns' markers (``begin`` the BOS, ``end`` here the EOS), and each kind of block is a
concept of its own module with all of its interpreters:

- :mod:`.inline_calls`: calls written in the turn, a function's result written *inside* the
  same assistant turn (the model stops at the call; the system writes the result and the turn
  resumes), actions (fire and forget, content parts);
- :mod:`.thinking`: structured thinking (a preamble, then steps of title, reasoning and
  conclusion);
- :mod:`.json_blocks`: JSON blocks (tool definitions, image requests) and a JSON header
  before text (voice parts);
- :mod:`.tiling`: images referenced by position in the text, their tiles of tokens after
  it, and output images;
- :mod:`.spans`: what they share (text between blocks, whose edge newlines belong to them).

The writer (:mod:`.write`), the parse table (:mod:`.table`), the Jinja template
(:mod:`.jinja`) and the turn grammars (:mod:`.grammar`) compose them.  Text is escaped: a
marker spelt in any text is written with a backslash (as in PCML), so every text round trips.
Layout decided here: ``begin`` then ``\\n``, turns separated by ``\\n\\n``, then ``\\n`` and
``end``; the tools are definition blocks after the first system message's text (a system
turn holding only them when there is none).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...blocks.tool_choice import ForcedPrefixes
from ...engine.lexer import escape_text, marker_pattern
from ...errors import FormatError
from ..layout import Marker
from .inline_calls import InlineCall
from .json_blocks import HeadedText, JsonBlock
from .thinking import StructuredThinking
from .tiling import ImageTiling

if TYPE_CHECKING:
    from ..layout import Layout

__all__ = [
    "BlockTurns",
    "HeadedText",
    "ImageTiling",
    "InlineCall",
    "JsonBlock",
    "StructuredThinking",
]


@dataclass(frozen=True)
class BlockTurns:
    """The blocks of a block-turns layout (see the module).

    ``definitions``: the tools block, one :class:`JsonBlock` per tool kind (``"function"``,
    and ``"action"`` when the layout has ``actions``).  ``calls``: function calls, their
    results in the turn (``result_end``); ``actions``: action calls (no result).  The other
    blocks are optional: a layout without one refuses the content it would write.
    """

    end: Marker
    definitions: Mapping[str, JsonBlock]
    calls: InlineCall
    actions: InlineCall | None = None
    thinking: StructuredThinking | None = None
    voice: HeadedText | None = None
    image_requests: JsonBlock | None = None
    tiling: ImageTiling | None = None


def blocks_of(layout: Layout) -> BlockTurns:
    blocks = layout.blocks
    assert blocks is not None
    return blocks


def check(layout: Layout) -> None:
    """Refuse, when declared, what the interpreters cannot write."""
    blocks = blocks_of(layout)
    kinds = {"function", "action"} if blocks.actions is not None else {"function"}
    if set(blocks.definitions) != kinds:
        raise FormatError(
            f"{layout.name}: definitions for {sorted(blocks.definitions)}; expected one block "
            f"for each of {sorted(kinds)} (actions need their definitions and the reverse)"
        )
    if blocks.calls.kind != "function" or blocks.calls.result_end is None:
        raise FormatError(f"{layout.name}: calls must be function calls with a result_end")
    if blocks.actions is not None and (
        blocks.actions.kind != "action" or blocks.actions.result_end is not None
    ):
        raise FormatError(f"{layout.name}: actions are action calls with no result_end")
    for role in ("system", "user", "assistant"):
        frame = layout.frames[role]
        for pieces in (frame.open, frame.end):
            if len(pieces) != 1 or not isinstance(pieces[0], Marker):
                raise FormatError(f"{layout.name}: a block turn's frame is one marker ({role})")


def special_markers(layout: Layout) -> tuple[str, ...]:
    """Every marker, in declaration order (the frames, then each block's)."""
    blocks = blocks_of(layout)
    markers: list[Marker] = [*(piece for piece in layout.begin if isinstance(piece, Marker))]
    markers.append(blocks.end)
    for frame in layout.frames.values():
        markers += [piece for piece in (*frame.open, *frame.end) if isinstance(piece, Marker)]
    for block in blocks.definitions.values():
        markers += [block.open, block.close]
    calls = blocks.calls
    markers += [calls.start, calls.arguments, calls.close]
    markers += [calls.result_end] if calls.result_end is not None else []
    if blocks.actions is not None:
        markers += [blocks.actions.start, blocks.actions.arguments, blocks.actions.close]
    thinking = blocks.thinking
    if thinking is not None:
        markers += [thinking.start, thinking.step, thinking.reasoning, thinking.conclusion]
        markers += [thinking.end]
    if blocks.voice is not None:
        markers += [blocks.voice.start, blocks.voice.body, blocks.voice.end]
    if blocks.image_requests is not None:
        markers += [blocks.image_requests.open, blocks.image_requests.close]
    tiling = blocks.tiling
    if tiling is not None:
        markers += [tiling.start, tiling.token, tiling.end, tiling.output, *tiling.references]
    return tuple(dict.fromkeys(marker.text for marker in markers))


def escape_pattern(layout: Layout) -> re.Pattern[str]:
    """Every marker is escaped inside text."""
    return marker_pattern(special_markers(layout))


def forced_prefixes(layout: Layout) -> ForcedPrefixes:
    """``required``: a call's opening (its own line); a named choice: up to its arguments
    (the turn grammar's bundle reports the same ones)."""
    calls = blocks_of(layout).calls
    opening = "\n" + calls.start.text
    pattern = escape_pattern(layout)

    def named(name: str) -> str:
        return opening + escape_text(name, pattern, before_marker=True) + calls.arguments.text

    return ForcedPrefixes(required=opening, none="", named=named, only_with_tools=True)
