"""Images as placeholder runs and bounding boxes: the pieces of Breeze's content parts.

- :class:`PlaceholderImages`: an image is ``open`` + N x ``token`` + ``close`` (+ ``after``
  layout text), N from ``image_url.tokens`` or the format's count rule (by default InternVL's
  tiling, :func:`pawlette.blocks.images.default_image_tokens`).  The text holds the run, not
  the image: parsing gives an :class:`~pawlette.types.ImagePart` with ``url=""`` and
  ``tokens=N``.
- :class:`Boxes`: a :class:`~pawlette.types.BoxPart` is ``open`` + ``[[x1, y1, x2, y2], ...]``
  + ``close``, coordinates integers 0..1000 written as Python writes them.

Each carries its share of the four interpreters, which :mod:`.parts` (the concept) puts
together: the writer (:meth:`PlaceholderImages.write`, :meth:`Boxes.write`), the parse table
(the :class:`PlaceholderRun` actions, :class:`BoxReader`), the Jinja
(:meth:`PlaceholderImages.jinja_macro`, :meth:`PlaceholderImages.jinja`, :meth:`Boxes.jinja`)
and the grammar (:meth:`Boxes.grammar`: coordinates without leading zeros, as the reader reads
them).
"""

# ruff: noqa: E501  (Jinja source: one tag per line reads better than wrapped tags)

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from ...blocks.images import grids, placeholder_count
from ...codecs.python_calls import parse_python_literal
from ...codecs.python_literals import python_literal
from ...emit.grammar_ast import Lit, Marker, Node, Repeat, Rules, Terminal, seq
from ...emit.jinja_text import jinja_string
from ...engine.machine import Parser, ReaderFactory
from ...engine.readers import WholeTextReader
from ...engine.writer import Writer
from ...errors import ParseError
from ...types import BoxPart, ImagePart, PartAdded, TextDelta

# --------------------------------------------------------------------------- images


@dataclass
class _PlaceholderCount:
    """The placeholder tokens of the image being read."""

    tokens: int = 0


class PlaceholderRun:
    """Parse actions for ``open`` + N x ``token`` + ``close``: the image part, ``tokens=N``."""

    @staticmethod
    def start(parser: Parser, offset: int) -> None:
        parser.context(_PlaceholderCount).tokens = 0

    @staticmethod
    def count(parser: Parser, offset: int) -> None:
        parser.context(_PlaceholderCount).tokens += 1

    @staticmethod
    def end(parser: Parser, offset: int) -> None:
        run = parser.context(_PlaceholderCount)
        tokens, run.tokens = run.tokens, 0
        parser.emit(PartAdded(ImagePart(url="", tokens=tokens)))


@dataclass(frozen=True)
class PlaceholderImages:
    """An image written as a run of placeholder tokens (see the module docstring).

    ``after``: layout text the writer puts after every image (MRPromptV3's line break); the
    body reader drops it, and reads an image without it too.
    """

    open: str
    token: str
    close: str
    after: str = ""
    tile: int = 448
    max_tiles: int = 12
    tokens_per_tile: int = 256

    def write(
        self, writer: Writer, part: ImagePart, count: Callable[[ImagePart], int], path: str
    ) -> None:
        """The run, not trainable (the model never writes an image)."""
        tokens = placeholder_count(part, count, path)
        writer.marker(self.open, "image")
        for _ in range(tokens):
            writer.marker(self.token, "image")
        writer.marker(self.close, "image")
        if self.after:
            writer.raw(self.after, "image")

    def jinja(self, part: str, where: str) -> str:
        """Jinja statements writing the run of the image part ``part`` (a Jinja name)."""
        return (
            f"{{%- set count = image_tokens({part}.image_url, {where} ~ '.image_url')|int -%}}\n"
            f"{{{{- {jinja_string(self.open)} -}}}}\n"
            f"{{%- for _ in range(count) -%}}{{{{- {jinja_string(self.token)} -}}}}{{%- endfor -%}}\n"
            f"{{{{- {jinja_string(self.close)} ~ {jinja_string(self.after)} -}}}}"
        )

    def jinja_macro(self) -> str:
        """``image_tokens(image, where)``: ``tokens``, else InternVL tiling of the size."""
        grid_list = "[" + ", ".join(f"[{c}, {r}]" for c, r in grids(1, self.max_tiles)) + "]"
        return (
            _IMAGE_TOKENS_MACRO.replace("@GRIDS@", grid_list)
            .replace("@TILE@", str(self.tile))
            .replace("@PER_TILE@", str(self.tokens_per_tile))
        )


_IMAGE_TOKENS_MACRO = r"""{%- macro image_tokens(image, where) -%}
{%- if image is mapping and image.tokens is defined and image.tokens is not none -%}
{%- if image.tokens < 0 -%}{{- raise_exception(where ~ '.tokens: ' ~ image.tokens ~ '; expected a count of tokens') -}}{%- endif -%}
{{- image.tokens -}}
{%- elif image is mapping and image.width is defined and image.height is defined and image.width is not none and image.height is not none -%}
{%- if image.width <= 0 or image.height <= 0 -%}
{{- raise_exception(where ~ ': image size ' ~ image.width ~ 'x' ~ image.height ~ '; expected positive pixel sizes') -}}
{%- endif -%}
{%- set tiling = namespace(best=[1, 1], difference=-1) -%}
{%- set aspect = image.width / image.height -%}
{%- set area = image.width * image.height -%}
{%- for grid in @GRIDS@ -%}
{%- set difference = (aspect - grid[0] / grid[1])|abs -%}
{%- if tiling.difference < 0 or difference < tiling.difference -%}
{%- set tiling.difference = difference -%}
{%- set tiling.best = grid -%}
{%- elif difference == tiling.difference and area > 0.5 * @TILE@ * @TILE@ * grid[0] * grid[1] -%}
{%- set tiling.best = grid -%}
{%- endif -%}
{%- endfor -%}
{%- set tiles = tiling.best[0] * tiling.best[1] -%}
{{- (tiles + (1 if tiles > 1 else 0)) * @PER_TILE@ -}}
{%- else -%}
{{- raise_exception(where ~ ': an image without width and height (the placeholder count depends on its size); expected width and height, or tokens') -}}
{%- endif -%}
{%- endmacro -%}
"""


# --------------------------------------------------------------------------- boxes

COORDINATE = Terminal("BOX_COORDINATE", lark="/1000|[1-9][0-9]{0,2}|0/", gbnf="box-coordinate")
"""0..1000 without leading zeros, as :class:`BoxReader` reads them (it refuses ``03``)."""


class BoxReader(WholeTextReader):
    """``[[x1, y1, x2, y2], ...]`` as a Python (or JSON) literal, 0..1000."""

    __slots__ = ("_close_marker",)

    def __init__(self, parser: Parser, close_marker: str) -> None:
        super().__init__(parser)
        self._close_marker = close_marker

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        problem = "the boxes are not closed"
        if marker == self._close_marker:
            try:
                return self._parser.emit(PartAdded(read_boxes(text, self._offset or offset)))
            except ParseError as error:
                problem = f"{error.found}; expected {error.expected}"
        raw = (self._parser.entered_by or "") + text + (marker or "")
        expected = "[[x1, y1, x2, y2], ...] with integers from 0 to 1000"
        self._parser.malformed(
            self._offset or offset, f"boxes {text[:40]!r}: {problem}", expected, raw
        )
        self._parser.emit(TextDelta((self._parser.entered_by or "") + text))
        if marker == self._close_marker:
            self._parser.emit(TextDelta(marker))


def read_boxes(text: str, offset: int) -> BoxPart:
    """The boxes of a box block's text (nothing is evaluated)."""
    value = parse_python_literal(text, offset=offset)
    boxes = []
    if isinstance(value, list) and value:
        for box in value:
            if not (
                isinstance(box, list)
                and len(box) == 4
                and all(type(c) is int and 0 <= c <= 1000 for c in box)
            ):
                break
            boxes.append((box[0], box[1], box[2], box[3]))
        else:
            return BoxPart(tuple(boxes))
    raise ParseError(offset, f"the value {text[:40]!r}", "a list of four-integer boxes")


@dataclass(frozen=True)
class Boxes:
    """A :class:`~pawlette.types.BoxPart` between two markers (see the module docstring)."""

    open: str
    close: str

    def write(self, writer: Writer, part: BoxPart, *, trainable: bool) -> None:
        boxes = python_literal([list(box) for box in part.boxes])
        writer.marker(self.open, "bbox", trainable=trainable)
        writer.text(boxes, "bbox", trainable=trainable)
        writer.marker(self.close, "bbox", trainable=trainable)

    def reader(self) -> ReaderFactory:
        return partial(BoxReader, close_marker=self.close)

    def jinja(self, boxes: str, where: str) -> str:
        """A Jinja expression writing the box list ``boxes`` (needs ``python_literal``)."""
        return (
            f'{jinja_string(self.open)} ~ python_literal({boxes}, "\'", {where}) ~ '
            f"{jinja_string(self.close)}"
        )

    def grammar(self, rules: Rules) -> Node:
        """The box block as a grammar rule (``box``), coordinates 0..1000."""
        rules.gbnf_extra["box-coordinate"] = '"1000" | [1-9] [0-9]? [0-9]? | "0"'
        box = seq(COORDINATE, *[item for _ in range(3) for item in (Lit(", "), COORDINATE)])
        listed = seq(Lit("[["), box, Lit("]"), Repeat(seq(Lit(", ["), box, Lit("]"))), Lit("]"))
        return rules.add("box", seq(Marker(self.open), listed, Marker(self.close)))
