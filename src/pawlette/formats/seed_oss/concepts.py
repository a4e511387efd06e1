"""Seed-OSS's own concepts: the tools block of Python function stubs (:mod:`.stubs`, read
back by :mod:`.stub_reading`), reasoning whose blank block is not written, and the answer
with no text, which the template writes with no end."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property, partial
from typing import TYPE_CHECKING, ClassVar

from pawlette.codecs.python_stubs import Listing
from pawlette.declare import Reasoning, ToolsBlock
from pawlette.declare.concept import Concept
from pawlette.declare.grammar import text_before
from pawlette.declare.pieces import Fence, Lit, text_of
from pawlette.declare.readers import StubsReader
from pawlette.declare.table import begin, end
from pawlette.emit.grammar_ast import optional, seq
from pawlette.engine.kept import Kept, marshal_key
from pawlette.engine.readers import ContentReader
from pawlette.errors import FormatError, RequestError
from pawlette.json_values import show

from . import stub_reading, stubs

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.layout import Layout
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import Parser, ReaderFactory


class _StubsReader(StubsReader):
    """The stubs of a tools block, read back into the tools they say (:mod:`.stub_reading`);
    from text that is no stub on, the block's text stays text, with a warning."""

    __slots__ = ("_separator",)

    def __init__(self, parser: Parser, separator: str) -> None:
        super().__init__(parser)
        self._separator = separator

    def _listing(self, text: str) -> Listing:
        return stub_reading.read_listing(text, self._separator)


@dataclass(frozen=True)
class StubTools(ToolsBlock):
    """The tools as Python function stubs after the system text: ``open`` before the first
    stub, ``item_separator`` between two, ``close`` (the call format's instructions) after
    the last."""

    item_separator: str = "\n\nFunction:\ndef "

    STATE: ClassVar[str] = "system.tools"

    @cached_property
    def _listings(self) -> Kept[str]:
        """The blocks' stubs, by the tools' content."""
        return Kept(limit=256, longest=1 << 14)

    def check(self, out: Render) -> None:
        super().check(out)
        for number, tool in enumerate(out.tools):
            # A stub lists a returns object's properties; any other schema (a boolean, an
            # object without properties) writes nothing, as the template does.  A value
            # that is no schema would be dropped unseen: refused.
            returns = tool.definition.get("returns")
            if returns is not None and not isinstance(returns, (Mapping, bool)):
                raise RequestError(
                    f"tools[{number}].function.returns",
                    f"found {show(returns)}",
                    "a JSON schema (an object or a boolean): Seed-OSS's stubs list the "
                    "properties of a returns object",
                )

    def block(self, out: Render, *, separated: bool = False) -> None:
        out.fence(self.separated_open if separated else self.open, "tools")
        definitions = [tool.definition for tool in out.tools]
        # (Kept by the tools' content: the same tools come with every request.)
        listing = self._listings.get(
            marshal_key(definitions),
            lambda: self.item_separator.join(stubs.stub(dict(d)) for d in definitions),
        )
        out.text(listing, "tools")
        out.fence(self.close, "tools")

    def items_reader(self, table: Table) -> ReaderFactory:
        return partial(_StubsReader, separator=self.item_separator)

    def jinja_setup(self, out: Template) -> None:
        super().jinja_setup(out)
        out.macro("seed_stub", stubs.JINJA_MACROS)

    def jinja_block(self, out: Template, *, separated: bool = False) -> None:
        out.fence(self.separated_open if separated else self.open)
        out.out("{%- for tool in tools -%}")
        out.out("{%- set tool = tool.function if tool.function is defined else tool -%}")
        out.out("{%- if not loop.first -%}")
        out.literal(self.item_separator)
        out.out("{%- endif -%}")
        out.out("{{- seed_stub(tool) -}}")
        out.out("{%- endfor -%}")
        out.fence(self.close)


def unended(out: Render, index: int) -> bool:
    """Whether ``messages[index]`` is an answer the template writes with no end: an
    assistant message with no calls whose text is blank (the template's ``| trim`` empties
    it)."""
    if not 0 <= index < len(out.messages):
        return False  # (the generation prompt's turn)
    return not out.messages[index].tool_calls and not out.message_text(index).strip()


def jinja_unended(out: Template) -> str:
    """:func:`unended` in the exported template."""
    text = f"text_of(message, index, {out.layout.name!r})"
    return f"not (message.tool_calls is defined and message.tool_calls) and not ({text} | trim)"


@dataclass(frozen=True)
class UnendedReasoning(Reasoning):
    """A reasoning block that ends otherwise in an answer the template writes with no end
    (:func:`unended`, :class:`UnendedAnswer`): there the block ends the turn, closed by
    ``unended_close`` (``</seed:think>`` without the newline that leads the text), a start of
    ``close``.  Everything else is :class:`~pawlette.declare.Reasoning`'s (a block the
    generation prompt opens or writes is not this concept's).  Inference declares it for a
    template that writes such a turn (:mod:`pawlette.infer.empty_texts`)."""

    unended_close: Fence = ()

    def validate(self, layout: Layout) -> None:
        super().validate(layout)
        kind = type(self).__name__
        if self.unended_close and (self.prompt or self.absent):
            raise FormatError(
                f"{layout.name}: {kind}.unended_close with prompt={self.prompt!r} and "
                f"absent={self.absent!r}; expected neither (the close replaces a block the "
                "turn writes whole)"
            )
        if self.unended_close and self._after_unended_close() is None:
            raise FormatError(
                f"{layout.name}: {kind}.unended_close {self.unended_close!r} does not begin "
                f"close {self.close!r}; expected the close without its end"
            )

    def _after_unended_close(self) -> Fence | None:
        """What ``close`` writes after ``unended_close`` (None: it does not begin so)."""
        rest = list(self.close)
        remaining = text_of(self.unended_close)
        while remaining and rest:
            piece = rest.pop(0)
            text = text_of((piece,))
            if remaining.startswith(text):
                remaining = remaining[len(text) :]
            elif isinstance(piece, Lit) and text.startswith(remaining):
                rest.insert(0, Lit(text[len(remaining) :]))
                remaining = ""
            else:
                return None
        return None if remaining else tuple(rest)

    def write_opening(self, out: Render, index: int) -> None:
        if not self.unended_close or not unended(out, index) or not self.written(out, index):
            super().write_opening(out, index)
            return
        out.fence(self.open, "reasoning", trainable=True)
        reasoning = out.messages[index].reasoning or ""
        out.text(
            reasoning.strip(self.trim) if self.trim else reasoning, "reasoning", trainable=True
        )
        out.fence(self.unended_close, "reasoning", trainable=True)

    def jinja_opening(self, out: Template, role: str) -> None:
        if not self.unended_close or role != "assistant":
            super().jinja_opening(out, role)
            return
        with out.when(self._condition(out)):
            out.fence(self.open)
            with out.when("message.reasoning_content is defined"):
                text = "(message.reasoning_content or '')"
                out.value(self._jinja_trimmed(out, text, right=True) if self.trim else text)
            out.fence_if(jinja_unended(out), self.unended_close, self.close)

    def grammar(self, turn: Turn) -> None:
        super().grammar(turn)
        if not self.unended_close or self._prompt_as_given(turn):
            return
        # The turn may end with its block (an answer with no text): what follows the
        # unended close in the close (the newline that leads the text) may be left out.
        layout = turn.layout
        rest = self._after_unended_close() or ()
        turn.head = seq(
            *turn.nodes(self.open),
            text_before(layout, self.unended_close, empty=True),
            optional(seq(*turn.nodes(rest))),
        )


@dataclass(frozen=True)
class BlankDroppedReasoning(UnendedReasoning):
    """The reasoning block on every assistant turn whose reasoning is not blank; blank
    reasoning (empty or whitespace only) writes no block, a recorded loss when it held
    whitespace.  Everything else is :class:`UnendedReasoning`'s."""

    def written(self, out: Render, index: int) -> bool:
        reasoning = out.messages[index].reasoning
        return bool(reasoning and reasoning.strip(self.trim))

    def check(self, out: Render) -> None:
        out.handles("reasoning")
        if "reasoning" not in out.present:
            return
        for index, message in enumerate(out.messages):
            if message.role != "assistant" or not message.reasoning:
                continue
            where = f"messages[{index}].reasoning_content"
            if not self.written(out, index):
                out.lose(where, "dropped (blank)")
            elif message.reasoning != message.reasoning.strip(self.trim):
                out.lose(where, "trimmed at its ends")

    def _condition(self, out: Template) -> str:
        given = "message.reasoning_content is defined and message.reasoning_content is not none"
        return f"({given} and (message.reasoning_content | trim))"


@dataclass(frozen=True)
class UnendedAnswer(Concept):
    """An answer with no text and no calls (:func:`unended`), written as the template
    writes it: with no end (the next turn's opener ends it), opened by ``open`` (the
    assistant's opener without the newline that leads the text) when no reasoning block is
    written; a block written ends with :class:`BlankDroppedReasoning`'s ``unended_close``.

    Reading takes ``open`` as an assistant turn, and a turn's opener after ``open`` or
    after the text of the turn's body as the end of the turn before: the layout lists this
    concept last, so that every opener is in the table when its rows are made."""

    open: Fence

    acts_on: ClassVar[frozenset[str] | None] = frozenset({"assistant"})
    STATE: ClassVar[str] = "assistant.unended"

    def turn_open(self, out: Render, index: int) -> Fence | None:
        if not unended(out, index):
            return None
        reasoning = out.layout.concept(Reasoning)
        return None if reasoning is not None and reasoning.written(out, index) else self.open

    def turn_end(self, out: Render, index: int) -> Fence | None:
        return () if unended(out, index) else None

    def rows(self, table: Table) -> None:
        opening = [
            (marker, target, actions)
            for (state, marker), (target, actions) in table.steps.items()
            if state == "outside" and target != "outside"
        ]
        own = table.state(self.STATE, ContentReader, "assistant", ends=True)
        started = (table.text(self.open), own, (begin("assistant"),))
        table.on("outside", started[0], own, *started[2])
        # A completion read after a prompt that stops before the opener (the template's
        # prompt writes it with its newline, the turn without) begins with it.
        table.on("assistant.head", started[0], own)
        # The turn ends where the next opens: after the bare opener, or after the reasoning
        # block (the body, which the block's close leads to).
        for state in (own, "assistant.body"):
            for marker, target, actions in (*opening, started):
                table.on(state, marker, target, end, *actions)

    def jinja_open(self, out: Template, role: str) -> bool:
        if out.prompt:
            return False
        reasoning = out.layout.concept(Reasoning)
        condition = jinja_unended(out)
        if reasoning is not None:
            condition += f" and not ({reasoning._condition(out)})"
        out.out(f"{{%- if {condition} -%}}")
        out.fence(self.open)
        out.out("{%- else -%}")
        out.opener(out.layout.frames["assistant"])
        out.out("{%- endif -%}")
        return True

    def jinja_end(self, out: Template, role: str) -> bool:
        out.out(f"{{%- if not ({jinja_unended(out)}) -%}}")
        out.fence(out.layout.frames["assistant"].end)
        out.out("{%- endif -%}")
        return True
