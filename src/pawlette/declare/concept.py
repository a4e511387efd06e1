"""The concept protocol: what every part of a declaration brings to the four interpreters.

A :class:`~pawlette.declare.Layout` is frames (how each role's turn opens, ends and is
followed) plus an ordered tuple of concepts (the system prompt, the tools block, reasoning,
calls, results, ...).  Four interpreters read it, and none of them asks what a concept is:
each walks its own skeleton and, at every hook, asks every concept of the layout in order.

====================  ============================================================
interpreter           hooks (methods of :class:`Concept`, all optional)
====================  ============================================================
the writer            ``check``, ``write_start``, ``write_message`` (roles in
                      ``claims``), ``write_before``, ``turn_open``,
                      ``write_opening``, ``write_content``, ``write_closing``,
                      ``turn_end``, ``write_after``, ``write_prompt``,
                      ``write_finish``, ``wants_system_turn``, ``writes_prompt``,
                      ``query_index``
the parse table       ``rows``
the Jinja template    ``jinja_setup``, ``jinja_start``, ``jinja_message``,
                      ``jinja_wants_system_turn``,
                      ``jinja_before``, ``jinja_open``, ``jinja_lead``, ``jinja_opening``,
                      ``jinja_content``, ``jinja_closing``, ``jinja_end``,
                      ``jinja_after``, ``jinja_prompt``, ``jinja_finish``,
                      ``jinja_writes_prompt``
the turn grammar      ``grammar``
all of them           ``escapes_markers``, ``encode_cuts``, ``stops``,
                      ``trims_content``
====================  ============================================================

The writer's skeleton, for each message that no concept claims (``claims``)::

    write_before  turn_open|frame.open  write_opening  write_content|text  write_closing
    turn_end|frame.end  write_after  frame.after

The generation prompt opens an assistant turn at ``index == len(messages)``: ``write_before``,
``turn_open``|the frame's prompt, ``write_prompt``.

The Jinja template mirrors it branch for branch, and the parse table and the turn grammar are
built from the same values, so the artifacts agree (``tests/declare`` checks that they do for
every declared format).  A hook method that a concept does not override is never called.

Write a concept as a frozen dataclass that subclasses :class:`Concept`; its :class:`Marker`
fields are its special tokens (see :meth:`Concept.markers`).

``help()`` of a concept shows what a format author writes: its docstring (each field's
meaning), its constructor and its fields, and :meth:`Concept.hooks` (the hooks it implements,
by name).  The hooks themselves, which only the interpreters call, are documented here and by
``help(pawlette.declare.Concept)`` (:class:`ConceptType` keeps them out of ``dir()`` of the
concepts, where ``help()`` looks; they are still the concepts' methods).

The hints a concept gives the compiled writer (``hook_needs``, ``hook_is_local``,
``hook_reads_tools``, ``hook_reads_neighbours``, ``prompt_is_local``, ``hooks_outside_turn``,
``check_is_local``, ``content_text``) are checked for every format by tests/compile against
the reference writer, which calls every hook every time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import is_dataclass
from typing import TYPE_CHECKING, ClassVar

from .pieces import Fence, Marker, pieces_in

if TYPE_CHECKING:  # (the types a concept's hooks take, for concept modules to import here)
    from ..engine.writer import Writer
    from ..types import Message
    from .grammar import Turn as Turn
    from .jinja import Template as Template
    from .layout import Layout as Layout
    from .table import Table as Table
    from .write import Render as Render


class ConceptType(type):
    """The class of every concept: ``dir()`` of a concept other than :class:`Concept` lists
    its fields and :meth:`Concept.hooks` alone, so that ``help()`` of a concept shows its
    docstring (each field's meaning), its constructor and its fields' defaults, not some 250
    lines of the hooks and helpers that only the interpreters call.  ``dir(Concept)`` lists
    the whole protocol; every method is still there (``Reasoning.write_opening``), and the
    API reference and the source show a concept's own."""

    def __dir__(cls) -> list[str]:
        names = list(super().__dir__())
        if cls.__dict__.get("_protocol"):
            return names
        fields = {field.name for field in dataclasses.fields(cls)} if is_dataclass(cls) else ()
        return [name for name in names if name in fields or name == "hooks"]


class Concept(metaclass=ConceptType):
    """A part of a chat format with its share of every interpreter (see the module; and
    docs/declaring.md, how to write a concept): the hooks the interpreters call."""

    _protocol: ClassVar[bool] = True
    """(This class documents the protocol: ``dir()`` lists its hooks.)"""

    @classmethod
    def hooks(cls) -> tuple[str, ...]:
        """The interpreter hooks this concept implements, by name (the rest do nothing), each
        documented by ``help(pawlette.declare.Concept)``: the interpreters call them, a format
        author never does."""
        return tuple(
            name
            for name in sorted(PROTOCOL)
            if callable(getattr(Concept, name)) and getattr(cls, name) is not getattr(Concept, name)
        )

    claims: ClassVar[frozenset[str]] = frozenset()
    """The roles whose messages this concept writes itself (:meth:`write_message`)."""

    job: ClassVar[str | None] = None
    """The part of a message that one concept of a layout alone writes, when this concept
    writes it (``"calls"``, ``"tools block"``, ``"reasoning"``): the layout refuses two
    concepts for one job, since reading could not tell whose a marker is."""

    # ------------------------------------------------------------------ declaration

    def markers(self) -> Iterator[Marker]:
        """The special tokens this concept writes: every :class:`Marker` in its fields."""
        yield from pieces_in(self, Marker)

    def validate(self, layout: Layout) -> None:
        """Refuse an inconsistent declaration with :class:`~pawlette.errors.FormatError`
        (naming the field, what was given and what is allowed)."""

    def escapes_markers(self) -> bool:
        """Whether the format escapes marker spellings inside caller text (a backslash before
        each marker its parse table reads; see :func:`pawlette.engine.lexer.escape_text`), so
        any text reads back as text (PCML, omni).  When a concept says so, every interpreter
        escapes: the writer escapes caller text and writes each fence as one segment (the lexer
        reads a fence's whole text as one marker, so a backslash before its layout escapes it),
        the lexer reads escapes, the template writes caller text through its ``escape`` macro
        (:meth:`.jinja.Template.value`), and the grammars' text excludes unescaped markers."""
        return False

    def stops(self) -> tuple[Fence, ...]:
        """Fences the model writes to end its turn, beyond the assistant frame's ``end`` and
        ``also_end``: they join the format's stop set (:attr:`pawlette.Format.stop`) and end
        the turn grammars, and the concept writes and reads them itself (ChatGLM3 ends a turn
        with the next turn's opener)."""
        return ()

    def trims_content(self) -> bool:
        """Whether this concept removes characters from the start of an assistant turn's
        text (reasoning that trims the text after its block), so a text of only those
        characters is written as nothing while the separator it asked for stays: the turn
        grammars then let the text before the calls be empty."""
        return False

    def encode_cuts(self) -> frozenset[str] | None:
        """How the format's reference cuts its text into tokenizer calls
        (:attr:`pawlette.Format.encode_cuts`; None: this concept says nothing)."""
        return None

    def rewrite_messages(
        self,
    ) -> Callable[[tuple[Message, ...], Writer], tuple[Message, ...]] | None:
        """A rewrite of a request's messages before any is written (what it drops recorded
        in the writer's losses), as a past answer's reasoning read out of its content
        (None: this concept writes the messages as given)."""
        return None

    # ------------------------------------------------------------------ the writer

    acts_on: ClassVar[frozenset[str] | None] = None
    """What :meth:`turn_roles` returns unless a concept computes it."""

    def turn_roles(self) -> frozenset[str] | None:
        """The roles whose framed turns this concept's turn hooks (``write_before`` through
        ``turn_end``, and their Jinja counterparts) act on; None: every role.  Interpreters
        call a turn hook only for these roles, so a concept that says so is never asked about
        the others (and costs nothing there)."""
        return self.acts_on

    def inherits(self, base: type[Concept], *names: str) -> bool:
        """Whether this concept's class takes each method ``names`` from ``base`` as it is
        (a subclass that overrides one may act otherwise than ``base`` says)."""
        kind = type(self)
        return all(getattr(kind, name) is getattr(base, name) for name in names)

    def hook_roles(self, hook: str) -> frozenset[str] | None:
        """The roles whose framed turns the turn hook ``hook`` (its name: ``"turn_end"``,
        ``"jinja_content"``, ...) acts on; by default :meth:`turn_roles`.  A concept whose turn
        hooks act on different roles says so hook by hook, and costs nothing elsewhere."""
        return self.turn_roles()

    def hook_needs(self, hook: str, role: str) -> str | None:
        """What the turn hook ``hook`` (``"write_opening"``, ``"write_content"`` or
        ``"write_closing"``) needs to act in a turn of ``role`` written for a message (else
        it does nothing; a content hook returns False): a true
        :class:`~pawlette.types.Message` field (``"tool_calls"``, ``"reasoning"``), or
        ``"after_last_query"`` (the message comes after the render's query, ``out.query``:
        the last user message unless :meth:`query_index` says an earlier one), or
        ``"first_two_messages"`` (the message is at index 0 or 1: the first, or the one after
        a system message).  The compiled writer calls the hook only then.  None (the default):
        always called."""
        del hook, role
        return None

    def hook_is_local(self, hook: str, role: str) -> bool:
        """Whether the turn hook ``hook`` (by name, ``"write_before"`` through
        ``"write_after"``) writes a turn of ``role`` for a message as a function of the
        layout, that message, its index and the role of the turn before it alone: it reads no
        other message, no tool and nothing another hook or turn left, records no loss and
        changes nothing of the render but ``has_content`` (to True).
        When every hook of a turn is local (or needs a field the message does not hold:
        :meth:`hook_needs`), the compiled writer keeps the turn's segments by its message and
        writes them again in one step when the message comes back at that place.  False (the
        default): the turn is written anew each time."""
        del hook, role
        return False

    def hook_reads_tools(self, hook: str, role: str) -> bool:
        """Whether the turn hook ``hook`` (or ``"write_message"``, for a role in
        :attr:`claims`) is local (:meth:`hook_is_local`) but that it reads the request's
        tools too: a turn holding the tools block.  The compiled writer then keeps the turn
        by its message and the tools' identity, when the reader keeps them (a server's tools,
        met again: values never changed) or there are none, and writes it again in one step
        for a request of the same message at that place and the same tools.  False (the
        default)."""
        del hook, role
        return False

    def hook_reads_neighbours(self, hook: str, role: str) -> bool:
        """Whether ``"write_message"`` (for a role in :attr:`claims`) is local
        (:meth:`hook_is_local`) but that it reads the roles of the messages just before and
        just after its own too (a result grouped with its neighbours in one turn).  The
        compiled writer then keeps the turn by its message and those two roles, and writes it
        again in one step where the message comes back between messages of the same roles.
        False (the default)."""
        del hook, role
        return False

    def prompt_is_local(self) -> bool:
        """Whether this concept's hooks at the generation prompt (``write_before`` and
        ``turn_open`` of the assistant's turn at ``index == len(messages)``, and
        :meth:`write_prompt`) write it as a function of the layout, that index and the role
        of the turn before it alone, changing nothing of the render but what the prompt's turn
        sets (:meth:`hook_is_local`'s terms, with no message).  When every concept that acts
        there says so, the compiled writer keeps the prompt's segments by that index and role
        and writes them again in one step.  False (the default): the hooks are called in every
        render."""
        return False

    def hooks_outside_turn(self) -> frozenset[str]:
        """The turn hooks (by name: ``"write_before"``) that write only before their turn
        opens, outside any message's context, and change nothing the turn then reads (its
        frame, hooks and the render's state): the compiled writer may then keep the turn's
        own text by its message and write it again in one step, the hook called all the same.
        None by default."""
        return frozenset()

    def check_is_local(self) -> bool:
        """Whether :meth:`check` is a function of the layout and the request alone (its
        messages, the number and kinds of its tools, and whether it ends with the generation
        prompt; nothing else of the tools): it reads nothing of the render but those, what
        earlier checks handle and the state it makes itself
        (:meth:`~pawlette.declare.write.Render.state`), and changes nothing of it but what it
        handles and the losses it records (``out.handles``, ``out.lose``).
        When every check of a layout is local, the compiled writer keeps their outcome (what
        they handle and the losses they record, in order) by the identities of the request's
        messages (immutable values the reader hands back for equal ones met again) and the
        number and kinds of its tools, and replays it for a request of the same messages and
        such tools (their definitions may differ: a request's new tools), without the checks'
        walks through the messages.  False (the default): the checks are called in every
        render."""
        return False

    def check(self, out: Render) -> None:
        """Refuse what this concept cannot write, or record what it drops
        (:meth:`~pawlette.declare.write.Render.lose`), before anything is written."""

    def write_start(self, out: Render) -> None:
        """At the start of the conversation, after ``layout.begin``."""

    def write_message(self, out: Render, index: int) -> None:
        """Write ``messages[index]``, a message of a role in :attr:`claims`."""

    def claims_up_to(self, role: str) -> int | None:
        """The last message index at which :meth:`write_message` writes a message of
        ``role`` (a role in :attr:`claims` that has a frame) otherwise than as its framed
        turn, ``out.turn(index)``: after it, the compiled writer writes the message's turn
        itself, as it writes the turn of a role no concept claims.  None (the default): the
        concept writes every message of the role."""
        del role
        return None

    def wants_system_turn(self, out: Render) -> bool:
        """Whether a system turn must be written when the conversation has none."""
        return False

    def write_before(self, out: Render, index: int) -> None:
        """Before the turn of ``messages[index]`` opens (``index`` -1: a written system turn
        that holds no message; ``len(messages)``: the generation prompt)."""

    def turn_open(self, out: Render, index: int) -> Fence | None:
        """The fence that opens this turn instead of its frame's (None: the frame's)."""
        return None

    def write_opening(self, out: Render, index: int) -> None:
        """After the turn's open fence, before its content."""

    def write_content(self, out: Render, index: int) -> bool:
        """Write the turn's content; True when written (else the next concept, then the
        message's text)."""
        return False

    def content_text(self, role: str) -> Callable[[str], str] | None:
        """What :meth:`write_content` does in a turn of ``role`` written for a message of
        that role whose content is one text part, or none (its text is ``""``), when all it
        does there is write a function of that text as the skeleton writes a message's text
        (caller text of kind ``"content"``, trainable in the assistant's turn; an empty text
        is no segment) and return True: that function.
        The compiled writer calls it there in place of the hook when this concept's is the
        turn's first content hook.  None (the default): the hook is called."""
        del role
        return None

    def write_closing(self, out: Render, index: int) -> None:
        """After the turn's content, before its end fence."""

    def turn_end(self, out: Render, index: int) -> Fence | None:
        """The fence that ends this turn instead of its frame's (None: the frame's)."""
        return None

    def write_after(self, out: Render, index: int) -> None:
        """After the turn's end fence, before its frame's ``after`` (never trainable: what
        the format writes after the model's end, such as a container's close)."""

    def write_prompt(self, out: Render) -> None:
        """After the generation prompt's open fence."""

    def write_finish(self, out: Render) -> None:
        """At the end of the conversation: after the last message, and after the generation
        prompt when there is one (``out.prompt``)."""

    def writes_prompt(self, messages: tuple[Message, ...]) -> bool:
        """Whether the template writes the generation prompt after ``messages`` when it is
        asked for (False: the render asked for it is the render without it, ``out.prompt``
        False for every hook).  True by default."""
        return True

    def query_index(self, out: Render) -> int | None:
        """The index of the last message this concept takes for the user's query where that
        is not the last user message (``out.last_query``); None (the default): no other.  The
        render's ``query`` is the earliest any concept gives, and a hook that needs
        ``"after_last_query"`` (:meth:`hook_needs`) acts on the messages after it."""
        del out
        return None

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        """Add this concept's states and rows to the parse table."""

    # ------------------------------------------------------------------ the Jinja template

    def jinja_setup(self, out: Template) -> None:
        """Macros and ``ns`` variables, before the conversation."""

    def jinja_start(self, out: Template) -> None:
        """The counterpart of :meth:`write_start`."""

    def jinja_wants_system_turn(self) -> str | None:
        """The Jinja condition of :meth:`wants_system_turn` (None: never)."""
        return None

    def jinja_message(self, out: Template, role: str) -> None:
        """The branch of the message loop for ``role`` (a role in :attr:`claims`)."""

    def jinja_before(self, out: Template, role: str) -> None:
        """The counterpart of :meth:`write_before` (``message``, ``index`` in scope; for the
        generation prompt, ``role`` ``"assistant"`` after the message loop, ``ns.previous``
        in scope)."""

    def jinja_open(self, out: Template, role: str) -> bool:
        """Write the turn's open fence (True: written) as :meth:`turn_open` chooses it."""
        return False

    def jinja_lead(self, out: Template, role: str) -> None:
        """The part of :meth:`write_opening` that is not trainable in an assistant turn,
        written before the turn's ``{% generation %}`` block opens (a reasoning block's open
        fence that the generation prompt holds)."""

    def jinja_opening(self, out: Template, role: str) -> None:
        """The counterpart of :meth:`write_opening` (its trainable part)."""

    def jinja_content(self, out: Template, role: str) -> bool:
        """The counterpart of :meth:`write_content`."""
        return False

    def jinja_closing(self, out: Template, role: str) -> None:
        """The counterpart of :meth:`write_closing`."""

    def jinja_end(self, out: Template, role: str) -> bool:
        """Write the turn's end fence (True: written) as :meth:`turn_end` chooses it."""
        return False

    def jinja_after(self, out: Template, role: str) -> None:
        """The counterpart of :meth:`write_after` (after the ``{% generation %}`` block)."""

    def jinja_prompt(self, out: Template) -> None:
        """The counterpart of :meth:`write_prompt`."""

    def jinja_finish(self, out: Template) -> None:
        """The counterpart of :meth:`write_finish` (after the generation prompt's branch;
        ``add_generation_prompt`` tells the two cases apart)."""

    def jinja_writes_prompt(self) -> str:
        """The counterpart of :meth:`writes_prompt`: a Jinja test of ``messages``, true where
        the template writes the generation prompt (the exported template sets
        ``add_generation_prompt`` false where it fails, before anything reads it)."""
        return "true"

    # ------------------------------------------------------------------ the turn grammar

    def grammar(self, turn: Turn) -> None:
        """Contribute to the grammar of one assistant turn (see :mod:`.grammar`)."""


PROTOCOL: frozenset[str] = frozenset(
    name for name in vars(Concept) if not name.startswith("_") and name != "hooks"
)
"""The protocol's names: the hooks and the class attributes the interpreters read."""


def overrides(concept: Concept, method: str) -> bool:
    """Whether ``concept`` implements the hook ``method`` (so interpreters skip no-ops)."""
    return getattr(type(concept), method) is not getattr(Concept, method)
