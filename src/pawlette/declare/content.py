"""What a format does to message text and fields beyond writing them: trimming, and fields
and tool messages its template accepts and never writes.  All are documented losses, never
refusals."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from operator import methodcaller
from typing import TYPE_CHECKING, ClassVar, Literal

from ..emit.jinja_text import jinja_string
from ..errors import FormatError
from ..types import TextPart
from .calls import check_call_name
from .concept import Concept
from .pieces import Fence
from .readers import lead_dropped, space_dropped

if TYPE_CHECKING:
    from ..types import Message
    from .jinja import Template
    from .layout import Layout
    from .table import Table
    from .write import Render

IGNORABLE = {
    "reasoning": "reasoning_content",
    "tools": "tools",
    "name": "name",
    "calls": "tool_calls",
}


@dataclass(frozen=True)
class Ignored(Concept):
    """``fields``: what the format's template accepts and does not write (``"reasoning"``,
    ``"tools"``, ``"name"``, ``"calls"``).  Render writes the rest and reports each dropped
    field in :attr:`pawlette.types.Rendering.losses`, where a format without this would
    refuse it.  A dropped call without a name is still refused (it is no call)."""

    fields: tuple[str, ...]

    def validate(self, layout: Layout) -> None:
        for name in self.fields:
            if name not in IGNORABLE:
                raise FormatError(
                    f"{layout.name}: Ignored.fields: {name!r}; expected some of "
                    + ", ".join(IGNORABLE)
                )
        # Checks run in the layout's order: a field ignored first would be reported dropped
        # and then written by the concept after that writes it.
        after = layout.concepts[layout.concepts.index(self) + 1 :]
        for concept in after:
            for name in self.fields:
                if name in getattr(concept, "handles", ()):
                    kind = type(concept).__name__
                    raise FormatError(
                        f"{layout.name}: Ignored.fields: {name!r}, which {kind} after it "
                        f"writes; expected Ignored after {kind} (it then drops only what "
                        f"{kind} leaves unwritten), or {name!r} left out of Ignored"
                    )

    @property
    def handles(self) -> frozenset[str]:
        return frozenset(self.fields)

    def check_is_local(self) -> bool:
        return self.inherits(Ignored, "check")  # (what earlier checks handle, the request)

    def check(self, out: Render) -> None:
        handled = out.handled
        present = None
        for name in self.fields:
            if name in handled:
                continue  # another concept writes it
            handled.add(name)  # (out.handles(name) without its call: every render asks)
            if name == "tools":
                if out.tools:
                    out.lose("tools", "not written")
                continue  # (the tools are the request's: no message holds them)
            if present is None:
                present = out.present
            if name not in present:
                continue  # no message holds it (the walks below would find nothing)
            # One walk per field, each testing its own field alone.
            if name == "reasoning":
                for index, message in enumerate(out.messages):
                    if message.reasoning is not None:
                        out.lose(f"messages[{index}].reasoning_content", "not written")
            elif name == "name":
                for index, message in enumerate(out.messages):
                    if message.name is not None and message.role != "tool":
                        out.lose(f"messages[{index}].name", "not written")
            elif name == "calls":
                for index, message in enumerate(out.messages):
                    if not message.tool_calls:
                        continue
                    for number, call in enumerate(message.tool_calls):
                        # Invalid input, dropped or not (parsing reads a call without a name
                        # as no call).
                        check_call_name(call.name, index, number)
                    out.lose(f"messages[{index}].tool_calls", "not written")


Side = Literal["both", "start", "end"]

_SIDES: dict[str, Side] = {"at its ends": "both", "at its start": "start", "at its end": "end"}
_TRIMMED_LOSS = re.compile(
    r"(whitespace|newlines|spaces|the characters ('.*'|\".*\")) (at its ends|at its start|at its "
    r"end) trimmed"
)


def trim_of_loss(what: str) -> tuple[Side, str | None] | None:
    """The side and characters a :class:`Trimmed` loss says were trimmed (``what``, the
    loss less its path: ``"newlines at its start trimmed"`` gives ``("start", "\\n")``);
    None: no such loss."""
    found = _TRIMMED_LOSS.fullmatch(what)
    if found is None:
        return None
    kind, quoted, where = found.groups()
    characters = {"whitespace": None, "newlines": "\n", "spaces": " "}.get(kind)
    if quoted is not None:
        characters = ast.literal_eval(quoted)
    return _SIDES[where], characters


_UNTRIMMED_KEPT = 4096
"""Messages a :class:`Trimmed` keeps as found untrimmed at most (then it starts over)."""


@dataclass(frozen=True)
class Trimmed(Concept):
    """Message text is written trimmed, in the ``roles`` given (``roles``): what templates
    that ``| trim`` every message (``side="both"``, the default), ``.strip('\\n')``
    (``characters="\\n"``), ``.lstrip()`` (``side="start"``) or ``.rstrip()``
    (``side="end"``) do.  A text that changes is a recorded loss, which says what was
    trimmed where.

    ``side``: where the text is trimmed: ``"both"`` (Python's ``str.strip``, Jinja's
    ``trim``; the default), ``"start"`` (``str.lstrip``) or ``"end"`` (``str.rstrip``).

    ``characters``: what is trimmed: ``None`` (the default), all whitespace (``strip()``
    without an argument); or a string of the characters to trim, such as ``"\\n"``
    (``strip('\\n')``: newlines only).

    ``lead``: written before the trimmed text when it is not empty (GLM-4.6 writes ``"\\n"``
    before an assistant's text, none when the text is empty); reading drops it where a turn's
    text begins.  Default: nothing.

    ``space_first``: the model writes whitespace before its text, the rest of a fence its
    generation prompt stops short of (RWKV World's prompt ``Assistant:`` before the turn's
    ``Assistant: text``); reading drops whitespace where an assistant turn's text begins,
    which its trimmed text never holds (so it needs a trim of all whitespace at the start:
    ``side`` ``"both"`` or ``"start"``, ``characters=None``).  Default False: read as
    written."""

    roles: tuple[str, ...] = ("system", "user", "assistant", "tool")
    lead: Fence = ()
    space_first: bool = False
    side: Side = "both"
    characters: str | None = None

    handles: ClassVar[frozenset[str]] = frozenset()

    def validate(self, layout: Layout) -> None:
        from .layout import ROLES

        for role in self.roles:
            if role not in ROLES:
                raise FormatError(
                    f"{layout.name}: Trimmed.roles: {role!r}; expected some of " + ", ".join(ROLES)
                )
        if self.characters == "":
            raise FormatError(
                f"{layout.name}: Trimmed.characters: {self.characters!r}; expected None (all "
                "whitespace) or a non-empty string of the characters to trim, such as '\\n'"
            )
        if self.space_first and (self.side == "end" or self.characters is not None):
            raise FormatError(
                f"{layout.name}: Trimmed.space_first: True with side={self.side!r} and "
                f"characters={self.characters!r}; expected a trim of all whitespace at the "
                "start (side 'both' or 'start', characters None), which reading relies on"
            )

    @cached_property
    def trim_text(self) -> Callable[[str], str]:
        """What is written of a text this concept trims (``str.strip`` by default; a
        method caller otherwise, which pickles with the format)."""
        name = {"both": "strip", "start": "lstrip", "end": "rstrip"}[self.side]
        if self.characters is None:
            trim: Callable[[str], str] = getattr(str, name)
            return trim
        return methodcaller(name, self.characters)

    @property
    def trimmed_what(self) -> str:
        """What a loss says was trimmed: ``whitespace at its ends`` (by default),
        ``newlines at its start``, ``'\\t' at its end``..."""
        characters = self.characters
        if characters is None:
            what = "whitespace"
        elif set(characters) == {"\n"}:
            what = "newlines"
        elif set(characters) <= {" "}:
            what = "spaces"
        else:
            what = f"the characters {characters!r}"
        where = next(words for words, side in _SIDES.items() if side == self.side)
        return f"{what} {where}"

    @cached_property
    def trimmed_loss(self) -> str:
        """What a loss of a trimmed text says (found once: every render's check asks)."""
        return f"{self.trimmed_what} trimmed"

    def turn_roles(self) -> frozenset[str]:
        return frozenset(self.roles)

    def trims(self, out: Render, index: int) -> bool:
        """Whether the text of ``messages[index]`` is written trimmed."""
        return out.messages[index].role in self.roles

    def check_is_local(self) -> bool:
        return self.inherits(Trimmed, "check", "trims")

    @cached_property
    def _untrimmed(self) -> dict[int, Message]:
        """Messages whose text this concept's trim leaves as it is, by identity (a message is
        immutable, and the reader hands back the same one for an equal message it read
        before): a conversation's earlier messages are not trimmed again in its next
        request."""
        return {}

    def check(self, out: Render) -> None:
        by_role = type(self).trims is Trimmed.trims  # (its test, without a call per message)
        roles = self.roles
        trim, lost = self.trim_text, self.trimmed_loss
        untrimmed = self._untrimmed if by_role else None
        for index, message in enumerate(out.messages):
            if untrimmed is not None and untrimmed.get(id(message)) is message:
                continue
            if (message.role in roles) if by_role else self.trims(out, index):
                content = message.content  # (message_text's common cases, without its call)
                if not content:
                    continue  # (no text: nothing trimmed, as a turn of calls alone holds)
                if len(content) == 1 and type(content[0]) is TextPart:
                    text = content[0].text
                else:
                    text = out.message_text(index)
                if text != trim(text):
                    out.lose(f"messages[{index}].content", lost)
                elif untrimmed is not None:
                    if len(untrimmed) >= _UNTRIMMED_KEPT:
                        untrimmed.clear()
                    untrimmed[id(message)] = message

    def write_content(self, out: Render, index: int) -> bool:
        roles = self.roles
        if index < 0 or out.role not in roles:
            return False
        message = out.messages[index]
        if type(self).trims is Trimmed.trims:  # (its test, without a call per turn)
            if message.role not in roles:
                return False
        elif not self.trims(out, index):
            return False
        content = message.content  # (message_text's common case, without its call)
        if content and len(content) == 1 and type(content[0]) is TextPart:
            text = self.trim_text(content[0].text)
        else:
            text = self.trim_text(out.message_text(index))
        trainable = out.role == "assistant"
        if text and self.lead:
            out.fence(self.lead, "content", trainable=trainable)
        out.writer.text(text, "content", trainable=trainable)
        return True

    def hook_is_local(self, hook: str, role: str) -> bool:
        # (its own write_content: the message's text trimmed, after its lead)
        return hook == "write_content" and self.inherits(Trimmed, hook, "trims")

    def content_text(self, role: str) -> Callable[[str], str] | None:
        # (Trimmed's own write_content, for a message of a role it trims: its text trimmed)
        own = self.inherits(Trimmed, "write_content", "trims")
        return self.trim_text if own and role in self.roles and not self.lead else None

    def jinja_trimmed(self, text: str) -> str:
        """The Jinja expression of ``text`` (an expression) trimmed: the ``trim`` filter for
        all whitespace at both ends, else the string method both jinja2 and minijinja
        know (``.strip(chars)``, ``.lstrip()``, ``.rstrip('\\n')``...)."""
        if self.side == "both" and self.characters is None:
            return f"{text} | trim"
        method = {"both": "strip", "start": "lstrip", "end": "rstrip"}[self.side]
        argument = "" if self.characters is None else jinja_string(self.characters)
        return f"({text}).{method}({argument})"

    def jinja_content(self, out: Template, role: str) -> bool:
        if role not in self.roles:
            return False
        text = f"text_of(message, index, {out.layout.name!r})"
        if self.lead:
            out.out(f"{{%- set trimmed = {self.jinja_trimmed(text)} -%}}")
            out.out("{%- if trimmed -%}")
            out.fence(self.lead)
            out.out("{{- trimmed -}}")
            out.out("{%- endif -%}")
        else:
            out.out(f"{{{{- {self.jinja_trimmed(text)} -}}}}")
        return True

    def rows(self, table: Table) -> None:
        if self.space_first and "assistant" in self.roles:
            for name in ("assistant.head", "assistant.body"):
                if name in table.states:
                    table.reader(name, space_dropped(table.states[name].reader))
        lead = table.text(self.lead)
        if not lead:
            return
        for role in self.roles:
            for state in {table.first_state.get(role), f"{role}.body"}:
                if state is not None and state in table.states:
                    table.reader(state, lead_dropped(table.states[state].reader, lead))


@dataclass(frozen=True)
class TextAfter(Concept):
    """An assistant message's text written from after the first or last ``separator`` in it
    on, where it holds one: what templates that keep only the answer of a text holding its
    reasoning do (``content.split('</think>')[-1]``: ``occurrence="last"``;
    ``content.split('</think>', 1)[1]``: ``"first"``).  What is dropped is a recorded loss
    of the message's content, which says up to which separator.

    ``separator``: the text after whose occurrence the written text begins;
    ``occurrence``: ``"first"`` or ``"last"``, which of its occurrences;
    ``calls``: whether the text of a turn with calls is cut too (else written whole);
    ``after_results``: whether the text of a turn right after results is cut too (DeepSeek
    V3.1 writes it whole); ``last``: whether the conversation's last message is cut too
    (QwQ's template cuts only the earlier ones); ``strip``: characters taken off the start of
    the written text, also of a text that holds no separator (QwQ: ``"\\n"``, its
    ``lstrip('\\n')``), a recorded loss when it changes the text.  A text that holds no
    separator (and, with ``strip``, starts with none of its characters) is left to the
    concepts after this one (an empty answer written otherwise)."""

    separator: str = "</think>"
    occurrence: Literal["first", "last"] = "last"
    calls: bool = True
    after_results: bool = True
    last: bool = True
    strip: str = ""

    acts_on: ClassVar[frozenset[str] | None] = frozenset({"assistant"})

    def validate(self, layout: Layout) -> None:
        if not self.separator:
            raise FormatError(
                f"{layout.name}: TextAfter.separator is empty; expected the text whose "
                "first or last occurrence the written text follows (such as '</think>')"
            )

    def write_content(self, out: Render, index: int) -> bool:
        if not 0 <= index < len(out.messages):
            return False
        message = out.messages[index]
        if message.tool_calls and not self.calls:
            return False
        if out.previous == "tool" and not self.after_results:
            return False
        if not self.last and index == len(out.messages) - 1:
            return False
        text = out.message_text(index)
        if self.separator in text:
            out.lose(
                f"messages[{index}].content",
                f"the text up to its {self.occurrence} {self.separator} dropped",
            )
            if self.occurrence == "last":
                kept = text.rsplit(self.separator, 1)[1]
            else:
                kept = text.split(self.separator, 1)[1]
        elif self.strip and text[:1] and text[0] in self.strip:
            kept = text
        else:
            return False
        if self.strip:
            stripped = kept.lstrip(self.strip)
            if stripped != kept:
                out.lose(f"messages[{index}].content", f"{self.strip!r} trimmed at its start")
            kept = stripped
        out.writer.text(kept, "content", trainable=True)
        return True

    def jinja_content(self, out: Template, role: str) -> bool:
        separator = jinja_string(self.separator)
        conditions = [f"{separator} in cut_text"]
        if self.strip:
            starts = f"(cut_text and cut_text[0] in {jinja_string(self.strip)})"
            conditions = [f"({separator} in cut_text or {starts})"]
        if not self.last:
            conditions.append("index < (messages | length) - 1")
        if not self.calls:
            conditions.append("not (message.tool_calls is defined and message.tool_calls)")
        if not self.after_results:
            conditions.append('ns.previous != "tool"')
        out.out(f"{{%- set cut_text = text_of(message, index, {out.layout.name!r}) -%}}")
        with out.when(" and ".join(conditions)):
            if self.occurrence == "last":
                kept = f"cut_text.split({separator})[-1]"
            elif self.strip:  # (a text without the separator is written whole)
                kept = f"(cut_text.split({separator}, 1) + [cut_text])[1]"
            else:
                kept = f"cut_text.split({separator}, 1)[1]"
            if self.strip:
                kept = f"({kept}).lstrip({jinja_string(self.strip)})"
            out.value(kept)
            out.out("{%- else -%}")
            out.later_content(self, role)
        return True


class _ToolMessagesElsewhere(Concept):
    """Tool messages written otherwise than as results (the base of the two below): each
    is a recorded loss (``lost``: where and what; with ``name``, its name another)."""

    claims: ClassVar[frozenset[str]] = frozenset({"tool"})
    handles: ClassVar[frozenset[str]] = frozenset({"tool_name"})
    lost: ClassVar[tuple[str, str, bool]]

    def check(self, out: Render) -> None:
        out.handled.add("tool_name")  # (out.handles without its call: every render asks)
        where, what, name = self.lost
        for index, message in enumerate(out.messages):
            if message.role == "tool":
                out.lose(f"messages[{index}]{where}", what)
                if name and message.name is not None:
                    out.lose(f"messages[{index}].name", "not written")


@dataclass(frozen=True)
class UnwrittenResults(_ToolMessagesElsewhere):
    """Tool messages are accepted and never written, for a template that writes no ``tool``
    role (Phi-3.5's, RWKV World's): render drops each one, its name included, and reports it
    in :attr:`pawlette.types.Rendering.losses`.  Declare it instead of
    :class:`~pawlette.declare.Results`; the layout then needs no ``tool`` frame."""

    lost: ClassVar[tuple[str, str, bool]] = ("", "a tool message: not written", False)

    def write_message(self, out: Render, index: int) -> None:
        del out, index  # nothing is written

    def jinja_message(self, out: Template, role: str) -> None:
        del out, role  # nothing is written


@dataclass(frozen=True)
class ResultsAsUser(_ToolMessagesElsewhere):
    """Tool results written as user turns, one per message, for a template that has no tool
    turn and writes each result as it writes a user message (SmolLM3's): each is a recorded
    loss, and reads back as a user message.  Declare it instead of
    :class:`~pawlette.declare.Results`; the layout then needs no ``tool`` frame."""

    lost: ClassVar[tuple[str, str, bool]] = (".role", "a tool result written as a user turn", True)

    def write_message(self, out: Render, index: int) -> None:
        out.turn(index, "user")

    def jinja_message(self, out: Template, role: str) -> None:
        out.turn("user")
