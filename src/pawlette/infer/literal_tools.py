"""Tools written as Python literals (``{{ tool|string }}``): Apriel's presentation as a
plain :class:`~pawlette.declare.ToolsBlock`, placed wherever inference finds it.

A template that writes the literals once, where a tools block goes, is this block: each tool
as Python's ``repr`` of the tool object (or of its ``function``), between the item fences.
One that writes them in every system turn, with a close of their own in the turn written
without a system message, is Apriel 1.5's (:func:`closes_alone` finds that close, and
:class:`~pawlette.formats.apriel.tools.ReprLineTools` declares it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..codecs.python_calls import python_literal_or_none
from ..codecs.python_literals import python_literal
from ..declare import ToolsBlock
from ..declare.pieces import text_of
from ..declare.python_calls import literal_macros
from ..declare.readers import Described
from ..engine.kept import Kept, marshal_key
from ..formats.apriel.tools import ReprLinesReader, split_literals
from .probe import Probe, message

if TYPE_CHECKING:
    from ..declare.jinja import Template
    from ..declare.table import Table
    from ..engine.machine import Parser, ReaderFactory
    from .draft import Draft

__all__ = ["LiteralTools", "closes_alone"]

_LITERALS: Kept[str] = Kept(limit=256, longest=1 << 14)
"""Tools written as Python literals, by content."""


@dataclass(frozen=True)
class LiteralTools(ToolsBlock):
    """A :class:`~pawlette.declare.ToolsBlock` whose items are Python literals (``repr``
    of the tool object), not JSON; read back the same way."""

    def dump(self, value: Any) -> str:
        # (Kept by the value's content: the same tools come with every request.)
        return _LITERALS.get(
            marshal_key(value), lambda: python_literal(value, quote="repr", path="tools")
        )

    def items_reader(self, table: Table) -> ReaderFactory:
        item_open, item_close = text_of(self.item_open), text_of(self.item_close)
        joiner = item_close + item_open

        def make(parser: Parser) -> _LiteralsReader:
            return _LiteralsReader(parser, item_open, item_close, joiner)

        return Described("tool objects as Python literals", make)

    def jinja_setup(self, out: Template) -> None:
        super().jinja_setup(out)
        literal_macros(out)

    def jinja_item(self, out: Template) -> None:
        value = "tool" if self.wrap == "openai" else "tool.function"
        out.out(f"{{{{- python_literal({value}, 'repr', 'tools') -}}}}")


class _LiteralsReader(ReprLinesReader):
    """The block's tool objects, each a Python literal between the item fences."""

    __slots__ = ("_item_close", "_item_open", "_joiner")

    def __init__(self, parser: Parser, item_open: str, item_close: str, joiner: str) -> None:
        super().__init__(parser)
        self._item_open, self._item_close, self._joiner = item_open, item_close, joiner

    def values(self, text: str) -> list[object]:
        if not text.startswith(self._item_open) or not text.endswith(self._item_close):
            return [None]
        inner = text[len(self._item_open) : len(text) - len(self._item_close)]
        if not self._joiner:  # (run together: each the shortest literal that reads)
            return list(split_literals(inner) or [None])
        return [python_literal_or_none(item) for item in inner.split(self._joiner)]


def closes_alone(
    probe: Probe,
    draft: Draft,
    one: list[dict[str, Any]],
    block: tuple[str, str, str, str],
) -> tuple[str, str] | None:
    """``(close_alone, default_turn)`` where the template writes the block as Apriel 1.5's
    does (:class:`~pawlette.formats.apriel.tools.ReprLineTools`): in a system message's turn
    closed by ``close``, but in the turn it writes when the conversation does not begin with
    a system message closed otherwise (``close_alone``: its call instructions), then, with no
    system message anywhere, its default system turn (``default_turn``: that turn's end and
    the next one's opening and text).  None: the block closes alike there (or the template
    writes it otherwise).  ``one``: a probe tool; ``block``: the block's open, that tool's
    text, the item close and the block's close."""
    block_open, single, item_close, close = block
    user, user2 = message("user", probe.sentinel("u", 1)), message("user", probe.sentinel("u", 2))
    later = message("system", probe.sentinel("s", 1))
    end = draft.frames["system"].end
    item = block_open + single + item_close
    alone = probe.render([user], one)
    with_later = probe.render([user, later, user2], one)
    if alone is None or with_later is None or alone.count(item) != 1:
        return None
    rest = alone[alone.index(item) + len(item) :]
    if rest.startswith(close + end):
        return None
    after = with_later.find(item)
    closing = with_later.find(end, after + len(item))
    if after < 0 or closing < 0:
        return None
    close_alone = with_later[after + len(item) : closing]
    if close_alone == close or not rest.startswith(close_alone):
        return None
    # The default turn runs up to the system turn's end before the user's turn.
    system, user_frame = draft.frames["system"], draft.frames["user"]
    opener = user_frame.open_after.get("system", user_frame.open)
    tail = end + system.after + opener + str(user["content"])
    stop = rest.find(tail)
    if stop < len(close_alone):
        return None
    return close_alone, rest[len(close_alone) : stop]
