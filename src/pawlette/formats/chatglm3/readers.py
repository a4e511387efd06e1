"""The readers of ChatGLM3's turns: ``<|role|>{metadata}\\n{body}``.

A turn runs from its role marker to the next one; its first line is plain-text metadata.

- :class:`HeadedTextReader`: metadata is the message's ``name``; the body is content.
  ``tools_block=True`` (the system turn) reads a JSON tools list at the end of the body (see
  :func:`split_tools_block`).  An observation names no call: the fold pairs it with the call
  it answers by position (:func:`pawlette.engine.fold.pair_results`).
- :class:`AssistantTurnReader`: empty metadata is a text turn; metadata naming a tool is a
  call written as a fenced ``tool_call(...)`` block (:class:`~.calls.FencedCalls`); the code
  interpreter's metadata is a fenced program, read as a call to a built-in tool.  A turn that
  continues an assistant message (``continuation``) joins it when it is a call, so one
  OpenAI message with content and calls (written as several turns) parses back as one.

Every reader streams: content, a call's arguments and a program's code are emitted as they
arrive; only the system turn (prompt side) is read whole, at its end.
"""

from __future__ import annotations

import json
import re
from functools import partial
from typing import TYPE_CHECKING, Any

from ...codecs.python_stream import CallStream
from ...declare.readers import give_back
from ...engine.call_text import PackedText
from ...engine.machine import Parser, ReaderFactory
from ...types import (
    MetadataItem,
    TextDelta,
    Tool,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolsDeclared,
)

if TYPE_CHECKING:
    from .calls import FencedCalls

# --------------------------------------------------------------------------- the metadata line


class _HeadedTurn:
    """Splits off the first line; subclasses get ``_metadata`` once and ``_body`` after."""

    def __init__(self, parser: Parser) -> None:
        self._parser = parser
        self._line: list[str] | None = []
        self._line_offset: int | None = None

    def feed(self, text: str, offset: int) -> None:
        start = 0 if self._line is None else self._end_line(text, offset)
        if 0 <= start < len(text):
            self._body(text[start:] if start else text, offset + start)

    def _end_line(self, text: str, offset: int) -> int:
        """Read the metadata line in ``text``: where the body begins in it (-1: not yet)."""
        assert self._line is not None
        if self._line_offset is None:
            self._line_offset = offset
        newline = text.find("\n")
        if newline < 0:
            self._line.append(text)
            return -1
        metadata = "".join(self._line) + text[:newline]
        self._line = None
        self._parser.confirm_message()
        self._metadata(metadata, offset + newline + 1)
        return newline + 1

    def close(self, marker: str | None, offset: int) -> None:
        if self._line is not None:
            held = "".join(self._line)
            self._line = None
            if marker is None and not held and self._parser.message_pending:
                # A role token at the very end, with nothing after it: the stop token that
                # ends the turn before it, not a turn (a pending message then vanishes).
                self._end(marker, offset)
                return
            self._parser.confirm_message()
            if held:
                self._parser.malformed(
                    self._line_offset or offset,
                    f"turn {held[:40]!r} with no newline after its metadata line",
                    "'<|role|>metadata\\n' then the message",
                    held,
                )
                self._metadata("", self._line_offset or offset)
                self._body(held, self._line_offset or offset)
            else:
                self._metadata("", offset)
        self._end(marker, offset)

    def _metadata(self, metadata: str, offset: int) -> None:
        raise NotImplementedError

    def _body(self, text: str, offset: int) -> None:
        raise NotImplementedError

    def _end(self, marker: str | None, offset: int) -> None:
        pass


# --------------------------------------------------------------------------- text turns

_TRAILING_COMMA = re.compile(r'("(?:[^"\\]|\\.)*")|,(?=\s*[}\]])', re.DOTALL)


def _tools_list(text: str) -> list[dict[str, Any]] | None:
    """A JSON list of function objects, or None.  Trailing commas (as in hand-written
    examples such as ChatGLM3's prompt document) are accepted."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            value = json.loads(_TRAILING_COMMA.sub(lambda match: match.group(1) or "", text))
        except json.JSONDecodeError:
            return None
    if (
        isinstance(value, list)
        and value
        and all(isinstance(item, dict) and isinstance(item.get("name"), str) for item in value)
    ):
        return value
    return None


def split_tools_block(body: str) -> tuple[str, list[dict[str, Any]] | None]:
    """``text + "\\n" + json.dumps(tools, indent=4)``: the text and the tools (None: none).

    The list begins at a line that is ``[`` alone; the first such line from which the rest
    of the body is a list of function objects is taken.
    """
    start = body.find("\n[\n")
    while start >= 0:
        tools = _tools_list(body[start + 1 :])
        if tools is not None:
            return body[:start], tools
        start = body.find("\n[\n", start + 1)
    return body, None


class HeadedTextReader(_HeadedTurn):
    """Metadata is the ``name``; the body is content (see the module docstring)."""

    def __init__(self, parser: Parser, *, tools_block: bool = False):
        super().__init__(parser)
        self._tools_block = tools_block
        self._buffer: list[str] = []

    def _metadata(self, metadata: str, offset: int) -> None:
        if metadata:
            self._parser.emit(MetadataItem("name", metadata))

    def _body(self, text: str, offset: int) -> None:
        if self._tools_block:
            self._buffer.append(text)
        else:
            self._parser.emit(TextDelta(text))

    def _end(self, marker: str | None, offset: int) -> None:
        if not self._tools_block:
            return
        text, tools = split_tools_block("".join(self._buffer))
        if text:
            self._parser.emit(TextDelta(text))
        if tools is not None:
            self._parser.emit(ToolsDeclared(tuple(Tool(t["name"], t) for t in tools)))


def headed_text_reader(*, tools_block: bool = False) -> ReaderFactory:
    return partial(HeadedTextReader, tools_block=tools_block)


# --------------------------------------------------------------------------- assistant turns


class AssistantTurnReader(_HeadedTurn):
    """An assistant turn: text, a fenced call, or a fenced program (see the module docstring)."""

    def __init__(self, parser: Parser, calls: FencedCalls, *, continuation: bool) -> None:
        super().__init__(parser)
        self._calls = calls
        self._continuation = continuation
        self._mode = "text"  # text, opening (the fence's first line), call, code
        self._name = ""
        self._opening: list[str] = []
        self._fence = FenceTail()
        self._stream: CallStream | None = None
        self._code_index: int | None = None
        # The block as written, for lenient fallbacks (compressed once big: a call's text
        # is rarely needed again, and is kept next to its arguments).  A held call's body
        # is not in it: the decoder keeps it, as references into the call's JSON where they
        # read the same (``keep_text``), and gives it back (:meth:`CallStream.text`).
        self._raw = PackedText()
        self._keep_body = parser.stream_arguments  # a call's body kept here (see above)
        self._head = ""  # the block's first line (the call's name) and its newline
        self._offset = 0

    def _metadata(self, metadata: str, offset: int) -> None:
        parser = self._parser
        name = metadata.strip()
        if not name:
            if self._continuation:  # a new text turn: a new message
                parser.end_message()
                parser.begin_message("assistant")
            return
        self._name = name
        self._mode = "opening"
        self._offset = offset
        self._head = metadata + "\n"
        self._raw = PackedText()
        self._raw.append(self._head)

    def feed(self, text: str, offset: int) -> None:
        # All by offsets: a call's body is read by the decoder inside the run (no slice of
        # it, no slice per line), and kept by it (see ``_raw``).
        start = 0 if self._line is None else self._end_line(text, offset)
        if start < 0 or start == len(text):
            return
        if self._mode == "text":
            self._parser.emit(TextDelta(text[start:] if start else text))
            return
        if self._mode == "opening":
            newline = text.find("\n", start)
            line_end = len(text) if newline < 0 else newline + 1
            line = text[start:line_end] if start or line_end < len(text) else text
            self._opening.append(line)
            self._raw.append(line)
            if newline < 0:
                return
            if not self._open("".join(self._opening), offset + start, text, line_end):
                return
            start = line_end
        if self._mode == "code" or self._keep_body:
            self._raw.append(text, start)
        held, end = self._fence.feed(text, start)
        if self._mode == "call" and self._stream is not None:
            if held:
                self._stream.feed(held + text[start:end], offset + start)
            else:
                self._stream.feed(text, offset + start, start, end)
        elif self._mode == "code" and self._code_index is not None:
            released = held + text[start:end]
            if released:
                self._parser.emit(
                    ToolCallDelta(self._code_index, json.dumps(released, ensure_ascii=False)[1:-1])
                )

    def _body(self, text: str, offset: int) -> None:
        self.feed(text, offset)  # the metadata line is read: feed reads it all as body

    def _open(self, line: str, offset: int, text: str, rest: int) -> bool:
        """The fence's first line: start the call or the program (False: not a fence, and
        the block so far with ``text[rest:]``, the rest of the feed, is content)."""
        calls = self._calls
        parser = self._parser
        if line.strip() != calls.opening.strip():
            self._raw.append(text, rest)
            raw = self._raw.take()
            parser.malformed(  # where the line began, and the text up to its end: however
                self._offset,  # the input was split
                f"{line[:40]!r} after the call name {self._name!r}",
                f"{calls.opening!r} opening the call",
                self._head + line,
            )
            self._mode = "text"
            parser.emit(TextDelta(raw))
            return False
        if self._name == calls.code_metadata:
            self._mode = "code"
            index = self._code_index = parser.next_call_index()
            parser.emit(ToolCallStart(index, parser.new_call_id(), calls.code_tool))
            parser.emit(ToolCallDelta(index, f'{{"{calls.code_argument}": "'))
        else:
            self._mode = "call"
            self._stream = CallStream(
                parser,
                mode="single",
                fixed_callee=calls.callee,
                name=self._name,
                preamble=self._head + line,
                keep_text=not self._keep_body,
            )
        return True

    def _end(self, marker: str | None, offset: int) -> None:
        parser = self._parser
        if self._mode == "opening":  # the turn ended inside the fence's first line
            raw = self._raw.take()
            expected = f"{self._calls.opening!r} opening the call"
            give_back(parser, offset, f"call {raw[:60]!r} ends in its first line", expected, raw)
            return
        if self._mode == "text":
            return
        closed, held = self._fence.close()
        problem = None if closed else f"no closing {self._calls.closing.strip()!r} fence"
        stream = self._stream
        if self._mode == "call" and stream is not None:
            if not closed:
                stream.feed(held, offset - len(held))
            stream.finish(offset)
            if stream.failed and not stream.calls:
                # The call is no call: its text (the stream gave the rest) ends with the fence.
                if closed:
                    parser.emit(TextDelta(held))
            elif problem is not None:  # the call stands (it closed at its ')')
                raw = self._raw.take()
                if not self._keep_body:
                    raw += stream.text()
                parser.malformed(offset, f"call {raw[:60]!r}: {problem}", "a fenced call", raw)
            return
        index = self._code_index
        if index is None:
            return
        if closed:
            parser.emit(ToolCallDelta(index, '"}'))
            parser.emit(ToolCallEnd(index))
            return
        # Strict raises here; lenient: an unterminated program is no call, its block is text.
        raw = self._raw.take()
        found = f"program {raw[:60]!r}: {problem}"
        give_back(parser, offset, found, "a fenced program", raw, abandon=index)


# What may follow a line's end in a closing fence, and the fence's unfinished tail: a
# newline, then up to three backticks, then (after three) whitespace.
_FENCE_CHARACTERS = frozenset(" \t\r\n`")
_FENCE_TAIL = re.compile(r"\n(?:`{0,2}|```[ \t\r\n]*)\Z")


class FenceTail:
    """The body of a fenced block, streamed by offsets: the tail that may still be its closing
    fence (a line ````` ``` ````` then only whitespace up to the end of the turn) is held back.

    Fed texts are never cut into lines: the held tail is the text from the earliest newline
    from which all the rest still reads as the fence's beginning (``_FENCE_TAIL``), so each feed
    releases the earlier held text (or a part of it) and one range of the fed text.
    """

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str, start: int = 0) -> tuple[str, int]:
        """``(held, end)``: the text released is ``held + text[start:end]``."""
        if not self._held and text.find("\n", start) < 0:
            return "", len(text)  # most feeds: no line ends, nothing held
        cut = len(text)
        while cut > start and text[cut - 1] in _FENCE_CHARACTERS:
            cut -= 1
        held = self._held
        if cut > start or not held:  # what was held is released (there is one, or none)
            match = _FENCE_TAIL.search(text, cut)
            end = len(text) if match is None else match.start()
            self._held = text[end:]
            return held, end
        # All the fed text may still be the fence's: where the tail begins, held text too.
        joined = held + text[start:]
        match = _FENCE_TAIL.search(joined)
        tail = len(joined) if match is None else match.start()
        self._held = joined[tail:]
        if tail < len(held):
            return held[:tail], start
        return held, start + tail - len(held)

    def close(self) -> tuple[bool, str]:
        """``(True, fence)`` when the held tail is the closing fence, else ``(False, text)``."""
        return self._held.startswith("\n```"), self._held


def assistant_turn_reader(calls: FencedCalls, *, continuation: bool) -> ReaderFactory:
    return partial(AssistantTurnReader, calls=calls, continuation=continuation)


__all__ = [
    "AssistantTurnReader",
    "FenceTail",
    "HeadedTextReader",
    "assistant_turn_reader",
    "headed_text_reader",
    "split_tools_block",
]
