"""An assistant turn that is text or calls written as bare JSON objects (Llama 3).

The reader: a turn whose first character other than whitespace is ``{`` is a call (leading
whitespace is held until that is known), then it is streamed as text or as the call's
arguments.  Read as vLLM's and SGLang's Llama 3 parsers read it: several calls joined by
``;`` are several calls, and a call without arguments has ``{}`` (JsonCalls' ``joined_by`` and
``arguments_optional``).  A turn that is a JSON list of call objects (``[{...}]``) is content
with a warning: the layout writes objects; so is a text turn holding a call after its text
(peers disagree on it: vLLM reads the call and drops the text, SGLang and llama.cpp keep the
text), which stays content, as written, with a warning that names the call.

The grammar: text of such a turn may not start with ``{`` after whitespace (that is a call);
GBNF is tighter: not ``<`` either.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..engine.call_arguments import load_json
from ..engine.call_scanner import TextPieces
from ..engine.machine import Parser, Reader
from ..engine.readers import CallEnvelope, JsonCallReader
from ..export.grammar_ast import Node, Terminal, optional
from ..types import TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart

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


_DECODER = json.JSONDecoder()


def _refuse_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a key written twice")
    return dict(pairs)


def _has_duplicate_key(text: str) -> bool:
    """Whether an object anywhere in ``text`` holds a key twice (``json`` keeps the last:
    read so, the first would be silently lost)."""
    try:
        json.loads(text, object_pairs_hook=_refuse_duplicates)
    except ValueError:
        return True
    return False


def joined_calls(
    text: str, envelope: CallEnvelope, separators: tuple[str, ...], optional_arguments: bool
) -> list[tuple[str, str]] | None:
    """The calls in ``text`` when it is call objects joined by ``separators`` (``;``) with
    whitespace around them, a call without arguments meaning ``{}`` when
    ``optional_arguments``; None when it is not (then it is malformed as written)."""
    calls: list[tuple[str, str]] = []
    position = 0
    allowed = {envelope.name, *envelope.arguments_keys, *(key for key, _ in envelope.ignored)}
    while True:
        position = len(text) - len(text[position:].lstrip()) if position < len(text) else position
        if position >= len(text):
            break
        try:
            _, end = _DECODER.raw_decode(text, position)
        except ValueError:
            return None
        value, problem = load_json(text[position:end])
        if problem is None and _has_duplicate_key(text[position:end]):
            problem = "a key written twice"
        if problem is not None or not isinstance(value, dict) or not allowed.issuperset(value):
            return None
        name = value.get(envelope.name)
        present = [key for key in envelope.arguments_keys if key in value]
        if not isinstance(name, str) or not name or len(present) > 1:
            return None
        if not present and not optional_arguments:
            return None
        arguments = value[present[0]] if present else {}
        if not isinstance(arguments, dict):
            return None
        if any(key in value and value[key] != fixed for key, fixed in envelope.ignored):
            return None
        calls.append((name, json.dumps(arguments, ensure_ascii=False)))
        rest = text[end:].lstrip()
        separator = next((item for item in separators if rest.startswith(item)), None)
        if separator is None:
            if rest:
                return None
            break
        position = len(text) - len(rest) + len(separator)
    return calls or None


class LenientCallReader(JsonCallReader):
    """A JSON call closed by the end of its turn that also reads several calls joined by
    ``separators`` and a call without arguments (``optional_arguments``), as vLLM and SGLang
    read Llama 3's; anything else is malformed as for the declared spelling."""

    def __init__(
        self,
        parser: Parser,
        envelope: CallEnvelope,
        close: str,
        separators: tuple[str, ...],
        optional_arguments: bool,
    ) -> None:
        super().__init__(parser, envelope, close)
        self._separators = separators
        self._optional = optional_arguments

    def close(self, marker: str | None, offset: int) -> None:
        super().close("" if marker is None else marker, offset)

    def recover(self, text: str, begun: str | None) -> bool:
        calls = joined_calls(text, self._envelope, self._separators, self._optional)
        if calls is None:
            return False
        parser = self._parser
        for name, arguments in calls:
            index = parser.next_call_index()
            identifier = begun or parser.new_call_id()
            begun = None
            parser.emit(ToolCallStart(index, identifier, name))
            parser.emit(ToolCallDelta(index, arguments))
            parser.emit(ToolCallEnd(index))
        return True


def lenient_call_reader(
    envelope: CallEnvelope, separators: tuple[str, ...], optional_arguments: bool
) -> Callable[[Parser], Reader]:
    return lambda parser: LenientCallReader(
        parser, envelope, "the end of the turn", separators, optional_arguments
    )


class BareCallReader:
    """Text, or one call written as the whole turn's bare JSON object (see the module)."""

    __slots__ = (
        "_after",
        "_call",
        "_decided",
        "_envelope",
        "_held",
        "_listed",
        "_optional",
        "_parser",
        "_separators",
        "_start",
    )

    def __init__(
        self,
        parser: Parser,
        envelope: CallEnvelope,
        separators: tuple[str, ...] = (),
        optional_arguments: bool = False,
    ) -> None:
        self._parser = parser
        self._envelope = envelope
        self._separators = separators
        self._optional = optional_arguments
        self._held: list[str] = []
        self._start = 0
        self._decided = False
        self._call: JsonCallReader | None = None
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
        self._call = LenientCallReader(
            parser, self._envelope, "the end of the turn", self._separators, self._optional
        )
        parser.entered_by = entered

    def _forward(self, text: str, offset: int) -> None:
        if self._call is not None:
            self._call.feed(text, offset)
        else:
            if self._listed is not None:
                self._listed.append(text)
            elif self._after is not None:
                self._after.append(text)
            elif "{" in text:
                self._after = TextPieces()
                self._after.append(text[text.index("{") :])
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
        elif self._after is not None:
            self._report_call_after_text(self._after.take())
            self._after = None
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

    def _report_call_after_text(self, text: str) -> None:
        for start in [index for index, character in enumerate(text) if character == "{"][:20]:
            try:
                value, _ = _DECODER.raw_decode(text, start)
            except ValueError:
                continue
            envelope = self._envelope
            if (
                isinstance(value, dict)
                and isinstance(value.get(envelope.name), str)
                and (self._optional or envelope.arguments_key_in(value) is not None)
            ):
                name = value[envelope.name]
                self._parser.malformed(
                    self._start,
                    f"a call to {name!r} after text",
                    "a call as the whole turn (the text, the call included, is content)",
                    text,
                )
                return


def bare_call_reader(
    envelope: CallEnvelope, separators: tuple[str, ...] = (), optional_arguments: bool = False
) -> Callable[[Parser], Reader]:
    return lambda parser: BareCallReader(parser, envelope, separators, optional_arguments)


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
