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
- ``"content after space"``: content, the whitespace before the state's first other
  character dropped (Gemma 4's text after its calls);
- ``"scaffold"``: only whitespace (anything else is stray: give up); ``"section"``: the
  same, after a call section's opener, and left only for a call's state (``call.``...): a
  section with no call, ended by another marker or by the end of the text, gives its opener
  back (give up);
- ``"call"``: a JSON call (:class:`~pawlette.engine.readers.JsonCallReader`'s reading when a
  marker closes it), taken only as :func:`~pawlette.engine.readers.plain_call` reads it;
- ``"whole call"``: a call read whole at the marker that closes it, by the reader's
  ``whole_call(text, tools)`` (its name and arguments, or None: give up);
- ``"call name"``, ``"call id"``, ``"call arguments"``: the states of a call written as
  its name, maybe its id, then its JSON arguments (:mod:`pawlette.declare.named_calls`),
  each read whole at the marker that leaves it for the next;
- ``"headed"``: a reader whose ``whole_reading()`` gives the reader it reads a plain text as,
  and the markers after which it reads otherwise (a header's separator: give up there);
- ``"lead dropped"``: a reader whose ``whole_lead()`` gives the reader it passes its text to
  and the lead it drops where the state's text begins with it.

A marker with no row in a state but known there as text (the state's ``inner`` markers, the
grammar's ``soft`` ones) is read as a run, as the machine feeds it to the state's reader.
One that is such text only where a call is read whole, and no step of a state the reading
knows (Gemma 4's string quote), is not lexed at all (see :class:`_Plan`).

A step's actions are taken when each says it is ``quiet``: in a completion that has begun,
it emits nothing and leaves the reading where the step goes (beginning or ending a message).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..types import Message, TextPart, Tool, ToolCall
from .call_arguments import arguments_problem
from .call_scanner import unknown_tool
from .lexer import Lexer, Token, marker_pattern
from .machine import WINDOW, Grammar, Parser, Reader, random_call_id
from .readers import CallEnvelope, plain_call

(
    _CONTENT,
    _REASONING,
    _OPTIONAL_REASONING,
    _SCAFFOLD,
    _CALL,
    _WHOLE_CALL,
    _SECTION,
    _CALL_NAME,
    _CALL_ID,
    _CALL_ARGUMENTS,
    _CONTENT_AFTER_SPACE,
) = range(11)
_KINDS = {
    "content": _CONTENT,
    "content after space": _CONTENT_AFTER_SPACE,
    "reasoning": _REASONING,
    "optional reasoning": _OPTIONAL_REASONING,
    "scaffold": _SCAFFOLD,
    "call": _CALL,
    "whole call": _WHOLE_CALL,
    "section": _SECTION,
    "call name": _CALL_NAME,
    "call id": _CALL_ID,
    "call arguments": _CALL_ARGUMENTS,
}
_UNFINISHED = frozenset((_CALL, _WHOLE_CALL, _SECTION, _CALL_NAME, _CALL_ID, _CALL_ARGUMENTS))
"""Kinds the text may not end in (a call never closed, a section with no call)."""
_AFTER_CALL = "assistant.after_call"
"""The state a call's close leads to (a close that leads elsewhere cuts the call off)."""
_SILENT = frozenset((_CONTENT, _OPTIONAL_REASONING, _SCAFFOLD))
"""Kinds that, made and closed with nothing read, emit nothing (a state the turn has ended
in is entered so: its reader is closed at the end, never fed)."""


@dataclass(frozen=True, slots=True)
class _StateReading:
    kind: int
    envelope: CallEnvelope | None
    refused: frozenset[str]
    """Markers after which the state reads otherwise (give up when one comes)."""
    lead: str = ""
    """What is dropped where the state's text begins with it ("": nothing)."""
    whole_call: Callable[[str, tuple[Tool, ...]], tuple[str, str] | None] | None = None
    """A ``"whole call"`` reader's reading of its call's text."""
    inner: frozenset[str] = frozenset()
    """Markers that are text in the state (its ``inner`` and the grammar's ``soft``)."""
    read_name: Callable[[str], tuple[str, str | None]] | None = None
    """A ``"call name"`` reader's reading of the name as written (its name and id)."""
    closed: bool = False
    """A ``"call arguments"`` reader's call has a close of its own (only it ends the call)."""
    foreign: tuple[tuple[str, str], ...] = ()
    """Hidden markers (see :class:`_Plan`) that are not text here, each after its last
    character: a run holding one gives up, as the marker would (it has no row here)."""


def _kind_of(reader: Reader) -> _StateReading | None:
    refused: frozenset[str] = frozenset()
    lead = ""
    for _ in range(4):  # a headed reader's reading is another's (a few deep at most)
        name = type(reader).__dict__.get("whole_kind")
        if name == "headed":
            inner, also = reader.whole_reading()  # type: ignore[attr-defined]
            reader, refused = inner, refused | also
            continue
        if name == "lead dropped":
            if lead:  # (a lead inside a lead: no format has one)
                return None
            reader, lead = reader.whole_lead()  # type: ignore[attr-defined]
            if not lead:
                return None
            continue
        kind = _KINDS.get(name) if isinstance(name, str) else None
        if kind is None:
            return None
        envelope = None
        if kind == _CALL:
            envelope = getattr(reader, "_envelope", None)
            if not isinstance(envelope, CallEnvelope):
                return None
        whole_call = getattr(reader, "whole_call", None) if kind == _WHOLE_CALL else None
        if kind == _WHOLE_CALL and whole_call is None:
            return None
        read_name = None
        if kind == _CALL_NAME:
            begins, read_name = reader.whole_name()  # type: ignore[attr-defined]
            if not begins:
                return None
        closed = kind == _CALL_ARGUMENTS and reader.whole_closed()  # type: ignore[attr-defined]
        if kind == _CALL_ARGUMENTS and reader.whole_mints_own_ids():  # type: ignore[attr-defined]
            return None  # ids of a declared shape are minted by the concept: the machine's
        return _StateReading(
            kind, envelope, refused, lead, whole_call, read_name=read_name, closed=closed
        )
    return None


def _apart(marker: str, other: str) -> bool:
    """Whether no text holds ``marker`` and ``other`` overlapping (neither holds the other,
    and no end of one begins the other): then reading the one as text leaves where the other
    is found as it is."""
    if marker in other or other in marker:
        return False
    return not any(marker.startswith(other[-size:]) for size in range(1, len(other))) and not any(
        other.startswith(marker[-size:]) for size in range(1, len(marker))
    )


def _hidden(grammar: Grammar, readings: dict[str, _StateReading | None]) -> frozenset[str]:
    """Markers the whole-text reading may lex as text (see :class:`_Plan`)."""
    # A run's first characters are read on their own by an escape (the backslashes before a
    # marker) and by a lead longer than one character (a run shorter than the lead is held),
    # and the runs split otherwise without the hidden markers (at them, and where the text's
    # end is held back as a marker's beginning).
    if grammar.escape or any(
        found is not None and (len(found.lead) > 1 or (found.lead and found.kind == _WHOLE_CALL))
        for found in readings.values()
    ):
        return frozenset()
    hidden: set[str] = set()
    for found in readings.values():
        if found is not None and found.kind == _WHOLE_CALL:
            hidden |= found.inner
    for name, found in readings.items():
        if found is not None:
            hidden -= grammar.rows[name].keys()  # a marker with a step is a marker
            if found.kind != _WHOLE_CALL:
                hidden -= found.inner  # (text on its own: a run of its own)
    markers = grammar.markers
    return frozenset(
        marker
        for marker in hidden
        if marker.strip() and all(_apart(marker, other) for other in markers if other != marker)
    )


class _Plan:
    """What :func:`read_whole` knows of a grammar's states, found once per grammar.

    A marker that is text wherever a call is read whole (Gemma 4's string quote ``<|"|>``)
    and has a step in no state the reading knows is hidden: the text is lexed without it
    (``lexed_markers``), so a call's text comes as one run, not a run and a marker token per
    quote.  Where it is not text, a run holding it gives up, as the marker would; it overlaps
    no other marker, so the other markers are found where the full lexer finds them."""

    __slots__ = ("grammar", "hidden", "hidden_pattern", "lexed_markers", "quiet_steps", "readings")

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        readings: dict[str, _StateReading | None] = {}
        for name, state in grammar.states.items():
            try:
                reader = state.reader(Parser(grammar, start=name))
                found = _kind_of(reader)
            except Exception:  # a reader that cannot be made apart: the machine reads it
                found = None
            if found is not None:
                text_markers = frozenset(state.inner) | grammar.soft
                refused = found.refused
                if found.kind == _SECTION:  # only a call's state may follow
                    row = grammar.rows[name]
                    refused |= {m for m, step in row.items() if not step.target.startswith("call.")}
                found = _StateReading(
                    found.kind,
                    found.envelope,
                    refused,
                    found.lead,
                    found.whole_call,
                    text_markers - grammar.rows[name].keys(),
                    found.read_name,
                    found.closed,
                )
            readings[name] = found
        hidden = _hidden(grammar, readings)
        for name, found in readings.items():
            foreign = (
                tuple((marker[-1], marker) for marker in sorted(hidden - found.inner))
                if found is not None
                else ()
            )
            if foreign:
                readings[name] = replace(found, foreign=foreign)  # type: ignore[type-var]
        self.readings = readings
        self.hidden = hidden
        self.hidden_pattern = marker_pattern(hidden) if hidden else None
        """The hidden markers' pattern, to split them out of runs again (:func:`_unhidden`)."""
        self.lexed_markers = grammar.markers - hidden if hidden else grammar.markers
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
    tools: tuple[Tool, ...] = (),
    lexed: list[list[Token]] | None = None,
) -> tuple[Message, int] | None:
    """The message of the whole completion ``text`` and its number of calls, when it is
    written the plain way (see the module docstring); None: read it with the machine.
    ``tools``: the caller's (a call read whole checks its name against them and types its
    arguments by their schemas, as the machine's reader does).  ``lexed``: given, the text's
    tokens are put in it when they were read and the reading gave up (the machine then
    takes them: :meth:`Parser.read_all`'s ``tokens``), so the text is not scanned twice."""
    if len(text) > WINDOW:
        return None
    plan = _plan(grammar)
    state = start or grammar.completion_start
    role = grammar.states[state].role
    reading = plan.readings[state]
    if reading is None or role is None:
        return None
    tokens = Lexer(plan.lexed_markers, escape=grammar.escape).read_all(text)
    found = _read_tokens(plan, grammar, tokens, state, reading, id_factory, tools)
    if found is None and lexed is not None:
        if plan.hidden_pattern is None:
            lexed.append(tokens)
        elif Lexer(grammar.markers, escape=grammar.escape).reads_at_once(text):
            lexed.append(_unhidden(plan.hidden_pattern, tokens))
    return found


def _unhidden(pattern: re.Pattern[str], tokens: list[Token]) -> list[Token]:
    """The tokens of a text lexed without the hidden markers (``pattern`` finds them), as the
    grammar's lexer reads the text at once (each hidden marker in a run is a token of its own
    again: it overlaps no other marker, so the runs split exactly where that lexer would have
    found it)."""
    found: list[Token] = []
    for marker, run, offset in tokens:
        if marker is not None:
            found.append((marker, run, offset))
            continue
        position = 0
        for match in pattern.finditer(run):
            if match.start() > position:
                found.append((None, run[position : match.start()], offset + position))
            found.append((match.group(), match.group(), offset + match.start()))
            position = match.end()
        if position < len(run):
            found.append((None, run[position:], offset + position))
    return found


def _read_tokens(
    plan: _Plan,
    grammar: Grammar,
    tokens: list[Token],
    state: str,
    reading: _StateReading,
    id_factory: Callable[[], str] | None,
    tools: tuple[Tool, ...],
) -> tuple[Message, int] | None:
    """:func:`read_whole` of a text's tokens (see there)."""
    role = grammar.states[state].role
    assert role is not None
    rows = grammar.rows
    quiet = plan.quiet_steps
    readings = plan.readings
    over = grammar.completion_over
    content: list[str] = []
    reasoning: list[str] | None = [] if reading.kind == _REASONING else None
    calls: list[tuple[str | None, str, str]] = []
    call_text: str | None = None
    call_name: str | None = None  # a named call's, once read
    call_id: str | None = None
    trailing = False
    lead = reading.lead
    spaced = True  # (a "content after space" state has read only whitespace so far)
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
        # A marker that is text in this state is read as its run (the machine feeds it so).
        if marker is None or marker in reading.inner:
            if reading.foreign:  # (a hidden marker where it is no text: see _Plan)
                for last, hidden in reading.foreign:  # (one character: found at memchr's speed)
                    if last in run and hidden in run:
                        return None
            if lead:  # the state's first text: its lead is dropped (_LeadDropped's reading)
                if len(run) < len(lead) and lead.startswith(run):
                    return None  # (held by the reader until more tells: the machine's)
                if run.startswith(lead):
                    run = run[len(lead) :]
                lead = ""
                if not run:  # nothing passed on
                    continue
            if kind == _CONTENT:
                content.append(run)
            elif kind == _CONTENT_AFTER_SPACE:
                if spaced:
                    run = run.lstrip()
                    if not run:
                        continue
                    spaced = False
                content.append(run)
            elif kind == _REASONING or (kind == _OPTIONAL_REASONING and run):
                if reasoning is None:
                    reasoning = []
                reasoning.append(run)
            elif kind in (_SCAFFOLD, _SECTION):
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
            if unknown_tool(tools, name) is not None:
                return None  # a call to a tool the request does not offer: the machine's
            calls.append((written_id, name, call_text[begin:finish]))
            call_text = None
        elif kind == _WHOLE_CALL:
            assert reading.whole_call is not None
            read = reading.whole_call(call_text or "", tools) if target == _AFTER_CALL else None
            if read is None:
                return None
            calls.append((None, *read))
            call_text = None
        elif kind == _CALL_NAME:  # (NameReader's reading)
            call_name = (call_text or "").strip()
            call_id = None
            if reading.read_name is not None and call_name:
                call_name, call_id = reading.read_name(call_name)
            if target not in ("call.id", "call.arguments") or not call_name:
                return None
            if tools and all(tool.name != call_name for tool in tools):
                return None
            call_text = None
        elif kind == _CALL_ID:  # (IdReader's)
            call_id = (call_text or "").strip() or None
            if target != "call.arguments":
                return None
            call_text = None
        elif kind == _CALL_ARGUMENTS:  # (ArgumentsReader's)
            arguments = (call_text or "").strip() or "{}"
            if call_name is None or (reading.closed and target != _AFTER_CALL):
                return None
            if arguments_problem(arguments) is not None:
                return None
            calls.append((call_id, call_name, arguments))
            call_name = call_id = call_text = None
        state = target
        next_reading = readings[state]
        if next_reading is None:
            return None
        reading = next_reading
        lead = reading.lead
        spaced = True
        if state in over:
            if reading.kind not in _SILENT:
                return None
            trailing = True
        elif reading.kind == _REASONING and reasoning is None:
            reasoning = []
    if not trailing and reading.kind in _UNFINISHED:
        return None  # a call never closed: the machine says what becomes of it
    if len(calls) > 1:
        written_ids = [written_id for written_id, _, _ in calls if written_id is not None]
        if len(set(written_ids)) != len(written_ids):
            return None  # an id written twice: the machine serves it under another, warning
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
