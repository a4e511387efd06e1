"""The declaration being inferred: frames as text, concepts, and what was and was not derived.

Inference fills a :class:`Draft` part by part (frames, system text, tools, calls, results,
reasoning, fields the template drops); :meth:`Draft.layout` turns it into a
:class:`~pawlette.declare.Layout`, every text cut into :class:`~pawlette.declare.Marker` and
:class:`~pawlette.declare.Lit` pieces by the model's special tokens.
"""

from __future__ import annotations

import dataclasses
import datetime
from dataclasses import dataclass, field
from typing import Literal

from ..declare import (
    Alternation,
    ConversationEnd,
    Frame,
    Layout,
    Marker,
    NoPromptAfter,
    PromptAlways,
    Reasoning,
)
from ..declare.concept import Concept
from ..declare.pieces import Fence
from ..errors import FormatError
from .atoms import Tokens
from .underived import Underived

__all__ = [
    "CALL_TEXT_EDGES",
    "REASONING_EDGES",
    "RESULT_EDGES",
    "Capability",
    "Draft",
    "FrameText",
    "InferredOptions",
    "split_end",
]

CALL_TEXT_EDGES = "whitespace at the ends of text with tool calls"
"""The capability given up where the template writes the text beside calls, with whitespace
at its ends, otherwise than the declaration: the text is then written as given."""
RESULT_EDGES = "whitespace at the ends of tool results"
"""The same for results."""
REASONING_EDGES = "whitespace at the ends of reasoning"
"""The same for reasoning."""

Status = Literal["derived", "dropped", "refused", "not derived", "differs"]


@dataclass(frozen=True)
class InferredOptions:
    """The options of an inferred format: ``today``, the date its template reads from its
    clock (``strftime_now``), when it reads one."""

    today: datetime.date | None = None


@dataclass(frozen=True)
class Capability:
    """One thing a conversation may hold, and what inference found the template does with it.

    ``status``: ``"derived"`` (declared and verified), ``"dropped"`` (the template accepts it
    and writes nothing: declared as a loss), ``"refused"`` (the template refuses it, and so
    does the declaration), ``"not derived"`` (the declaration refuses it: ``detail`` says
    why, and which concept it would need), ``"differs"`` (the declaration writes it, not as
    the template does: a documented difference).
    """

    name: str
    status: Status
    detail: str = ""

    def describe(self) -> str:
        detail = f"; {self.detail}" if self.detail else ""
        return f"{self.name}: {self.status}{detail}"


@dataclass(frozen=True)
class Unended:
    """An answer with no text written with no end (:mod:`.empty_texts`): its ``opener``, and
    the ``turn`` an answer with no text and the reasoning ``reasoning`` is written as (from
    the frame's opener on; None: the template wrote it otherwise than such a turn)."""

    opener: str
    turn: str | None
    reasoning: str


@dataclass
class FrameText:
    """A frame as text (cut into pieces at the end)."""

    open: str = ""
    end: str = ""
    after: str = ""
    also_end: list[str] = field(default_factory=list)
    open_after: dict[str, str] = field(default_factory=dict)
    prompt_after: dict[str, str] = field(default_factory=dict)

    def close(self, text: str) -> None:
        """Set ``end`` and ``after`` from the text that closes the turn."""
        self.end, self.after = split_end(text)

    def frame(self, tokens: Tokens) -> Frame:
        return Frame(
            open=tokens.fence(self.open),
            end=tokens.fence(self.end),
            after=tokens.fence(self.after),
            also_end=tuple(tokens.fence(text) for text in self.also_end),
            open_after={role: tokens.fence(text) for role, text in self.open_after.items()},
            prompt_after={role: tokens.fence(text) for role, text in self.prompt_after.items()},
        )


def split_end(text: str) -> tuple[str, str]:
    """The text that closes a turn as ``(end, after)``: the whitespace it ends with is
    ``after`` (layout between turns) when something else comes before it."""
    stripped = text.rstrip()
    if not stripped:
        return text, ""
    return stripped, text[len(stripped) :]


@dataclass
class Draft:
    """A declaration being inferred."""

    tokens: Tokens
    begin: str = ""
    frames: dict[str, FrameText] = field(default_factory=dict)
    concepts: list[Concept] = field(default_factory=list)
    capabilities: list[Capability] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    today: datetime.date | None = None
    date_format: str | None = None
    empty_roles: set[str] = field(default_factory=lambda: {"system", "user", "assistant", "tool"})
    """The roles whose empty text the declaration writes as the template does."""
    blocked: dict[str, str] = field(default_factory=dict)
    """Capabilities given up after a failed verification, with why."""
    last_extra: str = ""
    """What the last assistant turn writes after its opener that earlier ones do not."""
    last_extra_before: str = ""
    """Where ``last_extra`` is written inside the opener: before this end of it (a block's
    open before the close that stands in for it); empty: after the opener."""
    edge_roles: set[str] = field(default_factory=lambda: {"system", "user", "assistant", "tool"})
    """The roles whose text with whitespace at its ends the declaration writes as the
    template does."""
    edge_with_calls: bool = True
    edge_reasoning: bool = True
    """Reasoning with whitespace at its ends is written as the template does."""
    """The text beside calls with whitespace at its ends is written as the template does."""
    closing: str = ""
    prompt_always: bool = False
    """The template writes the generation prompt after every render (PromptAlways)."""
    """What the template writes after the last turn when no generation prompt follows."""
    prompt_rest: tuple[str, str] | None = None
    """The generation prompt and the rest of the assistant's opener after it (whitespace the
    model writes), when the prompt stops short of the opener."""
    unended: Unended | None = None
    """An answer with no text written with no end (see :class:`Unended`)."""
    unreasoned: set[str] = field(default_factory=set)
    """The roles of the turn before (``"start"``: none) after which the template writes an
    answer without the reasoning's block or stand-in (:class:`~pawlette.declare.Reasoning`'s
    ``after`` is every other role)."""
    unprompted_after: list[str] = field(default_factory=list)
    """The roles after a last message of which the template writes no generation prompt,
    though asked for one (:class:`~pawlette.declare.NoPromptAfter`'s ``roles``)."""
    listed_tools: bool = False
    """The template's callers always pass ``tools`` as a list (:mod:`.listed_tools`): the
    layout's ``tools_variables`` passes it so too."""
    unprompted_system_alone: bool = False
    """The template writes no generation prompt after a conversation of one system message
    (:class:`~pawlette.declare.NoPromptAfter`'s ``system_alone``)."""

    def unprompted(self, role: str) -> None:
        """Record that the template writes no generation prompt after a last ``role``
        message: the frame's prompt there is never written, so it is dropped."""
        if role not in self.unprompted_after:
            self.unprompted_after.append(role)
        assistant = self.frames.get("assistant")
        if assistant is not None:
            assistant.prompt_after.pop(role, None)

    def capability(self, name: str, status: Status, detail: str = "") -> None:
        self.capabilities = [item for item in self.capabilities if item.name != name]
        self.capabilities.append(Capability(name, status, detail))

    def skip(self, name: str) -> bool:
        """Whether ``name`` was given up (then it is recorded as not derived)."""
        if name in self.blocked:
            self.capability(name, "not derived", self.blocked[name])
            return True
        return False

    def apply_blocked(self) -> None:
        """Record every capability given up (those no stage asked about too)."""
        for name, reason in self.blocked.items():
            if name == "whitespace at the ends of text":
                self.edge_roles.clear()
                self.capability(
                    name, "differs", "the template changes it; written as given (" + reason + ")"
                )
            elif name == CALL_TEXT_EDGES:
                self.edge_with_calls = False
                self.capability(
                    name, "differs", "the template changes it; written as given (" + reason + ")"
                )
            elif name == REASONING_EDGES:
                self.edge_reasoning = False
                self.capability(
                    name, "differs", "the template changes it; written as given (" + reason + ")"
                )
            elif name == RESULT_EDGES:
                self.edge_roles.discard("tool")
                self.capability(
                    name, "differs", "the template changes it; written as given (" + reason + ")"
                )
            elif self.status(name) != "not derived":
                self.capability(name, "not derived", reason)
            if name.startswith("empty ") and name.endswith(" text"):
                self.empty_roles.discard(name.split()[1])

    def status(self, name: str) -> Status | None:
        return next((item.status for item in self.capabilities if item.name == name), None)

    def fence(self, text: str) -> Fence:
        return self.tokens.fence(text)

    def refused(self) -> dict[str, str]:
        """What the declaration must refuse at use, by capability name."""
        # Empty texts the template refuses, the generation prompt after an answer, and an
        # assistant message after another or before any user message where the user and
        # assistant messages need not alternate: no other concept refuses them.
        alternates = any(isinstance(concept, Alternation) for concept in self.concepts)
        unordered = ("consecutive assistant messages", "leading assistant messages")
        return {
            item.name: item.detail
            for item in self.capabilities
            if item.status == "not derived"
            or (
                item.status == "refused"
                and (
                    item.name.startswith("empty ")
                    or item.name == "generation prompt after an answer"
                    or (item.name in unordered and not alternates)
                )
            )
        }

    def _reasoned(self, concept: Concept) -> Concept:
        """``concept`` with the roles after which the reasoning is written, where it is a
        :class:`~pawlette.declare.Reasoning` written after some of them only."""
        if not isinstance(concept, Reasoning):
            return concept
        after = tuple(role for role in ("start", *self.frames) if role not in self.unreasoned)
        return dataclasses.replace(concept, after=after)

    def layout(self, name: str, summary: str) -> Layout:
        concepts: list[Concept] = []
        refused = self.refused()
        if refused:
            concepts.append(Underived(tuple(sorted(refused.items()))))
        concepts += self.concepts
        if self.unreasoned:
            concepts = [self._reasoned(concept) for concept in concepts]
        if self.last_extra_before:
            raise FormatError(
                f"{name}: the last assistant turn opens {self.last_extra!r} before "
                f"{self.last_extra_before!r}, which only a reasoning block writes; expected "
                "the reasoning to be derived"
            )
        if self.last_extra:
            from .last_turn import LastTurnLead

            concepts.append(LastTurnLead(self.fence(self.last_extra)))
        if self.closing:
            (marker,) = self.fence(self.closing)
            assert isinstance(marker, Marker)
            concepts.append(ConversationEnd(marker))
        if self.prompt_always:
            concepts.append(PromptAlways())
        if self.unprompted_after or self.unprompted_system_alone:
            concepts.append(
                NoPromptAfter(
                    roles=tuple(sorted(self.unprompted_after)),
                    system_alone=self.unprompted_system_alone,
                )
            )
        if self.unended is not None:
            from .empty_texts import unended_concepts

            unended_concepts(self, concepts)  # after the others: it ends at their openers
        if self.prompt_rest is not None:
            from .prompted import PromptRest

            concepts.append(PromptRest(*self.prompt_rest))  # last: it copies the others' rows
        frames = {role: text.frame(self.tokens) for role, text in self.frames.items()}
        from .listed_tools import listed_tools

        layout = Layout(
            name=name,
            summary=summary,
            frames=frames,
            concepts=tuple(concepts),
            begin=self.tokens.fence(self.begin),
            options=InferredOptions(today=self.today) if self.date_format else None,
            notes=tuple(self.notes),
            today="today" if self.date_format else None,
            tools_variables=listed_tools if self.listed_tools else None,
        )
        if self.date_format and self.today is not None:
            from .dates import with_date_option

            layout = with_date_option(layout, self.today, self.date_format)
        return layout
