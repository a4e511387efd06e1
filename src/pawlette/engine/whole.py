"""A whole completion read straight from the lexer's runs, when it is written the usual way.

:meth:`pawlette.Format.parse` of a whole text is ``fold(parser.read_all(text))``: the
streaming machine (:class:`~pawlette.engine.machine.Parser`) is the reference.  Most
completions are plain: text, maybe reasoning, calls written as their format writes them, the
turn's end.  For those, the machine's work per completion (a parser and a reader per state,
an event per run, the fold of the events into a message) costs more than reading the text.
:func:`read_whole` reads such a text from the lexer's runs and the parse table directly and
builds the message itself; at the first thing it does not know to be plain (a marker with no
row, stray text, a call its quick reading does not take, a reader of a kind it does not
know) it gives up, having changed nothing (call ids are asked for only once it succeeds), and
the caller runs the machine.  So it never decides anything the machine would decide another
way: what it reads is what the machine reads, and everything else is the machine's.

A reader class opts in by naming, in its own class body (a subclass that does not name it
again is not taken: it may read differently), the kind of reading that is its own on a
plain text (``whole_kind``):

- ``"content"``: every run is content; ``"reasoning"``: every run is reasoning, and entering
  the state starts (possibly empty) reasoning; ``"optional reasoning"``: a run that is not
  empty is reasoning;
- ``"scaffold"``: only whitespace (anything else is stray: give up);
- ``"call"``: a JSON call (:class:`~pawlette.engine.readers.JsonCallReader`'s reading when a
  marker closes it), taken only as :func:`~pawlette.engine.readers.plain_call` reads it;
- ``"headed"``: a reader whose ``whole_reading()`` gives the reader it reads a plain text as,
  and the markers after which it reads otherwise (a header's separator: give up there).

A step's actions are taken when each says it is ``quiet``: in a completion that has begun,
it emits nothing and leaves the reading where the step goes (beginning or ending a message).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..types import Message, TextPart, ToolCall
from .lexer import Lexer
from .machine import WINDOW, Grammar, Parser, Reader, random_call_id
from .readers import CallEnvelope, plain_call

_CONTENT, _REASONING, _OPTIONAL_REASONING, _SCAFFOLD, _CALL = range(5)
_KINDS = {
    "content": _CONTENT,
    "reasoning": _REASONING,
    "optional reasoning": _OPTIONAL_REASONING,
    "scaffold": _SCAFFOLD,
    "call": _CALL,
}
_SILENT = frozenset((_CONTENT, _OPTIONAL_REASONING, _SCAFFOLD))
"""Kinds that, made and closed with nothing read, emit nothing (a state the turn has ended
in is entered so: its reader is closed at the end, never fed)."""


@dataclass(frozen=True, slots=True)
class _StateReading:
    kind: int
    envelope: CallEnvelope | None
    refused: frozenset[str]
    """Markers after which the state reads otherwise (give up when one comes)."""


def _kind_of(reader: Reader) -> tuple[int, CallEnvelope | None, frozenset[str]] | None:
    refused: frozenset[str] = frozenset()
    for _ in range(4):  # a headed reader's reading is another's (a few deep at most)
        name = type(reader).__dict__.get("whole_kind")
        if name == "headed":
            inner, also = reader.whole_reading()  # type: ignore[attr-defined]
            reader, refused = inner, refused | also
            continue
        kind = _KINDS.get(name) if isinstance(name, str) else None
        if kind is None:
            return None
        envelope = None
        if kind == _CALL:
            envelope = getattr(reader, "_envelope", None)
            if not isinstance(envelope, CallEnvelope):
                return None
        return kind, envelope, refused
    return None


class _Plan:
    """What :func:`read_whole` knows of a grammar's states, found once per grammar."""

    __slots__ = ("grammar", "quiet_steps", "readings")

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        readings: dict[str, _StateReading | None] = {}
        for name, state in grammar.states.items():
            try:
                reader = state.reader(Parser(grammar, start=name))
                found = _kind_of(reader)
            except Exception:  # a reader that cannot be made apart: the machine reads it
                found = None
            readings[name] = None if found is None else _StateReading(*found)
        self.readings = readings
        # Per state and marker: the step's target when its actions are all quiet.
        self.quiet_steps: dict[str, dict[str, str]] = {
            state: {
                marker: step.target
                for marker, step in row.items()
                if all(getattr(action, "quiet", False) for action in step.actions)
            }
            for state, row in grammar.rows.items()
        }


_PLANS: dict[int, _Plan] = {}


def _plan(grammar: Grammar) -> _Plan:
    plan = _PLANS.get(id(grammar))
    if plan is None or plan.grammar is not grammar:
        if len(_PLANS) >= 256:
            _PLANS.clear()
        plan = _PLANS[id(grammar)] = _Plan(grammar)
    return plan


def read_whole(
    grammar: Grammar,
    text: str,
    start: str | None = None,
    id_factory: Callable[[], str] | None = None,
) -> tuple[Message, int] | None:
    """The message of the whole completion ``text`` and its number of calls, when it is
    written the plain way (see the module docstring); None: read it with the machine."""
    if len(text) > WINDOW:
        return None
    plan = _plan(grammar)
    state = start or grammar.completion_start
    role = grammar.states[state].role
    reading = plan.readings[state]
    if reading is None or role is None:
        return None
    tokens = Lexer(grammar.markers, escape=grammar.escape).read_all(text)
    rows = grammar.rows
    quiet = plan.quiet_steps
    readings = plan.readings
    over = grammar.completion_over
    content: list[str] = []
    reasoning: list[str] | None = [] if reading.kind == _REASONING else None
    calls: list[tuple[str | None, str, str]] = []
    call_text: str | None = None
    trailing = False
    for marker, run, _ in tokens:
        if trailing:  # the turn is over (as Parser._trail reads it)
            if marker is None:
                if run.isspace():
                    continue
                return None
            step = rows[state].get(marker)
            if step is not None and (
                (not step.actions and step.target in over)
                or (step.actions and all(getattr(a, "pending", False) for a in step.actions))
            ):
                state = step.target
                continue
            if not marker.strip():
                continue
            return None
        kind = reading.kind
        if marker is None:
            if kind == _CONTENT:
                content.append(run)
            elif kind == _REASONING or (kind == _OPTIONAL_REASONING and run):
                if reasoning is None:
                    reasoning = []
                reasoning.append(run)
            elif kind == _SCAFFOLD:
                if not run.isspace():
                    return None
            else:  # a call's text
                call_text = run if call_text is None else call_text + run
            continue
        target = quiet[state].get(marker)
        if target is None or marker in reading.refused:
            return None
        if kind == _CALL:
            if call_text is None:
                return None
            assert reading.envelope is not None
            found = plain_call(reading.envelope, call_text)
            if found is None:
                return None
            written_id, name, begin, finish = found
            calls.append((written_id, name, call_text[begin:finish]))
            call_text = None
        state = target
        next_reading = readings[state]
        if next_reading is None:
            return None
        reading = next_reading
        if state in over:
            if reading.kind not in _SILENT:
                return None
            trailing = True
        elif reading.kind == _REASONING and reasoning is None:
            reasoning = []
    if not trailing and reading.kind == _CALL:
        return None  # a call never closed: the machine says what becomes of it
    new_call_id = id_factory or random_call_id
    tool_calls = tuple(
        ToolCall(new_call_id() if written_id is None else written_id, name, arguments)
        for written_id, name, arguments in calls
    )
    joined = content[0] if len(content) == 1 else "".join(content)
    parts: tuple[TextPart, ...] | None = (TextPart(joined),) if joined else ()
    if not parts and tool_calls:
        parts = None
    message = Message(
        role,
        parts,
        None,
        tool_calls,
        None,
        None if reasoning is None else "".join(reasoning),
        None,
        (),
    )
    return message, len(tool_calls)
