"""Python function stubs, the text of a tools block, cut into stubs and their signatures
searched: what Seed-OSS's (:mod:`pawlette.formats.seed_oss.stub_reading`) and Command R+'s
(:mod:`pawlette.formats.cohere.stub_reading`) readers share.

Each family reads one stub its own way and accepts it only when writing what it read gives
that very stub back; this module holds the rest: a block cut into stubs (:func:`read_listing`),
the search for the ways a signature reads when names may hold its punctuation
(:func:`signatures`), and the problem a stub that does not read reports
(:class:`StubProblem`).  The parser's reader of such a block is
:class:`pawlette.declare.readers.StubsReader`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

Kind = TypeVar("Kind")
Items = Callable[[str, int], Iterator[tuple[int, int, Kind]]]
"""The items a signature may hold from a position: for each, where its name ends, where the
item ends and its type (``signatures`` checks the separator after it)."""


class StubProblem(ValueError):
    """A stub that does not read: ``position`` (in the stub's text) and what is wrong."""

    def __init__(self, position: int, problem: str) -> None:
        super().__init__(problem)
        self.position = position
        self.problem = problem


Listing = tuple[list[dict[str, Any]], int, StubProblem | None]


def read_listing(
    text: str,
    separator: str,
    end: str,
    read_stub: Callable[[str], dict[str, Any]],
    unended: str,
) -> Listing:
    """The tools of a block's stubs (``text``: from the first stub's start to the last
    one's ``end``, ``separator`` between two; ``read_stub`` reads one or raises
    :class:`StubProblem`; ``unended``: the problem of a stub with no ``end``), where reading
    stopped, and why it stopped short of the end (None: it did not).

    A stub ends at the first ``end`` followed by the separator (or the block's end) that
    makes it read: a description may hold either, not both in a row where the stub before
    them reads (a stub that does not read after it is reported, not taken for the text of
    a description)."""
    tools: list[dict[str, Any]] = []
    position = 0
    while True:
        found: tuple[dict[str, Any], int] | None = None
        first_problem: StubProblem | None = None
        at = text.find(end, position)
        while at >= 0 and found is None:
            after = at + len(end)
            if after == len(text) or text.startswith(separator, after):
                try:
                    found = read_stub(text[position:after]), after
                except StubProblem as problem:
                    first_problem = first_problem or problem
            at = text.find(end, at + 1)
        if found is None:
            if first_problem is None:
                first_problem = StubProblem(0, unended)
            where = position + first_problem.position
            return tools, position, StubProblem(where, first_problem.problem)
        tools.append(found[0])
        position = found[1]
        if position == len(text):
            return tools, position, None
        position += len(separator)


def signatures(
    text: str,
    items: Items[Kind],
    separator: str,
    position: int = 0,
    dead: set[int] | None = None,
) -> Iterator[list[tuple[str, Kind]]]:
    """Each way to read ``text[position:]`` as items (``items``: the ones that may start at
    a position) joined by ``separator``, as (name, type) pairs, shortest names first.
    ``dead``: the positions from which there is none (kept so that a signature with no
    reading is searched in time quadratic in its items, not exponential)."""
    if position == len(text):
        yield []
        return
    dead = set() if dead is None else dead
    if position in dead:
        return
    read = False
    for name_end, item_end, kind in items(text, position):
        if item_end < len(text):
            if not text.startswith(separator, item_end):
                continue
            after = item_end + len(separator)
            if after == len(text):
                continue  # a separator ends no signature
        else:
            after = item_end
        for rest in signatures(text, items, separator, after, dead):
            read = True
            yield [(text[position:name_end], kind), *rest]
    if not read:
        dead.add(position)


MOST_READINGS = 64
"""Ways to read one signature tried before giving up (a name may hold the signature's
punctuation: the readings grow with it)."""


def read_signed_stub(
    text: str,
    start: int,
    signature_end: int,
    readings: Callable[[str], Iterable[Kind]],
    definition: Callable[[int, Kind], dict[str, Any]],
    write: Callable[[dict[str, Any]], str],
    untyped: Callable[[str, int], StubProblem | None],
) -> dict[str, Any]:
    """The function object a stub writes, its signature running from a ``(`` at or after
    ``start`` to ``signature_end``: each ``(`` (a name may hold one) and each of the
    ``readings`` of what follows it is tried, in order, and the first whose ``definition``
    (given the ``(``'s position) ``write`` gives back as ``text`` is the stub's; else
    :class:`StubProblem`, the first found (``untyped``: the problem of the plain reading's
    items after the first ``(``, reported before any other)."""
    problem: StubProblem | None = None
    tried = 0
    first = opening = text.find("(", start)
    while 0 <= opening < signature_end:
        signature = text[opening + 1 : signature_end]
        for parameters in readings(signature):
            tried += 1
            if tried > MOST_READINGS:
                raise problem or StubProblem(opening + 1, "too many ways to read the signature")
            try:
                found = definition(opening, parameters)
            except StubProblem as error:
                problem = problem or error
                continue
            if write(found) == text:
                return found
            problem = problem or StubProblem(0, "its lines read as a tool written otherwise")
        if opening == first:
            problem = untyped(signature, opening + 1) or problem
        opening = text.find("(", opening + 1)
    raise problem or StubProblem(start, "no '(' opening the signature")
