"""Reading a Gemma 4 call: ``<|tool_call>`` + ``call:NAME{MEMBERS}`` + ``<tool_call|>``.

Only the two call tokens are markers of the lexer: the call's text between them is read
whole, so ``call:``, the braces and the members' text stay free for the model's content
(a grammar may not forbid a ``{`` in an answer).  The call is emitted when its close comes;
its JSON arguments come whole then (the value syntax is no JSON to stream).  A call that is
not one (no ``call:``, no name, a name outside the request's tools, members not in the value
syntax, cut off before its close) is content, its text as written, with one warning.
"""

from __future__ import annotations

import re

from ...declare.named_calls import CallParts, begin_call, malformed_call
from ...declare.readers import BetweenCallsReader
from ...engine.machine import Parser
from ...types import TextDelta, Tool, ToolCallDelta, ToolCallEnd, ToolCallStart
from .values import ValueSyntaxError, members_json

_HEAD = re.compile(r"\s*call:\s*([^{}\s]*)\s*\{")

CALL_STATE = "call.body"


class CallReader:
    """One call's text up to its close marker (``close``: that marker's text)."""

    __slots__ = ("_close", "_offset", "_parser", "_text")
    whole_kind = "whole call"  # see pawlette.engine.whole: read by whole_call when plain

    def __init__(self, parser: Parser, close: str) -> None:
        self._parser = parser
        self._close = close
        self._text: list[str] = []
        self._offset = -1
        begin_call(parser)

    def feed(self, text: str, offset: int) -> None:
        if self._offset < 0:
            self._offset = offset
        self._text.append(text)

    def close(self, marker: str | None, offset: int) -> None:
        parser = self._parser
        parts = parser.context(CallParts)
        text = "".join(self._text)
        parts.offset = self._offset if self._offset >= 0 else offset
        parts.raw.append(text)
        closed = marker == self._close
        if closed:
            parts.raw.append(marker or "")
        head = _HEAD.match(text)
        body = text.rstrip()
        if not closed:
            problem, expected = "the call is not closed", f"the call closed by {self._close!r}"
        elif head is None or not body.endswith("}"):
            problem, expected = "no call:NAME{...}", "call:NAME{ARGUMENTS}"
        elif not head.group(1):
            problem, expected = "no call name", "a function name"
        elif parser.tools and head.group(1) not in {tool.name for tool in parser.tools}:
            problem = f"no tool named {head.group(1)!r}"
            expected = "a declared tool's name"
        else:
            try:
                arguments = members_json(body[head.end() : -1])
            except ValueSyntaxError as error:
                problem, expected = f"arguments {error}", "arguments in Gemma 4's value syntax"
            else:
                identifier = parts.spare_id or parser.new_call_id()
                parts.spare_id = None
                index = parser.next_call_index()
                parser.emit(ToolCallStart(index, identifier, head.group(1)))
                parser.emit(ToolCallDelta(index, arguments))
                parser.emit(ToolCallEnd(index))
                parts.raw = []
                return
        malformed_call(parser, parts, problem, expected)

    def whole_call(self, text: str, tools: tuple[Tool, ...]) -> tuple[str, str] | None:
        """The name and arguments (JSON text) of a call whose whole text is ``text``, as
        :meth:`close` reads it at its close in a completion parsed with ``tools``; None when
        :meth:`close` would give it back (the machine then reads it and says why)."""
        head = _HEAD.match(text)
        body = text.rstrip()
        if head is None or not body.endswith("}") or not head.group(1):
            return None
        name = head.group(1)
        if tools and all(tool.name != name for tool in tools):
            return None
        try:
            arguments = members_json(body[head.end() : -1])
        except Exception:  # (whatever the arguments raise, the machine raises or reports)
            return None
        return name, arguments


class TextAfterCallsReader(BetweenCallsReader):
    """After a call's close: the turn's text, where the template writes it (after the
    calls), read as content without a warning; the whitespace before it is layout."""

    __slots__ = ("_begun",)
    whole_kind = "content after space"  # see pawlette.engine.whole

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        self._begun = False

    def feed(self, text: str, offset: int) -> None:
        if not self._begun:
            text = text.lstrip()
            if not text:
                return
            self._begun = True
        self._parser.emit(TextDelta(text))

    def close(self, marker: str | None, offset: int) -> None:
        return
