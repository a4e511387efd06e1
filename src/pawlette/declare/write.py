"""The writer interpreter: a :class:`~.layout.Layout` renders conversations into segments.

The skeleton (see :mod:`.concept` for the hooks): ``begin``, every concept's
``write_start``, then each message, written by the concept that claims its role or as a
framed turn, then the generation prompt, then every concept's ``write_finish``.  A framed
turn is::

    write_before  open  write_opening  content  write_closing  end  write_after  after

Every fence piece becomes one segment (a :class:`~.pieces.Marker` a special one); message
text is caller text.  In the assistant's turn, everything from ``write_opening`` through
``end`` is trainable; frames' opens, tools, results and what follows ``end`` are not.

What no concept handles is refused before anything is written (a message ``name``, reasoning
without a reasoning concept, calls without a calls concept, ...), with its JSON path; what a
concept drops on purpose is recorded in :attr:`pawlette.types.Rendering.losses`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from collections.abc import Set as AbstractSet
from typing import Any, Protocol, TypeVar

from ..compile import compiled_writer
from ..engine.writer import MAX_CACHED_INDEX, ConstantSegments, Writer
from ..errors import UnsupportedFeature
from ..openai import present_in
from ..types import Message, Segment, TextPart, Tool
from .concept import Concept, overrides
from .layout import ROLES, Frame, Layout
from .pieces import Fence, Marker, piece_text

WriteConversation = Callable[[Writer, tuple[Message, ...], tuple[Tool, ...], bool], None]
State = TypeVar("State")

HANDLED = ("tools", "name", "tool_name", "metadata", "reasoning", "calls", "parts", "steps")
"""What a concept may declare it handles (:meth:`Render.handles`); the rest is refused."""


class TurnHooks:
    """The turn hooks that act on one role's turns, in the layout's order (and the role's
    frame: what every turn of the role reads)."""

    def __init__(self, concepts: tuple[Concept, ...], role: str, frame: Frame | None) -> None:
        self.frame = frame
        self.opens = frame is not None and not frame.open_after
        """The turn always opens with the frame's ``open`` (unless a concept says otherwise)."""
        self.assistant = role == "assistant"
        """The assistant's turn: its content and end are trainable."""
        self.end_kind = "end" if self.assistant else "close"
        self.opened: dict[int, tuple[Segment, ...]] = {}
        """The frame's ``open`` as segments, by message index (when it ``opens``)."""
        self.ended: dict[int, tuple[Segment, ...]] = {}
        """The frame's ``end`` then ``after`` as segments, by message index."""
        self.kept: dict[str, dict[int, tuple[Segment, ...]]] = {"end": {}, "after": {}}
        """The frame's ``end`` and its ``after`` each alone, as segments by message index
        (the compiled turn writes them so when a concept writes between them)."""

        self.needs: dict[str, list[str | None]] = {}
        """Each hook's message field (:meth:`Concept.hook_needs`), by hook name, in order."""
        self.local: dict[str, list[bool]] = {}
        """Whether each hook writes a message's turn from that message and its place alone
        (:meth:`Concept.hook_is_local`), or from those and the request's tools
        (:meth:`Concept.hook_reads_tools`), by hook name, in order."""
        self.tools_read: dict[str, list[bool]] = {}
        """Whether each hook reads the request's tools (and is not local), by hook name, in
        order: the part of a turn before the first that does is kept without the tools."""
        self.outside: dict[str, list[bool]] = {}
        """Whether each hook writes only outside its turn and changes nothing the turn reads
        (:meth:`Concept.hooks_outside_turn`), by hook name, in order."""

        def hooked(method: str) -> list[Any]:
            acting = [
                c
                for c in concepts
                if overrides(c, method)
                and ((roles := c.hook_roles(method)) is None or role in roles)
            ]
            self.needs[method] = [c.hook_needs(method, role) for c in acting]
            local = [c.hook_is_local(method, role) for c in acting]
            # (a local hook reads no tool, whatever else it says: its turn is kept without)
            tools = [
                not alone and c.hook_reads_tools(method, role)
                for c, alone in zip(acting, local, strict=True)
            ]
            self.tools_read[method] = tools
            self.local[method] = [alone or reads for alone, reads in zip(local, tools, strict=True)]
            self.outside[method] = [method in c.hooks_outside_turn() for c in acting]
            return [getattr(c, method) for c in acting]

        self.before = hooked("write_before")
        self.turn_open = hooked("turn_open")
        self.opening = hooked("write_opening")
        self.content = hooked("write_content")
        self.content_text: Callable[[str], str] | None = None
        """What the first content hook that acts on a message of this role holding one text
        part (or no content: the text ``""``) and no field an earlier one needs writes
        (:meth:`Concept.content_text`; None: not declared); ``content_after`` is its place
        among the content hooks."""
        self.content_after = 0
        for number, hook in enumerate(self.content):
            self.content_text = hook.__self__.content_text(role)
            if self.content_text is not None or self.needs["write_content"][number] is None:
                self.content_after = number
                break
        self.closing = hooked("write_closing")
        self.turn_end = hooked("turn_end")
        self.after = hooked("write_after")

    @property
    def reads_tools(self) -> bool:
        """Some hook of the role reads the request's tools (:meth:`Concept.hook_reads_tools`):
        a turn kept whole is kept by the tools' identity too."""
        return any(any(read) for read in self.tools_read.values())


class Plan:
    """What the writer derives from a layout once: each hook's concepts, and the fences'
    segments per message context (built on first use, :class:`ConstantSegments`)."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        concepts = layout.concepts

        def hooked(method: str) -> list[Any]:
            return [getattr(c, method) for c in concepts if overrides(c, method)]

        self.check = hooked("check")
        self.checks_local = all(
            concept.check_is_local() for concept in concepts if overrides(concept, "check")
        )
        """Every check is a function of the layout and the request alone
        (:meth:`Concept.check_is_local`): their outcome may be kept by the request."""
        self.start = hooked("write_start")
        self.wants_system = hooked("wants_system_turn")
        self.prompt = hooked("write_prompt")
        self.writes_prompt = hooked("writes_prompt")
        """Whether the template writes the generation prompt after the messages: asked for
        it where one of these says no, a render is the render without it."""
        self.finish = hooked("write_finish")
        self.queries = hooked("query_index")
        """What takes an earlier message than the last user's for the query, if anything."""
        self.turns = {role: TurnHooks(concepts, role, layout.frames.get(role)) for role in ROLES}
        assistant = self.turns["assistant"]
        self.prompt_local = all(
            hook.__self__.prompt_is_local()
            for hook in (*assistant.before, *assistant.turn_open, *self.prompt)
        )
        """Every concept that acts at the generation prompt writes it as a function of its
        index and the role before it (:meth:`Concept.prompt_is_local`): it may be kept by
        them."""
        self.claims: dict[str, Callable[[Render, int], None]] = {
            role: concept.write_message for concept in concepts for role in concept.claims
        }
        self.unwritten = frozenset(
            role
            for role in ROLES
            if role not in self.claims and (role not in layout.frames or role == "tool")
        )
        """The roles no concept claims and no frame writes (a message of one is refused)."""
        self.written = frozenset(
            role for role in (*self.claims, *layout.frames) if role in self.claims or role != "tool"
        )
        """The roles a concept claims or a frame writes (a message of any other is refused)."""
        self.joined = any(concept.escapes_markers() for concept in concepts)
        """Each fence is written as one segment (special when it holds a marker): the format
        escapes markers in text, and the lexer reads a fence's whole text as one marker."""
        self.constants = ConstantSegments()
        # Fences by identity, kept alive here so an id is never another fence's.
        self.pairs: dict[int, tuple[Fence, tuple[tuple[bool, str], ...]]] = {}
        self.options = layout.options
        for frame in layout.frames.values():
            for pieces in (frame.open, frame.end, frame.after, *frame.open_after.values()):
                self.resolve(pieces)
        self.resolve(layout.begin)

    def resolve(self, pieces: Fence) -> tuple[tuple[bool, str], ...]:
        """A fence as ``(is a marker, text)`` pairs (kept for the layout's fences)."""
        found = self.pairs.get(id(pieces))
        if found is not None and found[0] is pieces:
            return found[1]
        pairs = tuple(
            (
                isinstance(piece, Marker),
                piece_text(piece, self.options, self.layout.name),
            )
            for piece in pieces
        )
        if self.joined and pairs:
            pairs = ((any(special for special, _ in pairs), "".join(text for _, text in pairs)),)
        if len(self.pairs) < 4096:  # a layout's own fences; fences made per render are not kept
            self.pairs[id(pieces)] = (pieces, pairs)
        return pairs


class WriteText(Protocol):
    """:meth:`Writer.text` and :meth:`Writer.raw`'s signature."""

    def __call__(self, text: str, kind: str, *, trainable: bool = False) -> None: ...


class Render:
    """One rendering in progress: the context every writer hook gets.

    ``messages``/``tools`` are the request's; ``prompt`` whether it ends with the generation
    prompt; ``previous`` the role of the last turn written (None: none yet); ``role`` and
    ``index`` the turn being written.
    """

    __slots__ = (
        "_found",
        "handled",
        "has_content",
        "index",
        "last_query",
        "layout",
        "messages",
        "plan",
        "present",
        "previous",
        "prompt",
        "query",
        "raw",
        "role",
        "states",
        "text",
        "tools",
        "writer",
    )

    text: WriteText
    """``text(text, kind, *, trainable=False)``: caller text, escaped when the format escapes
    (the writer's own :meth:`Writer.text`: concepts call it for every text they write)."""
    raw: WriteText
    """``raw(text, kind, *, trainable=False)``: scaffolding text the format computes, never
    escaped (the writer's own :meth:`Writer.raw`)."""

    def __init__(
        self,
        plan: Plan,
        writer: Writer,
        messages: tuple[Message, ...],
        tools: tuple[Tool, ...],
        prompt: bool,
    ) -> None:
        self.plan = plan
        self.layout = plan.layout
        self.writer = writer
        self.messages = messages
        self.tools = tools
        if prompt and plan.writes_prompt:
            prompt = all(writes(messages) for writes in plan.writes_prompt)
        self.prompt = prompt
        """Whether the render ends with the generation prompt: asked for, and written by the
        template after these messages (:meth:`Concept.writes_prompt`)."""
        self.previous: str | None = None
        self.role: str | None = None
        self.index = -1
        self.handled: set[str] = set()
        present = writer.present  # (found by the reader as it read the messages, if it did)
        self.present: AbstractSet[str] = present_in(messages) if present is None else present
        """What the messages hold of :data:`HANDLED` (``"tool_name"``: a tool message's
        name): a concept's check skips what is not there."""
        self.has_content = False
        """Whether the turn being written has content (a message, or a text the format
        writes in its place): a separator before a block after it depends on it."""
        self.states: dict[Hashable, Any] = {}
        """The concepts' own values for this rendering, by owner (:meth:`state` makes one on
        first use; a concept's hot path may read it directly once it is made)."""
        # The index of the last user message (-1: none), read by many concepts' hooks: the
        # last message is nearly always the one, so finding it costs a step or two.
        last_query = len(messages) - 1
        while last_query >= 0 and messages[last_query].role != "user":
            last_query -= 1
        self.last_query = last_query
        """The index of the last user message (-1: none)."""
        self.query = last_query
        """The index of the user's last query (-1: none): the last user message unless a
        concept takes an earlier one for it (:meth:`Concept.query_index`)."""
        for find in plan.queries:
            found = find(self)
            if found is not None and found < self.query:
                self.query = found
        self._found = plan.constants.found
        self.text = writer.text
        self.raw = writer.raw

    # ------------------------------------------------------------------ what concepts use

    @property
    def options(self) -> Any:
        return self.layout.options

    def state(self, owner: Hashable, make: Callable[[], State]) -> State:
        """A concept's own state for this rendering (made on first use)."""
        found = self.states.get(owner)
        if found is None:
            found = self.states[owner] = make()
        return found

    def handles(self, *what: str) -> None:
        """Declare that this rendering's concepts write (or knowingly drop) ``what``: one of
        :data:`HANDLED`; anything present and not handled is refused."""
        self.handled.update(what)

    def lose(self, path: str, what: str) -> None:
        """Record a documented loss: the format drops ``what`` at ``path`` (reported in
        :attr:`pawlette.types.Rendering.losses`)."""
        writer = self.writer  # (Writer.lose without its call: a format that drops calls or
        losses = writer.losses  # results records a loss for each one, in every render)
        if losses is None:
            writer.losses = [f"{path}: {what}"]
        else:
            losses.append(f"{path}: {what}")

    def fence(self, pieces: Fence, kind: str, *, trainable: bool = False) -> None:
        if not pieces:
            return
        writer = self.writer
        segments = self._found.get((id(pieces), kind, trainable, writer.role, writer.message_index))
        if segments is None:
            segments = self._build(pieces, kind, trainable)
        if writer._unfinished is None:  # (Writer.extend's common case, without its call)
            writer._extend(segments)
        else:
            writer.extend(segments)

    def _build(self, pieces: Fence, kind: str, trainable: bool) -> tuple[Segment, ...]:
        """A fence's segments in this context, kept for the layout's own fences."""
        writer = self.writer
        # A fence a concept makes in each render (equal to the last one, not the same
        # object) is kept by its value: hashing it costs less than building it again.
        found = self._found.get((pieces, kind, trainable, writer.role, writer.message_index))
        if found is not None:
            return found
        plan = self.plan
        pairs = plan.resolve(pieces)
        kept = plan.pairs.get(id(pieces))
        if kept is None or kept[0] is not pieces:  # a fence no longer kept by identity
            return plan.constants.build(writer, pieces, pairs, kind, trainable)
        # Kept by identity, and by value too: a concept that makes the fence anew in each
        # render (an equal tuple, another object) finds it from its second render on.
        return plan.constants.build(writer, id(pieces), pairs, kind, trainable, pieces)

    def at(self, role: str | None, index: int) -> None:
        writer = self.writer  # (Writer.at, without its call: concepts move it often)
        writer.role = role  # type: ignore[assignment]
        writer.message_index = index

    def empty_last_answer(self) -> int:
        """The index of the conversation's last message when it is an answer with nothing in
        it (no content, reasoning or calls) and no generation prompt follows; -1 otherwise.
        A format whose last answer has no end writes such an answer as its generation prompt
        (a loss its concepts record: reading takes the text for the prompt)."""
        messages = self.messages
        if self.prompt or not messages:
            return -1
        last = messages[-1]
        if last.role != "assistant" or last.tool_calls or last.reasoning or last.reasoning_steps:
            return -1
        if any(type(part) is not TextPart or part.text for part in last.content or ()):
            return -1
        return len(messages) - 1

    def message_text(self, index: int) -> str:
        """The text of ``messages[index]`` (its text parts joined)."""
        content = self.messages[index].content
        if not content:
            return ""
        if len(content) == 1 and type(content[0]) is TextPart:
            return content[0].text
        return "".join(part.text for part in content if isinstance(part, TextPart))

    def frame(self, role: str) -> Frame:
        return self.layout.frames[role]

    # ------------------------------------------------------------------ the skeleton

    def _enter(self, role: str, index: int) -> None:
        """Set the render's and the writer's context to the turn of ``role`` at ``index``."""
        self.role, self.index = role, index
        self.at(role, index)

    def turn(self, index: int, role: str | None = None) -> None:
        """Write ``messages[index]`` as a framed turn (``index`` -1 with ``role``: a turn that
        holds no message, such as a system turn the format always writes).  The reference
        the compiled turns are tested against (:mod:`pawlette.compile`)."""
        message = self.messages[index] if index >= 0 else None
        if role is None:
            role = "system" if message is None else message.role
        hooks = self.plan.turns[role]
        self._enter(role, index)
        for hook in hooks.before:
            hook(self, index)
        self._enter(role, index)
        opener = _first_fence(hooks.turn_open, self, index)
        frame = hooks.frame
        assert frame is not None
        self.fence(frame.opener(self.previous) if opener is None else opener, "header")
        for hook in hooks.opening:
            hook(self, index)
        self.has_content = message is not None
        if not any(hook(self, index) for hook in hooks.content) and message is not None:
            self.writer.text(self.message_text(index), "content", trainable=hooks.assistant)
        for hook in hooks.closing:
            hook(self, index)
        end = _first_fence(hooks.turn_end, self, index)
        self.at(role, index)
        self.fence(frame.end if end is None else end, hooks.end_kind, trainable=hooks.assistant)
        for hook in hooks.after:
            hook(self, index)
        self.fence(frame.after, "separator")
        self.previous = role

    def _frame_segments(
        self, hooks: TurnHooks, index: int, *, opening: bool
    ) -> tuple[Segment, ...]:
        """The frame's ``open`` (``opening``), or its ``end`` then ``after``, as segments in
        this turn's context, kept by message index (up to :data:`MAX_CACHED_INDEX`)."""
        frame = hooks.frame
        assert frame is not None
        if opening:
            segments = self._build(frame.open, "header", False) if frame.open else ()
            cache = hooks.opened
        else:
            ended = self._build(frame.end, hooks.end_kind, hooks.assistant) if frame.end else ()
            after = self._build(frame.after, "separator", False) if frame.after else ()
            segments = ended + after
            cache = hooks.ended
        if index < MAX_CACHED_INDEX:
            cache[index] = segments
        return segments

    def _kept_fence(
        self, pieces: Fence, kind: str, trainable: bool, kept: dict[int, tuple[Segment, ...]]
    ) -> tuple[Segment, ...]:
        """A fence of the frame as segments in this turn's context (role and index), kept in
        ``kept`` by message index (up to :data:`MAX_CACHED_INDEX`)."""
        segments = self._build(pieces, kind, trainable)
        index = self.writer.message_index
        if index < MAX_CACHED_INDEX:
            kept[index] = segments
        return segments

    def generation_prompt(self) -> None:
        """The generation prompt (the reference of the compiled one)."""
        index = len(self.messages)
        hooks = self.plan.turns["assistant"]
        self._enter("assistant", index)
        for hook in hooks.before:
            hook(self, index)
        self._enter("assistant", index)
        opener = _first_fence(hooks.turn_open, self, index)
        prompt = self.layout.frames["assistant"].prompt(self.previous)
        self.fence(prompt if opener is None else opener, "generation_prompt")
        for write_prompt in self.plan.prompt:
            write_prompt(self)

    def check(self) -> None:
        for hook in self.plan.check:
            hook(self)
        refuse_unhandled(self)


def _first_fence(hooks: list[Any], out: Render, index: int) -> Fence | None:
    """The fence of the first of ``hooks`` (``turn_open`` or ``turn_end``) that gives one."""
    for hook in hooks:
        found: Fence | None = hook(out, index)
        if found is not None:
            return found
    return None


ALL_FIELDS = frozenset(("name", "tool_name", "metadata", "reasoning", "steps", "calls", "parts"))
"""What a message may hold that a concept must handle (:data:`HANDLED` but the tools)."""


def roles_written(out: Render) -> str:
    """The roles a layout writes, as an error names them (``developer`` is ``system``)."""
    frames, claims = out.layout.frames, out.plan.claims
    roles = ("system", "user", "assistant", "tool")
    return ", ".join(
        role for role in roles if role in claims or (role in frames and role != "tool")
    )


def refuse_unhandled(out: Render) -> None:
    """Refuse what the request holds and no concept handles (see :meth:`Render.handles`)."""
    name = out.layout.name
    handled = out.handled
    if out.tools and "tools" not in handled:
        raise UnsupportedFeature(
            "tools", f"{len(out.tools)} given", f"none: {name} has no tools block"
        )
    frames = out.layout.frames
    claims = out.plan.claims
    if handled >= ALL_FIELDS or handled >= out.present:
        if not out.plan.unwritten:
            return  # everything the messages hold is handled, and every role is written
        # Only a role no concept writes can be refused (Gemma's system and tool roles): the
        # roles alone are walked (a loop, cheaper than all() of a generator), the fields not.
        written = out.plan.written
        for message in out.messages:
            if message.role not in written:
                break
        else:
            return
    for index, message in enumerate(out.messages):
        role = message.role
        if role not in claims and (role not in frames or role == "tool"):
            raise UnsupportedFeature(
                f"messages[{index}].role",
                repr(role),
                f"a role {name} writes ({roles_written(out)})",
            )
        if message.name is not None and ("tool_name" if role == "tool" else "name") not in handled:
            raise UnsupportedFeature(
                f"messages[{index}].name", "a name", f"none: {name} has no names"
            )
        if message.metadata and "metadata" not in handled:
            raise UnsupportedFeature(
                f"messages[{index}].metadata", "metadata", f"none: {name} has no place"
            )
        if message.reasoning is not None and "reasoning" not in handled:
            raise UnsupportedFeature(
                f"messages[{index}].reasoning_content",
                "reasoning",
                f"none: {name} has no reasoning block",
            )
        if message.reasoning_steps is not None and "steps" not in handled:
            raise UnsupportedFeature(
                f"messages[{index}].reasoning_steps", "structured thinking", "reasoning_content"
            )
        if message.tool_calls and "calls" not in handled:
            raise UnsupportedFeature(
                f"messages[{index}].tool_calls", "tool calls", f"none: {name} has no tool calls"
            )
        content = message.content
        if (
            "parts" in handled
            or not content
            or (len(content) == 1 and type(content[0]) is TextPart)
        ):
            continue
        for number, part in enumerate(content):
            if type(part) is not TextPart:
                raise UnsupportedFeature(
                    f"messages[{index}].content[{number}]",
                    f"a {type(part).__name__}",
                    f"text parts only: {name} has no markup for other content",
                )


def writer_of(layout: Layout) -> WriteConversation:
    """The generic render function of a layout: the reference the compiled one
    (:func:`compiled_writer_of`) is tested against."""
    return _generic(Plan(layout))


def compiled_writer_of(layout: Layout) -> WriteConversation:
    """The render function of a layout (what :class:`pawlette.Format` calls): its skeleton
    compiled (:mod:`pawlette.compile`), with the generic writer of the same plan as its
    reference."""
    plan = Plan(layout)
    return compiled_writer(plan, Render, refuse_unhandled, _generic(plan))


def _generic(plan: Plan) -> WriteConversation:
    layout = plan.layout

    def write(
        writer: Writer, messages: tuple[Message, ...], tools: tuple[Tool, ...], prompt: bool
    ) -> None:
        out = Render(plan, writer, messages, tools, prompt)
        out.check()
        writer.at(None, -1)
        out.fence(layout.begin, "begin")
        for start in plan.start:
            start(out)
        claims = plan.claims
        for index, message in enumerate(messages):
            claimed = claims.get(message.role)
            if claimed is None:
                out.turn(index)
            else:
                claimed(out, index)
        if out.prompt:
            out.generation_prompt()
        for finish in plan.finish:
            finish(out)

    return write
