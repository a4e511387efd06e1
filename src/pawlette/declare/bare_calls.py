"""An assistant turn that is text or one call written as a bare JSON object (Llama 3).

The reader: a turn whose first character other than whitespace is ``{`` is a call (leading
whitespace is held until that is known), then it is streamed as text or as the call's
arguments.  A turn that is a JSON list of call objects (``[{...}]``, what some models write
for several calls) is content with a warning: the layout writes one.

The grammar: text of such a turn may not start with ``{`` after whitespace (that is a call);
GBNF is tighter: not ``<`` either.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..engine.call_scanner import TextPieces
from ..engine.machine import Parser, Reader
from ..engine.readers import CallEnvelope, JsonCallReader
from ..export.grammar_ast import Node, Terminal, optional
from ..types import TextDelta
from .readers import ended_by_turn

if TYPE_CHECKING:
    from .grammar import Turn

_CALL_START = re.compile(r"\s*\{")
_LIST_START = re.compile(r"\s*\[")


def _listed_calls(text: str, envelope: CallEnvelope) -> int:
    """How many calls a turn written as a JSON list of call objects holds (0: it is not one).
    Such a turn is content with a warning: the layout writes one call, as an object."""
    try:
        value = json.loads(text)
    except ValueError:
        return 0
    if not isinstance(value, list) or not value:
        return 0
    for item in value:
        if not (
            isinstance(item, dict)
            and isinstance(item.get(envelope.name), str)
            and envelope.arguments_key_in(item) is not None
        ):
            return 0
    return len(value)


class BareCallReader:
    """Text, or one call written as the whole turn's bare JSON object (see the module)."""

    __slots__ = ("_call", "_decided", "_envelope", "_held", "_listed", "_parser", "_start")

    def __init__(self, parser: Parser, envelope: CallEnvelope) -> None:
        self._parser = parser
        self._envelope = envelope
        self._held: list[str] = []
        self._start = 0
        self._decided = False
        self._call: JsonCallReader | None = None
        # A turn that starts as a JSON list: its text, to tell a list of calls at the close.
        self._listed: TextPieces | None = None

    def feed(self, text: str, offset: int) -> None:
        if self._decided:
            self._forward(text, offset)
            return
        if not self._held:
            self._start = offset
        self._held.append(text)
        held = "".join(self._held)
        candidate = held.lstrip()
        if not candidate:
            return
        if _CALL_START.match(candidate):
            self._begin_call()
        elif _LIST_START.match(candidate):
            self._listed = TextPieces()
        self._decided = True
        self._held = []
        self._forward(held, self._start)

    def _begin_call(self) -> None:
        # The call's reader quotes the marker that opened its state in lenient text: a bare
        # call has none (the turn's header is not part of the call).
        parser = self._parser
        entered, parser.entered_by = parser.entered_by, ""
        self._call = ended_by_turn(parser, self._envelope, "the end of the turn")
        parser.entered_by = entered

    def _forward(self, text: str, offset: int) -> None:
        if self._call is not None:
            self._call.feed(text, offset)
        else:
            if self._listed is not None:
                self._listed.append(text)
            self._parser.emit(TextDelta(text))

    def close(self, marker: str | None, offset: int) -> None:
        if not self._decided and self._held:
            held = "".join(self._held)
            self._held = []
            if _CALL_START.match(held):
                self._begin_call()
            elif _LIST_START.match(held):
                self._listed = TextPieces()
            self._forward(held, self._start)
        if self._call is not None:
            self._call.close(marker, offset)
        elif self._listed is not None:
            text = self._listed.take()
            self._listed = None
            count = _listed_calls(text, self._envelope)
            if count:  # the text is content already: reported, not dropped
                self._parser.malformed(
                    self._start,
                    f"a JSON list of {count} call(s) {text[:60]!r}",
                    "one call per turn, written as a JSON object",
                    text,
                )


def bare_call_reader(envelope: CallEnvelope) -> Callable[[Parser], Reader]:
    return lambda parser: BareCallReader(parser, envelope)


BARE_TEXT = Terminal("BARE_TEXT", lark="(TEXT_NE) & ~/[ \\t\\r\\n]*\\{(?s:.*)/", gbnf="bare-text")
BARE_TEXT_NOTE = (
    "text of a turn whose calls are bare JSON objects may not start with '{' after "
    "whitespace (that is a call)"
)
BARE_TEXT_GBNF_NOTE = "nor, here, with '<' after whitespace (tighter than the parser)"


def bare_text(turn: Turn) -> Node:
    """The answer's text in a turn whose calls are bare JSON objects."""
    rules = turn.rules
    rules.lark_extra["BARE_TEXT"] = BARE_TEXT.lark
    rules.gbnf_extra["bare-text"] = "[ \\t\\r\\n]+ | [ \\t\\r\\n]* [^{< \\t\\r\\n] text"
    if BARE_TEXT_NOTE not in rules.notes:
        rules.notes.append(BARE_TEXT_NOTE)
        rules.syntax_notes.setdefault("gbnf", []).append(BARE_TEXT_GBNF_NOTE)
    return optional(BARE_TEXT)
