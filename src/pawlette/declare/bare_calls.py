"""An assistant turn that is text or calls written as bare JSON objects (Llama 3).

The reader: a turn whose first character other than whitespace is ``{`` is a call (leading
whitespace is held until that is known), then it is streamed as text or as the call's
arguments (read by the reader the format gives: one call, or several joined).  A turn that
is a JSON list of call objects (``[{...}]``) is content with a warning: the layout writes
objects; so is a text turn holding a call after its text (peers disagree on it: vLLM reads
the call and drops the text, SGLang and llama.cpp keep the text), which stays content, as
written, with a warning that names the call.

The grammar: text of such a turn may not start with ``{`` after whitespace (that is a call);
GBNF is tighter: not ``<`` either.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ..emit.grammar_ast import Node, Terminal, optional
from ..engine.call_scanner import TextPieces
from ..engine.machine import Parser, Reader, ReaderFactory
from ..engine.readers import CallEnvelope
from ..types import TextDelta

if TYPE_CHECKING:
    from .grammar import Turn


def _is_call(value: Any, envelope: CallEnvelope, optional_arguments: bool = False) -> bool:
    """Whether ``value`` is a call object (a name, and arguments unless they are optional)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get(envelope.name), str)
        and (optional_arguments or envelope.arguments_key_in(value) is not None)
    )


def _listed_calls(text: str, envelope: CallEnvelope) -> int:
    """How many calls a turn written as a JSON list of call objects holds (0: it is not one).
    Such a turn is content with a warning: the layout writes one call, as an object."""
    try:
        value = json.loads(text)
    except ValueError:
        return 0
    listed = isinstance(value, list) and value and all(_is_call(item, envelope) for item in value)
    return len(value) if listed else 0


DECODER = json.JSONDecoder()


class BareCallReader:
    """Text, or one call written as the whole turn's bare JSON object (see the module),
    read by ``reads``.  ``opening`` ``"["``: the calls are one array, read by ``reads`` (a
    text turn is then not searched for calls)."""

    __slots__ = (
        "_after",
        "_call",
        "_decided",
        "_envelope",
        "_held",
        "_listed",
        "_opening",
        "_optional",
        "_parser",
        "_reads",
        "_start",
    )

    def __init__(
        self,
        parser: Parser,
        envelope: CallEnvelope,
        optional_arguments: bool = False,
        *,
        reads: ReaderFactory,
        opening: str = "{",
    ) -> None:
        self._parser = parser
        self._reads = reads
        self._opening = opening
        self._envelope = envelope
        self._optional = optional_arguments
        self._held: list[str] = []
        self._start = 0
        self._decided = False
        self._call: Reader | None = None
        # A turn that starts as a JSON list: its text, to tell a list of calls at the close.
        self._listed: TextPieces | None = None
        # A text turn's text from its first "{" on: a call written after text is reported.
        self._after: TextPieces | None = None

    def feed(self, text: str, offset: int) -> None:
        if self._decided:
            self._forward(text, offset)
            return
        if not self._held:
            self._start = offset
        self._held.append(text)
        if "".join(self._held).strip():
            self._decide()

    def _decide(self) -> None:
        """The held text starts a call, a list or text: read it so from here on."""
        held = "".join(self._held)
        if held.lstrip().startswith(self._opening):
            # The call's reader quotes the marker that opened its state in lenient text: a
            # bare call has none (the turn's header is not part of the call).
            parser = self._parser
            entered, parser.entered_by = parser.entered_by, ""
            self._call = self._reads(parser)
            parser.entered_by = entered
        elif self._opening == "{" and held.lstrip().startswith("["):
            self._listed = TextPieces()
        self._decided = True
        self._held = []
        self._forward(held, self._start)

    def _forward(self, text: str, offset: int) -> None:
        if self._call is not None:
            self._call.feed(text, offset)
        else:
            if self._listed is not None:
                self._listed.append(text)
            elif self._after is not None:
                self._after.append(text)
            elif "{" in text and self._opening == "{":
                self._after = TextPieces()
                self._after.append(text[text.index("{") :])
            self._parser.emit(TextDelta(text))

    def close(self, marker: str | None, offset: int) -> None:
        if not self._decided and self._held:
            self._decide()
        if self._call is not None:
            parser = self._parser  # (no marker opened the calls: see _decide)
            entered, parser.entered_by = parser.entered_by, ""
            try:
                self._call.close(marker, offset)
            finally:
                parser.entered_by = entered
        elif self._after is not None:
            text = self._after.take()
            self._after = None
            for start in [index for index, character in enumerate(text) if character == "{"][:20]:
                try:
                    value, _ = DECODER.raw_decode(text, start)
                except ValueError:
                    continue
                if _is_call(value, self._envelope, self._optional):
                    self._parser.malformed(
                        self._start,
                        f"a call to {value[self._envelope.name]!r} after text",
                        "a call as the whole turn (the text, the call included, is content)",
                        text,
                    )
                    break
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


_BARE_TEXTS = {
    # The first character of the calls: the terminal, its GBNF rule, the character in a GBNF
    # class, and what the calls are.
    "{": ("BARE_TEXT", "bare-text", "{", "are bare JSON objects", "a call"),
    "[": ("BARE_LIST_TEXT", "bare-list-text", "\\[", "are one bare JSON array", "the calls"),
}
BARE_TEXT_GBNF_NOTE = "nor, here, with '<' after whitespace (tighter than the parser)"


def bare_text(turn: Turn, opening: str = "{") -> Node:
    """The answer's text in a turn whose calls are bare JSON (objects, ``opening`` ``{``, or
    one array, ``[``), which begin where the text would: the text may not begin with it."""
    name, rule, in_class, calls, meaning = _BARE_TEXTS[opening]
    lark = f"(TEXT_NE) & ~/[ \\t\\r\\n]*{re.escape(opening)}(?s:.*)/"
    terminal = Terminal(name, lark=lark, gbnf=rule)
    rules = turn.rules
    rules.lark_extra[name] = terminal.lark
    rules.gbnf_extra[rule] = f"[ \\t\\r\\n]+ | [ \\t\\r\\n]* [^{in_class}< \\t\\r\\n] text"
    note = (
        f"text of a turn whose calls {calls} may not start with '{opening}' after whitespace "
        f"(that is {meaning})"
    )
    if note not in rules.notes:
        rules.notes.append(note)
        rules.syntax_notes.setdefault("gbnf", []).append(BARE_TEXT_GBNF_NOTE)
    return optional(terminal)
