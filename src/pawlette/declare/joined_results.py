"""Tool results joined by ``, `` in one group, with no fence around each result::

    <TOOL_RESPONSE>[18°C, {"rain": false}]</TOOL_RESPONSE>

Nothing but ``, `` tells one result from the next, and a result's own text may hold it.
Reading takes the number of calls of the turn the group answers and cuts the group's text
into that many results at ``, ``, where one way of cutting it leaves every piece that holds
``, `` a whole JSON value (``18°C, [1, 2]``: two results; ``{"a": 1, "b": 2}, 3°C``: two);
otherwise (``18°C, sunny, 3°C`` for two calls) the group is one result holding the whole
text, with a warning.

:class:`JoinedResults` declares such a group (opened by the tool frame's ``open`` between
turns); :class:`GroupReader` reads it, and a format whose group ends differently gives its
reader another :meth:`GroupReader.split` (Apertus' group closes with ``]`` and the
assistant's answer follows it).

>>> from pawlette.declare import JoinedResults
>>> JoinedResults().grouped
True
>>> split_joined('18°C, {"a": 1, "b": 2}', 2)
['18°C', '{"a": 1, "b": 2}']
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..engine.readers import WholeTextReader
from ..types import TextDelta
from .pieces import Fence, fence
from .results import Results

if TYPE_CHECKING:
    from ..engine.machine import Parser
    from .concept import Layout, Table

SEPARATOR = ", "
"""What joins the results of a group."""
GAP = fence(SEPARATOR)
MAX_CUTS = 24  # more separators than this in one group: not searched, one result


@dataclass(frozen=True)
class JoinedResults(Results):
    """:class:`~pawlette.declare.Results` grouped, each result's text followed by
    ``item_gap`` (``, ``) but the group's last: no fence closes a result, so reading cuts the
    group by the number of calls it answers (see :mod:`pawlette.declare.joined_results`).
    The group opens with the tool frame's ``open`` between turns.

    Fields: those of :class:`~pawlette.declare.Results`, each meaning what it means there
    (``help(Results)``), with other defaults: ``grouped`` True, ``item_gap`` ``, ``,
    ``gap_ends_group`` False; ``item_open``, ``item_close``, ``id_close``, ``id_after``,
    ``id_pattern``, ``json_text``, ``trim``, ``name_close`` and ``ids`` as ``Results`` has
    them."""

    grouped: bool = True
    item_gap: Fence = GAP
    gap_ends_group: bool = False

    def validate(self, layout: Layout) -> None:
        # No item_close: the results run together but for the gap, read as the module says.
        if "tool" not in layout.frames:
            super().validate(layout)

    def rows(self, table: Table) -> None:
        frame = table.layout.frames["tool"]
        table.state("tool.group", GroupReader, "tool", ends=True)
        table.on("outside", table.text(frame.open), "tool.group")


def split_joined(text: str, count: int) -> list[str] | None:
    """The ``count`` results a group's ``text`` holds, or None when it cannot be told: of the
    ways to cut it at ``count - 1`` of its ``, ``, the one whose every piece holding ``, ``
    is a whole JSON value (a result's own ``, `` is read as inside such a value), when
    exactly one way is."""
    if count <= 1:
        return [text]
    cuts = [index for index in range(len(text)) if text.startswith(SEPARATOR, index)]
    if len(cuts) > MAX_CUTS:
        return None
    found: list[str] | None = None
    for chosen in itertools.combinations(cuts, count - 1):
        starts = [0, *(cut + len(SEPARATOR) for cut in chosen)]
        ends = [*chosen, len(text)]
        pieces = [text[start:end] for start, end in zip(starts, ends, strict=True)]
        if all(SEPARATOR not in piece or is_json(piece) for piece in pieces):
            if found is not None:
                return None  # two readings: none is the text's
            found = pieces
    return found


def is_json(text: str) -> bool:
    """Whether ``text`` is one whole JSON value."""
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


class GroupReader(WholeTextReader):
    """A group of results: one tool message per call of the turn it answers (see the
    module).  A subclass reads another shape of group by its own :meth:`split` (and says
    what it expected in ``shape`` and ``expected``)."""

    __slots__ = ("_count",)

    shape: ClassVar[str] = f"split at {SEPARATOR!r} into as many results"
    """What the group's text failed to do, in the warning."""
    expected: ClassVar[str] = "one result per call, joined by ', '"

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        # The calls of the message before (its count stays until the next message begins).
        self._count = parser.calls_in_message
        parser.begin_message("tool")

    def split(self, text: str, count: int) -> tuple[list[str], str] | None:
        """The group's ``count`` results and the text after them, or None when the text does
        not split so."""
        pieces = split_joined(text, count)
        return None if pieces is None else (pieces, "")

    def after(self, text: str, marker: str | None) -> None:
        """Read ``text``, what followed the group's results, before ``marker`` (nothing
        follows them here)."""
        del text, marker

    def close(self, marker: str | None, offset: int) -> None:
        parser = self._parser
        text = self._text()
        found = self.split(text, self._count)
        if found is None:
            parser.malformed(
                self._offset if self._chunks else offset,
                f"results {text[:60]!r}: {self._count} calls answered, and the text does not "
                f"{self.shape}",
                self.expected,
                text,
            )
            found = [text], ""
        pieces, rest = found
        for number, piece in enumerate(pieces):
            if number:
                parser.begin_message("tool")
            parser.emit(TextDelta(piece))
            parser.end_message()
        self.after(rest, marker)
