"""The system prompt: where the system messages go, and what is written when there is none.

>>> from pawlette.declare import SystemPrompt
>>> SystemPrompt(default="You are a helpful assistant.").placement
'in_place'
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from ..emit.jinja_text import jinja_string
from ..errors import FormatError, UnsupportedFeature
from .concept import Concept
from .pieces import Fence, Lit, Marker, fence
from .readers import host_text_reader, host_texts_reader, lead_dropped
from .table import begin

if TYPE_CHECKING:
    from ..engine.machine import ReaderFactory
    from .jinja import Template
    from .layout import Layout
    from .table import Table
    from .write import Render


def _as_fence(text: str | Fence | None) -> Fence:
    """A default text as a fence (a string is its text; None: nothing)."""
    if text is None:
        return ()
    return fence(text) if isinstance(text, str) else text


@dataclass(frozen=True)
class SystemPrompt(Concept):
    """The system turn.

    Fields:

    - ``default``: the text written when the conversation has no system message (None:
      none), a string or a fence (a date from the options: ``fence("Today is ",
      Option("today"))``).  Parsing a system turn holding exactly this text gives no message.
    - ``default_when``: ``"always"``, or only ``"without_tools"`` / ``"with_tools"`` (IBM
      Granite writes its default text only when the request has no tools); these two need a
      concept that takes a request's tools (a tools block, or ``Ignored(("tools",))``).
    - ``default_with_tools``: the default text instead of ``default`` when the request has
      tools (Granite 3.3 adds its tool instructions), a string or a fence; None: ``default``
      either way.  Needs ``default`` and ``default_when="always"``.  Parsing a system turn
      holding exactly either text gives no message.
    - ``always``: a system turn is written even when it holds no text (Llama 3).
    - ``preamble``: written at the start of the first system turn; ``preamble_with_tools`` /
      ``preamble_without_tools`` before it when the request has / has no tools (Llama 3's
      ``Environment: ipython``).
    - ``placement``: system messages after the first are written ``"in_place"`` as turns of
      their own, or ``"first_only"`` (a later one is refused), or all of them are
      ``"gathered"`` into the first turn, joined by ``joiner`` (DeepSeek gathers them at the
      start of the conversation as bare text; ``joiner`` is refused with another placement),
      or only the first is written and later ones
      are dropped, ``"first_kept"`` (a recorded loss: SmolLM3's template skips them).
    - ``empty_first``: ``"absent"``: a first system message with empty text is written as
      no system message, a recorded loss: where the default text applies, that text (with
      the tools block after it: MiniMax-M2), else, in a turn no other concept writes into,
      no turn (IBM Granite without tools); in a turn another concept writes into without a
      default text there, it is an empty text before what that concept writes (IBM Granite
      4.0 with tools).
      ``"kept"``: it is an empty system turn.  ``"own_turn"``: the format's system turn (the
      default text) is written first, and the empty message after it as an empty system
      turn of its own (Command R7B).  ``"none"``: as ``"absent"``, but it also
      stands in for the default text: no turn at all (Poolside Laguna's templates, where the
      message's text replaces the default).
    - ``empty_later``: with ``placement="in_place"``, ``"dropped"``: a system message after
      the first with empty text is not written, nor its turn (a recorded loss: Phi-3.5's
      template skips every system message with no text; with ``empty_first="absent"`` it
      skips the first one too).  ``"kept"`` (the default): it is an empty system turn.
    - ``heading``: with ``placement="gathered"``, written before the gathered system texts
      when there are any (Solar Open's ``\\n\\n## System Prompt\\n\\n`` after its preamble);
      reading drops it where the turn's text begins.  Default: nothing (refused with another
      placement).
    - ``default_after``: whitespace written after the system turn that holds no message
      (Kimi K2 Instruct leaves a newline after its default turn, and after no other).
    """

    default: str | Fence | None = None
    default_when: Literal["always", "without_tools", "with_tools"] = "always"
    always: bool = False
    preamble: Fence = ()
    preamble_with_tools: Fence = ()
    preamble_without_tools: Fence = ()
    placement: Literal["in_place", "first_only", "gathered", "first_kept"] = "in_place"
    joiner: str = "\n\n"
    empty_first: Literal["kept", "absent", "own_turn", "none"] = "kept"
    heading: Fence = ()
    default_with_tools: str | Fence | None = None
    empty_later: Literal["kept", "dropped"] = "kept"
    default_after: Fence = ()

    claims: ClassVar[frozenset[str]] = frozenset({"system"})

    def validate(self, layout: Layout) -> None:
        if "system" not in layout.frames:
            raise FormatError(
                f"{layout.name}: SystemPrompt: no 'system' frame; expected Layout.frames to "
                "have one (an empty Frame() for bare system text)"
            )
        if self.empty_later != "kept" and self.placement != "in_place":
            raise FormatError(
                f"{layout.name}: SystemPrompt.empty_later: {self.empty_later!r} with placement="
                f"{self.placement!r}; expected placement 'in_place' (the only one that writes "
                "later system messages as turns of their own)"
            )
        self._check_unused(layout)
        if self.default_with_tools is not None and (
            self.default is None or self.default_when != "always"
        ):
            raise FormatError(
                f"{layout.name}: SystemPrompt.default_with_tools with default="
                f"{self.default!r}, default_when={self.default_when!r}; expected a default "
                "text and default_when='always' (one text without tools, the other with them)"
            )

    def _check_unused(self, layout: Layout) -> None:
        """Refuse a field given where it does nothing: ``joiner`` and ``heading`` outside
        ``placement="gathered"`` (only the gathered turn joins texts under a heading), and
        ``default_when`` where it cannot choose (no concept handles a request's tools, so a
        request with tools is refused and the choice never arises)."""
        name = f"{layout.name}: {type(self).__name__}"
        if self.placement != "gathered":
            given = [
                f"{field}={value!r}"
                for field, value in (("joiner", self.joiner), ("heading", self.heading))
                if value != _DEFAULTS[field]
            ]
            if given:
                raise FormatError(
                    f"{name}.{given[0].partition('=')[0]}: {given[0]} with placement="
                    f"{self.placement!r}; expected placement='gathered', the only one that "
                    "joins the system texts (under a heading) into one turn, or the field left "
                    "out: here each system message is written as it is"
                )
        if self.default_when == "always" or self.default is None:
            return  # (None: a format's options may leave out the text default_when places)
        if not any("tools" in getattr(concept, "handles", ()) for concept in layout.concepts):
            raise FormatError(
                f"{name}.default_when: {self.default_when!r} and no concept that handles a "
                "request's tools; expected 'always', or a tools block (ToolsBlock, or "
                "Ignored(('tools',)) where the template drops them): without one a request "
                "with tools is refused, so the default text is written in every render or "
                "in none"
            )

    @property
    def default_fence(self) -> Fence:
        return _as_fence(self.default)

    @property
    def tools_default_fence(self) -> Fence:
        """The default text when the request has tools."""
        if self.default_with_tools is None:
            return self.default_fence
        return _as_fence(self.default_with_tools)

    def gathered_texts(self, out: Render) -> list[str]:
        """The texts of the system messages written in the gathered turn."""
        return [
            out.message_text(number)
            for number, message in enumerate(out.messages)
            if message.role == "system"
        ]

    def jinja_gathered(self, texts: str) -> str:
        """The template's list ``texts`` of gathered system texts, with the text of
        ``message`` added (the counterpart of :meth:`gathered_texts`)."""
        return f"{texts} + [text_of(message, loop.index0, '')]"

    def body_reader(self, table: Table, default: str | None) -> ReaderFactory:
        """The reader of a system turn's text; ``default``: what the format writes when
        there is no system message (None: no turn then)."""
        if default is None or self.default_with_tools is None:
            return host_text_reader(default)
        return host_texts_reader(default, table.text(self.tools_default_fence))

    def jinja_default(self, out: Template) -> None:
        """The template's default text (:meth:`tools_default_fence` is the writer's)."""
        if self.default_with_tools is None:
            out.fence(self.default_fence)
        else:
            out.fence_if("has_tools", self.tools_default_fence, self.default_fence)

    def default_applies(self, has_tools: bool) -> bool:
        """Whether the default text is written (the request has tools or not)."""
        unless = "without_tools" if has_tools else "with_tools"
        return self.default is not None and self.default_when != unless

    def jinja_default_applies(self) -> str:
        """The template's condition of :meth:`default_applies` (given a default)."""
        return _WHEN[self.default_when]

    @property
    def preambles(self) -> bool:
        """Whether the first system turn opens with a preamble."""
        return bool(self.preamble or self.preamble_with_tools or self.preamble_without_tools)

    # ------------------------------------------------------------------ the writer

    acts_on: ClassVar[frozenset[str] | None] = frozenset({"system"})

    def hook_roles(self, hook: str) -> frozenset[str] | None:
        """The opening hooks only where there is a preamble to write."""
        if hook.endswith("_opening") and not self.preambles:
            return frozenset()
        if hook.endswith("_after") and not self.default_after:
            return frozenset()
        return self.turn_roles()

    def check_is_local(self) -> bool:
        # (the messages, and what wants a system turn: the request's tools)
        return self.inherits(
            SystemPrompt, "check", "_absent", "empty_read_as_none", "empty_turn_read_as_none"
        )

    def check(self, out: Render) -> None:
        messages = out.messages
        # (_absent's test of the first message without its call: most have no system first)
        if self.placement == "gathered":
            lose_empty_gathered(out, self.gathered_texts(out))
        elif messages and messages[0].role == "system" and self.empty_first != "own_turn":
            if self._absent(out):
                out.lose("messages[0]", "a system message with empty text, written as none")
            elif self.empty_read_as_none(out):
                out.lose("messages[0]", _UNREAD)
        if self.placement == "first_only":
            refuse_later_system(out)
        elif self.placement == "in_place" and self.empty_later == "kept":
            self._lose_empty_later(out)
        if self.placement == "first_kept" or self.empty_later == "dropped":
            # (one of them at most: empty_later needs placement "in_place")
            for index, message in enumerate(out.messages):
                if not index or message.role != "system":
                    continue
                if self.placement == "first_kept":
                    out.lose(f"messages[{index}]", "a system message after the first, dropped")
                elif not out.message_text(index):
                    out.lose(f"messages[{index}]", "a system message with empty text, dropped")

    def empty_read_as_none(self, out: Render) -> bool:
        """Whether the first message, a system message written in the system turn, has empty
        text in a turn that reads back as none: one the format writes without a message too
        (an empty default text, or ``always`` with no default) or one that holds what other
        concepts write (the tools), where reading takes the turn for the format's own."""
        if out.message_text(0):
            return False
        if self.empty_turn_read_as_none(out):
            return True
        return any(wants(out) for wants in out.plan.wants_system)

    def _lose_empty_later(self, out: Render) -> None:
        """Record each system message after the first with empty text, written as a turn of
        its own that reads back as none."""
        if (
            self.preambles
            or self.empty_first == "own_turn"
            or not self.empty_turn_read_as_none(out)
        ):
            return  # (a later turn differs from the first one, which the reader takes as none)
        for index, message in enumerate(out.messages):
            if index and message.role == "system" and not out.message_text(index):
                out.lose(f"messages[{index}]", _UNREAD)

    def empty_turn_read_as_none(self, out: Render) -> bool:
        """Whether a system turn with empty text reads back as no message: the format writes
        that very turn without a message (an empty default text, or ``always`` with none)."""
        if self.default is not None:
            return not any(not isinstance(piece, Lit) or piece.text for piece in self.default_fence)
        return self.always or not out.layout.frames["system"].open

    def _has_first(self, out: Render) -> bool:
        return bool(out.messages) and out.messages[0].role == "system" and not self._absent(out)

    def _absent(self, out: Render) -> bool:
        """Whether the first message is a system message written as none (``empty_first``)."""
        if self.empty_first == "kept" or self.placement == "gathered":
            return False
        if not out.messages or out.messages[0].role != "system" or out.message_text(0):
            return False
        if self.empty_first == "own_turn" or (
            # (the default text stands for it, ahead of what the other concepts write there)
            self.empty_first == "absent" and self.default_applies(bool(out.tools))
        ):
            return True
        return not any(wants(out) for wants in out.plan.wants_system)

    def write_start(self, out: Render) -> None:
        if self.placement == "gathered":
            if any(message.role == "system" for message in out.messages) or self._wanted(out):
                out.turn(-1, "system")
            return
        if not (self.always or self.default is not None or out.plan.wants_system):
            return  # nothing wants a system turn without a message (render's hot path)
        messages = out.messages
        if (
            not (messages and messages[0].role == "system")
            and type(self)._has_first is SystemPrompt._has_first
        ):
            # No system message first: none is absent and there is no first one (_absent's
            # and _has_first's answers, without their calls); what wants a turn decides.
            if self._wanted(out):
                out.turn(-1, "system")
            return
        if self.empty_first == "kept" and type(self)._has_first is SystemPrompt._has_first:
            return  # (a system message first, kept whatever its text: the system turn is its)
        if self.empty_first == "none" and self._absent(out):
            return
        if not self._has_first(out) and self._wanted(out):
            out.turn(-1, "system")

    def _wanted(self, out: Render) -> bool:
        if self.always or self.default_applies(bool(out.tools)):
            return True
        for wants in out.plan.wants_system:  # (any() of a generator costs more: every render)
            if wants(out):
                break
        else:
            return False
        return True

    def write_message(self, out: Render, index: int) -> None:
        if self.placement == "gathered" or (self.placement == "first_kept" and index > 0):
            return
        if self.empty_later == "dropped" and index > 0 and not out.message_text(index):
            return
        if not (index == 0 and self._absent(out)):
            out.turn(index)
        elif self.empty_first == "own_turn":
            self._empty_turn(out, index)

    @staticmethod
    def _empty_turn(out: Render, index: int) -> None:
        """An empty system turn: its frame alone, no concept's part (``"own_turn"``)."""
        frame = out.layout.frames["system"]
        out.role, out.index = "system", index
        out.at("system", index)
        out.fence(frame.opener(out.previous), "header")
        out.fence(frame.end, "close")
        out.fence(frame.after, "separator")
        out.previous = "system"

    def hook_is_local(self, hook: str, role: str) -> bool:
        # In a turn written for a message: the preamble at the first message alone (unless
        # it depends on the tools); the default text only in a turn that holds no message.
        # (Gathered, a system turn never holds a message: nothing to keep.)
        if hook == "write_after":  # (written after a turn that holds no message alone)
            return self.inherits(SystemPrompt, hook)
        if self.placement == "gathered" or hook not in _LOCAL:
            return False
        if hook == "write_opening":
            tools = self.preamble_with_tools or self.preamble_without_tools
            return self.inherits(SystemPrompt, hook) and not tools
        if hook == "write_message":  # (what wants a turn is asked only of an absent first)
            kept = self.empty_first in ("kept", "own_turn")
            return kept and self.inherits(SystemPrompt, hook, "_absent")
        return self.inherits(SystemPrompt, hook)

    def hook_reads_tools(self, hook: str, role: str) -> bool:
        # (a preamble of its own with tools and without them)
        tools = self.preamble_with_tools or self.preamble_without_tools
        own = hook == "write_opening" and bool(tools) and self.inherits(SystemPrompt, hook)
        return own and self.placement != "gathered"

    def write_opening(self, out: Render, index: int) -> None:
        if out.role != "system" or index > 0:
            return
        out.fence(self.preamble_with_tools if out.tools else self.preamble_without_tools, "header")
        out.fence(self.preamble, "header")

    def write_content(self, out: Render, index: int) -> bool:
        if out.role != "system":
            return False
        if self.placement == "gathered" and index == -1:
            texts = self.gathered_texts(out)
            if texts:
                out.fence(self.heading, "content")
                joined = self.joiner.join(texts)
                out.text(joined, "content")
                out.has_content = bool(joined)  # (empty texts: nothing to separate tools from)
                return True
        if index == -1 and self.default_applies(bool(out.tools)):
            out.fence(self.tools_default_fence if out.tools else self.default_fence, "content")
            out.has_content = True
            return True
        return False

    def write_after(self, out: Render, index: int) -> None:
        if index == -1:
            out.fence(self.default_after, "separator")

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        layout = table.layout
        frame = layout.frames["system"]
        # What the format writes when there is no system message (None: no turn then, so
        # an empty turn is a message).  Bare system text (a frame with no opener) is always
        # there to read: empty, it is no message.
        written = self.default is not None or self.always or not frame.open
        default = table.text(self.default_fence) if written else None
        table.reader("system.body", self.body_reader(table, default))
        if self.heading:
            body = table.states["system.body"]
            table.reader("system.body", lead_dropped(body.reader, table.text(self.heading)))
        spoken = {
            table.text((piece,))
            for piece in (*self.default_fence, *self.tools_default_fence)
            if isinstance(piece, Marker)
        }
        if spoken:  # markers the default text spells (Ministral 3's [THINK] example) are text
            body = table.states["system.body"]
            table.states["system.body"] = dataclasses.replace(body, inner=body.inner | spoken)
        spellings = {
            table.text(frame.open, self.preamble_without_tools, self.preamble),
            table.text(frame.open, self.preamble),
            table.text(frame.open, self.preamble_with_tools, self.preamble),
        }
        for spelling in sorted(spellings - {""}):
            table.steps.pop(("outside", spelling), None)
            table.on("outside", spelling, "system.body", begin("system", pending=True))
        if not table.text(frame.open):
            # Bare system text at the start: it follows the begin fence.
            table.begin_target = "system.body"
            table.begin_actions = (begin("system", pending=True),)

    # ------------------------------------------------------------------ the Jinja template

    def jinja_setup(self, out: Template) -> None:
        out.macro(
            "has_system",
            '{%- set has_system = messages | length > 0 and messages[0].role in ["system", '
            '"developer"] -%}',
        )
        if self.placement == "first_only":
            jinja_refuse_later_system(out)

    def _jinja_wanted(self, out: Template, *, own: bool = True) -> str:
        """The condition of a system turn without a message (``own`` False: only what the
        other concepts want written there)."""
        if self.always and own:
            return "true"
        conditions = [self.jinja_default_applies()] if self.default is not None and own else []
        conditions += [
            condition
            for concept in out.layout.concepts
            if (condition := concept.jinja_wants_system_turn()) is not None
        ]
        return " or ".join(f"({condition})" for condition in conditions) or "false"

    def jinja_start(self, out: Template) -> None:
        if self.placement == "gathered":
            texts = out.ns("system_texts", "[]")
            out.out("{%- for message in messages -%}")
            out.out('{%- if message.role in ["system", "developer"] -%}')
            out.out(f"{{%- set {texts} = {self.jinja_gathered(texts)} -%}}")
            out.out("{%- endif -%}")
            out.out("{%- endfor -%}")
            out.out(f"{{%- if {texts} or {self._jinja_wanted(out)} -%}}")
        else:
            if self.empty_first != "kept":
                # (as _absent: an empty first message in a turn no other concept wants)
                unwanted = ""
                if self.empty_first != "own_turn":
                    unwanted = f"not ({self._jinja_wanted(out, own=False)})"
                    if self.empty_first == "absent" and self.default is not None:
                        # (the default text, where it applies, stands for the message)
                        applies = self.jinja_default_applies()
                        unwanted = "" if applies == "true" else f"({unwanted} or {applies})"
                unwanted += " and " if unwanted else ""
                out.out(
                    f"{{%- set system_absent = has_system and {unwanted}"
                    f"not text_of(messages[0], 0, {jinja_string(out.layout.name)}) -%}}"
                )
                out.out("{%- set has_system = has_system and not system_absent -%}")
            wanted = self._jinja_wanted(out)
            if self.empty_first == "none":
                wanted = f"not system_absent and ({wanted})"
            out.out(f"{{%- if not has_system and ({wanted}) -%}}")
        out.out("{%- set message = none -%}{%- set index = -1 -%}")
        out.turn("system", message=False)
        out.out("{%- endif -%}")

    def jinja_message(self, out: Template, role: str) -> None:
        if self.placement == "gathered":
            return
        conditions = []
        if self.placement == "first_kept":  # the later ones are recorded losses
            conditions.append("index == 0")
        if self.empty_later == "dropped":  # (an empty later one: a recorded loss)
            name = jinja_string(out.layout.name)
            conditions.append(f"index == 0 or text_of(message, index, {name})")
        if self.empty_first in ("absent", "none"):
            conditions.append("not (index == 0 and system_absent)")
        with contextlib.ExitStack() as stack:
            for condition in conditions:
                stack.enter_context(out.when(condition))
            if self.empty_first == "own_turn":
                frame = out.layout.frames["system"]
                out.out("{%- if index == 0 and system_absent -%}")
                out.open_fence("system")
                out.fence(frame.end)
                out.fence(frame.after)
                out.out('{%- set ns.previous = "system" -%}')
                out.out("{%- else -%}")
            out.turn("system")
            if self.empty_first == "own_turn":
                out.out("{%- endif -%}")

    def jinja_after(self, out: Template, role: str) -> None:
        out.fence_if("index == -1", self.default_after)

    def jinja_opening(self, out: Template, role: str) -> None:
        if role != "system" or not self.preambles:
            return
        out.out("{%- if index <= 0 -%}")
        if self.preamble_with_tools or self.preamble_without_tools:
            out.fence_if("has_tools", self.preamble_with_tools, self.preamble_without_tools)
        out.fence(self.preamble)
        out.out("{%- endif -%}")

    def jinja_content(self, out: Template, role: str) -> bool:
        if role != "system":
            return False
        out.out("{%- if index == -1 -%}")
        if self.placement == "gathered":
            texts = out.ns("system_texts", "[]")
            out.out(f"{{%- if {texts} -%}}")
            out.fence(self.heading)
            joined = f"{texts} | join({jinja_string(self.joiner)})"
            out.out(f"{{{{- {joined} -}}}}")
            out.out(f"{{%- set ns.content = ({joined}) != '' -%}}")
            out.out("{%- else -%}")
        if self.default is not None:
            with out.when(self.jinja_default_applies()):
                self.jinja_default(out)
                out.out("{%- set ns.content = true -%}")
        if self.placement == "gathered":
            out.out("{%- endif -%}")
        out.out("{%- else -%}")
        out.later_content(self, role)  # as the writer writes it (Trimmed)
        out.out("{%- endif -%}")
        return True


@dataclass(frozen=True)
class LastSystemPrompt(SystemPrompt):
    """A :class:`SystemPrompt` of which only the last system message is written, at its
    ``placement`` (``"gathered"``: at the start), as DeepSeek R1's templates keep only the
    last one; render drops the others and reports each in
    :attr:`pawlette.types.Rendering.losses`.

    Fields: those of :class:`SystemPrompt`, each meaning what it means there
    (``help(SystemPrompt)``): ``default``, ``default_when``, ``always``, ``preamble``,
    ``preamble_with_tools``, ``preamble_without_tools``, ``placement``, ``joiner``,
    ``empty_first``, ``heading``, ``default_with_tools``, ``empty_later`` and
    ``default_after``.  ``placement`` is
    ``"gathered"`` (the last text is written at the start of the conversation), and
    ``empty_first`` speaks of the last system message: ``"absent"``: a last one with empty
    text is written as no system message (the default text, or no turn; RWKV World), a
    recorded loss; ``"kept"``: it is an empty system turn."""

    def validate(self, layout: Layout) -> None:
        super().validate(layout)
        if self.placement != "gathered":
            raise FormatError(
                f"{layout.name}: LastSystemPrompt.placement: {self.placement!r}; expected "
                "'gathered' (the last system message is written at the start of the "
                "conversation, the others are dropped)"
            )
        if self.empty_first not in ("kept", "absent"):
            raise FormatError(
                f"{layout.name}: LastSystemPrompt.empty_first: {self.empty_first!r}; expected "
                "'kept' or 'absent' (what an empty last system message is written as)"
            )

    def check(self, out: Render) -> None:
        last = self.check_last(out)
        if last >= 0 and not out.message_text(last):
            if self.empty_first == "absent":
                out.lose(f"messages[{last}]", "a system message with empty text, written as none")
            else:  # (kept: its empty text is all the gathered turn holds of it)
                out.lose(f"messages[{last}]", _UNREAD)

    def write_start(self, out: Render) -> None:
        if self.empty_first == "kept":
            super().write_start(out)
        elif self.gathered_texts(out) or self._wanted(out):
            out.turn(-1, "system")

    def check_last(self, out: Render) -> int:
        """:meth:`check`: the base's checks, and each system message before the last a loss;
        the index of the last system message (-1: none), kept for the writer's hooks
        (:meth:`last_system`): the messages are walked once."""
        if type(self)._absent is not SystemPrompt._absent:
            super().check(out)  # (else it finds nothing: gathered, no system text is absent)
        last = -1
        for index, message in enumerate(out.messages):
            if message.role == "system":
                if last >= 0:  # (the one found before is not the last)
                    out.lose(f"messages[{last}]", "a system message before the last, dropped")
                last = index
        out.states[_LAST_SYSTEM] = last
        return last

    @staticmethod
    def last_system(out: Render) -> int:
        """The index of the last system message (-1: none): :meth:`check_last`'s, or found
        from the end."""
        last: int | None = out.states.get(_LAST_SYSTEM)
        if last is None:
            messages = out.messages
            last = len(messages) - 1
            while last >= 0 and messages[last].role != "system":
                last -= 1
        return last

    def gathered_texts(self, out: Render) -> list[str]:
        last = self.last_system(out)  # (the last text alone, without a walk for the others)
        if last < 0:
            return []
        text = out.message_text(last)
        return [text] if text or self.empty_first == "kept" else []

    def jinja_gathered(self, texts: str) -> str:
        if self.empty_first == "absent":  # (an empty last text: no text gathered)
            text = "text_of(message, loop.index0, '')"
            return f"([{text}] if {text} else [])"
        return "[text_of(message, loop.index0, '')]"


_UNREAD = "a system message with empty text, read back as none (its turn reads as one without it)"

_LAST_SYSTEM = object()
"""The key of :meth:`LastSystemPrompt.check_last`'s index in a render's states."""

_DEFAULTS = {field.name: field.default for field in dataclasses.fields(SystemPrompt)}
"""The fields' defaults (what a field left out holds)."""
_LOCAL = ("write_opening", "write_message", "write_content")
_WHEN = {"always": "true", "without_tools": "not has_tools", "with_tools": "has_tools"}


def lose_empty_gathered(out: Render, texts: list[str]) -> None:
    """Record each system message as a loss when the gathered ``texts`` are all empty: the
    gathered turn then holds nothing of them, and reads back as no system message."""
    if any(texts):
        return
    for index, message in enumerate(out.messages):
        if message.role == "system" and not out.message_text(index):
            out.lose(f"messages[{index}]", _UNREAD)


def refuse_later_system(out: Render) -> None:
    """Refuse a system message after the first message (a layout that has no later ones)."""
    for index, message in enumerate(out.messages):
        if index and message.role == "system":
            raise UnsupportedFeature(
                f"messages[{index}]",
                "a system message after the first message",
                f"one system message, first: {out.layout.name} has no later ones",
            )


def jinja_refuse_later_system(out: Template) -> None:
    """:func:`refuse_later_system` in the chat template."""
    out.macro(
        "system_first_only",
        "{%- for message in messages -%}"
        '{%- if loop.index0 > 0 and message.role in ["system", "developer"] -%}'
        + "{{- raise_exception("
        + jinja_string(f"a system message after the first: {out.layout.name} has no later ones")
        + ") -}}{%- endif -%}{%- endfor -%}",
    )
