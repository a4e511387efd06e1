"""Turn reading: what a parser reads of Llama 3 style turns beyond what the writer writes.

A concept of the declaration layer (:mod:`pawlette.legacy.layout`) with its one interpreter,
the parse table (nothing here is written, templated or generated, so the writer, Jinja and
grammar never see it).  A layout whose frames open with ``header_open`` + role name +
``header_close`` + ``blank`` (``<|start_header_id|>user<|end_header_id|>\\n\\n``) reads each
whole opening as one marker; a :class:`TurnReading` adds rows for what a model or a user may
write otherwise:

- **A header read in pieces**: ``header_open`` alone begins a role name, read up to
  ``header_close``.  A known role without its ``blank`` (``...user<|end_header_id|>Hi``) is
  malformed: strict mode raises, lenient mode warns and reads the turn.  An unknown role
  (``robot``) is malformed too: lenient mode reads the turn as a user message whose text
  starts with the header (its ``blank`` dropped), as the engine keeps all malformed text.
- **The end of text**: ``end_of_text`` (a base model's ``<|end_of_text|>``) ends whatever turn
  is open and is skipped between turns.  It is not a stop (the model ends a turn with the
  assistant frame's ``end``/``also_end``) and is never written.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from ..engine.machine import Parser, ReaderFactory
from ..engine.readers import WholeTextReader
from ..types import Role, TextDelta
from .layout import Marker

if TYPE_CHECKING:
    from .table import _Table


@dataclass(frozen=True)
class TurnReading:
    """Rows for headers read in pieces and for an end of text (see the module docstring)."""

    header_open: Marker
    header_close: Marker
    blank: str = "\n\n"
    end_of_text: Marker | None = None


@dataclass(frozen=True)
class _Target:
    role: Role
    state: str
    pending: bool = False


class RoleHeaderReader(WholeTextReader):
    """The role name of a header read in pieces; at ``header_close`` the message begins and
    the step goes to the role's body state (:meth:`Parser.goto`)."""

    __slots__ = ("_reading", "_targets")

    def __init__(self, parser: Parser, targets: dict[str, _Target], reading: TurnReading) -> None:
        super().__init__(parser)
        self._targets = targets
        self._reading = reading

    def close(self, marker: str | None, offset: int) -> None:
        parser = self._parser
        name = self._text()
        target = self._targets.get(name)
        close = self._reading.header_close.text
        parser.end_message()
        if target is None:
            raw = (parser.entered_by or "") + name + (close if marker is not None else "")
            expected = "one of " + ", ".join(repr(known) for known in self._targets)
            parser.malformed(self._offset, f"role {name[:40]!r}", expected, raw)
            parser.begin_message("user")
            parser.emit(TextDelta(raw))
            if marker is not None:
                parser.goto("user.body")
            return
        parser.begin_message(target.role, pending=target.pending)
        if marker is None:
            return
        if marker == close:  # the blank line is missing (with it, it would be one marker)
            blank = repr(self._reading.blank)
            parser.malformed(offset, f"text after the header (role {name!r})", blank, "")
        parser.goto(target.state)


def _targets(table: _Table) -> dict[str, _Target]:
    """Each role name a frame's opening spells, and the state its body is read in."""
    from . import python_results
    from .table import joined

    layout = table.layout
    reading = layout.turn_reading
    assert reading is not None
    lead = reading.header_open.text
    tail = reading.header_close.text + reading.blank
    states = table.builder.states
    found: dict[str, _Target] = {}

    def add(opening: str, target: _Target) -> None:
        if opening.startswith(lead) and opening.endswith(tail) and target.state in states:
            found[opening[len(lead) : -len(tail)]] = target

    for role, frame in layout.frames.items():
        state = {"system": "system.body", "assistant": "assistant.head"}.get(role, "user.body")
        add(joined(layout, frame.open), _Target(role, state, pending=role == "system"))
    results = layout.results
    if results is not None:
        state = "tool.list" if isinstance(results, python_results.PythonResults) else "tool.item"
        if isinstance(results, python_results.PythonResults) or not results.item_open:
            add(joined(layout, results.frame.open), _Target("tool", state))
    return found


def _end(parser: Parser, offset: int) -> None:
    parser.end_message()


def table_rows(table: _Table) -> None:
    """The rows (called by :mod:`.table` once every other state is built)."""
    reading = table.layout.turn_reading
    assert reading is not None
    if reading.end_of_text is not None:
        end = reading.end_of_text.text
        for name, state in list(table.builder.states.items()):
            table.on(name, end, "outside", *(() if state.role is None else (_end,)))
    targets = _targets(table)
    reader: ReaderFactory = partial(RoleHeaderReader, targets=targets, reading=reading)
    table.builder.state("header.role", reader)
    table.on("outside", reading.header_open.text, "header.role")
    for marker in (reading.header_close.text + reading.blank, reading.header_close.text):
        table.on("header.role", marker, "user.body")  # the reader sends it to the role's body
