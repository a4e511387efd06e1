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
  (``length`` when the caller says so, else ``tool_calls`` when a call was parsed, else
  ``stop``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import FormatError, ParseError
from ..types import Event, MessageEnd, MessageStart, ParseWarning, Role, Tool
from .lexer import Lexer


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

    def expected(self, state: str) -> list[str]:
        return sorted(marker for (name, marker) in self.steps if name == state)


class GrammarBuilder:
    """Collects states and transitions; blocks of a declaration install themselves here."""

    def __init__(self) -> None:
        self.states: dict[str, State] = {}
        self.steps: dict[tuple[str, str], Step] = {}
        self.fields: dict[Role, dict[str, str]] = {}

    def state(self, name: str, reader: ReaderFactory, role: Role | None = None) -> str:
        if name in self.states:
            raise FormatError(f"state {name!r}: declared twice; expected unique state names")
        self.states[name] = State(name, reader, role)
        return name

    def on(self, state: str, marker: str, target: str, *actions: Action) -> None:
        key = (state, marker)
        if key in self.steps:
            raise FormatError(f"state {state!r}: two rows for marker {marker!r}; expected one")
        self.steps[key] = Step(target, actions)

    def build(self, *, escape: bool, conversation_start: str, completion_start: str) -> Grammar:
        for (state, marker), step in self.steps.items():
            for name in (state, step.target):
                if name not in self.states:
                    raise FormatError(f"row ({state!r}, {marker!r}): unknown state {name!r}")
        for name in (conversation_start, completion_start):
            if name not in self.states:
                raise FormatError(f"start state {name!r}: unknown; expected a declared state")
        return Grammar(
            states=dict(self.states),
            steps=dict(self.steps),
            markers=frozenset(marker for (_, marker) in self.steps),
            escape=escape,
            conversation_start=conversation_start,
            completion_start=completion_start,
            fields={role: dict(keys) for role, keys in self.fields.items()},
        )


def random_call_id() -> str:
    return "call_" + uuid.uuid4().hex[:24]


class Parser:
    """The incremental parser for one completion or one rendered conversation.

    Use :meth:`pawlette.Format.parser` to make one.
    """

    def __init__(
        self,
        grammar: Grammar,
        *,
        conversation: bool = False,
        strict: bool = False,
        id_factory: Callable[[], str] | None = None,
        start: str | None = None,
        tools: Sequence[Tool] = (),
    ) -> None:
        self.grammar = grammar
        self.strict = strict
        self.conversation = conversation
        self.new_call_id = id_factory or random_call_id
        self.tools: tuple[Tool, ...] = tuple(tools)
        """The tools the output may call; readers that know call names check them (empty: any)."""
        self.shared: dict[str, Any] = {}
        """What the reader of one state leaves for the next within a block that spans several
        states (a call's name and index, a voice block's header)."""
        self._lexer = Lexer(grammar.markers, escape=grammar.escape)
        self._events: list[Event] = []
        self.message_role: Role | None = None
        self._start_pending = False
        self.calls_in_message = 0
        self.calls_in_completion = 0
        self.finished = False
        self._redirect: str | None = None
        self.entered_by: str | None = None
        """The marker that entered the current state (readers quote it in lenient text)."""
        name = start or (grammar.conversation_start if conversation else grammar.completion_start)
        self.state = grammar.states[name]
        if not conversation and self.state.role is not None:
            self.begin_message(self.state.role)
        self.reader: Reader = self.state.reader(self)

    # ------------------------------------------------------------------ used by readers/actions

    def emit(self, event: Event) -> None:
        self._events.append(event)

    def begin_message(self, role: Role, *, pending: bool = False) -> None:
        """Start a message.  ``pending``: only once its reader calls :meth:`confirm_message`
        (before it emits anything of the message); a pending message ended before that was
        never there (ChatGLM3's training render ends with the stop token that opens no turn).
        The hot path (:meth:`emit`) never checks for one."""
        self.message_role = role
        self.calls_in_message = 0
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

    def end_message(self, finish_reason: str | None = None) -> None:
        if self.message_role is None:
            return
        if self._start_pending:
            self._start_pending = False
            self.message_role = None
            return
        if not self.conversation and finish_reason is None:
            finish_reason = "tool_calls" if self.calls_in_completion else "stop"
        self.message_role = None
        self._events.append(MessageEnd(finish_reason if not self.conversation else None))

    def next_call_index(self) -> int:
        index = self.calls_in_message
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
        self._dispatch(self._lexer.feed(text))
        return self._take()

    def feed_marker(self, marker: str) -> list[Event]:
        """Feed a marker known to be one (decoded from a special token id)."""
        self._dispatch(self._lexer.feed_marker(marker))
        return self._take()

    def feed_text(self, text: str) -> list[Event]:
        """Feed text known to be text (decoded from ordinary token ids): no marker is read in
        it, whatever it spells (formats that do not escape markers parse exactly from ids)."""
        self._dispatch(self._lexer.feed_text(text))
        return self._take()

    def finish(self, finish_reason: str | None = None) -> list[Event]:
        """End of input.  ``finish_reason`` is the engine's (``length`` wins over ours)."""
        if self.finished:
            return []
        self._dispatch(self._lexer.finish())
        self.finished = True
        self.reader.close(None, self._lexer.offset)
        if finish_reason == "length" and not self.conversation:
            self.end_message("length")
        else:
            self.end_message()
        return self._take()

    # ------------------------------------------------------------------ internals

    def _take(self) -> list[Event]:
        events = self._events
        self._events = []
        return events

    def _dispatch(self, tokens: list[tuple[str | None, str, int]]) -> None:
        steps = self.grammar.steps
        for marker, text, offset in tokens:
            if marker is None:
                self.reader.feed(text, offset)
                continue
            step = steps.get((self.state.name, marker))
            if step is None:
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
            for action in step.actions:
                action(self, offset)
            self.entered_by = marker
            self.state = self.grammar.states[self._redirect or step.target]
            self.reader = self.state.reader(self)
