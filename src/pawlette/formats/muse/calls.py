"""Muse Glimmer's calls: each call a message of its own, addressed to the tool it calls.

One call is `` to=NAME`` (after the turn's ``<|start|>assistant``), ``<|message|>``, then
the ATEM block ``<atem:function_calls>\\n<atem:invoke name="NAME">\\n`` with one
``<atem:parameter name="KEY">VALUE</atem:parameter>\\n`` per argument, and
``</atem:invoke>\\n</atem:function_calls>``; the next call follows
``<|eom|><|start|>assistant``.  The name is written twice, in the recipient and in the
invoke tag: :class:`RecipientCalls` is :class:`~pawlette.declare.XmlCalls` with the
recipient before the tag; reading names the call by the tag, as the peers do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pawlette.declare import XmlCalls
from pawlette.declare.calls import Content
from pawlette.declare.pieces import Fence, text_of
from pawlette.declare.readers import Described
from pawlette.declare.xml_calls import Tags, XmlCallReader, XmlCallSet
from pawlette.emit.grammar_ast import Lit

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.emit.grammar_ast import Node, Rules
    from pawlette.engine.machine import Parser, ReaderFactory
    from pawlette.types import Tool, ToolCall


@dataclass(frozen=True)
class RecipientCalls(XmlCalls):
    """:class:`~pawlette.declare.XmlCalls` whose call opens with its recipient: ``open`` +
    NAME + ``recipient_close`` + NAME + ``name_close``, then the parameters as XmlCalls
    writes them.  ``content``: the text of a turn with calls (default ``"dropped"``: the
    template writes only the calls)."""

    recipient_close: Fence = ()
    content: Content = "dropped"

    def write_call(self, out: Render, index: int, number: int, call: ToolCall) -> None:
        out.text(call.name, "tool_call", trainable=True)
        out.fence(self.recipient_close, "tool_call", trainable=True)
        super().write_call(out, index, number, call)

    def inner_fences(self) -> tuple[Fence, ...]:
        # <|message|> inside a call is the call's text (its reader splits the recipient off).
        return (self.recipient_close, *super().inner_fences())

    def call_reader(self, table: Table, tags: Tags) -> ReaderFactory:
        recipient_close = table.text(self.recipient_close)
        return Described(
            "XML call after its recipient",
            lambda parser: RecipientReader(parser, tags, recipient_close),
            recipient_close=recipient_close,
        )

    def jinja_call(self, out: Template) -> None:
        out.out("{{- call.function.name -}}")
        out.fence(self.recipient_close)
        super().jinja_call(out)

    def grammar(self, turn: Turn) -> None:
        turn.calls = RecipientCallSet(self, turn)


class RecipientReader(XmlCallReader):
    """A call's recipient, then its ATEM block, read as XmlCalls reads a call: the invoke
    tag names the call (the recipient must name something, and is not compared with it, as
    vLLM's and SGLang's parsers read only the tag), and a name no tool of the request has is
    taken for the tool it stands for (:func:`registered_name`)."""

    __slots__ = ("_recipient_close",)

    def __init__(self, parser: Parser, tags: Tags, recipient_close: str) -> None:
        super().__init__(parser, tags)
        self._recipient_close = recipient_close

    def _read(self, text: str) -> tuple[str | None, str | None, dict[str, Any] | None]:
        recipient, found, rest = text.partition(self._recipient_close)
        if not found:
            return "no <|message|><atem:function_calls> after the recipient", None, None
        if not recipient.strip():
            return "no recipient", None, None
        return super()._read(rest)

    def named_tool(self, written: str) -> tuple[str | None, str, Tool | None]:
        names = [tool.name for tool in self._parser.tools]
        return super().named_tool(registered_name(written.strip(), names))


def registered_name(name: str, names: Sequence[str]) -> str:
    """The tool of ``names`` a call's ``name`` stands for: the name itself when a tool has
    it (or there are no tools); else, as vLLM's and SGLang's parsers map it, the doubled
    form the model writes for a tool without a namespace (``get_weather.get_weather``: the
    template lists its recipient as ``get_weather.*``), or the one tool whose last segment
    is the name's last (``functions.get_weather``); else the name as written."""
    if not names or name in names:
        return name
    head, dot, tail = name.partition(".")
    if dot and head == tail and head in names:
        return head
    leaf = name.rsplit(".", 1)[-1]
    matches = [known for known in names if known.rsplit(".", 1)[-1] == leaf]
    return matches[0] if len(matches) == 1 else name


class RecipientCallSet(XmlCallSet):
    """The grammar of :class:`RecipientCalls`: the recipient, then XmlCalls' call."""

    def __init__(self, calls: RecipientCalls, turn: Turn) -> None:
        super().__init__(calls, turn)
        layout = turn.layout
        self.recipient_close = text_of(calls.recipient_close, layout.options, layout.name)
        self._opening = len(turn.nodes(calls.open))

    def items(self, turn: Turn, rules: Rules, number: int) -> list[Node]:
        pieces = super().items(turn, rules, number)
        name = turn.tools[number].name
        at = self._opening + 1  # after the open fence and the recipient's name
        head = pieces[:at]
        if all(isinstance(piece, Lit) for piece in head):
            # One lexeme: llguidance's lexer is greedy, and " to=" then "search" would be
            # read as the start of " to=self" (the reasoning's open) until it fails.
            head = [Lit("".join(piece.text for piece in head if isinstance(piece, Lit)))]
        return [*head, *turn.nodes(self.calls.recipient_close), Lit(name), *pieces[at:]]

    def prefix(self, name: str | None) -> str:
        if name is None:
            return self.lead
        return self.lead + name + self.recipient_close + name + self.name_close
