"""Image placeholders and bounding boxes for formats that write images as runs of tokens.

**Placeholder counts.**  An early-fusion model (breeze) sees an image as ``N`` placeholder
tokens, ``N`` fixed by how its vision encoder cuts the image.  :func:`internvl_tile_count`
is InternVL's dynamic tiling, which Breeze 2 uses: the image is resized to the grid of
448-pixel tiles (at most 12) whose aspect ratio is closest to its own, and when that grid
has more than one tile a thumbnail of the whole image is added; each tile is 256 tokens.

>>> internvl_image_tokens(448, 448)     # one tile, no thumbnail
256
>>> internvl_image_tokens(896, 448)     # a 2x1 grid plus the thumbnail
768

**Image references** (:class:`ImageReferences`, omni's ``<|IMAGE_1|>``): where an image
stands in a turn's text, written from the position of its part, never from text.

**Bounding boxes** (:class:`~pawlette.types.BoxPart`) are ``(x1, y1, x2, y2)`` normalised to
0..1000 of the image's width and height; :func:`normalise_box` and :func:`pixel_box` convert.

>>> normalise_box((0, 0, 320, 240), width=640, height=480)
(0, 0, 500, 500)
>>> pixel_box((0, 0, 500, 500), width=640, height=480)
(0, 0, 320, 240)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, cast

from ..engine.machine import Action, Parser, ReaderFactory
from ..errors import RequestError
from ..types import BoxPart, Event, ImagePart, PartAdded, TextDelta

BOX_SCALE = 1000
"""Normalised coordinates run from 0 to this."""


# --------------------------------------------------------------------------- placeholder counts


def grids(min_tiles: int, max_tiles: int) -> list[tuple[int, int]]:
    """Every (columns, rows) grid with ``min_tiles..max_tiles`` tiles, fewest tiles first."""
    grids = {
        (columns, rows)
        for columns in range(1, max_tiles + 1)
        for rows in range(1, max_tiles + 1)
        if min_tiles <= columns * rows <= max_tiles
    }
    return sorted(grids, key=lambda grid: (grid[0] * grid[1], grid))


def internvl_grid(
    width: int, height: int, *, tile_size: int = 448, min_tiles: int = 1, max_tiles: int = 12
) -> tuple[int, int]:
    """The (columns, rows) grid InternVL's dynamic tiling picks for an image.

    The grid whose aspect ratio is closest to the image's; on a tie the grid with more tiles
    wins when the image has more than half the pixels of that many tiles (InternVL's
    ``find_closest_aspect_ratio``, with the same float arithmetic).
    """
    if width <= 0 or height <= 0:
        raise ValueError(f"image size {width}x{height}; expected positive pixel sizes")
    aspect_ratio = width / height
    area = width * height
    best_difference = float("inf")
    best = (1, 1)
    for columns, rows in grids(min_tiles, max_tiles):
        difference = abs(aspect_ratio - columns / rows)
        if difference < best_difference:
            best_difference = difference
            best = (columns, rows)
        elif difference == best_difference and area > 0.5 * tile_size * tile_size * columns * rows:
            best = (columns, rows)
    return best


def internvl_tile_count(
    width: int,
    height: int,
    *,
    tile_size: int = 448,
    max_tiles: int = 12,
    thumbnail: bool = True,
    thumbnail_for_one_tile: bool = False,
) -> int:
    """How many tiles InternVL's dynamic tiling makes of an image, thumbnail included.

    ``thumbnail_for_one_tile``: count a thumbnail even when the grid is one tile (MediaTek's
    ``MRPromptV3._total_image_token`` does, though InternVL's ``dynamic_preprocess`` adds
    none then).
    """
    columns, rows = internvl_grid(width, height, tile_size=tile_size, max_tiles=max_tiles)
    tiles = columns * rows
    if thumbnail and (tiles > 1 or thumbnail_for_one_tile):
        tiles += 1
    return tiles


def internvl_image_tokens(width: int, height: int, *, tokens_per_tile: int = 256) -> int:
    """Placeholder tokens for an image under InternVL tiling (448-pixel tiles, at most 12)."""
    return internvl_tile_count(width, height) * tokens_per_tile


def default_image_tokens(part: ImagePart) -> int:
    """Breeze's default rule: :func:`internvl_image_tokens` of the image's ``width``/``height``.

    Raises :class:`ValueError` when the part has no size (the format reports where).
    """
    if part.width is None or part.height is None:
        raise ValueError(
            "an image without width and height (the placeholder count depends on its size)"
        )
    return internvl_image_tokens(part.width, part.height)


def placeholder_count(part: ImagePart, rule: Callable[[ImagePart], int], path: str) -> int:
    """``part.tokens`` when given, else ``rule(part)``; errors name ``path`` (the part)."""
    count = part.tokens
    if count is None:
        try:
            count = rule(part)
        except ValueError as error:
            raise RequestError(
                f"{path}.image_url",
                str(error),
                "width and height, or tokens",
                "or render with fmt.with_options(image_tokens=...)",
            ) from error
    if count < 0:
        raise RequestError(f"{path}.image_url.tokens", f"{count}", "a count of tokens")
    return count


# --------------------------------------------------------------------------- bounding boxes

Box = tuple[int, int, int, int]


def _check_size(width: float, height: float) -> None:
    if width <= 0 or height <= 0:
        raise RequestError("image size", f"{width}x{height}", "positive pixel sizes")


def normalise_box(box: Sequence[float], *, width: float, height: float) -> Box:
    """A pixel box ``(x1, y1, x2, y2)`` as 0..1000 coordinates of a ``width`` x ``height``
    image (rounded, clamped to 0..1000)."""
    _check_size(width, height)
    if len(box) != 4:
        raise RequestError("box", f"{len(box)} coordinates", "four: x1, y1, x2, y2")
    x1, y1, x2, y2 = (
        min(BOX_SCALE, max(0, round(value / size * BOX_SCALE)))
        for value, size in zip(box, (width, height, width, height), strict=True)
    )
    return (x1, y1, x2, y2)


def pixel_box(box: Sequence[int], *, width: float, height: float) -> Box:
    """A 0..1000 box as pixel coordinates of a ``width`` x ``height`` image (rounded)."""
    _check_size(width, height)
    if len(box) != 4:
        raise RequestError("box", f"{len(box)} coordinates", "four: x1, y1, x2, y2")
    x1, y1, x2, y2 = (
        round(value * size / BOX_SCALE)
        for value, size in zip(box, (width, height, width, height), strict=True)
    )
    return (x1, y1, x2, y2)


def box_part(boxes: Sequence[Sequence[float]], *, width: float, height: float) -> BoxPart:
    """A :class:`BoxPart` from pixel boxes of a ``width`` x ``height`` image."""
    return BoxPart(tuple(normalise_box(box, width=width, height=height) for box in boxes))


def pixel_boxes(part: BoxPart, *, width: float, height: float) -> list[Box]:
    """The boxes of a (parsed) :class:`BoxPart` in pixels of a ``width`` x ``height`` image."""
    return [pixel_box(box, width=width, height=height) for box in part.boxes]


# --------------------------------------------------------------------------- image references


@dataclass(slots=True)
class _Slot:
    """Where an image reference stands among a turn's held events, until its block is read."""

    marker: str
    offset: int
    image: ImagePart | None = None


@dataclass(slots=True)
class _Held:
    """A turn's events from its first image reference on, held until its image blocks are read."""

    events: list[Event | _Slot] = field(default_factory=list)
    slots: list[_Slot] = field(default_factory=list)
    resolved: int = 0


@dataclass
class _ImagesRead:
    """The parser's image references being read, by :attr:`ImageReferences.key`: the held
    turn, and the tokens counted in the block being read."""

    held: dict[str, _Held] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)


class _HoldingParser:
    """The parser as the readers of a turn with image references see it: what they emit is held
    (in order) while references wait for their blocks; everything else is the parser's."""

    __slots__ = ("_key", "_parser")

    def __init__(self, parser: Parser, key: str) -> None:
        self._parser = parser
        self._key = key

    def emit(self, event: Event) -> None:
        held = self._parser.context(_ImagesRead).held.get(self._key)
        if held is not None:
            held.events.append(event)
        else:
            self._parser.emit(event)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._parser, name)


class _HeldReader:
    """A reader given the holding parser; at the end of input it also releases what is held."""

    __slots__ = ("_images", "_inner", "_parser")

    def __init__(self, parser: Parser, images: ImageReferences, inner: ReaderFactory) -> None:
        self._parser = parser
        self._images = images
        self._inner = inner(cast(Parser, _HoldingParser(parser, images.key)))

    def feed(self, text: str, offset: int) -> None:
        self._inner.feed(text, offset)

    def close(self, marker: str | None, offset: int) -> None:
        self._inner.close(marker, offset)
        if marker is None:
            self._images.release(self._parser, offset)


class _ImageRunReader:
    """An image block's run of placeholder tokens: the image of the next waiting reference
    (or, with none waiting, an image part where the block stands)."""

    __slots__ = ("_images", "_parser")

    def __init__(self, parser: Parser, images: ImageReferences) -> None:
        self._parser = parser
        self._images = images
        if parser.entered_by != images.token:
            parser.context(_ImagesRead).tokens[images.key] = 0

    def feed(self, text: str, offset: int) -> None:
        pass  # text inside a block is not part of anything (the seed's elided "...")

    def close(self, marker: str | None, offset: int) -> None:
        read = self._parser.context(_ImagesRead)
        key = self._images.key
        count = read.tokens.get(key, 0)
        if marker == self._images.token:
            read.tokens[key] = count + 1
            return
        image = ImagePart(url="", tokens=count)
        held = read.held.get(key)
        if held is not None and held.resolved < len(held.slots):
            held.slots[held.resolved].image = image
            held.resolved += 1
        elif held is not None:
            held.events.append(PartAdded(image))
        else:
            self._parser.emit(PartAdded(image))


@dataclass(frozen=True)
class ImageReferences:
    """Images referenced from a turn's text by structure (omni's ``<|IMAGE_1|>``, seed 000).

    A turn writes the reference marker ``references[k - 1]`` where its ``k``-th image part
    stands among its text, and after all its text each image's block: ``start`` + ``token``
    x N + ``end``.  Text never makes a reference (it spells one only escaped), so references
    come from image parts alone, numbered in order.

    Parsing gives the parts back where their references stand: a turn's events from its first
    reference on are held until its blocks are read (a user turn is never streamed to a
    client), and the ``k``-th block is the ``k``-th reference's image (``{"url": "",
    "tokens": N}``).  A block beyond the references is an image part where the block stands; a
    reference out of order, or without a block when the turn ends, is malformed (lenient: its
    marker is text, with a warning).
    """

    references: tuple[str, ...]
    token: str
    key: str = "image_references"

    def hold(self, reader: ReaderFactory) -> ReaderFactory:
        """``reader`` for a state of the turn: its events are held while references wait."""
        return partial(_HeldReader, images=self, inner=reader)

    def run_reader(self) -> ReaderFactory:
        """The reader of a block's run of tokens (a state looping on :attr:`token`)."""
        return partial(_ImageRunReader, images=self)

    def reference(self, number: int) -> Action:
        """The action on the reference marker of the ``number``-th image (from 1)."""
        marker = self.references[number - 1]

        def action(parser: Parser, offset: int) -> None:
            waiting = parser.context(_ImagesRead).held
            held = waiting.get(self.key)
            if held is None:
                held = waiting[self.key] = _Held()
            if number != len(held.slots) + 1:
                parser.malformed(
                    offset,
                    f"image reference {marker!r} after {len(held.slots)} reference(s)",
                    f"{self.references[len(held.slots)]!r} (references are numbered in order)",
                    marker,
                )
                held.events.append(TextDelta(marker))
                return
            slot = _Slot(marker, offset)
            held.slots.append(slot)
            held.events.append(slot)

        return action

    def release(self, parser: Parser, offset: int) -> None:
        """Emit the held events, each reference as its image (the turn ends here)."""
        read = parser.context(_ImagesRead)
        held = read.held.pop(self.key, None)
        read.tokens.pop(self.key, None)
        if held is None:
            return
        for event in held.events:
            if not isinstance(event, _Slot):
                parser.emit(event)
            elif event.image is not None:
                parser.emit(PartAdded(event.image))
            else:
                parser.malformed(
                    event.offset,
                    f"image reference {event.marker!r} with no image block in its turn",
                    "an image block for each reference, after the turn's text",
                    event.marker,
                )
                parser.emit(TextDelta(event.marker))

    def release_action(self) -> Action:
        """The action on the marker that ends the turn."""
        return self.release
