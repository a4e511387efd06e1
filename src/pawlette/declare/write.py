"""The writer interpreter: a :class:`~.layout.Layout` renders conversations into segments.

The skeleton (see :mod:`.concept` for the hooks): ``begin``, every concept's
``write_start``, then each message, written by the concept that claims its role or as a
framed turn, then the generation prompt.  A framed turn is::

    write_before  open  write_opening  content  write_closing  end  after

Every fence piece becomes one segment (a :class:`~.pieces.Marker` a special one); message
text is caller text.  In the assistant's turn, everything from ``write_opening`` through
``end`` is trainable; frames' opens, tools, results and what follows ``end`` are not.

What no concept handles is refused before anything is written (a message ``name``, reasoning
without a reasoning concept, calls without a calls concept, ...), with its JSON path; what a
concept drops on purpose is recorded in :attr:`pawlette.types.Rendering.losses`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from ..engine.writer import ConstantSegments, Writer
from ..errors import UnsupportedFeature
from ..types import Message, Segment, TextPart, Tool
from .concept import Concept, overrides
from .layout import ROLES, Frame, Layout
from .pieces import Fence, Marker, piece_text

WriteConversation = Callable[[Writer, tuple[Message, ...], tuple[Tool, ...], bool], None]
State = TypeVar("State")

HANDLED = ("tools", "name", "tool_name", "metadata", "reasoning", "calls", "parts", "steps")
"""What a concept may declare it handles (:meth:`Render.handles`); the rest is refused."""


class TurnHooks:
    """The turn hooks that act on one role's turns, in the layout's order."""

    __slots__ = ("before", "closing", "content", "opening", "turn_end", "turn_open")

    def __init__(self, concepts: tuple[Concept, ...], role: str) -> None:
        acting = [c for c in concepts if (roles := c.turn_roles()) is None or role in roles]

        def hooked(method: str) -> list[Any]:
            return [getattr(c, method) for c in acting if overrides(c, method)]

        self.before = hooked("write_before")
        self.turn_open = hooked("turn_open")
        self.opening = hooked("write_opening")
        self.content = hooked("write_content")
        self.closing = hooked("write_closing")
        self.turn_end = hooked("turn_end")


class Plan:
    """What the writer derives from a layout once: each hook's concepts, and the fences'
    segments per message context (built on first use, :class:`ConstantSegments`)."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        concepts = layout.concepts

        def hooked(method: str) -> list[Any]:
            return [getattr(c, method) for c in concepts if overrides(c, method)]

        self.check = hooked("check")
        self.start = hooked("write_start")
        self.wants_system = hooked("wants_system_turn")
        self.turn_open = hooked("turn_open")
        self.prompt = hooked("write_prompt")
        self.turns = {role: TurnHooks(concepts, role) for role in ROLES}
        self.claims: dict[str, Callable[[Render, int], None]] = {
            role: concept.write_message for concept in concepts for role in concept.claims
        }
        self.constants = ConstantSegments()
        # Fences by identity, kept alive here so an id is never another fence's.
        self.pairs: dict[int, tuple[Fence, tuple[tuple[bool, str], ...]]] = {}
        self.options = layout.options
        for name, frame in layout.frames.items():
            del name
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
        if len(self.pairs) < 4096:  # a layout's own fences; fences made per render are not kept
            self.pairs[id(pieces)] = (pieces, pairs)
        return pairs


class Render:
    """One rendering in progress: the context every writer hook gets.

    ``messages``/``tools`` are the request's; ``prompt`` whether it ends with the generation
    prompt; ``previous`` the role of the last turn written (None: none yet); ``role`` and
    ``index`` the turn being written.
    """

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
        self.prompt = prompt
        self.previous: str | None = None
        self.role: str | None = None
        self.index = -1
        self.handled: set[str] = set()
        self.has_content = False
        """Whether the turn being written has content (a message, or a text the format
        writes in its place): a separator before a block after it depends on it."""
        self._states: dict[Hashable, Any] = {}
        self._last_query: int | None = None

    # ------------------------------------------------------------------ what concepts use

    @property
    def options(self) -> Any:
        return self.layout.options

    @property
    def last_query(self) -> int:
        """The index of the last user message (-1: none)."""
        if self._last_query is None:
            found = -1
            for number in range(len(self.messages) - 1, -1, -1):
                if self.messages[number].role == "user":
                    found = number
                    break
            self._last_query = found
        return self._last_query

    def state(self, owner: Hashable, make: Callable[[], State]) -> State:
        """A concept's own state for this rendering (made on first use)."""
        found = self._states.get(owner)
        if found is None:
            found = self._states[owner] = make()
        return found

    def handles(self, *what: str) -> None:
        """Declare that this rendering's concepts write (or knowingly drop) ``what``: one of
        :data:`HANDLED`; anything present and not handled is refused."""
        self.handled.update(what)

    def lose(self, path: str, what: str) -> None:
        """Record a documented loss: the format drops ``what`` at ``path`` (reported in
        :attr:`pawlette.types.Rendering.losses`)."""
        self.writer.lose(f"{path}: {what}")

    def fence(self, pieces: Fence, kind: str, *, trainable: bool = False) -> None:
        if not pieces:
            return
        writer = self.writer
        constants = self.plan.constants
        segments = constants.found.get(
            (id(pieces), kind, trainable, writer.role, writer.message_index)
        )
        if segments is None:
            segments = self._build(pieces, kind, trainable)
        writer.extend(segments)

    def _build(self, pieces: Fence, kind: str, trainable: bool) -> tuple[Segment, ...]:
        """A fence's segments in this context, kept for the layout's own fences."""
        plan = self.plan
        pairs = plan.resolve(pieces)
        kept = plan.pairs.get(id(pieces))
        key: Hashable = id(pieces)
        if kept is None or kept[0] is not pieces:
            key = ("uncached", pairs)  # a fence made per render: keyed by its text
        return plan.constants.build(self.writer, key, pairs, kind, trainable)

    def text(self, text: str, kind: str, *, trainable: bool = False) -> None:
        """Caller text (escaped when the format escapes)."""
        self.writer.text(text, kind, trainable=trainable)

    def raw(self, text: str, kind: str, *, trainable: bool = False) -> None:
        """Scaffolding text the format computes (never escaped)."""
        self.writer.raw(text, kind, trainable=trainable)

    def at(self, role: str | None, index: int) -> None:
        self.writer.at(role, index)  # type: ignore[arg-type]

    def message_text(self, index: int) -> str:
        """The text of ``messages[index]`` (its text parts joined)."""
        content = self.messages[index].content
        if content and len(content) == 1 and type(content[0]) is TextPart:
            return content[0].text
        return "".join(part.text for part in content or () if isinstance(part, TextPart))

    def frame(self, role: str) -> Frame:
        return self.layout.frames[role]

    # ------------------------------------------------------------------ the skeleton

    def turn(self, index: int, role: str | None = None) -> None:
        """Write ``messages[index]`` as a framed turn (``index`` -1 with ``role``: a turn that
        holds no message, such as a system turn the format always writes)."""
        message = self.messages[index] if index >= 0 else None
        role = role or (message.role if message is not None else "system")
        hooks = self.plan.turns[role]
        frame = self.layout.frames[role]
        assistant = role == "assistant"
        writer = self.writer
        self.role, self.index = role, index
        writer.at(role, index)  # type: ignore[arg-type]
        if hooks.before:
            for hook in hooks.before:
                hook(self, index)
            self.role, self.index = role, index
            writer.at(role, index)  # type: ignore[arg-type]
        opener = None
        for hook in hooks.turn_open:
            opener = hook(self, index)
            if opener is not None:
                break
        self.fence(frame.opener(self.previous) if opener is None else opener, "header")
        for hook in hooks.opening:
            hook(self, index)
        self.has_content = message is not None
        for hook in hooks.content:
            if hook(self, index):
                break
        else:
            if message is not None:
                content = message.content
                if content and len(content) == 1 and type(content[0]) is TextPart:
                    text = content[0].text
                else:
                    text = self.message_text(index)
                writer.text(text, "content", trainable=assistant)
        for hook in hooks.closing:
            hook(self, index)
        end = None
        for hook in hooks.turn_end:
            end = hook(self, index)
            if end is not None:
                break
        if writer.role != role or writer.message_index != index:
            writer.at(role, index)  # type: ignore[arg-type]
        self.fence(
            frame.end if end is None else end, "end" if assistant else "close", trainable=assistant
        )
        if frame.after:
            self.fence(frame.after, "separator")
        self.previous = role

    def generation_prompt(self) -> None:
        plan = self.plan
        index = len(self.messages)
        self.role, self.index = "assistant", index
        self.at("assistant", index)
        opener = None
        for hook in plan.turns["assistant"].turn_open:
            opener = hook(self, index)
            if opener is not None:
                break
        frame = self.layout.frames["assistant"]
        self.fence(frame.prompt(self.previous) if opener is None else opener, "generation_prompt")
        for prompt in plan.prompt:
            prompt(self)

    def check(self) -> None:
        for hook in self.plan.check:
            hook(self)
        refuse_unhandled(self)


def refuse_unhandled(out: Render) -> None:
    """Refuse what the request holds and no concept handles (see :meth:`Render.handles`)."""
    name = out.layout.name
    handled = out.handled
    if out.tools and "tools" not in handled:
        raise UnsupportedFeature("tools", "tools", f"none: {name} has no tools block")
    frames = out.layout.frames
    for index, message in enumerate(out.messages):
        role = message.role
        where = f"messages[{index}]"
        if role not in out.plan.claims and (role not in frames or role == "tool"):
            raise UnsupportedFeature(f"{where}.role", repr(role), f"a role {name} writes")
        named = "tool_name" if role == "tool" else "name"
        if message.name is not None and named not in handled:
            raise UnsupportedFeature(f"{where}.name", "a name", f"none: {name} has no names")
        if message.metadata and "metadata" not in handled:
            raise UnsupportedFeature(f"{where}.metadata", "metadata", f"none: {name} has no place")
        if message.reasoning is not None and "reasoning" not in handled:
            raise UnsupportedFeature(
                f"{where}.reasoning_content", "reasoning", f"none: {name} has no reasoning block"
            )
        if message.reasoning_steps is not None and "steps" not in handled:
            raise UnsupportedFeature(
                f"{where}.reasoning_steps", "structured thinking", "reasoning_content"
            )
        if message.tool_calls and "calls" not in handled:
            raise UnsupportedFeature(f"{where}.tool_calls", "tool calls", f"none: {name}")
        if "parts" not in handled:
            for number, part in enumerate(message.content or ()):
                if type(part) is not TextPart:
                    raise UnsupportedFeature(
                        f"{where}.content[{number}]",
                        f"a {type(part).__name__}",
                        f"text parts only: {name} has no markup for other content",
                    )


def writer_of(layout: Layout) -> WriteConversation:
    """The render function of a layout (what :class:`pawlette.Format` calls)."""
    plan = Plan(layout)

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
        if prompt:
            out.generation_prompt()

    return write
