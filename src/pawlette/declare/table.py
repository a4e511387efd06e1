"""The table interpreter: a :class:`~.layout.Layout` compiled into parse-table rows.

Each fence's joined text is one lexer marker, so the layout a marker carries (``<think>\\n``,
``<|start_header_id|>user<|end_header_id|>\\n\\n``) is read with it and never reaches a
reader.  The frames give the generic rows; every concept adds its own (:meth:`Concept.rows`)::

    outside             begin                     → outside
    outside             an opener of role R       → R's first state     (the message begins)
    a state of R        an end of R               → outside             (the message ends)

- **A turn without an end** (its frame's ``end`` is empty) ends where another opens: each of
  its states takes every row that leaves ``outside`` (the message ends first).
- **A turn without an opener** (the frame's ``open``, or its ``open_after`` for the role
  before it, is empty) begins right after that turn ends: the end rows go to the turn's
  first state, where the message is *pending* until something of it is read (an opener read
  there instead means there was no such turn).
- **A turn begun so after a turn of a given role** may begin in a state of its own
  (:meth:`Table.begin_after`): DeepSeek V3.2's answer right after another answer holds no
  reasoning block, so it begins as a body, not where a block may open.
- A completion is read from ``assistant.head``, a conversation from ``outside``.

States are named ``<role>.<part>``: ``system.body``, ``user.body``, ``assistant.head`` (the
start of the assistant's turn, where reasoning may open), ``assistant.body`` (after it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..engine.machine import Action, Grammar, GrammarBuilder, Parser, ReaderFactory
from ..engine.readers import ContentReader, ScaffoldReader
from ..errors import FormatError
from .concept import overrides
from .layout import Layout
from .pieces import Fence, text_of
from .readers import BetweenCallsReader, Described, PendingReader, lead_dropped

AFTER_CALL = "assistant.after_call"


@dataclass
class StateSpec:
    """A state being declared: its reader, role, and whether its turn can end there."""

    reader: ReaderFactory
    role: str | None
    ends: bool
    inner: frozenset[str] = frozenset()


def begin(role: str, *, pending: bool = False) -> Action:
    """The action that starts a message of ``role``."""

    def action(parser: Parser, offset: int) -> None:
        parser.begin_message(role, pending=pending)  # type: ignore[arg-type]

    action.__name__ = f"begin {role}" + (" (pending)" if pending else "")
    # After a completion's turn ended, an opener that only begins such a message is layout
    # (the parser reads it so: see pawlette.engine.machine).
    action.pending = pending  # type: ignore[attr-defined]
    # In a completion (one message, begun with the parser) it emits nothing: the whole-text
    # reading takes the step (see pawlette.engine.whole).
    action.quiet = True  # type: ignore[attr-defined]
    return action


def end(parser: Parser, offset: int) -> None:
    """The action that ends the current message."""
    parser.end_message()


end.quiet = True  # type: ignore[attr-defined]  # in a completion: no event (engine.whole)


def confirm(parser: Parser, offset: int) -> None:
    """The action that makes a pending message real (something of it was read)."""
    parser.confirm_message()


confirm.quiet = True  # type: ignore[attr-defined]  # in a completion: nothing pends


def loose_spellings(spellings: Iterable[str]) -> set[str]:
    """Each spelling also without some of its whitespace: ``\\n<tool_call>\\n`` is also read
    as ``<tool_call>``, ``\\n<tool_call>`` and ``<tool_call>\\n``; a fence with a few runs of
    whitespace inside (``<tool_call>\\n<function=``) is also read with any of them left out.
    A spelling of whitespace alone is none."""
    given = set(spellings)
    found: set[str] = set()
    for text in given:
        runs = [match.span() for match in _WHITESPACE.finditer(text)]
        if len(runs) > 4:  # long instruction text: only its ends
            runs = [span for span in runs if span[0] == 0 or span[1] == len(text)]
        for chosen in range(1, 1 << len(runs)):
            pieces, position = [], 0
            for bit, (start, end) in enumerate(runs):
                if chosen >> bit & 1:
                    pieces.append(text[position:start])
                    position = end
            pieces.append(text[position:])
            loose = "".join(pieces)
            if loose.strip():
                found.add(loose)
    return found - given


_WHITESPACE = re.compile(r"\s+")


class Table:
    """The parse table being built: what :meth:`Concept.rows` gets."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.states: dict[str, StateSpec] = {}
        self.steps: dict[tuple[str, str], tuple[str, tuple[Action, ...]]] = {}
        self.fields: dict[str, dict[str, str]] = {}
        self.completion_start = "assistant.head"
        self.unopened_start: str | None = None
        """Where a completion starts after a prompt that opened no assistant turn, where the
        usual prompt opens more than the turn (see :attr:`Grammar.unopened_start`)."""
        self.begin_target = "outside"
        """Where the ``begin`` fence leads (bare system text follows it: ``system.body``)."""
        self.begin_actions: tuple[Action, ...] = ()
        self.first_state: dict[str, str] = {}
        """The state a role's turn begins in (``assistant.head``, ``user.body``, ...)."""
        self.source = "the frames"
        """Who is adding rows now (a concept's name while its rows are built): a conflicting
        row's error names both sides."""
        self.sources: dict[tuple[str, str], str] = {}
        self.opened: dict[str, frozenset[str]] = {}
        """States whose turn may be only a generation prompt (:class:`.PromptAlways`), with
        the turn's end spellings: once every concept has given its rows, the state's reader
        makes the turn real when it reads anything (:func:`pending_reader`)."""
        self.after: dict[tuple[str, str], tuple[str, str]] = {}
        """The turns that begin in a state of their own after a turn of a given role, where
        they begin with no opener: ``(role, previous)`` to the state they read like and the
        layout they begin with (:meth:`begin_after`)."""
        self.call_states: list[str] = ["assistant.head", "assistant.body"]
        """The states from which a call may open: calls concepts add their rows from each
        (a reasoning concept whose block a call ends adds its own state, so it must come
        before the calls concept in the layout)."""

    # ------------------------------------------------------------------ what concepts use

    def text(self, *fences: Fence) -> str:
        """The fences' joined text (what the lexer reads as one marker)."""
        return "".join(text_of(pieces, self.layout.options, self.layout.name) for pieces in fences)

    def spellings(self, loose: bool, *fences: Fence) -> list[str]:
        """The fences' joined text, and with ``loose`` its :func:`loose_spellings` (none for
        empty fences), sorted."""
        texts = {self.text(*fences)} - {""}
        if loose:
            texts |= loose_spellings(texts)
        return sorted(texts)

    def state(
        self,
        name: str,
        reader: ReaderFactory,
        role: str | None = None,
        *,
        ends: bool = False,
        inner: Iterable[str] = (),
    ) -> str:
        """Declare a state.  ``ends``: the role's end fences end the turn here (rows added
        when the table is built).  ``inner``: markers the state's reader reads as text (the
        inside of a call whose tags are special tokens in some tokenizers)."""
        if name in self.states:
            raise FormatError(f"{self.layout.name}: state {name!r} declared twice")
        self.states[name] = StateSpec(reader, role, ends, frozenset(inner))
        return name

    def reader(self, name: str, reader: ReaderFactory, *, ends: bool | None = None) -> None:
        """Read state ``name`` with another reader (a concept that reads a turn's text its
        own way: the system text that may be the format's default); ``ends`` (given): whether
        the role's end fences end the turn there (False: the concept adds its own end rows)."""
        self.states[name].reader = reader
        if ends is not None:
            self.states[name].ends = ends

    def on(self, state: str, marker: str, target: str, *actions: Action) -> None:
        """A row: ``marker`` in ``state`` goes to ``target`` after ``actions``."""
        if not marker:
            raise FormatError(
                f"{self.layout.name}: a row from state {state!r} to {target!r} on an empty "
                "marker; expected a fence with text (an empty fence is written, never read)"
            )
        found = self.steps.get((state, marker))
        if found is not None:
            if found == (target, actions):
                return
            role = state.partition(".")[0]
            where = (
                "between turns"
                if state == "outside"
                else f"in {role} turns"
                if role in self.layout.frames
                else f"in state {state!r}"
            )
            earlier = self.sources.get((state, marker), "the frames")
            whose = (
                f"two fences of {earlier}"
                if earlier == self.source
                else f"one of {earlier}, one of {self.source}"
            )
            raise FormatError(
                f"{self.layout.name}: {marker!r} has two meanings {where}: {whose}; "
                "expected one meaning per marker (two fences are spelled alike; in the parse "
                f"table, state {state!r} goes to {found[0]!r} and to {target!r})"
            )
        self.steps[(state, marker)] = (target, actions)
        self.sources[(state, marker)] = self.source

    def on_each(self, state: str, markers: Iterable[str], target: str, *actions: Action) -> None:
        """A row (:meth:`on`) on each of ``markers``."""
        for marker in markers:
            self.on(state, marker, target, *actions)

    def begin_after(self, role: str, previous: str, *, like: str, lead: str = "") -> None:
        """A turn of ``role`` that begins with no opener after a turn of ``previous`` begins
        in a state of its own, ``<role>.after_<previous>``, that reads as state ``like`` does
        (it takes every row ``like`` has once every concept has given its rows), pending as a
        turn's first state is.  ``lead``: whitespace written after the turn before ends
        (Gemma 4's newline after ``<turn|>``), layout where the turn begins with it, not its
        text.  Where the turn does begin with an opener after that role, or the turn before
        has no end, nothing changes (the turn begins as usual)."""
        self.after[(role, previous)] = (like, lead)

    def calls_open(self, spellings: Iterable[str], target: str) -> None:
        """Rows on each of ``spellings`` from every state a call may open in
        (:attr:`call_states`) to ``target``."""
        for state in tuple(self.call_states):
            self.on_each(state, sorted(spellings), target)

    def after_calls(self, state: str, closes: Iterable[str], reopen: Iterable[str] = ()) -> None:
        """``assistant.after_call`` (only whitespace, to the turn's end), reached from the
        calls' ``state`` on each of ``closes``; each of ``reopen`` leads back."""
        self.state(AFTER_CALL, BetweenCallsReader, "assistant", ends=True)
        self.on_each(state, closes, AFTER_CALL)
        self.on_each(AFTER_CALL, reopen, state)

    def ends(self, role: str) -> list[str]:
        """The texts that end a turn of ``role`` (its frame's ``end`` and ``also_end``)."""
        frame = self.layout.frames.get(role)
        if frame is None:
            return []
        texts = [self.text(pieces) for pieces in (frame.end, *frame.also_end)]
        return [text for text in texts if text]

    def openers(self, role: str) -> set[str]:
        """The texts that open a turn of ``role``: its frame's ``open``, ``open_after`` and
        ``prompt_after`` (``""`` where one is empty)."""
        frame = self.layout.frames[role]
        fences = (frame.open, *frame.open_after.values(), *frame.prompt_after.values())
        return {self.text(pieces) for pieces in fences}

    def states_of(self, role: str, *, ending: bool = True) -> list[str]:
        """The states of ``role``'s turn (``ending``: only those its end fences end)."""
        return [
            name
            for name, spec in self.states.items()
            if spec.role == role and (spec.ends or not ending)
        ]

    # ------------------------------------------------------------------ the generic rows

    def _frames(self) -> None:
        layout = self.layout
        self.state("outside", ScaffoldReader)
        for role in ("system", "user"):
            if role in layout.frames:
                self.first_state[role] = self.state(f"{role}.body", ContentReader, role, ends=True)
        self.state("assistant.head", ContentReader, "assistant", ends=True)
        self.state("assistant.body", ContentReader, "assistant", ends=True)
        self.first_state["assistant"] = "assistant.head"

    def _openers(self) -> dict[str, set[str]]:
        """Each role's opener texts, and the roles whose turns begin with no opener after a
        turn of another role (``{"assistant": {"user", "tool"}}`` for Mistral)."""
        implicit: dict[str, set[str]] = {}
        for role, frame in self.layout.frames.items():
            target = self.first_state.get(role)
            if target is None:
                continue
            self.on_each("outside", sorted(self.openers(role) - {""}), target, begin(role))
            for other in self.layout.frames:
                if role not in ("user", "assistant"):
                    break  # system text and results are placed by their concepts
                # A turn with no opener after a turn with no end cannot be told from it:
                # what follows is read as that turn's (the writer may still write it).  After
                # a turn of its own role, only where the frame says so (``open_after``): an
                # assistant turn a template writes straight after another (DeepSeek V3.1).
                same = other == role and other not in frame.open_after
                if not same and not self.text(frame.opener(other)) and self.ends(other):
                    implicit.setdefault(role, set()).add(other)
        return implicit

    def build(self) -> Grammar:
        self._frames()
        implicit = self._openers()
        for concept in self.layout.concepts:
            if overrides(concept, "rows"):
                self.source = type(concept).__name__
                concept.rows(self)
        self.source = "the frames' ends"
        firsts = self._first_states_after(implicit)
        for name, ends in self.opened.items():
            self.reader(name, pending_reader(self.states[name].reader, ends, opened=True))
        if self.layout.begin:
            self.on("outside", self.text(self.layout.begin), self.begin_target, *self.begin_actions)
        elif self.begin_target != "outside":
            raise FormatError(
                f"{self.layout.name}: the conversation starts with bare system text but the "
                "layout has no begin fence; expected Layout.begin (a BOS marker) before it"
            )
        self._ends(implicit, firsts)
        self._open_ended(implicit, firsts)
        builder = GrammarBuilder()
        for name, spec in self.states.items():
            builder.state(name, spec.reader, spec.role, spec.inner)  # type: ignore[arg-type]
        for (state, marker), (target, actions) in self.steps.items():
            builder.on(state, marker, target, *actions)
        builder.fields.update({role: dict(keys) for role, keys in self.fields.items()})  # type: ignore[misc]
        from .grammar import markers_of

        special = markers_of(self.layout)
        soft = frozenset(
            marker for (_, marker) in self.steps if not any(token in marker for token in special)
        )
        escape = any(concept.escapes_markers() for concept in self.layout.concepts)
        return builder.build(
            escape=escape,
            conversation_start="outside",
            completion_start=self.completion_start,
            unopened_start=self.unopened_start,
            soft=soft,
            text_ids=self.layout.markers_in_text,
            # A word (ChatGLM3's ``sop``) stays text: read as a marker, every word holding it
            # would break.  A format that escapes markers keeps its lexer's own (its escapes).
            bare=frozenset()
            if escape
            else frozenset(marker for marker in special if marker and not marker.isalnum()),
        )

    def _first_states_after(self, implicit: dict[str, set[str]]) -> dict[tuple[str, str], str]:
        """The states declared by :meth:`begin_after` where the turn does begin with no
        opener after that role, each with the rows of the state it reads like:
        ``(role, previous)`` to the state."""
        firsts: dict[tuple[str, str], str] = {}
        for (role, previous), (like, _) in self.after.items():
            if previous not in implicit.get(role, ()):
                continue
            spec = self.states[like]
            name = self.state(f"{role}.after_{previous}", spec.reader, role, ends=spec.ends)
            self.states[name].inner = spec.inner
            for (state, marker), (target, actions) in list(self.steps.items()):
                if state == like:
                    self.on(name, marker, target, *actions)
            firsts[(role, previous)] = name
        return firsts

    def _ends(self, implicit: dict[str, set[str]], firsts: dict[tuple[str, str], str]) -> None:
        """Every ending state of each role ends its turn at the role's end fences; where
        another role's turn begins with no opener after this one, the end goes there (to
        the state ``firsts`` gives for the two roles, else the turn's first state)."""
        for role in self.layout.frames:
            following = [other for other, after in implicit.items() if role in after]
            if len(following) > 1:
                raise FormatError(
                    f"{self.layout.name}: after a {role} turn, {' and '.join(following)} turns "
                    "both begin with no opener; expected at most one"
                )
            target = "outside"
            actions: tuple[Action, ...] = (end,)
            if following:
                target = firsts.get((following[0], role), self.first_state[following[0]])
                actions = (end, begin(following[0], pending=True))
            for state in self.states_of(role):
                self.on_each(state, self.ends(role), target, *actions)
        for key, name in firsts.items():
            lead = self.after[key][1]
            if lead:  # (read past first: whitespace the pending turn holds is given to it)
                self.reader(name, lead_dropped(self.states[name].reader, lead, "turn after layout"))
        for role, after in implicit.items():
            heads = [self.first_state[role]]
            heads += [firsts[(role, other)] for other in sorted(after) if (role, other) in firsts]
            for head in heads:
                self._pending_first(role, head)
        for name in firsts.values():
            # (entered only when a turn ended: a completion's turn is over there)
            made = self.states[name].reader
            assert isinstance(made, Described)  # (as pending_reader makes it)
            self.reader(name, _TurnOver(made.described_as, made.make, **dict(made.shown)))

    def _pending_first(self, role: str, head: str) -> None:
        """The first state ``head`` of a turn of ``role`` that may begin with no opener: what
        it reads makes the message real."""
        # Whitespace the turn's own end closes was the turn's text, and so was whitespace
        # before a marker that goes on within the turn past where its content is written
        # (Ministral's ``[/INST] [TOOL_CALLS]``); before its reasoning or the marker that
        # opens its body (DeepSeek V3.2's ``\n\n</think>`` after results) it is layout.
        ends = set(self.ends(role))
        kept = set(ends)
        before_content = {f"{role}.body", f"{role}.reasoning"}
        for (state, marker), (target, actions) in list(self.steps.items()):
            spec = self.states.get(target)
            within = spec is not None and spec.role == role
            if state == head and (within or marker in ends):
                self.steps[(state, marker)] = (target, (confirm, *actions))
                if within and target not in before_content:
                    kept.add(marker)
        self.reader(head, pending_reader(self.states[head].reader, frozenset(kept)))

    def _open_ended(
        self, implicit: dict[str, set[str]], firsts: dict[tuple[str, str], str]
    ) -> None:
        """A turn without an end, or one that may not be there (pending), ends where another
        turn opens: its states take the rows that leave ``outside``."""
        opening = [
            (marker, target, actions)
            for (state, marker), (target, actions) in self.steps.items()
            if state == "outside" and target != "outside"
        ]
        roles = {role for role in self.layout.frames if not self.ends(role)}
        pending = {self.first_state[role] for role in implicit} | set(firsts.values())
        for name, spec in list(self.states.items()):
            if (spec.role in roles and spec.ends) or name in pending:
                for marker, target, actions in opening:
                    self.steps.setdefault((name, marker), (target, (end, *actions)))


def pending_reader(
    reader: ReaderFactory, ends: frozenset[str], *, opened: bool = False
) -> ReaderFactory:
    """The reader of a turn's first state when the turn may not be there: ``reader`` inside
    a :class:`~.readers.PendingReader` (``ends`` and ``opened`` as it reads them)."""
    make: ReaderFactory = lambda parser: PendingReader(parser, reader(parser), ends, opened)  # noqa: E731
    words = "turn or a generation prompt alone" if opened else "pending turn"
    return Described(words, make, ends=ends, reader=reader)


class _TurnOver(Described):
    """A reader factory, the turn before its state over: a completion's turn ended there
    (the engine's scaffold states), though a conversation reads a turn there."""

    __slots__ = ()
    scaffold = True


def compile_table(layout: Layout) -> Grammar:
    """The parse table of a layout."""
    return Table(layout).build()
