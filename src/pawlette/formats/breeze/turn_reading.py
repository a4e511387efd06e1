"""Turn reading: what a parser reads of Llama 3 style turns beyond what the writer writes.

A concept with one interpreter, the parse table (nothing here is written, templated or
generated).  A layout whose frames open with ``header_open`` + role name + ``header_close``
+ ``blank`` (``<|start_header_id|>user<|end_header_id|>\\n\\n``) reads each whole opening as
one marker; a :class:`TurnReading` adds rows for what a model or a user may write otherwise:

- **A header read in pieces**: ``header_open`` alone begins a role name, read up to
  ``header_close``.  A known role without its ``blank`` (``...user<|end_header_id|>Hi``) is
  malformed: strict mode raises, lenient mode warns and reads the turn.  An unknown role
  (``robot``) is malformed too: lenient mode reads the turn as a user message whose text
  starts with the header (its ``blank`` dropped), as the engine keeps all malformed text.
- **The end of text**: ``end_of_text`` (a base model's ``<|end_of_text|>``) ends whatever turn
  is open and is skipped between turns.  It is not a stop (the model ends a turn with the
  assistant frame's ``end``/``also_end``) and is never written.

Its rows read every state the other concepts declare, so it comes last in the layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from ...declare import Concept, Marker
from ...declare.table import end
from ...engine.machine import Parser, ReaderFactory
from ...engine.readers import WholeTextReader
from ...types import Role, TextDelta

if TYPE_CHECKING:
    from ...declare.table import Table


@dataclass(frozen=True)
class TurnReading(Concept):
    """Rows for headers read in pieces and for an end of text (see the module docstring)."""

    header_open: Marker
    header_close: Marker
    blank: str = "\n\n"
    end_of_text: Marker | None = None

    def rows(self, table: Table) -> None:
        if self.end_of_text is not None:
            ended = self.end_of_text.text
            for name, state in list(table.states.items()):
                table.on(name, ended, "outside", *(() if state.role is None else (end,)))
        reader: ReaderFactory = partial(RoleHeaderReader, targets=self.targets(table), reading=self)
        table.state("header.role", reader)
        table.on("outside", self.header_open.text, "header.role")
        for marker in (self.header_close.text + self.blank, self.header_close.text):
            table.on("header.role", marker, "user.body")  # the reader sends it to the role's body

    def targets(self, table: Table) -> dict[str, Target]:
        """Each role name a frame's opening spells, and the state its body is read in."""
        lead = self.header_open.text
        tail = self.header_close.text + self.blank
        found: dict[str, Target] = {}
        for role, frame in table.layout.frames.items():
            opening = table.text(frame.open)
            state = table.first_state.get(role)
            if state is not None and opening.startswith(lead) and opening.endswith(tail):
                found[opening[len(lead) : -len(tail)]] = Target(role, state, role == "system")  # type: ignore[arg-type]
        return found


@dataclass(frozen=True)
class Target:
    role: Role
    state: str
    pending: bool = False


class RoleHeaderReader(WholeTextReader):
    """The role name of a header read in pieces; at ``header_close`` the message begins and
    the step goes to the role's body state (:meth:`Parser.goto`)."""

    __slots__ = ("_reading", "_targets")

    def __init__(self, parser: Parser, targets: dict[str, Target], reading: TurnReading) -> None:
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
