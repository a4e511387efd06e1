"""The parse machine: a transition table built from a format declaration, and its runtime.

A :class:`Grammar` is a set of states and a table ``(state, marker) -> Step``.  Each state has a
*reader* that consumes the text between markers (content, reasoning, a call's JSON, ...).  The
runtime, :class:`Parser`, is sans-IO: ``feed(text)`` / ``feed_marker(marker)`` / ``finish()``
each return the events produced so far.

Rules of the runtime:

- a marker with a row in the table closes the current reader, runs the step's actions and
  enters the target state (with a fresh reader);
- a marker with no row is malformed output: strict mode raises :class:`ParseError`; lenient
  mode emits a :class:`ParseWarning` and gives the marker to the current reader as text;
- ``finish()`` closes the reader; an open message ends with the completion's finish reason
  (``length`` when the caller says so, else ``tool_calls`` when a valid call was parsed, else
  ``stop``).

A completion (``conversation=False``) is one assistant message: one ``MessageStart`` when the
parser is made, one ``MessageEnd`` at ``finish()``, nothing after it.  A format whose
completion holds several assistant turns (ChatGLM3) continues the same message.  Once the
turn has ended (the parser enters a state outside the assistant turn, or a scaffold state
such as PCML's after ``<end>``), the rest of the input is *trailing*: whitespace and
closing markers there are layout, and so is a last opener whose only action begins a
message that is there only once something of it is read (a *pending* one: Firefunction v2's
template writes the assistant opener after every conversation); anything else makes the whole
rest, as written, content after one :class:`ParseWarning` at ``finish()`` (strict mode raises
at once).

Calls go through a gate (:meth:`Parser.emit`): by default a call's events are held until its
``ToolCallEnd`` and then released as ``ToolCallStart``, one ``ToolCallDelta`` with all its
arguments (a big call's in pieces, below), ``ToolCallEnd``; a reader that finds the call
malformed calls :meth:`Parser.abandon_call` (the held events vanish) and emits the call's
text as content.
With ``stream_arguments=True`` call events pass at once; an abandoned call then never gets its
``ToolCallEnd``, and :func:`~pawlette.engine.fold.fold` keeps only ended calls.

A held call's arguments may come as a :class:`~pawlette.engine.call_text.LateText` (a big
JSON call's, kept in a map, or a Python-call reader's: see ``hold_arguments`` in
:mod:`pawlette.codecs.python_calls`): their strings are made when the feed's text runs have
been let go, just before the feed returns its events, so a call fed whole is not held three
times at once (the run, the arguments' map, their string), and in pieces of at most
:data:`~pawlette.engine.call_text.PIECE_BYTES` (a ``ToolCallDelta`` each, one after the
other) as the map is released, so a big call's arguments are held about once, not as the map
and a string made from it.  A call under that size still gets one delta.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from ..errors import FormatError, ParseError
from ..types import (
    Event,
    MessageEnd,
    MessageStart,
    ParseWarning,
    Role,
    TextDelta,
    Tool,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from .call_scanner import TextPieces
from .call_text import LateText
from .lexer import Lexer, Token

_CALL_EVENTS = frozenset((ToolCallStart, ToolCallDelta, ToolCallEnd))
ContextT = TypeVar("ContextT")
WINDOW = 1 << 18
"""A text fed at once past this many characters is read a window at a time (see
:meth:`Parser.feed`): the same events, joined (a long run may come as a delta per window)."""
WINDOW_TAIL = 1 << 12
"""A window's last run of text with fewer characters than this past its leading whitespace
is read joined to the next window's first run: a reader that refuses text quotes the run
from where it goes wrong (a strict error's message), so a run cut by a window's edge just
after that place would be quoted cut, where the text fed whole is quoted as written."""
_WORD = re.compile(r"\S")  # where a run's text past its leading whitespace begins


def _short(run: str) -> bool:
    """Whether ``run`` has text past its leading whitespace, fewer than :data:`WINDOW_TAIL`
    characters (whitespace alone is never quoted: kept back, a text of it would pile up).
    (A function: no name of the caller's holds the run once it is handed on.)"""
    word = _WORD.search(run)
    return word is not None and len(run) - word.start() < WINDOW_TAIL


class Reader(Protocol):
    """Consumes the text of one state; emits events through the parser."""

    def feed(self, text: str, offset: int) -> None: ...

    def close(self, marker: str | None, offset: int) -> None:
        """The state ends at ``marker`` (None: end of input)."""


ReaderFactory = Callable[["Parser"], Reader]
Action = Callable[["Parser", int], None]


@dataclass(frozen=True, slots=True)
class Step:
    target: str
    actions: tuple[Action, ...] = ()


@dataclass(frozen=True, slots=True)
class State:
    name: str
    reader: ReaderFactory
    role: Role | None = None
    """The role of the message this state is inside (None: outside any message)."""
    inner: frozenset[str] = frozenset()
    """Markers with no row here that the reader reads as text, with no warning (the tags
    inside a call that some tokenizers make special tokens and others not)."""


@dataclass(frozen=True)
class Grammar:
    """A format's parse table.  Build it with :class:`GrammarBuilder`."""

    states: Mapping[str, State]
    steps: Mapping[tuple[str, str], Step]
    markers: frozenset[str]
    escape: bool
    conversation_start: str
    completion_start: str
    fields: Mapping[Role, Mapping[str, str]] = field(default_factory=dict)
    """Per role, header keys that are message fields (``{"tool": {"id": "tool_call_id"}}``)."""
    soft: frozenset[str] = frozenset()
    """Markers of layout text alone (no special token in them): where such a marker has no
    row, it is text, with no warning (a fence such as ``\\n```json\\n`` means something only
    in a call)."""
    text_ids: bool = False
    """Token ids are read as the text they decode to (markers by their spelling), for a
    format whose model writes its markers as plain text (no special token in them:
    Functionary's ``<function=``); otherwise a marker holding a special token is found only
    by that token's id, and a marker of text alone by its spelling (see
    :mod:`pawlette.tokenization.ids`)."""
    completion_over: frozenset[str] = frozenset()
    """States in which a completion's turn is over: those outside the assistant turn and the
    scaffold states (readers marked ``scaffold``) inside it (see the module docstring)."""
    unopened_start: str | None = None
    """Where a completion starts after a prompt that leaves the model in no assistant turn
    (a template that writes no generation prompt there): the state before what the usual
    prompt opens (a reasoning block), as a turn the model opens itself begins.  None: the
    ``completion_start`` (the usual prompt opens nothing)."""
    rows: Mapping[str, Mapping[str, Step]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    """Per state, its rows by marker (``steps`` split by state, once: the runtime looks a
    marker up in its state's row, not a ``(state, marker)`` tuple it would build each time)."""

    turn_ends: Mapping[str, str] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    """Markers that end an assistant turn, each with the one state it leads to (a marker that
    leads to several is left out): met inside a part that does not expect it (a call the model
    never closed), such a marker still ends a completion's turn."""

    overlaps: dict[tuple[str, str], int] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    """Per state and marker the lexer took there with no row, where a longer marker the state
    expects may begin inside it (0: nowhere): see :meth:`overlap`.  Filled as asked."""

    def __post_init__(self) -> None:
        rows: dict[str, dict[str, Step]] = {name: {} for name in self.states}
        ends: dict[str, set[str]] = {}
        for (state, marker), step in self.steps.items():
            rows.setdefault(state, {})[marker] = step
            if state not in self.completion_over and step.target in self.completion_over:
                ends.setdefault(marker, set()).add(step.target)
        object.__setattr__(self, "rows", rows)
        turn_ends = {
            marker: next(iter(targets)) for marker, targets in ends.items() if len(targets) == 1
        }
        object.__setattr__(self, "turn_ends", turn_ends)

    def overlap(self, state: str, marker: str, cut: int) -> int:
        """Where, from 1 to ``cut``, a marker ``state`` expects begins inside ``marker`` (no
        row there) and runs past its end (0: nowhere; the first place).  The lexer takes the
        leftmost marker, so it may take one that begins with text (GigaChat's tools block
        ends with ``"\\n\\n<|message_sep|>"``) where the state expects a longer one
        that begins after that text (``"<|message_sep|>\\n\\nfunction call..."``).
        An escaping grammar's runs are not its text as written, so they are not read again:
        0 there."""
        key = (state, marker)
        found = self.overlaps.get(key)
        if found is None:
            found = 0
            if not self.escape:
                row = self.rows.get(state, {})
                for begins in range(1, cut + 1):
                    rest = marker[begins:]
                    if any(len(other) > len(rest) and other.startswith(rest) for other in row):
                        found = begins
                        break
            self.overlaps[key] = found
        return found

    def expected(self, state: str) -> list[str]:
        return sorted(marker for (name, marker) in self.steps if name == state)


class GrammarBuilder:
    """Collects states and transitions; blocks of a declaration install themselves here."""

    def __init__(self) -> None:
        self.states: dict[str, State] = {}
        self.steps: dict[tuple[str, str], Step] = {}
        self.fields: dict[Role, dict[str, str]] = {}

    def state(
        self,
        name: str,
        reader: ReaderFactory,
        role: Role | None = None,
        inner: frozenset[str] = frozenset(),
    ) -> str:
        if name in self.states:
            raise FormatError(f"state {name!r}: declared twice; expected unique state names")
        self.states[name] = State(name, reader, role, inner)
        return name

    def on(self, state: str, marker: str, target: str, *actions: Action) -> None:
        key = (state, marker)
        if key in self.steps:
            raise FormatError(f"state {state!r}: two rows for marker {marker!r}; expected one")
        self.steps[key] = Step(target, actions)

    def build(
        self,
        *,
        escape: bool,
        conversation_start: str,
        completion_start: str,
        soft: frozenset[str] = frozenset(),
        text_ids: bool = False,
        bare: frozenset[str] = frozenset(),
        unopened_start: str | None = None,
    ) -> Grammar:
        """The grammar.  ``bare`` are control tokens' spellings that no row reads alone (a
        part of a longer marker, ``<|im_start|>`` of ``<|im_start|>user\\n``): the lexer
        finds them too, so text reads them where they stand, out of place, as token ids do."""
        for (state, marker), step in self.steps.items():
            for name in (state, step.target):
                if name not in self.states:
                    raise FormatError(f"row ({state!r}, {marker!r}): unknown state {name!r}")
        for name in (conversation_start, completion_start, unopened_start or completion_start):
            if name not in self.states:
                raise FormatError(f"start state {name!r}: unknown; expected a declared state")
        return Grammar(
            states=dict(self.states),
            steps=dict(self.steps),
            markers=frozenset(marker for (_, marker) in self.steps) | bare,
            escape=escape,
            conversation_start=conversation_start,
            completion_start=completion_start,
            fields={role: dict(keys) for role, keys in self.fields.items()},
            soft=soft,
            text_ids=text_ids,
            completion_over=frozenset(
                name
                for name, state in self.states.items()
                if state.role != "assistant" or getattr(state.reader, "scaffold", False)
            ),
            unopened_start=None if unopened_start == completion_start else unopened_start,
        )


def random_call_id() -> str:
    """``call_`` and 24 random hex digits (96 bits from the system's generator, as
    ``uuid4`` takes its bits, without making a UUID)."""
    return "call_" + os.urandom(12).hex()


class NumberedCallIds:
    """``call_0``, ``call_1``, ... in order: the ids a conversation read back gives calls
    written without one (the same text, the same ids).  A format whose render takes ids of
    one shape only gets ids of that shape drawn from these (:meth:`Parser.mint_call_id`)."""

    __slots__ = ("_numbers",)

    def __init__(self) -> None:
        self._numbers = itertools.count()

    def __call__(self) -> str:
        return f"call_{next(self._numbers)}"


def completion_finish_reason(engine_reason: str | None, valid_calls: int) -> str:
    """A completion's OpenAI ``finish_reason``, decided here for every face (the parser, the
    server's pipeline): the engine's ``length`` wins over what the text shows (the output
    was cut by the limit; text after a turn end is content, so that too may be cut);
    otherwise ``tool_calls`` exactly when a valid call came back, else ``stop``."""
    if engine_reason == "length":
        return "length"
    return "tool_calls" if valid_calls else "stop"


class Parser:
    """The incremental parser for one completion or one rendered conversation.

    Use :meth:`pawlette.Format.parser` to make one.
    """

    # Defaults read from the class until first set (a server makes a parser per request;
    # each attribute set in __init__ costs): only immutable values here.
    _next_index = 0  # a completion numbers its calls across its turns
    _completion_started = False
    _trailing: list[str] | None = None  # raw text after a completion's turn ended
    _trailing_offset = 0
    _trailing_stray = False
    message_role: Role | None = None
    _start_pending = False
    calls_in_message = 0
    calls_in_completion = 0
    finished = False
    _redirect: str | None = None
    _window_run: Token | None = None  # a window's last run, held for the next (_feed_windows)
    # Held calls: their start and their arguments so far (compactly: a call streamed a
    # character at a time is not kept as an event per character); made on the first.
    _held: dict[int, tuple[ToolCallStart, TextPieces]] | None = None
    _late_held: dict[int, LateText] | None = None  # held calls' arguments not made yet
    _contexts: dict[type[Any], Any] | None = None  # see context(); made on first use
    ended_inside = False
    """Whether a conversation's text ended inside a message (set by :meth:`finish`): the last
    message read is a turn left open, as far as it is written."""
    entered_by: str | None = None
    """The marker that entered the current state (readers quote it in lenient text)."""
    losses: tuple[str, ...] = ()
    """What the format writes and reading does not give back, each once (a tools block
    written as TypeScript types is not the JSON schemas it came from): see :meth:`lose`."""

    def __init__(
        self,
        grammar: Grammar,
        *,
        conversation: bool = False,
        strict: bool = False,
        id_factory: Callable[[], str] | None = None,
        start: str | None = None,
        tools: Sequence[Tool] = (),
        stream_arguments: bool = False,
    ) -> None:
        self.grammar = grammar
        self.strict = strict
        self.conversation = conversation
        self.stream_arguments = stream_arguments
        """Pass call events at once instead of holding each call until it is known valid."""
        # Held calls: their start and their arguments so far (compactly: a call streamed a
        # character at a time is not kept as an event per character).
        self._late: list[int] = []  # where in ``_events`` a LateText waits (see the docstring)
        self.new_call_id = id_factory or random_call_id
        self.tools: tuple[Tool, ...] = tools if type(tools) is tuple else tuple(tools)
        """The tools the output may call; readers that know call names check them (empty: any)."""
        self._lexer = Lexer(grammar.markers, escape=grammar.escape)
        self._rows = grammar.rows
        self._over = grammar.completion_over
        name = start or (grammar.conversation_start if conversation else grammar.completion_start)
        self.state = state = grammar.states[name]
        self._row = self._rows[name]
        if not conversation and state.role is not None:
            # begin_message, inlined: the completion's one MessageStart.
            self.message_role = state.role
            self._completion_started = True
            self._events: list[Event] = [MessageStart(state.role)]
        else:
            self._events = []
        self.reader: Reader = state.reader(self)

    # ------------------------------------------------------------------ used by readers/actions

    def mint_call_id(self, mint: Callable[[str | None], str] | None) -> str:
        """An id for a call written without one: the caller's ``id_factory``'s if it gave
        one (the caller's choice), else ``mint``'s (a calls concept's, of the shape its
        format's render takes back: Mistral's nine letters and digits; random, or drawn from
        :class:`NumberedCallIds`' next id when reading a conversation back), else the
        parser's own ids'."""
        new = self.new_call_id
        if mint is None:
            return new()
        if new is random_call_id:
            return mint(None)
        if type(new) is NumberedCallIds:
            return mint(new())
        return new()

    def lose(self, what: str) -> None:
        """Record that the text read holds something reading does not give back (``what``
        says what and why); the same loss is recorded once."""
        if what not in self.losses:
            self.losses = (*self.losses, what)

    def lose_tools(self, written_as: str) -> None:
        """Record that the conversation's tools block is written in a form that is not JSON
        schema (``written_as``: "TypeScript types", ...), so reading gives no tools back."""
        self.lose(f"tools: written as {written_as}, not read back into JSON schemas")

    def context(self, kind: type[ContextT]) -> ContextT:
        """The parser's one value of ``kind`` (made with ``kind()`` on first use): what the
        reader of one state leaves for the next within a block that spans several states (a
        call's name before its arguments), typed."""
        contexts = self._contexts
        if contexts is None:
            contexts = self._contexts = {}
        found = contexts.get(kind)
        if found is None:
            found = contexts[kind] = kind()
        return found

    def emit(self, event: Event) -> None:
        if type(event) in _CALL_EVENTS and not self.stream_arguments:
            self._hold(event)  # type: ignore[arg-type]
        else:
            self._events.append(event)

    def emit_call(self, index: int, identifier: str, name: str, arguments: str) -> None:
        """Emit a whole valid call at once: what :meth:`emit` gives for its
        ``ToolCallStart``, one ``ToolCallDelta`` with ``arguments`` and its ``ToolCallEnd``
        (readers that read a call whole at its close), without passing each through the
        gate."""
        events = self._events
        if self.stream_arguments:
            events.append(ToolCallStart(index, identifier, name))
            events.append(ToolCallDelta(index, arguments))
            events.append(ToolCallEnd(index))
            return
        # As the gate would: a call held under this index before is replaced, and an empty
        # delta is no delta.
        if self._held:
            self._held.pop(index, None)
        if self._late_held:
            self._late_held.pop(index, None)
        events.append(ToolCallStart(index, identifier, name))
        if type(arguments) is LateText:  # its string is made by _settle
            self._late.append(len(events))
            events.append(ToolCallDelta(index, arguments))
        elif arguments:
            events.append(ToolCallDelta(index, arguments))
        events.append(ToolCallEnd(index))

    def _hold(self, event: ToolCallStart | ToolCallDelta | ToolCallEnd) -> None:
        """The call gate (see the module docstring)."""
        held_calls = self._held
        if held_calls is None:
            held_calls = self._held = {}
        held = held_calls.get(event.index)
        if isinstance(event, ToolCallStart):
            held_calls[event.index] = (event, TextPieces())
            if self._late_held:
                self._late_held.pop(event.index, None)
        elif held is None:  # not a held call (a reader's bug): nothing to wait for
            self._events.append(event)
        elif isinstance(event, ToolCallDelta):
            arguments = event.arguments
            if self._late_held or type(arguments) is LateText:
                self._hold_late(event.index, held[1], arguments)
            else:
                held[1].append(arguments)
        else:
            del held_calls[event.index]
            late = self._late_held.pop(event.index, None) if self._late_held else None
            arguments = held[1].take()  # one piece: that very string, not a copy
            self._events.append(held[0])
            if late is not None:  # its string is made by _settle
                self._late.append(len(self._events))
                self._events.append(ToolCallDelta(event.index, late))
            elif arguments:
                self._events.append(ToolCallDelta(event.index, arguments))
            self._events.append(event)

    def _hold_late(self, index: int, pieces: TextPieces, arguments: str) -> None:
        """A held call's delta when a :class:`LateText` is involved: the late arguments stay
        unmade while they are the call's only text (as a reader gives them); otherwise (not
        seen from our readers) they are made now, keeping the text's order."""
        late_held = self._late_held
        if late_held is None:
            late_held = self._late_held = {}
        late = late_held.pop(index, None)
        if late is not None:
            pieces.append(late.take())
        if type(arguments) is not LateText:
            pieces.append(arguments)
            return
        earlier = pieces.take()
        if earlier:
            pieces.append(earlier)
            pieces.append(arguments.take())
        else:
            late_held[index] = arguments

    def abandon_call(self, index: int) -> None:
        """The call ``index`` is malformed: it is no call.  Held events vanish (and its index
        is free again); with ``stream_arguments`` it simply never gets a ``ToolCallEnd``.  The
        reader emits the call's text as content."""
        self.calls_in_message = max(0, self.calls_in_message - 1)
        self.calls_in_completion = max(0, self.calls_in_completion - 1)
        held = self._held.pop(index, None) if self._held else None
        if self._late_held:
            self._late_held.pop(index, None)
        if held is not None and not self.conversation and index == self._next_index - 1:
            self._next_index = index

    def begin_message(self, role: Role, *, pending: bool = False) -> None:
        """Start a message.  ``pending``: only once its reader calls :meth:`confirm_message`
        (before it emits anything of the message); a pending message ended before that was
        never there (ChatGLM3's training render ends with the stop token that opens no turn).
        The hot path (:meth:`emit`) never checks for one."""
        self.message_role = role
        self.calls_in_message = 0
        if not self.conversation:
            # One message per completion: a later assistant turn (ChatGLM3) continues it.
            if not self._completion_started:
                self._completion_started = True
                self._events.append(MessageStart(role))
            return
        if pending:
            self._start_pending = True
        else:
            self._events.append(MessageStart(role))

    @property
    def message_pending(self) -> bool:
        """Whether the current message was begun ``pending`` and nothing of it read yet."""
        return self._start_pending

    def confirm_message(self) -> None:
        """The pending message (see :meth:`begin_message`) exists, even if empty."""
        if self._start_pending and self.message_role is not None:
            self._start_pending = False
            self._events.append(MessageStart(self.message_role))

    def end_message(self) -> None:
        """The current message ends (in a completion, its ``MessageEnd`` waits for
        :meth:`finish`, which knows the finish reason)."""
        if self.message_role is None:
            return
        if self._start_pending:
            self._start_pending = False
            self.message_role = None
            return
        self.message_role = None
        if self.conversation:
            self._events.append(MessageEnd(None))

    def next_call_index(self) -> int:
        """The index of a new call: within the message in a conversation, within the whole
        completion otherwise (an OpenAI client merges deltas by index)."""
        if self.conversation:
            index = self.calls_in_message
        else:
            index = self._next_index
            self._next_index += 1
        self.calls_in_message += 1
        self.calls_in_completion += 1
        return index

    def goto(self, state: str) -> None:
        """Enter ``state`` instead of the target of the step being taken.

        For a reader's ``close`` or an action that decides where a step goes from what it read
        (a Llama 3 header names its role in text between two markers).
        """
        if state not in self.grammar.states:
            raise FormatError(f"goto {state!r}: unknown state; expected a declared state")
        self._redirect = state

    def malformed(self, offset: int, found: str, expected: str, text: str) -> None:
        """Strict: raise.  Lenient: warn; the caller keeps ``text`` as content."""
        if self.strict:
            raise ParseError(offset, found, expected, text[:80])
        self.confirm_message()  # the text it warns about is the message's
        self._events.append(ParseWarning(offset, f"{found}; expected {expected}", text))

    # ------------------------------------------------------------------ public

    def feed(self, text: str) -> list[Event]:
        """Feed a chunk of text; return the events it completed."""
        if len(text) > WINDOW:
            return self._feed_windows(text)
        tokens = self._lexer.feed(text)
        if len(tokens) == 1 and tokens[0][0] is None and self._trailing is None:
            self.reader.feed(tokens[0][1], tokens[0][2])  # the usual: one run of text
        elif tokens:
            self._dispatch(tokens)
        del tokens  # the runs go before late arguments are made
        if self._late:
            self._settle()
        events = self._events
        self._events = []
        return events

    def read_all(
        self, text: str, finish_reason: str | None = None, tokens: list[Token] | None = None
    ) -> list[Event]:
        """``feed(text) + finish(finish_reason)`` for a whole text (:meth:`Format.parse`): the
        same events (a run of text may come as one delta where a feed and its finish gave
        two), with one lexer scan and one hand-over of the events, not two.  ``tokens``: the
        text's tokens as a new lexer of the grammar's markers reads them whole (the
        whole-text reading's, when it gave up), taken instead of a second scan (the list is
        emptied)."""
        if len(text) > WINDOW or self.finished:
            events = self.feed(text)
            events += self.finish(finish_reason)
            return events
        if tokens is not None and self._lexer.new:
            self._lexer.read_already(text)
        else:
            tokens = self._lexer.read_all(text)
        if len(tokens) == 1 and tokens[0][0] is None and self._trailing is None:
            self.reader.feed(tokens[0][1], tokens[0][2])  # the usual: one run of text
        elif tokens:
            self._dispatch(tokens)
        del tokens  # the runs go before late arguments are made
        return self.finish(finish_reason)

    def _feed_windows(self, text: str) -> list[Event]:
        """A big text, lexed and read a :data:`WINDOW` at a time (as if fed so): its runs are
        cut from a window, not from the whole, so what a reader keeps of a big call is never
        held beside a copy of all its text (the caller's text aside).  A window's last run, if
        short past its leading whitespace (:data:`WINDOW_TAIL`), is read with the next
        window's first: a strict error there quotes the text as a whole feed does."""
        held: tuple[str | None, str, int] | None = None  # a short last run (WINDOW_TAIL)
        last = len(text) - WINDOW  # where the last window starts, or past it
        for start in range(0, len(text), WINDOW):
            tokens = self._lexer.feed(text[start : start + WINDOW])
            if held is not None:
                if tokens and tokens[0][0] is None:
                    tokens[0] = (None, held[1] + tokens[0][1], held[2])
                else:
                    tokens.insert(0, held)
                held = None
            if start < last and tokens and tokens[-1][0] is None and _short(tokens[-1][1]):
                held = tokens.pop()
            if tokens:
                # (a marker read again takes the held run along: see _read_again)
                self._window_run = held
                self._dispatch(tokens)
                held, self._window_run = self._window_run, None
            del tokens
        if held is not None:
            tokens, held = [held], None
            self._dispatch(tokens)
        return self._take()

    def feed_marker(self, marker: str) -> list[Event]:
        """Feed a marker known to be one (decoded from a special token id)."""
        self._dispatch(self._lexer.feed_marker(marker))
        return self._take()

    def feed_text(self, text: str) -> list[Event]:
        """Feed text known to be text (decoded from ordinary token ids): no marker is read in
        it, whatever it spells (formats that do not escape markers parse exactly from ids)."""
        tokens = self._lexer.feed_text(text)
        if len(tokens) == 1 and tokens[0][0] is None and self._trailing is None:
            self.reader.feed(tokens[0][1], tokens[0][2])  # the usual: the text itself
        else:
            self._dispatch(tokens)
        del tokens  # the runs go before late arguments are made
        return self._take()

    def finish(self, finish_reason: str | None = None) -> list[Event]:
        """End of input.  ``finish_reason`` is the engine's (``length`` wins over ours)."""
        if self.finished:
            return []
        self._run_held()
        self.finished = True
        self.reader.close(None, self._lexer.offset)
        if self.conversation:
            self.ended_inside = self.message_role is not None and not self._start_pending
            self.end_message()
            return self._take()
        if self._trailing_stray:
            self._end_trailing()
        self.message_role = None
        if not self._completion_started:
            self._completion_started = True
            self._events.append(MessageStart("assistant"))
        self._events.append(
            MessageEnd(completion_finish_reason(finish_reason, self.calls_in_completion))
        )
        return self._take()

    # ------------------------------------------------------------------ after the turn

    def _trail(self, marker: str | None, text: str, offset: int) -> None:
        """A token after a completion's turn ended (see the module docstring)."""
        trailing = self._trailing
        assert trailing is not None
        if not self._trailing_stray:
            if marker is None:
                if text.isspace():
                    trailing.append(text)
                    return
                offset += len(text) - len(text.lstrip())
            else:
                step = self._row.get(marker)
                if step is not None and (
                    (not step.actions and step.target in self.grammar.completion_over)
                    or (
                        step.actions
                        and all(getattr(action, "pending", False) for action in step.actions)
                    )
                ):
                    trailing.append(marker)
                    self.state = self.grammar.states[step.target]
                    self._row = self._rows[step.target]
                    return
                if not marker.strip():  # whitespace another turn's fence is made of
                    trailing.append(marker)
                    return
            self._trailing_stray = True
            if self.strict:
                found = marker or text.strip()
                raise ParseError(
                    offset,
                    f"text after the end of the turn: {found[:40]!r}",
                    "nothing (the completion ended)",
                    found[:80],
                )
        trailing.append(marker or text)

    def _end_trailing(self) -> None:
        if self._trailing is None or not self._trailing_stray:
            return
        raw = "".join(self._trailing)
        self._trailing = None
        self.malformed(
            self._trailing_offset,
            f"text after the end of the turn: {raw[:40]!r}",
            "nothing (the completion ended); it is kept as content",
            raw,
        )
        self._events.append(TextDelta(raw))

    # ------------------------------------------------------------------ internals

    def _take(self) -> list[Event]:
        if self._late:
            self._settle()
        events = self._events
        self._events = []
        return events

    def _settle(self) -> None:
        """Make the late arguments' strings (see the module docstring): a delta per piece."""
        events = self._events
        settled: list[Event] = []
        done = 0
        for position in self._late:
            event = events[position]
            assert isinstance(event, ToolCallDelta) and type(event.arguments) is LateText
            settled += events[done:position]
            index = event.index
            settled += [ToolCallDelta(index, piece) for piece in event.arguments.pieces() or ("",)]
            done = position + 1
        settled += events[done:]
        self._events = settled
        self._late = []

    def _valid_ending(self, marker: str) -> str:
        """The longest marker valid in this state that ``marker`` ends with, after text
        ("" when none): the lexer takes the longest marker, which may be one the state does
        not expect (SmolLM3's ``"\\n\\n<|im_end|>"`` closes a reasoning block; after an
        answer's blank lines, ``"<|im_end|>"`` ends the turn)."""
        found = ""
        for candidate in self._row:
            if len(found) < len(candidate) < len(marker) and marker.endswith(candidate):
                found = candidate
        return found

    def _run_held(self) -> None:
        """Run what the lexer still holds, as at the end of the input (text read again may
        be held again: see :meth:`_read_again`)."""
        tokens = self._lexer.finish()
        while tokens:
            self._dispatch(tokens)
            tokens = self._lexer.finish()

    def _read_again(self, marker: str, begins: int, offset: int, tokens: list[Token]) -> None:
        """``marker`` (at ``offset``, no row here) holds, from ``begins`` on, the start of a
        longer marker this state expects: its text before that is text, and the rest is
        lexed again with all that follows it (the tokens not run yet, reversed as
        ``_dispatch`` keeps them, and what the lexer holds), as the lexer would have read it
        had it known the state; the new tokens take the place of the old."""
        rest = [marker[begins:]]
        rest += [token[1] for token in reversed(tokens)]
        if self._window_run is not None:
            rest.append(self._window_run[1])
            self._window_run = None
        tokens.clear()
        again = self._lexer.read_again("".join(rest), offset + begins)
        again.reverse()
        tokens += again
        tokens.append((None, marker[:begins], offset))

    def _end_turn_early(self, marker: str, offset: int) -> None:
        """``marker`` ends the turn inside a part that does not expect it: the part is read
        as at the end of the input (an unclosed call is kept as text, with its warning) and
        the turn is over, so the marker is not taken into the content."""
        self.reader.close(None, offset)
        target = self.grammar.turn_ends[marker]
        self.entered_by = marker
        self.state = self.grammar.states[target]
        self._row = self._rows[target]
        self.reader = self.state.reader(self)
        self._trailing = []
        self._trailing_offset = offset + len(marker)

    def _valid_opening(self, marker: str) -> str:
        """The longest marker valid in this state that ``marker`` begins with, when the rest
        is a marker of the format too ("" when none): the lexer took two markers as one
        (Apriel's ``"\\n<|end|>"`` ends a turn the next opener ``"\\n<|begin_user|>\\n"``
        follows, and the two are also one opener after an assistant turn)."""
        found = ""
        for candidate in self._row:
            if (
                len(found) < len(candidate) < len(marker)
                and marker.startswith(candidate)
                and marker[len(candidate) :] in self.grammar.markers
            ):
                found = candidate
        return found

    def _dispatch(self, tokens: list[tuple[str | None, str, int]]) -> None:
        """Run the tokens; the list is emptied (its runs are let go: see ``_settle``)."""
        tokens.reverse()
        pop = tokens.pop
        states = self.grammar.states
        while tokens:
            marker = tokens[-1][0]
            if marker is None and self._trailing is None:
                offset = tokens[-1][2]
                # The reader gets the run as its only holder (no local here, the list lets
                # go): one that keeps only a part of a big run can let the rest go.
                self.reader.feed(pop()[1], offset)
                continue
            marker, text, offset = pop()
            if self._trailing is not None:
                self._trail(marker, text, offset)
                continue
            if marker is None:  # never: a run is read above, or trails
                continue
            step = self._row.get(marker)
            if step is None and (marker in self.state.inner or marker in self.grammar.soft):
                self.reader.feed(marker, offset)
                continue
            if step is None:
                ending = self._valid_ending(marker)
                if ending:  # text the lexer joined to a marker valid here ("\n\n" + end)
                    cut = len(marker) - len(ending)
                    begins = self.grammar.overlap(self.state.name, marker, cut)
                    if begins:  # a longer marker valid here may begin inside it
                        self._read_again(marker, begins, offset, tokens)
                        continue
                    tokens.append((ending, ending, offset + cut))
                    tokens.append((None, marker[:cut], offset))
                    continue
                opening = self._valid_opening(marker)
                if opening:  # a marker valid here, then another ("\n<|end|>" + an opener)
                    rest = marker[len(opening) :]
                    tokens.append((rest, rest, offset + len(opening)))
                    tokens.append((opening, opening, offset))
                    continue
                if (
                    not self.conversation
                    and marker in self.grammar.turn_ends
                    and self.state.name != self.grammar.completion_start
                ):  # inside a part (a call) the model never closed
                    self._end_turn_early(marker, offset)
                    continue
                self.malformed(
                    offset,
                    f"marker {marker!r} in state {self.state.name!r}",
                    "one of " + ", ".join(repr(m) for m in self.grammar.expected(self.state.name)),
                    marker,
                )
                self.reader.feed(marker, offset)
                continue
            self._redirect = None
            self.reader.close(marker, offset)
            if step.actions:
                for action in step.actions:
                    action(self, offset)
            self.entered_by = marker
            target = self._redirect or step.target
            self.state = state = states[target]
            self._row = self._rows[target]
            self.reader = state.reader(self)
            if target in self._over and not self.conversation:
                self._trailing = []
                self._trailing_offset = offset + len(marker)


def state_after(grammar: Grammar, text: str) -> State:
    """The state a reading of the rendered conversation ``text`` is in at its end, as a
    prompt leaves the model (a turn it continues): text the lexer holds back as a marker's
    possible start is read as what it is, and the last state is left open (its reader never
    closed)."""
    parser = Parser(grammar, conversation=True)
    parser.feed(text)
    parser._run_held()
    return parser.state
