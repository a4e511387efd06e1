"""Readers for Llama 3 style turns: ``<|start_header_id|>role<|end_header_id|>\\n\\n...``.

- :class:`RoleHeaderReader`: the role is text between two markers; at the closing marker the
  reader begins the message and sends the step to ``<role>.body`` (:meth:`Parser.goto`).
- :func:`after_blank_line`: a body's reader, minus the ``\\n\\n`` the header ends with.
- :class:`ResultListReader`: a tool turn holding the Python list of the results of the
  latest calls, in call order, becomes one tool message per result.
- :class:`SystemPreambleReader`: a system turn whose text may begin with a tools list
  written as a Python literal (``Customized Functions: [...]\\n\\n---\\n``) and a date header.

All of them follow the engine's rule: strict mode raises, lenient mode keeps the text (markers
included) as content with a warning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

from ..blocks.results import result_text
from ..errors import ParseError
from ..types import (
    MetadataItem,
    Role,
    TextDelta,
    Tool,
    ToolsDeclared,
)
from .call_results import next_result_call_id
from .machine import Parser, Reader, ReaderFactory
from .python_call_reader import parse_python_literal
from .readers import WholeTextReader

# --------------------------------------------------------------------------- headers


class RoleHeaderReader(WholeTextReader):
    """The role name of a header; at ``close`` the message begins and the step goes to
    ``<role>.body``.  An unknown role is malformed: lenient mode reads it as a user turn
    whose text starts with the header."""

    __slots__ = ("_roles",)

    def __init__(self, parser: Parser, roles: Mapping[str, Role]) -> None:
        super().__init__(parser)
        self._roles = roles

    def close(self, marker: str | None, offset: int) -> None:
        parser = self._parser
        name = self._text()
        role = self._roles.get(name)
        parser.end_message()
        if role is None:
            raw = (parser.entered_by or "") + name + (marker or "")
            expected = "one of " + ", ".join(repr(known) for known in self._roles)
            parser.malformed(self._offset, f"role {name[:40]!r}", expected, raw)
            parser.begin_message("user")
            parser.emit(TextDelta(raw))
            if marker is not None:
                parser.goto("user.body")
            return
        parser.begin_message(role)
        if marker is not None:
            parser.goto(f"{role}.body")


def role_header_reader(roles: Mapping[str, Role]) -> ReaderFactory:
    return partial(RoleHeaderReader, roles=roles)


class _AfterBlankLine:
    """Drops the blank line a header ends with, then hands the text to the body's reader."""

    __slots__ = ("_blank", "_held", "_inner", "_offset", "_optional", "_parser")

    def __init__(
        self, parser: Parser, inner: Reader, blank: str, header_end: str, optional: bool = False
    ) -> None:
        self._parser = parser
        self._inner = inner
        self._blank = blank if parser.entered_by == header_end else ""
        self._held = ""
        self._offset = 0
        self._optional = optional

    def feed(self, text: str, offset: int) -> None:
        if self._blank:
            if not self._held:
                self._offset = offset
            take = len(self._blank) - len(self._held)
            self._held += text[:take]
            text, offset = text[take:], offset + take
            if len(self._held) < len(self._blank):
                return
            self._release()
        if text:
            self._inner.feed(text, offset)

    def _release(self) -> None:
        held, self._held, blank, self._blank = self._held, "", self._blank, ""
        if held != blank:
            if not self._optional:
                found = f"{held!r} after the header"
                self._parser.malformed(self._offset, found, repr(blank), held)
            self._inner.feed(held, self._offset)

    def close(self, marker: str | None, offset: int) -> None:
        if self._blank:
            self._release()
        self._inner.close(marker, offset)


def after_blank_line(
    reader: ReaderFactory, header_end: str, blank: str = "\n\n", *, optional: bool = False
) -> ReaderFactory:
    """``reader`` for a body that follows ``header_end`` + ``blank`` (and any other marker);
    ``optional``: text without ``blank`` there is read as it is, with no warning."""

    def make(parser: Parser) -> Reader:
        return _AfterBlankLine(parser, reader(parser), blank, header_end, optional)

    return make


def end_turn(parser: Parser, offset: int) -> None:
    """The end of a turn: the message ends; a completion ends too (state ``ended``)."""
    parser.end_message()
    if not parser.conversation:
        parser.goto("ended")


# --------------------------------------------------------------------------- tool results


class ResultListReader(WholeTextReader):
    """A Python list of results, one per call of the latest assistant message, in order.

    Each result becomes a tool message paired with its call (:mod:`.call_results`), its
    content given by :func:`~pawlette.blocks.results.result_text`.  Text that is not a list
    is one tool message.
    """

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        parser = self._parser
        text = self._text()
        try:
            value = parse_python_literal(text, offset=self._offset)
        except ParseError:
            value = None
        if not isinstance(value, list) or not value:
            self._result(text)
            return
        for number, item in enumerate(value):
            if number:
                parser.end_message()
                parser.begin_message("tool")
            self._result(result_text(item))

    def _result(self, content: str) -> None:
        call_id = next_result_call_id(self._parser)
        if call_id is not None:
            self._parser.emit(MetadataItem("id", call_id))
        if content:
            self._parser.emit(TextDelta(content))


# --------------------------------------------------------------------------- system preambles


@dataclass(frozen=True)
class SystemPreamble:
    """What a system turn may begin with, before the system text.

    ``tools_lead`` + Python literal list of function objects + ``tools_trail``; then, when
    ``date_header`` is set, a header matching it (a regex; read only in that variant, so text
    that merely looks like one is kept).
    """

    tools_lead: str
    tools_trail: str
    date_header: re.Pattern[str] | None = None
    default_text: str | None = None
    """The system text the format writes when a conversation has none: read as none."""


class SystemPreambleReader(WholeTextReader):
    """The system turn, read whole at its end (it is prompt side): preamble, then text.

    A turn that holds nothing but preamble is not a message (it was written to hold the
    tools, or the date): it declares its (possibly empty) tools so the fold drops it.
    """

    __slots__ = ("_preamble",)

    def __init__(self, parser: Parser, preamble: SystemPreamble) -> None:
        super().__init__(parser)
        self._preamble = preamble

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        tools, text = self._tools(text)
        scaffolding = tools is not None
        date = self._preamble.date_header
        match = date.match(text) if date is not None else None
        if match is not None:
            text = text[match.end() :]
            scaffolding = True
        if text and text == self._preamble.default_text:
            text, scaffolding = "", True
        if text:
            self._parser.emit(TextDelta(text))
        if scaffolding:
            self._parser.emit(ToolsDeclared(tools or ()))

    def _tools(self, text: str) -> tuple[tuple[Tool, ...] | None, str]:
        lead, trail = self._preamble.tools_lead, self._preamble.tools_trail
        if not text.startswith(lead):
            return None, text
        end = text.find(trail, len(lead))
        if end < 0:
            return None, text
        try:
            value = parse_python_literal(text[len(lead) : end], offset=self._offset + len(lead))
        except ParseError:
            return None, text
        if not (
            isinstance(value, list)
            and value
            and all(isinstance(item, dict) and isinstance(item.get("name"), str) for item in value)
        ):
            return None, text
        return tuple(Tool(item["name"], item) for item in value), text[end + len(trail) :]


def system_preamble_reader(preamble: SystemPreamble) -> ReaderFactory:
    return partial(SystemPreambleReader, preamble=preamble)


__all__ = [
    "ResultListReader",
    "RoleHeaderReader",
    "SystemPreamble",
    "SystemPreambleReader",
    "after_blank_line",
    "end_turn",
    "role_header_reader",
    "system_preamble_reader",
]
